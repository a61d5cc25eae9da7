import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { loadNativeBlas } from '../src/native/blas.js';
import { disableNativeKernels, enableNativeKernels } from '../src/native/kernels.js';
import { copySlice, planBroadcast, planSum } from '../src/native/wasm_kernels.js';

const values = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 7.1 + i * 1.37) * 3);

describe('planBroadcast', () => {
  it('folds a broadcast to three axes, merging neighbours both operands step through as one', () => {
    // The screen's tokens given once per query: [B, 1, S, d] + [B, K, S, d].
    expect(planBroadcast([16, 1, 196, 128], [16, 2, 196, 128])).toEqual({
      outShape: [16, 2, 196, 128], dims: [16, 2, 25088], a: [25088, 0, 1], b: [50176, 25088, 1],
    });
    expect(planBroadcast([4, 5], [4, 5])).toEqual({ outShape: [4, 5], dims: [1, 1, 20], a: [0, 0, 1], b: [0, 0, 1] });
    // A bias over rows, and a per-row scale.
    expect(planBroadcast([16, 90, 128], [128])).toEqual({ outShape: [16, 90, 128], dims: [1, 1440, 128], a: [0, 128, 1], b: [0, 0, 1] });
    expect(planBroadcast([6, 8, 1], [6, 8, 128])?.a).toEqual([0, 1, 0]);
    expect(planBroadcast([], [])).toEqual({ outShape: [], dims: [1, 1, 1], a: [0, 0, 0], b: [0, 0, 0] });
    // Four alternating broadcast axes do not fold.
    expect(planBroadcast([2, 1, 3, 1], [1, 4, 1, 5])).toBeNull();
    expect(() => planBroadcast([2, 3], [4, 3])).toThrow(/broadcast/i);
  });
});

describe('planSum', () => {
  it('reads a sum over one run of axes as [outer, mid, inner], axes of size 1 aside', () => {
    expect(planSum([16, 2, 196, 128], [1])).toEqual({ outer: 16, mid: 2, inner: 25088 });
    expect(planSum([4, 5, 6], [0, 1, 2])).toEqual({ outer: 1, mid: 120, inner: 1 });
    expect(planSum([4, 1, 5, 6], [0, 2])).toEqual({ outer: 1, mid: 20, inner: 6 });
    expect(planSum([4, 3, 5, 6], [0, 2])).toBeNull();
    expect(planSum([4, 3], [])).toBeNull();
  });
});

describe('copySlice', () => {
  it('copies what tf.slice gives on the cpu backend (random shapes, begins and sizes)', async () => {
    await initBackend('cpu');
    const arb = fc
      .array(fc.record({ n: fc.integer({ min: 1, max: 5 }), from: fc.nat(), len: fc.nat() }), { minLength: 1, maxLength: 5 })
      .map((axes) => {
        const shape = axes.map((a) => a.n);
        const begin = axes.map((a) => a.from % a.n);
        const size = axes.map((a, i) => a.len % (a.n - begin[i]! + 1));
        return { shape, begin, size };
      });
    fc.assert(
      fc.property(arb, ({ shape, begin, size }) => {
        const x = values(tf.util.sizeFromShape(shape), shape.length);
        const want = tf.tidy(() => tf.slice(tf.tensor(x, shape), begin, size).dataSync());
        const out = new Float32Array(tf.util.sizeFromShape(size));
        copySlice(x, shape, begin, size, out);
        expect(Array.from(out)).toEqual(Array.from(want));
      }),
      { numRuns: 200 },
    );
  });
});

const blas = loadNativeBlas();

/** f's outputs on wasm with the stock kernels, then with ours: the same shapes and the same bits. */
async function expectSameBits(f: () => tf.Tensor | tf.Tensor[]): Promise<void> {
  const run = (native: boolean) => {
    if (native) enableNativeKernels(['wasm']);
    else disableNativeKernels(['wasm']);
    return tf.tidy(() => {
      const out = f();
      return (Array.isArray(out) ? out : [out]).map((t) => ({ shape: t.shape, dtype: t.dtype, values: Array.from(t.dataSync() as Float32Array) }));
    });
  };
  await initBackend('wasm');
  const want = run(false);
  const got = run(true);
  expect(got.map((o) => [o.shape, o.dtype])).toEqual(want.map((o) => [o.shape, o.dtype]));
  got.forEach((o, i) => o.values.forEach((v, j) => expect(Object.is(v, want[i]!.values[j]), `output ${i}, element ${j}: ${v} vs ${want[i]!.values[j]}`).toBe(true)));
}

describe.skipIf(!blas)('the wasm kernels on the addon', () => {
  afterAll(() => disableNativeKernels());

  it('replaces the stock kernels while the native kernels are on', async () => {
    await initBackend('wasm');
    const kernels = [tf.Add, tf.Sub, tf.Multiply, tf.Sum, tf.Slice, tf.SplitV];
    disableNativeKernels(['wasm']);
    const stock = kernels.map((k) => tf.getKernel(k, 'wasm')!.kernelFunc);
    enableNativeKernels(['wasm']);
    kernels.forEach((k, i) => expect(tf.getKernel(k, 'wasm')!.kernelFunc, k).not.toBe(stock[i]));
  });

  it('Add, Sub and Multiply give the stock bits on random broadcasts (and int32 goes to the stock kernel)', async () => {
    const arb = fc.record({
      axes: fc.array(fc.record({ n: fc.integer({ min: 1, max: 12 }), aOne: fc.boolean(), bOne: fc.boolean() }), { maxLength: 5 }),
      dropA: fc.nat({ max: 2 }),
      op: fc.constantFrom('add', 'sub', 'mul'),
      seed: fc.nat({ max: 100 }),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ axes, dropA, op, seed }) => {
        const aShape = axes.map((a) => (a.aOne ? 1 : a.n)).slice(Math.min(dropA, axes.length));
        const bShape = axes.map((a) => (a.bOne && !a.aOne ? 1 : a.n));
        const f = { add: tf.add, sub: tf.sub, mul: tf.mul }[op];
        await expectSameBits(() => f(tf.tensor(values(tf.util.sizeFromShape(aShape), seed), aShape), tf.tensor(values(tf.util.sizeFromShape(bShape), seed + 1), bShape)));
      }),
      { numRuns: 40 },
    );
    // Large enough to split over the threads, mid-row.
    await expectSameBits(() => tf.mul(tf.tensor(values(16 * 36 * 8 * 129, 1), [16, 36, 8, 129]), tf.tensor(values(16 * 36 * 8, 2), [16, 36, 8, 1])));
    await expectSameBits(() => tf.add(tf.tensor1d([1, 2, 3], 'int32'), tf.tensor1d([4, 5, 6], 'int32')));
  });

  it('Sum gives the stock bits over random axes, with and without keepDims', async () => {
    const arb = fc.record({
      shape: fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 }),
      axes: fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 3 }),
      keepDims: fc.boolean(),
      seed: fc.nat({ max: 100 }),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ shape, axes, keepDims, seed }) => {
        // In any order: listed out of order, the stock kernel's order is kept by leaving it the sum.
        const axis = [...new Set(axes.map((a) => a % shape.length))];
        await expectSameBits(() => tf.sum(tf.tensor(values(tf.util.sizeFromShape(shape), seed), shape), axis, keepDims));
      }),
      { numRuns: 40 },
    );
    await expectSameBits(() => tf.sum(tf.tensor(values(16 * 2 * 196 * 128, 3), [16, 2, 196, 128]), 1));
    await expectSameBits(() => tf.sum(tf.tensor(values(2560 * 128, 4), [2560, 128]), 0));
  });

  it('Slice and SplitV give the stock values for float32, int32 and bool tensors', async () => {
    await initBackend('wasm');
    const x = tf.tensor(values(16 * 196 * 128, 5), [16, 196, 128]);
    await expectSameBits(() => tf.slice(x, [0, 160, 0], [16, 36, 128]));
    await expectSameBits(() => tf.slice(x, [3, 0, 0], [2, 196, 128]));
    await expectSameBits(() => tf.split(x, [160, 36], 1));
    await expectSameBits(() => tf.split(tf.tensor(values(5 * 6 * 7, 6), [5, 6, 7]), 7, 2));
    await expectSameBits(() => tf.slice(tf.tensor2d([1, 2, 3, 4, 5, 6], [2, 3], 'int32'), [0, 1], [2, 2]));
    await expectSameBits(() => tf.cast(tf.split(tf.tensor2d([1, 0, 1, 1, 0, 0], [2, 3], 'bool'), [1, 2], 1)[1]!, 'int32'));
    x.dispose();
  });
});
