/**
 * The native kernels (src/native) against the stock backends, side by side in one run: matmul
 * GFLOP/s (plain 2-D, transposed, batched as in attention), a full `tiny` training step (as
 * scripts/bench.ts runs it) and inference (encode + incremental decoding), each on the stock
 * backend, with the OpenBLAS matmul kernels only (+blas), and with the fused kernels too (+fused).
 * Prints a table, or one JSON object with --json.
 *
 *   node dist/scripts/bench_native.js [--json] [--skip-cpu] [--profile] [--steps N]
 * --skip-cpu leaves out the pure-JS cpu backend (~0.8 GFLOP/s, the slow column).
 * The machine's 2 cores are shared: figures move with other people's load, so all three
 * configurations are measured in one process, interleaved as little as possible.
 */
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../src/backend.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { modelConfig } from '../src/model/config.js';
import { forwardFlops, type BatchShape } from '../src/model/flops.js';
import { disableFusedKernels, disableNativeKernels, enableFusedKernels, enableNativeKernels } from '../src/native/kernels.js';
import { loadNativeBlas } from '../src/native/blas.js';
import { AdamW } from '../src/train/adamw.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const skipCpu = args.includes('--skip-cpu');
const profile = args.includes('--profile');
const stepsArg = args.indexOf('--steps');
const trainSteps = stepsArg >= 0 ? Number(args[stepsArg + 1]) : 3;
const log = (s: string) => process.stderr.write(s + '\n');

type Config = 'wasm' | 'wasm+blas' | 'wasm+fused' | 'cpu' | 'cpu+blas' | 'cpu+fused';

async function use(config: Config): Promise<void> {
  const backend = config.startsWith('wasm') ? 'wasm' : 'cpu';
  await initBackend(backend);
  if (config.includes('+')) {
    if (!enableNativeKernels([backend])) throw new Error('native addon not built: run node scripts/build-native.mjs');
    if (config.endsWith('+fused')) enableFusedKernels([backend]);
    else disableFusedKernels([backend]);
  } else {
    disableNativeKernels([backend]);
  }
}

/** Repeats f until at least `minSeconds` have passed (and at least twice); seconds per call. */
function timePerCall(f: () => void, minSeconds: number): number {
  f(); // warm-up (kernel set-up, wasm/BLAS buffers)
  let calls = 0;
  const t0 = performance.now();
  do {
    f();
    calls++;
  } while (calls < 2 || performance.now() - t0 < minSeconds * 1000);
  return (performance.now() - t0) / 1000 / calls;
}

interface OpCase {
  name: string;
  a: number[];
  b: number[];
  transposeA: boolean;
  transposeB: boolean;
}

const OPS: OpCase[] = [
  { name: '2-D 512² a·b', a: [512, 512], b: [512, 512], transposeA: false, transposeB: false },
  { name: '2-D 512² a·bᵀ', a: [512, 512], b: [512, 512], transposeA: false, transposeB: true },
  { name: '2-D 512² aᵀ·b', a: [512, 512], b: [512, 512], transposeA: true, transposeB: false },
  { name: 'batched [128,32,32]·[128,32,40]', a: [128, 32, 32], b: [128, 32, 40], transposeA: false, transposeB: false },
  { name: 'batched [128,32,32]·[128,40,32]ᵀ (q·kᵀ)', a: [128, 32, 32], b: [128, 40, 32], transposeA: false, transposeB: true },
  { name: 'dense [1280,128]·[128,768]', a: [1280, 128], b: [128, 768], transposeA: false, transposeB: false },
];

function opGflops(c: OpCase, minSeconds: number): number {
  const a = tf.randomNormal(c.a);
  const b = tf.randomNormal(c.b);
  // wasm and cpu kernels run synchronously, so reading one element back is enough to be sure the
  // product is done; reading all of it would time a copy of the output (wasm) instead of the op.
  const secs = timePerCall(() => tf.tidy(() => void tf.slice(tf.reshape(tf.matMul(a, b, c.transposeA, c.transposeB), [-1]), 0, 1).dataSync()), minSeconds);
  const k = c.transposeA ? c.a.at(-2)! : c.a.at(-1)!;
  const m = c.transposeA ? c.a.at(-1)! : c.a.at(-2)!;
  const n = c.transposeB ? c.b.at(-2)! : c.b.at(-1)!;
  const batch = Math.max(tf.util.sizeFromShape(c.a.slice(0, -2)), tf.util.sizeFromShape(c.b.slice(0, -2)));
  tf.dispose([a, b]);
  return (2 * batch * m * n * k) / secs / 1e9;
}

const SHAPE: BatchShape = { B: 32, L: 40, T: 14, P: 128 };
const MODEL_SIZES = { vocabSize: 600, screenDim: 64, dropoutRate: 0.1 };

function makeBatch(config: ReturnType<typeof modelConfig>, { B, L, T, P }: BatchShape) {
  return {
    inputIds: tf.randomUniform([B, L], 2, config.vocabSize, 'int32', 1) as tf.Tensor2D,
    inputMask: tf.ones([B, L], 'int32') as tf.Tensor2D,
    screen: tf.randomNormal([B, P, config.screenDim], 0, 1, 'float32', 2) as tf.Tensor3D,
    labels: tf.randomUniform([B, T], 2, config.vocabSize, 'int32', 3) as tf.Tensor2D,
  };
}

/** One training step as scripts/bench.ts runs it: variableGrads over the loss, then AdamW. */
async function benchTrain(minSteps: number, minSeconds: number): Promise<{ secondsPerStep: number; samplesPerSecond: number; gflops: number; topKernels?: Array<{ name: string; share: number }> }> {
  const config = modelConfig('tiny', MODEL_SIZES);
  const model = new AutoUiModel(config, 1);
  const weights = model.namedWeights();
  const opt = new AdamW(weights);
  const varName = new Map([...weights].map(([hf, v]) => [v.name, hf]));
  const batch = makeBatch(config, SHAPE);
  const step = () => {
    const { value, grads } = tf.variableGrads(() => model.loss(batch, true), [...weights.values()]);
    value.dataSync();
    opt.apply(new Map(Object.entries(grads).map(([k, g]) => [varName.get(k)!, g])), 1e-4);
    tf.dispose([value, ...Object.values(grads)]);
  };
  step(); // warm-up
  let n = 0;
  const t0 = performance.now();
  do {
    step();
    n++;
  } while (n < minSteps || (performance.now() - t0) / 1000 < minSeconds);
  const secs = (performance.now() - t0) / 1000 / n;
  let topKernels: Array<{ name: string; share: number }> | undefined;
  if (profile) {
    const kernels = new Map<string, number>();
    const p = await tf.profile(step);
    // Registered kernels only: a customGrad scope's time is its inner kernels' again.
    for (const k of p.kernels) if (tf.getKernel(k.name, tf.getBackend())) kernels.set(k.name, (kernels.get(k.name) ?? 0) + (typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0));
    const total = [...kernels.values()].reduce((x, y) => x + y, 0) || 1;
    topKernels = [...kernels].sort((x, y) => y[1] - x[1]).slice(0, 8).map(([name, ms]) => ({ name, share: ms / total }));
  }
  tf.dispose(Object.values(batch));
  model.dispose();
  opt.dispose();
  const flops = 3 * forwardFlops(config, SHAPE).total;
  return { secondsPerStep: secs, samplesPerSecond: SHAPE.B / secs, gflops: flops / secs / 1e9, topKernels };
}

/** Inference: encode a batch, then greedy incremental decoding for `steps` tokens. */
function benchInfer(batchSize: number, steps: number, minSeconds: number): { secondsPerBatch: number; samplesPerSecond: number; msPerDecodeStep: number } {
  const config = modelConfig('tiny', MODEL_SIZES);
  const model = new AutoUiModel(config, 1);
  const batch = makeBatch(config, { ...SHAPE, B: batchSize });
  let decodeSecs = 0;
  const run = () => {
    const hFuse = model.encode(batch.inputIds, batch.inputMask, batch.screen);
    let state = model.startDecoding(hFuse, batch.inputMask);
    let tokens = tf.fill([batchSize], config.decoderStartTokenId, 'int32') as tf.Tensor1D;
    const t = performance.now();
    for (let i = 0; i < steps; i++) {
      const r = model.decodeStep(state, tokens);
      state = r.state;
      tokens.dispose();
      tokens = tf.tidy(() => tf.cast(tf.argMax(r.logits, -1), 'int32')) as tf.Tensor1D;
      tokens.dataSync(); // greedy decoding needs the ids on the host each step
      r.logits.dispose();
    }
    decodeSecs += (performance.now() - t) / 1000;
    tokens.dispose();
    model.disposeDecoding(state);
    hFuse.dispose();
  };
  run();
  decodeSecs = 0;
  let calls = 0;
  const t0 = performance.now();
  do {
    run();
    calls++;
  } while (calls < 2 || performance.now() - t0 < minSeconds * 1000);
  const secs = (performance.now() - t0) / 1000 / calls;
  tf.dispose(Object.values(batch));
  model.dispose();
  return { secondsPerBatch: secs, samplesPerSecond: batchSize / secs, msPerDecodeStep: (decodeSecs / calls / steps) * 1000 };
}

/** Bit-identical results run to run (training resume depends on it): one step's gradients, twice. */
function determinismCheck(): boolean {
  const config = modelConfig('tiny', { ...MODEL_SIZES, dropoutRate: 0 });
  const model = new AutoUiModel(config, 1);
  const weights = [...model.namedWeights().values()];
  const batch = makeBatch(config, { ...SHAPE, B: 8 });
  const grads = () => {
    const { value, grads: g } = tf.variableGrads(() => model.loss(batch, true), weights);
    const flat = [value, ...Object.values(g)].map((t) => t.dataSync().slice());
    tf.dispose([value, ...Object.values(g)]);
    return flat;
  };
  const a = grads();
  const b = grads();
  tf.dispose(Object.values(batch));
  model.dispose();
  return a.every((x, i) => x.length === b[i]!.length && x.every((v, j) => Object.is(v, b[i]![j])));
}

async function main(): Promise<void> {
  const blas = loadNativeBlas();
  const native = (b: 'wasm' | 'cpu'): Config[] => (blas ? [`${b}+blas`, `${b}+fused`] : []);
  const configs: Config[] = ['wasm', ...native('wasm'), ...(skipCpu ? [] : (['cpu', ...native('cpu')] as Config[]))];
  if (!blas) log('native addon not built: measuring wasm and cpu only (node scripts/build-native.mjs)');
  const results: Record<string, unknown> = { openblas: blas?.config(), blasThreads: blas?.threads(), loadAverage: (await import('node:os')).loadavg()[0] };
  const ops: Record<string, Record<string, number>> = {};
  const train: Record<string, unknown> = {};
  const infer: Record<string, unknown> = {};
  for (const config of configs) {
    await use(config);
    const slow = config === 'cpu';
    log(`${config}: ops…`);
    for (const c of OPS) (ops[c.name] ??= {})[config] = opGflops(c, slow ? 0.5 : 0.3);
    log(`${config}: training step…`);
    train[config] = await benchTrain(slow ? 1 : trainSteps, slow ? 0 : 2);
    log(`${config}: inference…`);
    infer[config] = benchInfer(8, 16, slow ? 0 : 1);
  }
  results.ops = ops;
  results.train = train;
  results.infer = infer;
  if (blas) {
    results.deterministic = {};
    for (const c of ['wasm+blas', 'wasm+fused', 'cpu+fused'] as const) {
      await use(c);
      (results.deterministic as Record<string, boolean>)[c] = determinismCheck();
    }
  }
  results.loadAverageAfter = (await import('node:os')).loadavg()[0];
  if (json) {
    process.stdout.write(JSON.stringify(results) + '\n');
    return;
  }
  const f = (x: number | undefined, d = 1) => (x === undefined ? '–' : x.toFixed(d));
  console.log(`OpenBLAS: ${results.openblas ?? 'not built'} · threads ${results.blasThreads ?? '–'} · load average ${f(results.loadAverage as number, 2)} → ${f(results.loadAverageAfter as number, 2)} (2 shared cores)`);
  console.log(`\n${'matmul GFLOP/s'.padEnd(42)}${configs.map((c) => c.padStart(12)).join('')}`);
  for (const c of OPS) console.log(`${c.name.padEnd(42)}${configs.map((k) => f(ops[c.name]![k]).padStart(12)).join('')}`);
  console.log(`\ntiny training step, B=${SHAPE.B} L=${SHAPE.L} T=${SHAPE.T} P=${SHAPE.P}`);
  for (const c of configs) {
    const t = train[c] as Awaited<ReturnType<typeof benchTrain>>;
    const top = t.topKernels ? ` · top kernels ${t.topKernels.map((k) => `${k.name} ${(k.share * 100).toFixed(0)}%`).join(', ')}` : '';
    console.log(`  ${c.padEnd(11)} ${f(t.samplesPerSecond).padStart(7)} samples/s · ${f(1 / t.secondsPerStep, 2)} steps/s · ${f(t.gflops)} GFLOP/s${top}`);
  }
  console.log('\ninference (encode + 16 greedy decodeStep), B=8');
  for (const c of configs) {
    const r = infer[c] as ReturnType<typeof benchInfer>;
    console.log(`  ${c.padEnd(11)} ${f(r.samplesPerSecond).padStart(7)} samples/s · ${f(r.secondsPerBatch * 1000, 0)} ms/batch · ${f(r.msPerDecodeStep, 2)} ms/decodeStep`);
  }
  if (blas) console.log(`\nbit-identical gradients run to run: ${JSON.stringify(results.deterministic)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
