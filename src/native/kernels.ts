/**
 * OpenBLAS-backed replacements for the matmul kernels (BatchMatMul and _FusedMatMul) of the tfjs
 * `wasm` and `cpu` backends, registered together with the optimiser kernels and the fused training
 * kernels of fused_ops.ts (fused_kernels.ts). Both backends keep a float32 tensor as one contiguous
 * Float32Array (cpu: in its data store; wasm: a view of the module's heap), so the addon reads the
 * inputs and writes the output in place, with no copies. Matmul gradients are matmuls too, so training takes the fast
 * path in both directions.
 *
 * Why wasm as well as cpu: with matmul on BLAS, the rest of a training step dominates, and the cpu
 * backend's pure-JS elementwise/split/softmax kernels are ~10× slower than wasm's (measured with
 * scripts/bench_native.ts). So the fast configuration is wasm + these kernels.
 *
 * Semantics are those of the kernels replaced: same output shape and dtype, same errors on bad
 * shapes, and the stock kernel still runs anything that is not float32 or broadcasts batches both
 * ways (see flatBroadcast). A one-sided batch broadcast ([B,m,k]×[k,n] or [m,k]×[B,k,n]) is
 * computed as the cpu kernel does; on wasm that is a fix, as its kernel does not broadcast batches.
 * On wasm, Identity (shared memory), GatherV2 (whole slices, gather.ts), and the element-wise ops,
 * Sum, Slice and SplitV (wasm_kernels.ts) are replaced too.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { loadNativeBlas, type NativeBlas } from './blas.js';
import { fusedKernelConfigs } from './fused_kernels.js';
import { gatherSlices, MIN_GATHER_SLICE } from './gather.js';
import { FUSED, FUSED_OPS, type FusedOp } from './fused_ops.js';
import { memoryOf, type NativeBackendName, type TensorMemory } from './memory.js';
import { ADAMW_KERNEL, SUM_SQUARES_KERNEL, type AdamWAttrs } from './optimizer_kernels.js';
import { binaryKernel, sliceKernel, splitKernel, sumKernel } from './wasm_kernels.js';

export type { NativeBackendName } from './memory.js';
type KernelFunc = tf.KernelConfig['kernelFunc'];
type Activation = 'linear' | 'relu' | 'relu6' | 'elu' | 'prelu' | 'leakyrelu' | 'sigmoid';

const KERNELS = [tf.BatchMatMul, tf._FusedMatMul] as const;
/**
 * Replaced on wasm only: the cpu backend's Identity already shares memory, and wasm is the backend
 * that trains and serves (the rest: wasm_kernels.ts).
 */
const WASM_KERNELS = [tf.Identity, tf.GatherV2, tf.Add, tf.Sub, tf.Multiply, tf.Sum, tf.Slice, tf.SplitV] as const;
/** The stock kernels per backend, kept to restore them and for inputs the addon does not take. */
const originals = new Map<NativeBackendName, Map<string, tf.KernelConfig>>();

/** The shapes of one (batched) product, as tfjs's BatchMatMul kernels derive them. */
export interface MatMulPlan {
  outShape: number[];
  batch: number;
  batchA: number;
  batchB: number;
  m: number;
  n: number;
  k: number;
}

/** Shape logic of tfjs BatchMatMul, with its error messages. */
export function planMatMul(aShape: readonly number[], bShape: readonly number[], transposeA: boolean, transposeB: boolean): MatMulPlan {
  const aRank = aShape.length;
  const bRank = bShape.length;
  const innerA = transposeA ? aShape[aRank - 2]! : aShape[aRank - 1]!;
  const innerB = transposeB ? bShape[bRank - 1]! : bShape[bRank - 2]!;
  const m = transposeA ? aShape[aRank - 1]! : aShape[aRank - 2]!;
  const n = transposeB ? bShape[bRank - 2]! : bShape[bRank - 1]!;
  const outerDims = tf.broadcast_util.assertAndGetBroadcastShape(aShape.slice(0, -2), bShape.slice(0, -2));
  tf.util.assert(
    innerA === innerB,
    () => `Error in matMul: inner shapes (${innerA}) and (${innerB}) of Tensors with shapes ${aShape} and ${bShape} and transposeA=${transposeA} and transposeB=${transposeB} must match.`,
  );
  const batchA = tf.util.sizeFromShape(aShape.slice(0, -2));
  const batchB = tf.util.sizeFromShape(bShape.slice(0, -2));
  return { outShape: [...outerDims, m, n], batch: Math.max(batchA, batchB), batchA, batchB, m, n, k: innerA };
}

/**
 * Whether indexing the batch by `bi % batchA` / `bi % batchB` is numpy broadcasting: same batch
 * dims, or one side a single matrix (every use in this project). For mixed broadcasts such as [2,1]×[1,3]
 * tfjs's own kernels go wrong (cpu: too short an output; wasm: no batch broadcasting at all), and
 * those are left to them so that behaviour stays exactly theirs.
 */
function flatBroadcast(p: MatMulPlan): boolean {
  const out = tf.util.sizeFromShape(p.outShape.slice(0, -2));
  // Each side either is one matrix or spans the whole output batch (then its batch dims are the output's).
  return (p.batchA === 1 || p.batchA === out) && (p.batchB === 1 || p.batchB === out);
}

/** op(a) · op(b) on the addon, or undefined when an input is not float32. */
function nativeMatMul(blas: NativeBlas, mem: TensorMemory, dispose: (t: tf.TensorInfo) => void, a: tf.TensorInfo, b: tf.TensorInfo, transposeA: boolean, transposeB: boolean): tf.TensorInfo | undefined {
  if (a.dtype !== 'float32' || b.dtype !== 'float32') return undefined;
  const p = planMatMul(a.shape, b.shape, transposeA, transposeB);
  if (!flatBroadcast(p)) return undefined;
  const out = mem.allocate(p.outShape);
  const av = mem.view(a);
  const bv = mem.view(b);
  if (!av || !bv) {
    dispose(out.info);
    return undefined;
  }
  blas.sgemm(av, bv, out.values, p.batch, p.batchA, p.batchB, p.m, p.n, p.k, transposeA, transposeB);
  return out.info;
}

/** One kernel of the same backend, by name (the registry tfjs dispatches through). */
function runKernel(backendName: NativeBackendName, name: string, inputs: tf.NamedTensorInfoMap, backend: unknown, attrs: tf.NamedAttrMap = {}): tf.TensorInfo {
  const k = tf.getKernel(name, backendName);
  if (!k) throw new Error(`${name} is not registered for the ${backendName} backend`);
  return k.kernelFunc({ inputs, backend: backend as tf.KernelBackend, attrs }) as tf.TensorInfo;
}

/** What the backends' fused matmul applies after the product (cpu: utils/fused_utils applyActivation). */
function applyActivation(backendName: NativeBackendName, backend: unknown, x: tf.TensorInfo, activation: Activation, prelu: tf.TensorInfo | undefined, alpha: number | undefined): tf.TensorInfo {
  const run = (name: string, inputs: tf.NamedTensorInfoMap, attrs?: tf.NamedAttrMap) => runKernel(backendName, name, inputs, backend, attrs);
  switch (activation) {
    case 'linear': return run(tf.Identity, { x });
    case 'relu': return run(tf.Relu, { x });
    case 'elu': return run(tf.Elu, { x });
    case 'relu6': return run(tf.Relu6, { x });
    case 'prelu': return run(tf.Prelu, { x, alpha: prelu! });
    case 'leakyrelu': return run(tf.LeakyRelu, { x }, { alpha: alpha ?? 0.2 });
    case 'sigmoid': return run(tf.Sigmoid, { x });
    default: throw new Error(`Activation ${String(activation)} has not been implemented for the ${backendName} backend.`);
  }
}

function batchMatMulKernel(blas: NativeBlas, backendName: NativeBackendName): KernelFunc {
  const original = originals.get(backendName)!.get(tf.BatchMatMul)!.kernelFunc;
  return (args) => {
    const { a, b } = args.inputs as Record<'a' | 'b', tf.TensorInfo>;
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    const backend = args.backend as tf.KernelBackend;
    const mem = memoryOf(backendName, backend);
    return nativeMatMul(blas, mem, (t) => backend.disposeData(t.dataId), a, b, transposeA, transposeB) ?? original(args);
  };
}

/** Product on the addon, then bias and activation by the backend's own kernels, in the order its fused kernel uses. */
function fusedMatMulKernel(blas: NativeBlas, backendName: NativeBackendName): KernelFunc {
  const original = originals.get(backendName)!.get(tf._FusedMatMul)!.kernelFunc;
  return (args) => {
    const backend = args.backend as tf.KernelBackend;
    const { a, b, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const { transposeA, transposeB, activation, leakyreluAlpha } = args.attrs as unknown as tf._FusedMatMulAttrs;
    const dispose = (t: tf.TensorInfo) => backend.disposeData(t.dataId);
    let current = nativeMatMul(blas, memoryOf(backendName, backend), dispose, a!, b!, transposeA, transposeB);
    if (!current) return original(args);
    const intermediates: tf.TensorInfo[] = [];
    if (bias) {
      intermediates.push(current);
      current = runKernel(backendName, tf.Add, { a: current, b: bias }, backend);
    }
    if (activation) {
      intermediates.push(current);
      current = applyActivation(backendName, backend, current, activation as Activation, preluActivationWeights, leakyreluAlpha);
    }
    for (const t of intermediates) dispose(t);
    return current;
  };
}

/** AdamW for one parameter on the addon (optimizer_kernels.ts): three fresh outputs, so no tensor is changed in place. */
function adamwKernel(blas: NativeBlas, backendName: NativeBackendName): KernelFunc {
  return (args) => {
    const { p, g, m, v } = args.inputs as Record<'p' | 'g' | 'm' | 'v', tf.TensorInfo>;
    const a = args.attrs as unknown as AdamWAttrs;
    const mem = memoryOf(backendName, args.backend);
    const outs = [p, m, v].map((t) => mem.allocate([...t.shape]));
    // Views after every allocation: on wasm an allocation may grow (and move) the heap.
    const views = [p, g, m, v, ...outs.map((o) => o.info)].map((t) => mem.view(t));
    if (views.some((x) => !x)) throw new Error(`${ADAMW_KERNEL}: inputs must be float32`);
    const [pv, gv, mv, vv, po, mo, vo] = views as Float32Array[];
    blas.adamw(pv!, gv!, mv!, vv!, po!, mo!, vo!, a.lr, a.beta1, a.beta2, a.bc1, a.bc2, a.epsilon, a.decay, a.gradScale);
    return outs.map((o) => o.info);
  };
}

/** Σ x² over every input on the addon, as one float32 scalar. */
function sumSquaresKernel(blas: NativeBlas, backendName: NativeBackendName): KernelFunc {
  return (args) => {
    const mem = memoryOf(backendName, args.backend);
    const out = mem.allocate([]);
    let sum = 0;
    for (const t of Object.values(args.inputs) as tf.TensorInfo[]) {
      const x = mem.view(t);
      if (!x) throw new Error(`${SUM_SQUARES_KERNEL}: inputs must be float32`);
      sum += blas.sumSquares(x);
    }
    mem.view(out.info)![0] = sum;
    return out.info;
  };
}

const OPTIMIZER_KERNELS = [ADAMW_KERNEL, SUM_SQUARES_KERNEL] as const;

/**
 * Identity that shares its input's memory (one more reference), as the cpu backend's and wasm's own
 * Reshape do. tfjs runs Identity on every tensor it saves for the backward pass; wasm's stock kernel
 * copies each one (~380 copies per `tiny` training step). Nothing in tfjs writes into a tensor's
 * memory after creation, and neither do our kernels (they always allocate outputs), so sharing is safe.
 */
function sharedIdentityKernel(backendName: NativeBackendName): KernelFunc {
  const original = originals.get(backendName)!.get(tf.Identity)!.kernelFunc;
  return (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (x.dtype === 'string') return original(args);
    (args.backend as unknown as { incRef(id: tf.DataId): void }).incRef(x.dataId);
    return { dataId: x.dataId, shape: [...x.shape], dtype: x.dtype };
  };
}

/**
 * GatherV2 copying whole slices (gather.ts) where a slice is long enough to pay for a copy call,
 * and for every batched gather; other dtypes, short unbatched slices and out-of-range indices (its
 * error) go to the stock kernel.
 */
function sliceGatherKernel(backendName: NativeBackendName): KernelFunc {
  const original = originals.get(backendName)!.get(tf.GatherV2)!.kernelFunc;
  return (args) => {
    const { x, indices } = args.inputs as Record<'x' | 'indices', tf.TensorInfo>;
    const { axis, batchDims } = args.attrs as unknown as tf.GatherV2Attrs;
    if ((x.dtype !== 'float32' && x.dtype !== 'int32') || indices.dtype !== 'int32') return original(args);
    const shape = tf.backend_util.segment_util.collectGatherOpShapeInfo(x, indices, tf.util.parseAxisParam(axis, x.shape)[0]!, batchDims);
    // Batched gathers always: wasm's own kernel reads the wrong memory for batchDims > 0.
    if (shape.sliceSize < MIN_GATHER_SLICE && shape.batchSize === 1) return original(args);
    const backend = args.backend as unknown as BackendWasm;
    if ((backend.typedArrayFromHeap(indices) as Int32Array).some((i) => i < 0 || i >= shape.dimSize)) return original(args);
    const out = backend.makeOutput(shape.outputShape, x.dtype);
    // Views after the allocation, which may move the heap.
    const view = (t: tf.TensorInfo) => backend.typedArrayFromHeap(t) as Float32Array | Int32Array;
    gatherSlices(view(x), view(indices) as Int32Array, shape, view(out));
    return out;
  };
}

/**
 * Registers the OpenBLAS matmul kernels for `backends` (default both) when the addon loads, with
 * the fused kernels unless AUTOUI_FUSED=0; returns whether they are active for at least one. Safe
 * to call again. Kernels are looked up per op, so this takes effect for every op run afterwards,
 * whichever backend is current.
 */
export function enableNativeKernels(backends: readonly NativeBackendName[] = ['wasm', 'cpu']): boolean {
  const blas = loadNativeBlas();
  if (!blas) return false;
  for (const name of backends) {
    if (originals.has(name)) continue;
    const replaced = name === 'wasm' ? [...KERNELS, ...WASM_KERNELS] : KERNELS;
    const saved = new Map<string, tf.KernelConfig>();
    for (const kernel of replaced) {
      const k = tf.getKernel(kernel, name);
      if (k) saved.set(kernel, k);
    }
    if (saved.size !== replaced.length) continue;
    originals.set(name, saved);
    const stock = (kernel: string) => saved.get(kernel)!.kernelFunc;
    const replacements: Record<string, () => KernelFunc> = {
      [tf.BatchMatMul]: () => batchMatMulKernel(blas, name),
      [tf._FusedMatMul]: () => fusedMatMulKernel(blas, name),
      [tf.Identity]: () => sharedIdentityKernel(name),
      [tf.GatherV2]: () => sliceGatherKernel(name),
      [tf.Add]: () => binaryKernel(blas, tf.Add, stock(tf.Add)),
      [tf.Sub]: () => binaryKernel(blas, tf.Sub, stock(tf.Sub)),
      [tf.Multiply]: () => binaryKernel(blas, tf.Multiply, stock(tf.Multiply)),
      [tf.Sum]: () => sumKernel(blas, stock(tf.Sum)),
      [tf.Slice]: () => sliceKernel(stock(tf.Slice)),
      [tf.SplitV]: () => splitKernel(stock(tf.SplitV)),
    };
    for (const kernel of replaced) {
      // setupFunc/disposeFunc of the stock kernel (wasm: binding its C++ function) are not needed here.
      tf.unregisterKernel(kernel, name);
      tf.registerKernel({ kernelName: kernel, backendName: name, kernelFunc: replacements[kernel]!() });
    }
    tf.registerKernel({ kernelName: ADAMW_KERNEL, backendName: name, kernelFunc: adamwKernel(blas, name) });
    tf.registerKernel({ kernelName: SUM_SQUARES_KERNEL, backendName: name, kernelFunc: sumSquaresKernel(blas, name) });
    if (process.env.AUTOUI_FUSED !== '0') enableFusedKernels([name]);
  }
  return originals.size > 0;
}

/**
 * Registers the fused training kernels (fused_ops.ts) of `ops` (default all) for backends whose
 * native kernels are on; the model then takes the fused path for those ops (AUTOUI_FUSED=0 leaves
 * them all off by default). Returns whether the native kernels are on for at least one backend.
 */
export function enableFusedKernels(backends: readonly NativeBackendName[] = ['wasm', 'cpu'], ops?: readonly FusedOp[]): boolean {
  const blas = loadNativeBlas();
  if (!blas) return false;
  const wanted = new Set((ops ?? (Object.keys(FUSED_OPS) as FusedOp[])).flatMap((op) => FUSED_OPS[op]));
  let any = false;
  for (const name of backends) {
    if (!originals.has(name)) continue;
    any = true;
    for (const config of fusedKernelConfigs(blas, name)) {
      if (wanted.has(config.kernelName as (typeof FUSED)[keyof typeof FUSED]) && !tf.getKernel(config.kernelName, name)) tf.registerKernel(config);
    }
  }
  return any;
}

/** Unregisters the fused kernels (the model falls back to its tfjs op chains); the matmul kernels stay. */
export function disableFusedKernels(backends: readonly NativeBackendName[] = ['wasm', 'cpu']): void {
  for (const name of backends) {
    for (const kernel of Object.values(FUSED)) if (tf.getKernel(kernel, name)) tf.unregisterKernel(kernel, name);
  }
}

/** Puts the stock kernels back (tests and benchmarks compare the two in one process). */
export function disableNativeKernels(backends: readonly NativeBackendName[] = ['wasm', 'cpu']): void {
  for (const name of backends) {
    const saved = originals.get(name);
    if (!saved) continue;
    // A stock kernel's setupFunc runs when its backend initialises; if that happened while ours was
    // registered, run it now (wasm binds its C++ entry point there).
    const instance = tf.findBackend(name);
    for (const [kernel, config] of saved) {
      tf.unregisterKernel(kernel, name);
      tf.registerKernel(config);
      if (instance) config.setupFunc?.(instance);
    }
    for (const kernel of OPTIMIZER_KERNELS) tf.unregisterKernel(kernel, name);
    disableFusedKernels([name]);
    originals.delete(name);
  }
}

/** The backends whose matmuls currently run on the addon. */
export function nativeKernelBackends(): NativeBackendName[] {
  return [...originals.keys()];
}
