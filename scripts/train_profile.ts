/**
 * Where `autoui train`'s steps go, kernel by kernel, on real shards:
 *
 *   node dist/scripts/train_profile.js --data runs/demo/shards [--steps 200] [--json]
 *
 * Runs the scratch recipe for --steps steps (no validation, nothing saved but the run's folder)
 * and wraps the engine's runKernel: each outermost kernel call is timed (wasm runs synchronously,
 * so its wall time is its cost, tfjs's bookkeeping for the call included) and grouped by kernel
 * name, and by name and input shapes. Prints steps/s between the warm-up and the last step, kernel
 * calls and kernel milliseconds per step, and the largest entries. The wrapper adds a little time
 * to every call: compare runs of this script with each other, not with `npm run bench`.
 */
import * as tf from '@tensorflow/tfjs-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { initBackend } from '../src/backend.js';
import { train } from '../src/pipeline/train.js';
import { SUM_SQUARES_KERNEL } from '../src/native/optimizer_kernels.js';
import { DEFAULT_TRAIN } from '../src/train/trainer.js';

interface Entry {
  calls: number;
  ms: number;
}

const opts = new Command()
  .requiredOption('--data <dir>', 'shard directory from `autoui data prepare` (e.g. runs/demo/shards)')
  .option('--steps <n>', 'optimiser steps to run', (v) => Number(v), 200)
  .option('--warmup <n>', 'steps before the clock starts', (v) => Number(v), 30)
  .option('--top <n>', 'entries to print', (v) => Number(v), 25)
  .option('--json', 'print one JSON object')
  .parse()
  .opts<{ data: string; steps: number; warmup: number; top: number; json?: boolean }>();

/** Runs the profile and prints it; errors (bad options, a folder that is not shards) say what is wrong in one line. */
async function main(): Promise<void> {
  if (!(opts.steps > opts.warmup && opts.warmup >= 1)) throw new Error(`--steps (${opts.steps}) must exceed --warmup (${opts.warmup}), which must be at least 1`);
  const backend = await initBackend();
  const engine = tf.engine();
  const runKernel = engine.runKernel.bind(engine);
  const byName = new Map<string, Entry>();
  const byShape = new Map<string, Entry>();
  let depth = 0;
  let steps = 0;
  let started = 0;
  let ended = 0;
  const add = (map: Map<string, Entry>, key: string, ms: number) => {
    const e = map.get(key) ?? { calls: 0, ms: 0 };
    e.calls++;
    e.ms += ms;
    map.set(key, e);
  };
  engine.runKernel = ((name: string, inputs: tf.NamedTensorMap, attrs: tf.NamedAttrMap) => {
    // The optimiser's one global-norm kernel a step (it clips by the norm) marks the steps.
    if (name === SUM_SQUARES_KERNEL && ++steps === opts.warmup) started = performance.now();
    const timed = depth === 0 && steps >= opts.warmup;
    const t = performance.now();
    depth++;
    try {
      return runKernel(name, inputs, attrs);
    } finally {
      depth--;
      if (timed) {
        const ms = performance.now() - t;
        add(byName, name, ms);
        add(byShape, `${name} ${Object.values(inputs).map((x) => x.shape.join('×')).join(', ')}`, ms);
        ended = performance.now();
      }
    }
  }) as typeof engine.runKernel;

  const out = mkdtempSync(join(tmpdir(), 'autoui-train-profile-'));
  try {
    await train({ ...DEFAULT_TRAIN, data: opts.data, out, maxSteps: opts.steps, valRows: 0, saveEvery: 0, quiet: true, log: () => {} });
  } finally {
    engine.runKernel = runKernel;
    rmSync(out, { recursive: true, force: true });
  }
  const timedSteps = steps - opts.warmup;
  if (timedSteps < 1) throw new Error(`no optimiser steps were seen (${SUM_SQUARES_KERNEL} marks them): this needs the native kernels (npm run build:native)`);
  const perStep = (m: Map<string, Entry>) =>
    [...m].sort((a, b) => b[1].ms - a[1].ms).slice(0, opts.top).map(([key, e]) => ({ key, callsPerStep: e.calls / timedSteps, msPerStep: e.ms / timedSteps }));
  const total = (m: Map<string, Entry>, f: (e: Entry) => number) => [...m.values()].reduce((s, e) => s + f(e), 0) / timedSteps;
  const report = {
    backend: backend.backend,
    steps: timedSteps,
    stepsPerSecond: timedSteps / ((ended - started) / 1000),
    kernelCallsPerStep: total(byName, (e) => e.calls),
    kernelMsPerStep: total(byName, (e) => e.ms),
    byKernel: perStep(byName),
    byShape: perStep(byShape),
  };
  if (opts.json) {
    console.log(JSON.stringify(report));
  } else {
    const row = (r: { key: string; callsPerStep: number; msPerStep: number }) => `${r.msPerStep.toFixed(2).padStart(8)} ms ${r.callsPerStep.toFixed(1).padStart(7)} calls  ${r.key}`;
    console.log(`${report.backend}: ${report.stepsPerSecond.toFixed(2)} steps/s over ${timedSteps} steps; ${report.kernelCallsPerStep.toFixed(0)} kernel calls, ${report.kernelMsPerStep.toFixed(1)} kernel ms a step`);
    console.log('by kernel (per step):');
    report.byKernel.forEach((r) => console.log(row(r)));
    console.log('by kernel and input shapes (per step):');
    report.byShape.forEach((r) => console.log(row(r)));
  }
}

main().catch((err: unknown) => {
  console.error(`train_profile: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
