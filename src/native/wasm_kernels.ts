/**
 * Stock wasm kernels that a training step spends most of its non-fused time in, replaced:
 * Add, Sub and Multiply (with broadcasting) and Sum on the addon's threads, Slice and SplitV by
 * contiguous runs. The wasm backend runs the first four on one thread, and its Sum over an axis
 * other than the last transposes the whole input first (a gradient's sum over a broadcast axis is
 * such a sum); its Slice copies a strided slice one innermost row at a time, through a new
 * subarray each. Each replacement computes every element as the stock kernel does (one float32
 * operation; a sum from 0 in index order; a copy), so the bits are the same; inputs it does not
 * take (other dtypes, broadcasts that do not fold to three axes, sums over axes that are not one
 * run or not listed in order) go to the stock kernel.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { NativeBlas } from './blas.js';
import { memoryOf } from './memory.js';

type KernelFunc = tf.KernelConfig['kernelFunc'];
type Shape = readonly number[];
type Triple = [number, number, number];

/** An output [dims] whose element (i, j, k) reads a at i·a[0] + j·a[1] + k·a[2], and b likewise; a[2], b[2] ∈ {0, 1}. */
export interface BroadcastPlan {
  outShape: number[];
  dims: Triple;
  a: Triple;
  b: Triple;
}

/** Row-major strides of `shape` with 0 on the axes of size 1 (so a size-1 axis broadcasts). */
function broadcastStrides(shape: Shape, rank: number): number[] {
  const padded = [...new Array<number>(rank - shape.length).fill(1), ...shape];
  const strides = new Array<number>(rank).fill(0);
  for (let i = rank - 1, s = 1; i >= 0; i--) {
    strides[i] = padded[i] === 1 ? 0 : s;
    s *= padded[i]!;
  }
  return strides;
}

/**
 * The broadcast of a and b folded to three axes: axes of size 1 dropped, neighbours merged where
 * both operands step through them as one; null when more than three remain. Throws tfjs's error
 * for shapes that do not broadcast.
 */
export function planBroadcast(aShape: Shape, bShape: Shape): BroadcastPlan | null {
  const outShape = tf.broadcast_util.assertAndGetBroadcastShape([...aShape], [...bShape]);
  const rank = outShape.length;
  const sa = broadcastStrides(aShape, rank);
  const sb = broadcastStrides(bShape, rank);
  // Axes innermost first: [size, a stride, b stride].
  const axes: Triple[] = [];
  for (let i = rank - 1; i >= 0; i--) {
    const n = outShape[i]!;
    if (n === 1) continue;
    const inner = axes[axes.length - 1];
    if (inner && sa[i] === inner[1] * inner[0] && sb[i] === inner[2] * inner[0]) inner[0] *= n;
    else axes.push([n, sa[i]!, sb[i]!]);
  }
  if (axes.length > 3) return null;
  while (axes.length < 3) axes.push([1, 0, 0]);
  const [k, j, i] = axes as [Triple, Triple, Triple];
  return { outShape, dims: [i[0], j[0], k[0]], a: [i[1], j[1], k[1]], b: [i[2], j[2], k[2]] };
}

/** A sum over axes as x [outer, mid, inner] summed over mid; null when the axes are not one run (axes of size 1 aside). */
export function planSum(shape: Shape, axes: readonly number[]): { outer: number; mid: number; inner: number } | null {
  if (axes.length === 0) return null;
  const lo = Math.min(...axes);
  const hi = Math.max(...axes);
  for (let i = lo; i <= hi; i++) if (!axes.includes(i) && shape[i] !== 1) return null;
  const size = (from: number, to: number) => shape.slice(from, to).reduce((p, n) => p * n, 1);
  return { outer: size(0, lo), mid: size(lo, hi + 1), inner: size(hi + 1, shape.length) };
}

type Values = Float32Array | Int32Array | Uint8Array;

/**
 * out = x[begin : begin + size] for x of `shape`, copied by runs: the axes after the last one the
 * slice cuts are whole, so each index over the axes before it starts one contiguous run.
 */
export function copySlice<T extends Values>(x: T, shape: Shape, begin: Shape, size: Shape, out: T): void {
  const rank = shape.length;
  if (rank === 0) return out.set(x.subarray(0, out.length));
  let cut = rank - 1;
  while (cut > 0 && size[cut] === shape[cut]) cut--;
  const strides = new Array<number>(rank);
  for (let i = rank - 1, s = 1; i >= 0; i--) (strides[i] = s), (s *= shape[i]!);
  const run = size[cut]! * strides[cut]!;
  if (run === 0 || out.length === 0) return;
  const index = new Array<number>(cut).fill(0);
  for (let at = 0; at < out.length; at += run) {
    let from = begin[cut]! * strides[cut]!;
    for (let i = 0; i < cut; i++) from += (begin[i]! + index[i]!) * strides[i]!;
    out.set(x.subarray(from, from + run), at);
    for (let i = cut - 1; i >= 0 && ++index[i]! === size[i]; i--) index[i] = 0;
  }
}

const BINARY_OPS = { [tf.Add]: 0, [tf.Sub]: 1, [tf.Multiply]: 2 } as const;

/** Add, Sub or Multiply of two float32 tensors on the addon. */
export function binaryKernel(blas: NativeBlas, kernel: keyof typeof BINARY_OPS, original: KernelFunc): KernelFunc {
  const op = BINARY_OPS[kernel];
  return (args) => {
    const { a, b } = args.inputs as Record<'a' | 'b', tf.TensorInfo>;
    if (a.dtype !== 'float32' || b.dtype !== 'float32') return original(args);
    const plan = planBroadcast(a.shape, b.shape);
    if (!plan) return original(args);
    const mem = memoryOf('wasm', args.backend);
    const out = mem.allocate(plan.outShape);
    // Views after the allocation, which may move the heap.
    blas.binary(op, mem.view(a)!, mem.view(b)!, mem.view(out.info)!, ...plan.dims, ...plan.a, ...plan.b);
    return out.info;
  };
}

/** Sum of a float32 tensor over one run of axes on the addon. */
export function sumKernel(blas: NativeBlas, original: KernelFunc): KernelFunc {
  return (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { axis, keepDims } = args.attrs as unknown as tf.SumAttrs;
    if (x.dtype !== 'float32') return original(args);
    const axes = tf.util.parseAxisParam(axis, x.shape);
    // The stock kernel sums in the order the axes are listed; listed ascending, that is index order.
    const plan = axes.every((a, i) => i === 0 || a > axes[i - 1]!) ? planSum(x.shape, axes) : null;
    if (!plan) return original(args);
    const [reduced] = tf.backend_util.computeOutAndReduceShapes(x.shape, axes);
    const mem = memoryOf('wasm', args.backend);
    const out = mem.allocate(keepDims ? tf.backend_util.expandShapeToKeepDim(reduced, axes) : reduced);
    blas.sumAxis(mem.view(x)!, mem.view(out.info)!, plan.outer, plan.mid, plan.inner);
    return out.info;
  };
}

function sliceOf(backend: BackendWasm, x: tf.TensorInfo, begin: Shape, size: Shape): tf.TensorInfo {
  const out = backend.makeOutput([...size], x.dtype);
  const view = (t: tf.TensorInfo) => backend.typedArrayFromHeap(t) as Values;
  copySlice(view(x), x.shape, begin, size, view(out));
  return out;
}

const COPIED = new Set<tf.DataType>(['float32', 'int32', 'bool']);

/** Slice by contiguous runs (numeric and bool tensors). */
export function sliceKernel(original: KernelFunc): KernelFunc {
  return (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (!COPIED.has(x.dtype)) return original(args);
    const { begin, size } = args.attrs as unknown as tf.SliceAttrs;
    const [b, s] = tf.slice_util.parseSliceParams(x, begin, size);
    return sliceOf(args.backend as unknown as BackendWasm, x, b!, s!);
  };
}

/** SplitV as slices by contiguous runs (numeric and bool tensors). */
export function splitKernel(original: KernelFunc): KernelFunc {
  return (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (!COPIED.has(x.dtype)) return original(args);
    const { numOrSizeSplits, axis } = args.attrs as unknown as tf.SplitVAttrs;
    const $axis = tf.util.parseAxisParam(axis, x.shape)[0]!;
    const sizes = tf.backend_util.prepareSplitSize(x, numOrSizeSplits, $axis);
    const begin = new Array<number>(x.shape.length).fill(0);
    const size = [...x.shape];
    return sizes.map((n) => {
      size[$axis] = n;
      const out = sliceOf(args.backend as unknown as BackendWasm, x, begin, size);
      begin[$axis]! += n;
      return out;
    });
  };
}
