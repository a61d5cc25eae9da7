/**
 * `npm run bench:serve`: serving speed in one process, screenshot bytes in → action out (image
 * decode + vision features + model), for the tiny and small presets with RANDOM weights (speed does
 * not depend on training; the grammar constraint keeps outputs well-formed).
 *
 * Reports per preset: p50/p95 latency of sequential requests, the time split, incremental (KV
 * cache) vs naive (full decoder re-run per token) greedy decoding as a ratio, and throughput with
 * N concurrent HTTP clients for a fixed duration, with the error count and RSS at start and end.
 *
 *   node dist/scripts/bench_serve.js [--seconds 60] [--presets tiny,small] [--clients 8] [--requests 30] [--json]
 */
import * as tf from '@tensorflow/tfjs-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { greedyDecode } from '../src/infer/generate.js';
import { Predictor, type PreparedRequest } from '../src/infer/predict.js';
import { startServer } from '../src/infer/server.js';
import type { AutoUiModel } from '../src/model/autoui.js';
import type { ActionCodec } from '../src/model/codec.js';
import { isPresetName, type PresetName } from '../src/model/config.js';
import { TargetConstraint } from '../src/model/constrained.js';
import { inputBatch } from '../src/model/batch.js';
import { makeScreenshot } from '../tests/helpers/screens.js';
import { makeTinyCheckpoint } from '../tests/helpers/tiny_checkpoint.js';

interface Args {
  seconds: number;
  presets: PresetName[];
  clients: number;
  requests: number;
  width: number;
  height: number;
  json: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { seconds: 60, presets: ['tiny', 'small'], clients: 8, requests: 30, width: 1080, height: 2400, json: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const v = (): string => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${k} needs a value`);
      return x;
    };
    const num = (min: number): number => {
      const n = Number(v());
      if (!Number.isFinite(n) || n < min) throw new Error(`${k} must be a number ≥ ${min}`);
      return n;
    };
    if (k === '--seconds') a.seconds = num(1);
    else if (k === '--clients') a.clients = Math.round(num(1));
    else if (k === '--requests') a.requests = Math.round(num(3));
    else if (k === '--json') a.json = true;
    else if (k === '--image') {
      const m = /^(\d+)x(\d+)$/.exec(v());
      if (!m) throw new Error('--image must be WIDTHxHEIGHT, e.g. 1080x2400');
      a.width = Number(m[1]);
      a.height = Number(m[2]);
    } else if (k === '--presets') {
      a.presets = v().split(',').map((p) => {
        if (!isPresetName(p)) throw new Error(`unknown preset '${p}'`);
        return p;
      });
    } else throw new Error(`unknown option ${k} (see the header of scripts/bench_serve.ts)`);
  }
  return a;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const mib = (bytes: number): number => Math.round(bytes / 1024 / 1024);

/** The naïve loop: every new token re-runs the whole decoder over all tokens so far (no cache). */
function naiveGreedy(model: AutoUiModel, codec: ActionCodec, constraint: TargetConstraint, ids: number[][], screen: tf.Tensor3D): number[][] {
  const { inputIds, inputMask } = inputBatch(ids, codec.tokenizer.padId);
  const fused = model.encode(inputIds, inputMask, screen);
  const B = ids.length;
  const V = constraint.vocabSize;
  let states = ids.map(() => constraint.initial());
  const out: number[][] = ids.map(() => []);
  const masks = new Float32Array(B * V);
  for (let t = 0; t < codec.config.maxTargetTokens && !states.every((s) => constraint.isDone(s)); t++) {
    constraint.fillMasks(states, masks);
    const next = tf.tidy(() => {
      const dec = tf.tensor2d(out.map((o) => [model.config.decoderStartTokenId, ...o, ...Array(t - o.length).fill(codec.tokenizer.padId)]).flat(), [B, t + 1], 'int32');
      const logits = model.decode(fused, inputMask, dec);
      const last = tf.reshape(tf.slice(logits, [0, t, 0], [B, 1, V]), [B, V]);
      return tf.argMax(tf.add(last, tf.tensor2d(masks, [B, V])), 1).dataSync() as Int32Array;
    });
    states = states.map((s, b) => {
      if (constraint.isDone(s)) return s;
      out[b]!.push(next[b]!);
      return constraint.advance(s, next[b]!);
    });
  }
  tf.dispose([fused, inputIds, inputMask]);
  return out;
}

interface PresetResult {
  preset: PresetName;
  parameters: number;
  backend: string;
  image: string;
  latency: { n: number; p50_ms: number; p95_ms: number; mean_decode_ms: number; mean_features_ms: number; mean_model_ms: number };
  decoding: { tokens: number; incremental_ms: number; naive_ms: number; ratio: number; same_output: boolean };
  throughput: { clients: number; seconds: number; requests: number; errors: number; per_second: number; p50_ms: number; p95_ms: number; mean_batch: number; rss_start_mib: number; rss_warm_mib: number; rss_end_mib: number; tensors_start: number; tensors_end: number };
}

async function benchPreset(preset: PresetName, args: Args, shot: Buffer, root: string): Promise<PresetResult> {
  const dir = join(root, preset);
  await makeTinyCheckpoint(dir, { preset, seed: 7 });
  const predictor = await Predictor.load(dir);
  const goal = 'open the settings app';
  const history = [{ action_type: 'PRESS_HOME' }, { action_type: 'DUAL_POINT', touch_point: [0.5, 0.5], lift_point: [0.5, 0.5] }];
  const one = async (): Promise<{ total: number; decode: number; features: number; model: number }> => {
    const t0 = performance.now();
    const p = await predictor.prepare({ image: shot, goal, history });
    const [r] = await predictor.predictBatch([p]);
    if (!r!.result.ok) throw new Error(`invalid generation: ${r!.result.error}`);
    return { total: performance.now() - t0, decode: r!.timings.decode_ms, features: r!.timings.features_ms, model: r!.timings.model_ms };
  };
  for (let i = 0; i < 3; i++) await one();
  const runs = [];
  for (let i = 0; i < args.requests; i++) runs.push(await one());
  const totals = runs.map((r) => r.total);

  // Incremental vs naïve decoding on the same prepared request (batch of 1).
  const prepared: PreparedRequest = await predictor.prepare({ image: shot, goal, history });
  const [feat] = await predictor.encoder.encode([prepared.image]);
  const { patches, dim } = predictor.encoder.info;
  const screen = tf.tensor3d(feat!, [1, patches, dim]);
  const model = predictor.checkpoint.model;
  const constraint = new TargetConstraint(predictor.codec);
  const incremental = (): number[] => {
    const { inputIds, inputMask } = inputBatch([prepared.inputIds], predictor.codec.tokenizer.padId);
    try {
      return greedyDecode(model, predictor.codec, constraint, { inputIds, inputMask, screen, layouts: null })[0]!.ids;
    } finally {
      tf.dispose([inputIds, inputMask]);
    }
  };
  const naive = (): number[] => naiveGreedy(model, predictor.codec, constraint, [prepared.inputIds], screen)[0]!;
  const time = (f: () => number[], reps: number): { ms: number; ids: number[] } => {
    f();
    const t0 = performance.now();
    let ids: number[] = [];
    for (let i = 0; i < reps; i++) ids = f();
    return { ms: (performance.now() - t0) / reps, ids };
  };
  const reps = preset === 'tiny' ? 10 : 3;
  const inc = time(incremental, reps);
  const nai = time(naive, reps);
  screen.dispose();

  // Throughput over HTTP with concurrent clients.
  const server = await startServer(predictor, { port: 0, maxBatch: args.clients });
  const body = JSON.stringify({ goal, image: shot.toString('base64'), history });
  const rssStart = process.memoryUsage().rss;
  const tensorsStart = tf.memory().numTensors;
  const lat: number[] = [];
  const batches: number[] = [];
  let errors = 0;
  const end = Date.now() + args.seconds * 1000;
  const t0 = performance.now();
  // Memory is flat when RSS after warm-up (the first fifth: wasm heap and buffer pools reach their
  // working size) is about RSS at the end.
  let rssWarm = rssStart;
  const warm = setTimeout(() => (rssWarm = process.memoryUsage().rss), args.seconds * 200);
  await Promise.all(
    Array.from({ length: args.clients }, async () => {
      while (Date.now() < end) {
        const s = performance.now();
        try {
          const r = await fetch(`${server.url}/v1/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          const j = (await r.json()) as { action?: unknown; timings?: { batch_size: number } };
          if (r.status !== 200 || !j.action) errors++;
          else {
            lat.push(performance.now() - s);
            batches.push(j.timings!.batch_size);
          }
        } catch {
          errors++;
        }
      }
    }),
  );
  clearTimeout(warm);
  const elapsed = (performance.now() - t0) / 1000;
  const rssEnd = process.memoryUsage().rss;
  const tensorsEnd = tf.memory().numTensors;
  await server.close();
  const parameters = model.parameterCount();
  const backend = predictor.backend.backend;
  predictor.dispose();
  await rm(dir, { recursive: true, force: true });
  return {
    preset,
    parameters,
    backend,
    image: `${args.width}×${args.height} PNG`,
    latency: {
      n: runs.length,
      p50_ms: quantile(totals, 0.5),
      p95_ms: quantile(totals, 0.95),
      mean_decode_ms: mean(runs.map((r) => r.decode)),
      mean_features_ms: mean(runs.map((r) => r.features)),
      mean_model_ms: mean(runs.map((r) => r.model)),
    },
    decoding: { tokens: inc.ids.length, incremental_ms: inc.ms, naive_ms: nai.ms, ratio: nai.ms / inc.ms, same_output: JSON.stringify(inc.ids) === JSON.stringify(nai.ids) },
    throughput: {
      clients: args.clients,
      seconds: elapsed,
      requests: lat.length,
      errors,
      per_second: lat.length / elapsed,
      p50_ms: lat.length ? quantile(lat, 0.5) : NaN,
      p95_ms: lat.length ? quantile(lat, 0.95) : NaN,
      mean_batch: mean(batches),
      rss_start_mib: mib(rssStart),
      rss_warm_mib: mib(rssWarm),
      rss_end_mib: mib(rssEnd),
      tensors_start: tensorsStart,
      tensors_end: tensorsEnd,
    },
  };
}

function table(results: PresetResult[]): string {
  const f = (n: number, d = 1): string => n.toFixed(d);
  const rows = [
    ['preset', 'params', 'p50 ms', 'p95 ms', 'decode/feat/model ms', 'incr ms', 'naive ms', 'naive/incr', `req/s (${results[0]?.throughput.clients ?? 0} clients)`, 'conc p50/p95 ms', 'batch', 'errors', 'RSS MiB start→warm→end'],
    ...results.map((r) => [
      r.preset,
      `${f(r.parameters / 1e6)}M`,
      f(r.latency.p50_ms),
      f(r.latency.p95_ms),
      `${f(r.latency.mean_decode_ms)}/${f(r.latency.mean_features_ms)}/${f(r.latency.mean_model_ms)}`,
      f(r.decoding.incremental_ms),
      f(r.decoding.naive_ms),
      `${f(r.decoding.ratio, 2)}×${r.decoding.same_output ? '' : ' (outputs differ!)'}`,
      f(r.throughput.per_second, 2),
      `${f(r.throughput.p50_ms, 0)}/${f(r.throughput.p95_ms, 0)}`,
      f(r.throughput.mean_batch, 2),
      String(r.throughput.errors),
      `${r.throughput.rss_start_mib}→${r.throughput.rss_warm_mib}→${r.throughput.rss_end_mib}`,
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')).join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const shot = await makeScreenshot(args.width, args.height);
  const root = await mkdtemp(join(tmpdir(), 'autoui-bench-serve-'));
  const results: PresetResult[] = [];
  try {
    for (const preset of args.presets) {
      if (!args.json) process.stderr.write(`bench:serve: ${preset} (random weights), ${args.seconds} s with ${args.clients} clients...\n`);
      results.push(await benchPreset(preset, args, shot, root));
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  if (args.json) {
    process.stdout.write(JSON.stringify({ note: 'random weights; one process; screenshot bytes in → action out', results }) + '\n');
    return;
  }
  process.stdout.write(`${table(results)}\n(random weights; latency = screenshot bytes → action incl. PNG decode + vision features; backend ${results[0]?.backend ?? '?'})\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:serve: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
