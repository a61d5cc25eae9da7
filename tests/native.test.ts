import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { loadNativeBlas } from '../src/native/blas.js';
import { disableNativeKernels, enableNativeKernels, nativeKernelBackends, planMatMul } from '../src/native/kernels.js';
import { ADAMW_KERNEL, hasKernel } from '../src/native/optimizer_kernels.js';
import { AdamW } from '../src/train/adamw.js';
import '../src/model/register_gradients.js';

// Skipped only when the addon is not built (scripts/build-native.mjs; CI builds it).
const blas = loadNativeBlas();

type Backend = 'cpu' | 'wasm';

interface Case {
  aShape: number[];
  bShape: number[];
  transposeA: boolean;
  transposeB: boolean;
  a: Float32Array;
  b: Float32Array;
}

/** Runs f on `backend` with the native kernels on or off; returns its outputs as plain arrays. */
async function on(backend: Backend, native: boolean, f: () => tf.Tensor | tf.Tensor[]): Promise<Float32Array[]> {
  await initBackend(backend);
  if (native) expect(enableNativeKernels([backend])).toBe(true);
  else disableNativeKernels([backend]);
  return tf.tidy(() => {
    const out = f();
    return (Array.isArray(out) ? out : [out]).map((t) => t.dataSync() as Float32Array).map((v) => Float32Array.from(v));
  });
}

function product(c: Case, abs = false): tf.Tensor {
  const a = tf.tensor(abs ? c.a.map(Math.abs) : c.a, c.aShape);
  const b = tf.tensor(abs ? c.b.map(Math.abs) : c.b, c.bShape);
  return tf.matMul(a, b, c.transposeA, c.transposeB);
}

/**
 * |got − want| ≤ 1e-4 · Σ_k |a_ik||b_kj| elementwise: the natural scale of a dot product's rounding
 * error (relative to |want| alone, sums that cancel to ~0 would need an unbounded tolerance).
 */
function expectClose(got: Float32Array, want: Float32Array, scale: Float32Array): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < got.length; i++) {
    const tol = 1e-4 * Math.max(scale[i]!, 1e-6);
    if (!(Math.abs(got[i]! - want[i]!) <= tol)) {
      throw new Error(`element ${i}: native ${got[i]} vs JS ${want[i]} (tolerance ${tol})`);
    }
  }
}

/** Same batch dims, or one side a single matrix: the broadcasts the native kernel computes itself. */
function oneSided(c: Case): boolean {
  const a = c.aShape.slice(0, -2);
  const b = c.bShape.slice(0, -2);
  const out = tf.util.sizeFromShape(tf.broadcast_util.assertAndGetBroadcastShape(a, b));
  return [a, b].every((s) => [1, out].includes(tf.util.sizeFromShape(s)));
}

const dim = fc.integer({ min: 1, max: 24 });
const values = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 7.1 + i * 1.37) * 3);

/** Shapes with 0–2 batch dims where each dim of a or b may be 1 (broadcast) and either rank may be lower. */
const caseArb: fc.Arbitrary<Case> = fc
  .record({
    m: dim, n: dim, k: dim,
    batch: fc.array(fc.record({ size: fc.integer({ min: 2, max: 4 }), aOne: fc.boolean(), bOne: fc.boolean() }), { maxLength: 2 }),
    dropA: fc.boolean(), dropB: fc.boolean(),
    transposeA: fc.boolean(), transposeB: fc.boolean(), seed: fc.integer({ min: 0, max: 1000 }),
  })
  .map(({ m, n, k, batch, dropA, dropB, transposeA, transposeB, seed }) => {
    // Native and JS kernels are compared with each other, so any broadcastable pair goes, including
    // mixed ones where tfjs's flat-index-modulo batching is not numpy broadcasting.
    let aBatch = batch.map((d) => (d.aOne ? 1 : d.size));
    let bBatch = batch.map((d) => (d.bOne ? 1 : d.size));
    if (dropA && aBatch.every((s) => s === 1)) aBatch = [];
    if (dropB && bBatch.every((s) => s === 1)) bBatch = [];
    const aShape = [...aBatch, ...(transposeA ? [k, m] : [m, k])];
    const bShape = [...bBatch, ...(transposeB ? [n, k] : [k, n])];
    return {
      aShape, bShape, transposeA, transposeB,
      a: values(tf.util.sizeFromShape(aShape), seed),
      b: values(tf.util.sizeFromShape(bShape), seed + 1),
    };
  });

describe.skipIf(!blas)('native OpenBLAS matmul kernels', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });
  afterAll(() => disableNativeKernels());

  it('matches the JS BatchMatMul on random shapes, transposes and batch broadcasts (cpu and wasm)', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const [want] = await on('cpu', false, () => product(c));
        const [scale] = await on('cpu', false, () => product(c, true));
        const [cpu] = await on('cpu', true, () => product(c));
        expectClose(cpu!, want!, scale!);
        // Mixed broadcasts go to the stock kernel of each backend, and wasm's does not broadcast.
        if (!oneSided(c)) return;
        const [wasm] = await on('wasm', true, () => product(c));
        expectClose(wasm!, want!, scale!);
      }),
      { numRuns: 100 },
    );
  });

  it('matches on products large enough to use OpenBLAS threads and the batch helpers', async () => {
    const cases: Case[] = [
      { aShape: [300, 200], bShape: [250, 200], transposeA: false, transposeB: true, a: values(60000, 1), b: values(50000, 2) },
      { aShape: [64, 40, 32], bShape: [64, 40, 32], transposeA: true, transposeB: false, a: values(81920, 3), b: values(81920, 4) },
      { aShape: [8, 1, 33, 17], bShape: [3, 17, 29], transposeA: false, transposeB: false, a: values(8 * 33 * 17, 5), b: values(3 * 17 * 29, 6) },
    ];
    // The last one is a mixed broadcast ([8,1] with [3]): tfjs's cpu kernel gets it wrong (its
    // output is too short) and the native path must leave it exactly as wrong, not differently so.
    for (const c of cases) {
      const [want] = await on('cpu', false, () => product(c));
      const [scale] = await on('cpu', false, () => product(c, true));
      const [got] = await on('cpu', true, () => product(c));
      expectClose(got!, want!, scale!);
    }
  });

  it('gives the same bits run to run', async () => {
    const c: Case = { aShape: [128, 32, 40], bShape: [128, 32, 48], transposeA: true, transposeB: false, a: values(128 * 32 * 40, 7), b: values(128 * 32 * 48, 8) };
    const big: Case = { aShape: [512, 384], bShape: [384, 256], transposeA: false, transposeB: false, a: values(512 * 384, 9), b: values(384 * 256, 10) };
    for (const backend of ['cpu', 'wasm'] as const) {
      for (const x of [c, big]) {
        const [first] = await on(backend, true, () => product(x));
        for (let i = 0; i < 3; i++) {
          const [again] = await on(backend, true, () => product(x));
          expect(Buffer.from(again!.buffer).equals(Buffer.from(first!.buffer))).toBe(true);
        }
      }
    }
  });

  it('matches the JS gradients of a transposed batched matmul', async () => {
    const a = values(2 * 5 * 7, 11);
    const b = values(2 * 6 * 5, 12);
    const grads = () => {
      const f = (x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(tf.matMul(x, y, true, true), tf.transpose(tf.reshape(tf.range(0, 42), [6, 7]))));
      return tf.grads(f)([tf.tensor3d(a, [2, 5, 7]), tf.tensor3d(b, [2, 6, 5])]);
    };
    const want = await on('cpu', false, grads);
    for (const backend of ['cpu', 'wasm'] as const) {
      const got = await on(backend, true, grads);
      for (let i = 0; i < want.length; i++) {
        for (let j = 0; j < want[i]!.length; j++) expect(got[i]![j]).toBeCloseTo(want[i]![j]!, 3);
      }
    }
  });

  it('applies bias and activation like the JS fused matmul', async () => {
    const a = values(4 * 6, 13);
    const b = values(6 * 5, 14);
    const bias = values(5, 15);
    for (const activation of ['relu', 'linear', 'elu', 'sigmoid', 'leakyrelu'] as const) {
      const fused = () => tf.fused.matMul({ a: tf.tensor2d(a, [4, 6]), b: tf.tensor2d(b, [6, 5]), bias: tf.tensor1d(bias), activation, leakyreluAlpha: 0.3 });
      const [want] = await on('cpu', false, fused);
      for (const backend of ['cpu', 'wasm'] as const) {
        const [got] = await on(backend, true, fused);
        for (let i = 0; i < want!.length; i++) expect(got![i]).toBeCloseTo(want![i]!, 4);
      }
    }
  });

  it('leaves int32 products to the JS kernel and keeps its shape errors', async () => {
    const [got] = await on('cpu', true, () => tf.matMul(tf.tensor2d([1, 2, 3, 4], [2, 2], 'int32'), tf.tensor2d([5, 6, 7, 8], [2, 2], 'int32')));
    expect(Array.from(got!)).toEqual([19, 22, 43, 50]);
    await initBackend('cpu');
    enableNativeKernels(['cpu']);
    expect(() => tf.matMul(tf.ones([2, 3]), tf.ones([4, 2]))).toThrow(/inner shapes \(3\) and \(4\)/);
    expect(() => planMatMul([2, 3, 4], [5, 4, 2], false, false)).toThrow(/broadcast/i);
  });

  it('gathers on wasm exactly as the cpu backend (random shapes, axes, batch dims, int32; bad indices keep the stock error)', async () => {
    await initBackend('wasm');
    disableNativeKernels(['wasm']);
    const stock = tf.getKernel(tf.GatherV2, 'wasm');
    enableNativeKernels(['wasm']);
    expect(tf.getKernel(tf.GatherV2, 'wasm')).not.toBe(stock);
    const arb = fc
      .record({
        lead: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
        // Slices both shorter and longer than MIN_GATHER_SLICE, so both paths run.
        slice: fc.constantFrom(1, 3, 64, 100),
        axisFrom: fc.nat(),
        batchDims: fc.constantFrom(0, 1),
        count: fc.integer({ min: 0, max: 6 }),
        int: fc.boolean(),
        seed: fc.nat(),
      })
      .filter((c) => c.batchDims <= c.axisFrom % c.lead.length);
    await fc.assert(
      fc.asyncProperty(arb, async (c) => {
        const shape = [...c.lead, c.slice];
        const axis = c.axisFrom % c.lead.length;
        const idxShape = [...shape.slice(0, c.batchDims), c.count];
        const idx = Int32Array.from(values(tf.util.sizeFromShape(idxShape), c.seed), (v) => Math.floor(Math.abs(v * 1e4)) % shape[axis]!);
        const x = values(tf.util.sizeFromShape(shape), c.seed + 1).map((v) => (c.int ? Math.round(v * 1000) : v));
        const gather = () => tf.gather(tf.tensor(x, shape, c.int ? 'int32' : 'float32'), tf.tensor(idx, idxShape, 'int32'), axis, c.batchDims);
        // The cpu backend's kernel is the reference: wasm's own reads the wrong memory for batchDims > 0.
        const [want] = await on('cpu', false, gather);
        const [got] = await on('wasm', true, gather);
        expect(Array.from(got!)).toEqual(Array.from(want!));
      }),
      { numRuns: 80 },
    );
    await on('wasm', true, () => tf.zeros([1]));
    expect(() => tf.gather(tf.ones([4, 64]), tf.tensor1d([1, 9], 'int32'))).toThrow(/index value 9 is not in \[0, 3\]/);
  });

  it('rejects arrays shorter than the shapes need instead of reading past them', () => {
    const small = new Float32Array(4);
    expect(() => blas!.sgemm(small, small, small, 1, 1, 1, 3, 3, 3, false, false)).toThrow(RangeError);
    expect(() => blas!.sgemm(small, small, new Float32Array(4), 2, 1, 1, 2, 2, 1, false, false)).toThrow(RangeError);
    expect(() => blas!.sgemm(new Float64Array(4) as unknown as Float32Array, small, small, 1, 1, 1, 2, 2, 1, false, false)).toThrow(TypeError);
    const adamw = blas!.adamw as unknown as (...args: unknown[]) => void;
    expect(() => adamw(small, small, small, small, small, small, new Float32Array(3), 1e-3, 0.9, 0.999, 1, 1, 1e-8, 0, 1)).toThrow(/same length/);
    expect(() => adamw(small, small)).toThrow(/adamw\(p, g, m, v/);
    expect(() => (blas!.sumSquares as unknown as () => number)()).toThrow(/sumSquares\(x\)/);
  });

  it('AdamW on the addon matches the tfjs-op update over several steps, with clipping and decay (cpu and wasm)', async () => {
    const shapes: Record<string, number[]> = { 'a.weight': [7, 5], 'b.layer_norm.weight': [5], 'c.bias': [3] };
    const run = async (backend: Backend, native: boolean) => {
      await initBackend(backend);
      if (native) enableNativeKernels([backend]);
      else disableNativeKernels([backend]);
      const params = new Map(Object.entries(shapes).map(([name, shape], i) => [name, tf.variable(tf.tensor(values(tf.util.sizeFromShape(shape), i), shape))]));
      const opt = new AdamW(params, { beta1: 0.9, beta2: 0.99, epsilon: 1e-6, weightDecay: 0.1, clipNorm: 2 });
      const norms: number[] = [];
      for (let step = 0; step < 4; step++) {
        const grads = new Map([...params].map(([name, p], i) => [name, tf.tensor(values(p.size, 10 * step + i).map((x) => x * (step + 1)), p.shape)]));
        norms.push(opt.apply(grads, 0.05));
        tf.dispose([...grads.values()]);
      }
      const out = [...params.values(), ...opt.m.values(), ...opt.v.values()].map((t) => Float32Array.from(t.dataSync()));
      opt.dispose();
      tf.dispose([...params.values()]);
      return { out, norms };
    };
    for (const backend of ['cpu', 'wasm'] as const) {
      const want = await run(backend, false);
      const got = await run(backend, true);
      expect(hasKernel(ADAMW_KERNEL)).toBe(true);
      got.norms.forEach((n, i) => expect(n).toBeCloseTo(want.norms[i]!, 4));
      // The gradients are clipped from step 1 on (norms well above 2), so the scale is exercised.
      expect(Math.min(...want.norms)).toBeGreaterThan(2);
      got.out.forEach((g, i) => expectClose(g, want.out[i]!, Float32Array.from(want.out[i]!, (x) => Math.abs(x) + 1e-2)));
    }
  });

  it('restores the stock kernels when disabled', async () => {
    await initBackend('wasm');
    disableNativeKernels();
    const stock = tf.getKernel(tf.BatchMatMul, 'wasm');
    expect(enableNativeKernels()).toBe(true);
    expect(nativeKernelBackends().sort()).toEqual(['cpu', 'wasm']);
    expect(tf.getKernel(tf.BatchMatMul, 'wasm')).not.toBe(stock);
    disableNativeKernels();
    expect(tf.getKernel(tf.BatchMatMul, 'wasm')).toBe(stock);
    expect(nativeKernelBackends()).toEqual([]);
    expect(hasKernel(ADAMW_KERNEL)).toBe(false);
    // The restored wasm kernel still works (its setup ran for this backend instance).
    const out = tf.matMul(tf.tensor2d([1, 2, 3, 4], [2, 2]), tf.tensor2d([1, 0, 0, 1], [2, 2])).dataSync();
    expect(Array.from(out)).toEqual([1, 2, 3, 4]);
  });
});
