/**
 * `npm run bench`: data-pipeline and training throughput on this machine, each figure next to a
 * baseline measured in the same run (plain gunzip for TFRecord reading; the backend's own plain
 * matmul and the machine's BLAS peak for training). Prints a table, or one JSON object with --json.
 */
import * as tf from '@tensorflow/tfjs-core';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { initBackend } from '../src/backend.js';
import { readAitwSteps } from '../src/data/aitw.js';
import { prepareFromFiles } from '../src/data/prepare.js';
import { synthesize } from '../src/data/synth/writer.js';
import { readTfRecords } from '../src/data/tfrecord.js';
import { SUBSETS, type Subset } from '../src/data/types.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { modelConfig, type PresetName } from '../src/model/config.js';
import { forwardFlops, type BatchShape } from '../src/model/flops.js';
import { loadEncoder } from '../src/screen/vision/index.js';
import { AdamW } from '../src/train/adamw.js';

const ENV_PEAK_GFLOPS = 185; // ../shared/ENVIRONMENT.md: fp32 matmul, 2 threads, OpenBLAS
const json = process.argv.includes('--json');
const quick = process.argv.includes('--quick');
const log = (s: string) => process.stderr.write(s + '\n');
const results: Record<string, unknown> = {};

async function timeIt<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await f();
  return [r, (performance.now() - t) / 1000];
}

async function benchData(dir: string): Promise<void> {
  log('data: synthesising a bench set…');
  const episodes = quick ? 100 : 300;
  const { summary } = await synthesize({ out: join(dir, 'synth'), episodes, seed: 1, subsets: SUBSETS, size: { width: 160, height: 320 } });
  const files = (Object.keys(summary.counts) as Subset[]).flatMap((s) => summary.counts[s]!.files.map((f) => join(dir, 'synth', s, f)));
  const bytes = files.reduce((n, f) => n + statSync(f).size, 0);
  // One untimed pass so every variant below reads from the page cache, not the disk.
  for (const f of files) for await (const _ of createReadStream(f)) void _;
  let raw = 0;
  const [, tGunzip] = await timeIt(async () => {
    for (const f of files) for await (const chunk of createReadStream(f).pipe(createGunzip())) raw += (chunk as Buffer).length;
  });
  const [, tFrames] = await timeIt(async () => {
    for (const f of files) for await (const _ of readTfRecords(f)) void _;
  });
  let steps = 0;
  const [, tSteps] = await timeIt(async () => {
    for await (const _ of readAitwSteps(files)) steps++;
  });
  const mb = raw / 1e6;
  results.tfrecord = {
    files: files.length,
    compressedMB: bytes / 1e6,
    uncompressedMB: mb,
    gunzipMBps: mb / tGunzip,
    framesMBps: mb / tFrames,
    stepsMBps: mb / tSteps,
    stepsPerSecond: steps / tSteps,
    framesVsGunzip: tGunzip / tFrames,
    stepsVsGunzip: tGunzip / tSteps,
  };

  const enc = await loadEncoder('builtin');
  const imgs: import('../src/data/types.js').RawImage[] = [];
  for await (const s of readAitwSteps(files.slice(0, 1))) if (imgs.length < 256) imgs.push(s.image);
  const [, tEnc] = await timeIt(async () => {
    for (let i = 0; i < imgs.length; i += 32) await enc.encode(imgs.slice(i, i + 32));
  });
  let screens = 0;
  const [, tPrep] = await timeIt(async () => {
    for (const s of Object.keys(summary.counts) as Subset[]) {
      const r = await prepareFromFiles({
        inputs: summary.counts[s]!.files.map((f) => join(dir, 'synth', s, f)),
        splits: join(dir, 'synth', s, 'split.json'),
        subset: s,
        out: join(dir, 'shards'),
      });
      screens += r.encoded;
    }
  });
  results.prepare = { screens, screensPerSecond: screens / tPrep, encoderMsPerScreen: (tEnc * 1000) / imgs.length, target: 100 };
}

/** Plain 2-D matmul on the active backend: the ceiling a training step could reach here. */
function matmulGflops(n = 512, reps = 20): number {
  const a = tf.randomNormal([n, n]);
  const b = tf.randomNormal([n, n]);
  for (let i = 0; i < 3; i++) tf.matMul(a, b).dataSync();
  const t = performance.now();
  // Not inside tf.tidy: tidy walks a returned TypedArray element by element looking for tensors.
  for (let i = 0; i < reps; i++) {
    const c = tf.matMul(a, b);
    c.dataSync();
    c.dispose();
  }
  const s = (performance.now() - t) / 1000;
  tf.dispose([a, b]);
  return (2 * n ** 3 * reps) / s / 1e9;
}

/** numpy's matmul on both cores (OpenBLAS), when python3-numpy is installed: the machine's peak. */
function blasGflops(): number | null {
  const code = 'import numpy as np,time\nn=2048\na=np.random.rand(n,n).astype(np.float32);b=np.random.rand(n,n).astype(np.float32)\na@b\nt=time.time()\nfor _ in range(5): a@b\nprint(2*n**3*5/(time.time()-t)/1e9)';
  for (const py of ['/usr/bin/python3', 'python3']) {
    try {
      return Number(execFileSync(py, ['-c', code], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    } catch {
      /* try the next interpreter */
    }
  }
  return null;
}

/** Random 0/1 targets with `ones` patches set per row, as grounding and referring targets look. */
function patchTargets(rows: number, patches: number, ones: number): tf.Tensor2D {
  return tf.tidy(() => tf.cast(tf.less(tf.randomUniform([rows, patches]), ones / patches), 'float32') as tf.Tensor2D);
}

/**
 * Training step throughput; with `aux`, also the step with our two auxiliary losses as the demo
 * trains (grounding targets, two 4-token referring phrases a screen), timed in the same run.
 */
async function benchTrain(preset: PresetName, shape: BatchShape, steps: number, aux = false): Promise<Record<string, unknown>> {
  const config = modelConfig(preset, { vocabSize: 600, screenDim: 64, dropoutRate: 0.1 });
  const model = new AutoUiModel(config, 1);
  const weights = model.namedWeights();
  const opt = new AdamW(weights);
  const varName = new Map([...weights].map(([hf, v]) => [v.name, hf]));
  const { B, L, T, P } = shape;
  const batch = {
    inputIds: tf.randomUniform([B, L], 2, config.vocabSize, 'int32') as tf.Tensor2D,
    inputMask: tf.ones([B, L], 'int32') as tf.Tensor2D,
    screen: tf.randomNormal([B, P, config.screenDim]) as tf.Tensor3D,
    labels: tf.randomUniform([B, T], 2, config.vocabSize, 'int32') as tf.Tensor2D,
  };
  const K = 2;
  const auxBatch = {
    ...batch,
    groundTargets: patchTargets(B, P, 9),
    refer: {
      inputIds: tf.randomUniform([B * K, 4], 2, config.vocabSize, 'int32') as tf.Tensor2D,
      inputMask: tf.ones([B * K, 4], 'int32') as tf.Tensor2D,
      targets: patchTargets(B * K, P, 12),
    },
  };
  // Both losses weighted 1, as the demo trains; the plain batch has no targets for them.
  const stepOn = (b: typeof auxBatch | typeof batch) => () => {
    const { value, grads } = tf.variableGrads(() => model.loss(b, true, { ground: 1, refer: 1 }), [...weights.values()]);
    value.dataSync();
    opt.apply(new Map(Object.entries(grads).map(([k, g]) => [varName.get(k)!, g])), 1e-4);
    tf.dispose([value, ...Object.values(grads)]);
  };
  const step = stepOn(batch);
  const variants = aux ? [step, stepOn(auxBatch)] : [step];
  // Rounds alternate the variants and each keeps its best mean, so warm-up and the machine's drift
  // do not favour whichever runs second.
  const best = variants.map(() => Number.POSITIVE_INFINITY);
  for (const f of variants) f();
  for (let round = 0; round < (aux ? 3 : 1); round++) {
    variants.forEach((f, v) => {
      const t = performance.now();
      for (let i = 0; i < steps; i++) f();
      best[v] = Math.min(best[v]!, (performance.now() - t) / 1000 / steps);
    });
  }
  const [secs, auxSecs] = best as [number, number | undefined];
  const flops = 3 * forwardFlops(config, shape).total;
  // Which kernels the time goes to, from one profiled step.
  const kernels = new Map<string, number>();
  const p = await tf.profile(step);
  for (const k of p.kernels) kernels.set(k.name, (kernels.get(k.name) ?? 0) + (typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0));
  const total = [...kernels.values()].reduce((a, b) => a + b, 0) || 1;
  const params = model.parameterCount();
  tf.dispose([...Object.values(batch), auxBatch.groundTargets, ...Object.values(auxBatch.refer)]);
  model.dispose();
  opt.dispose();
  return {
    params,
    batch: shape,
    secondsPerStep: secs,
    samplesPerSecond: B / secs,
    ...(auxSecs === undefined ? {} : { withAuxLosses: { samplesPerSecond: B / auxSecs, slowdown: auxSecs / secs } }),
    gflopPerStep: flops / 1e9,
    gflops: flops / secs / 1e9,
    topKernels: [...kernels].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, ms]) => ({ name, share: ms / total })),
  };
}

async function main(): Promise<void> {
  const backend = await initBackend();
  results.backend = backend.backend;
  const dir = mkdtempSync(join(tmpdir(), 'autoui-bench-'));
  try {
    await benchData(dir);
    log('train: measuring…');
    const mm = matmulGflops();
    const blas = blasGflops();
    const peak = blas ?? ENV_PEAK_GFLOPS;
    const tiny = await benchTrain('tiny', { B: 32, L: 40, T: 14, P: 128 }, quick ? 3 : 10, true);
    const small = await benchTrain('small', { B: 8, L: 40, T: 14, P: 128 }, quick ? 1 : 3);
    results.matmul = { backendGflops: mm, blasPeakGflops: blas, peakUsed: peak };
    for (const [name, r] of [['tiny', tiny], ['small', small]] as const) {
      const g = (r as { gflops: number }).gflops;
      results[`train_${name}`] = { ...r, shareOfPeak: g / peak, shareOfBackendMatmul: g / mm };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (json) {
    process.stdout.write(JSON.stringify(results) + '\n');
    return;
  }
  const r = results as Record<string, Record<string, number | object>>;
  const f = (x: unknown, d = 1) => (typeof x === 'number' ? x.toFixed(d) : String(x));
  console.log(`backend: ${results.backend}`);
  console.log(`TFRecord read (uncompressed MB/s): gunzip only ${f(r.tfrecord!.gunzipMBps)} · frames+CRC ${f(r.tfrecord!.framesMBps)} (${f(r.tfrecord!.framesVsGunzip, 2)}× gunzip) · full AITW steps ${f(r.tfrecord!.stepsMBps)} (${f(r.tfrecord!.stepsVsGunzip, 2)}×), ${f(r.tfrecord!.stepsPerSecond, 0)} steps/s`);
  console.log(`prepare (built-in encoder): ${f(r.prepare!.screensPerSecond, 0)} screens/s (target ≥ 100) · encoder ${f(r.prepare!.encoderMsPerScreen, 2)} ms/screen`);
  console.log(`matmul 512²: backend ${f(r.matmul!.backendGflops)} GFLOP/s · BLAS peak ${f(r.matmul!.blasPeakGflops)} GFLOP/s`);
  for (const name of ['tiny', 'small']) {
    const t = r[`train_${name}`] as Record<string, number | object>;
    console.log(
      `train ${name}: ${f(t.samplesPerSecond)} samples/s · ${f(t.gflops)} GFLOP/s · ${f((t.shareOfPeak as number) * 100)}% of peak · ${f((t.shareOfBackendMatmul as number) * 100)}% of backend matmul · top kernels ${(t.topKernels as { name: string; share: number }[]).map((k) => `${k.name} ${(k.share * 100).toFixed(0)}%`).join(', ')}`,
    );
    const a = t.withAuxLosses as { samplesPerSecond: number; slowdown: number } | undefined;
    if (a) console.log(`train ${name} with grounding + referring losses: ${f(a.samplesPerSecond)} samples/s (${f(a.slowdown, 2)}× the step time)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
