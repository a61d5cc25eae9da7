/**
 * OpenBLAS-backed replacements for the tfjs `cpu` backend's matmul kernels (BatchMatMul and
 * _FusedMatMul). The cpu backend keeps every tensor as a plain TypedArray in its data store, so the
 * addon reads and writes that memory directly; the wasm backend would need copies in and out of
 * its heap. Matmul gradients are matmuls too, so training takes the fast path in both directions.
 *
 * Semantics are those of the JS kernels they replace: same output shape and dtype, same batch
 * indexing (`bi % batchDim`, which tfjs uses for broadcasting), same errors on bad shapes, and the
 * original kernels still handle anything that is not float32.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import type { MathBackendCPU } from '@tensorflow/tfjs-backend-cpu';
import { loadNativeBlas, type NativeBlas } from './blas.js';

type KernelFunc = tf.KernelConfig['kernelFunc'];
type Activation = 'linear' | 'relu' | 'relu6' | 'elu' | 'prelu' | 'leakyrelu' | 'sigmoid';

const BACKEND = 'cpu';
const KERNELS = [tf.BatchMatMul, tf._FusedMatMul] as const;
/** The cpu backend's own kernels, kept to restore them and for inputs the addon does not take. */
let originals: Map<string, tf.KernelConfig> | undefined;

/** The shapes of one (batched) product, as the cpu backend's BatchMatMul derives them. */
export interface MatMulPlan {
  outShape: number[];
  batch: number;
  batchA: number;
  batchB: number;
  m: number;
  n: number;
  k: number;
}

/** Pure shape logic of tfjs BatchMatMul (including its error messages), shared by both kernels. */
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

function float32Values(backend: MathBackendCPU, t: tf.TensorInfo): Float32Array | undefined {
  if (t.dtype !== 'float32') return undefined;
  const values = backend.data.get(t.dataId).values;
  return values instanceof Float32Array ? values : undefined;
}

/** op(a) · op(b) on the addon, or undefined when an input is not a float32 array it can read. */
function nativeMatMul(blas: NativeBlas, backend: MathBackendCPU, a: tf.TensorInfo, b: tf.TensorInfo, transposeA: boolean, transposeB: boolean): tf.TensorInfo | undefined {
  const av = float32Values(backend, a);
  const bv = float32Values(backend, b);
  if (!av || !bv) return undefined;
  const p = planMatMul(a.shape, b.shape, transposeA, transposeB);
  const out = new Float32Array(p.batch * p.m * p.n);
  blas.sgemm(av, bv, out, p.batch, p.batchA, p.batchB, p.m, p.n, p.k, transposeA, transposeB);
  return backend.makeTensorInfo(p.outShape, 'float32', out);
}

function runOriginal(kernel: string, args: Parameters<KernelFunc>[0]): ReturnType<KernelFunc> {
  return originals!.get(kernel)!.kernelFunc(args);
}

/** One cpu kernel by name (the same registry tfjs dispatches through). */
function cpuKernel(name: string, inputs: tf.NamedTensorInfoMap, backend: MathBackendCPU, attrs: tf.NamedAttrMap = {}): tf.TensorInfo {
  return tf.getKernel(name, BACKEND).kernelFunc({ inputs, backend, attrs }) as tf.TensorInfo;
}

/** The cpu backend's applyActivation (utils/fused_utils, not exported), through the registry. */
function applyActivation(backend: MathBackendCPU, x: tf.TensorInfo, activation: Activation, prelu: tf.TensorInfo | undefined, alpha: number | undefined): tf.TensorInfo {
  switch (activation) {
    case 'linear': return cpuKernel(tf.Identity, { x }, backend);
    case 'relu': return cpuKernel(tf.Relu, { x }, backend);
    case 'elu': return cpuKernel(tf.Elu, { x }, backend);
    case 'relu6': return cpuKernel(tf.Relu6, { x }, backend);
    case 'prelu': return cpuKernel(tf.Prelu, { x, alpha: prelu! }, backend);
    case 'leakyrelu': return cpuKernel(tf.LeakyRelu, { x }, backend, { alpha: alpha! });
    case 'sigmoid': return cpuKernel(tf.Sigmoid, { x }, backend);
    default: throw new Error(`Activation ${String(activation)} has not been implemented for the CPU backend.`);
  }
}

function batchMatMulKernel(blas: NativeBlas): KernelFunc {
  return (args) => {
    const { a, b } = args.inputs as unknown as tf.BatchMatMulInputs & Record<'a' | 'b', tf.TensorInfo>;
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    return nativeMatMul(blas, args.backend as MathBackendCPU, a, b, transposeA, transposeB) ?? runOriginal(tf.BatchMatMul, args);
  };
}

/** Matmul on the addon, then bias and activation exactly as the cpu _FusedMatMul kernel applies them. */
function fusedMatMulKernel(blas: NativeBlas): KernelFunc {
  return (args) => {
    const backend = args.backend as MathBackendCPU;
    const { a, b, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const { transposeA, transposeB, activation, leakyreluAlpha } = args.attrs as unknown as tf._FusedMatMulAttrs;
    let current = nativeMatMul(blas, backend, a!, b!, transposeA, transposeB);
    if (!current) return runOriginal(tf._FusedMatMul, args);
    const intermediates: tf.TensorInfo[] = [];
    if (bias) {
      intermediates.push(current);
      current = cpuKernel(tf.Add, { a: current, b: bias }, backend);
    }
    if (activation) {
      intermediates.push(current);
      current = applyActivation(backend, current, activation as Activation, preluActivationWeights, leakyreluAlpha);
    }
    for (const t of intermediates) backend.disposeIntermediateTensorInfo(t);
    return current;
  };
}

/**
 * Registers the OpenBLAS matmul kernels for the `cpu` backend when the addon loads; returns whether
 * they are active. Safe to call again. Call before running ops (kernels are looked up per op).
 */
export function enableNativeKernels(): boolean {
  if (originals) return true;
  const blas = loadNativeBlas();
  if (!blas) return false;
  // The cpu backend's kernels register when its package is imported; we need them to restore and to fall back.
  const saved = new Map<string, tf.KernelConfig>();
  for (const name of KERNELS) {
    const k = tf.getKernel(name, BACKEND);
    if (!k) return false;
    saved.set(name, k);
  }
  originals = saved;
  const replacements: Record<(typeof KERNELS)[number], KernelFunc> = {
    [tf.BatchMatMul]: batchMatMulKernel(blas),
    [tf._FusedMatMul]: fusedMatMulKernel(blas),
  };
  for (const name of KERNELS) {
    tf.unregisterKernel(name, BACKEND);
    tf.registerKernel({ kernelName: name, backendName: BACKEND, kernelFunc: replacements[name] });
  }
  return true;
}

/** Puts the cpu backend's own kernels back (tests and benchmarks compare the two in one process). */
export function disableNativeKernels(): void {
  if (!originals) return;
  for (const [name, config] of originals) {
    tf.unregisterKernel(name, BACKEND);
    tf.registerKernel(config);
  }
  originals = undefined;
}

export function nativeKernelsEnabled(): boolean {
  return originals !== undefined;
}
