import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, test } from 'vitest';
import { initBackend } from '../src/backend.js';
import { attention, attentionBias, causalBias, projectKeyValues } from '../src/model/attention.js';
import { fusionGate, fuseScreen, gatedFusion, projectScreen, screenAttention, type FusionWeights } from '../src/model/fusion.js';
import { embed, geluNew, linear, linear2d, matMul2d, rmsNorm, tokenCrossEntropy } from '../src/model/layers.js';
import { maxAbsDiff, rng } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

const NO_DROPOUT = { rate: 0, training: false, nextSeed: () => 0 };
const rand = (shape: number[], seed: number) => {
  const r = rng(seed);
  return tf.tensor(Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => r() * 2 - 1), shape);
};

describe('layers', () => {
  test('rmsNorm divides by the root mean square and scales (no mean, no bias)', () => {
    const y = rmsNorm(tf.tensor2d([[3, 4], [0, 0]]), tf.tensor1d([1, 2]), 0);
    // rms([3,4]) = sqrt(12.5)
    const r = Math.sqrt(12.5);
    expect(Array.from(y.dataSync().slice(0, 2))).toEqual([expect.closeTo(3 / r, 5), expect.closeTo(8 / r, 5)]);
  });

  test('geluNew matches 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))', () => {
    const xs = [-3, -1, -0.5, 0, 0.3, 1, 2.5];
    const ref = xs.map((x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3))));
    const got = geluNew(tf.tensor1d(xs)).dataSync();
    ref.forEach((v, i) => expect(got[i]).toBeCloseTo(v, 5));
  });

  test('linear2d and matMul2d have the same values and gradients as tf.matMul', () => {
    const x = rand([5, 3], 1) as tf.Tensor2D;
    const w = rand([4, 3], 2) as tf.Tensor2D; // HF [out, in]
    const dy = rand([5, 4], 3) as tf.Tensor2D;
    expect(maxAbsDiff(linear2d(x, w), tf.matMul(x, w, false, true))).toBeLessThan(1e-6);
    const [gx, gw] = tf.grads((a: tf.Tensor, b: tf.Tensor) => linear2d(a as tf.Tensor2D, b as tf.Tensor2D))([x, w], dy);
    const [rx, rw] = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D, false, true))([x, w], dy);
    expect(maxAbsDiff(gx!, rx!)).toBeLessThan(1e-5);
    expect(maxAbsDiff(gw!, rw!)).toBeLessThan(1e-5);
    // wide output (the LM-head branch of the dW rule)
    const wWide = rand([40, 3], 4) as tf.Tensor2D;
    const dyWide = rand([5, 40], 5) as tf.Tensor2D;
    const [, gWide] = tf.grads((a: tf.Tensor, b: tf.Tensor) => linear2d(a as tf.Tensor2D, b as tf.Tensor2D))([x, wWide], dyWide);
    expect(maxAbsDiff(gWide!, tf.matMul(dyWide, x, true, false))).toBeLessThan(1e-5);
    const b = rand([3, 4], 6) as tf.Tensor2D;
    const [ga, gb] = tf.grads((p: tf.Tensor, q: tf.Tensor) => matMul2d(p as tf.Tensor2D, q as tf.Tensor2D))([x, b], dy);
    expect(maxAbsDiff(ga!, tf.matMul(dy, b, false, true))).toBeLessThan(1e-5);
    expect(maxAbsDiff(gb!, tf.matMul(x, dy, true, false))).toBeLessThan(1e-5);
  });

  test('embedding gradient sums rows of repeated ids (works on wasm, which lacks UnsortedSegmentSum)', () => {
    const table = rand([5, 2], 7) as tf.Tensor2D;
    const ids = tf.tensor2d([[1, 3], [1, 0]], [2, 2], 'int32');
    const out = embed(table, ids);
    expect(out.shape).toEqual([2, 2, 2]);
    expect(maxAbsDiff(tf.reshape(out, [4, 2]), tf.gather(table, tf.tensor1d([1, 3, 1, 0], 'int32')))).toBe(0);
    const dy = tf.tensor3d([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]);
    const g = tf.grad((t: tf.Tensor) => embed(t as tf.Tensor2D, ids))(table, dy);
    expect(Array.from(g.dataSync())).toEqual([7, 8, 6, 8, 0, 0, 3, 4, 0, 0]);
  });

  test('token cross-entropy equals −log softmax at the label, ignores -100, and has gradient softmax − onehot', () => {
    const logits = tf.tensor2d([[1, 2, 3], [0, 0, 0], [5, -1, 100]]);
    const labels = tf.tensor1d([2, -100, 0], 'int32');
    const ce = tokenCrossEntropy(logits, labels).dataSync();
    const ref = tf.neg(tf.logSoftmax(logits)).arraySync() as number[][];
    expect(ce[0]).toBeCloseTo(ref[0]![2]!, 5);
    expect(ce[1]).toBe(0);
    expect(ce[2]).toBeCloseTo(95, 3); // far beyond exp's float32 range: no underflow to Infinity
    const g = tf.grad((z: tf.Tensor) => tf.sum(tokenCrossEntropy(z as tf.Tensor2D, labels)))(logits);
    const gRef = tf.grad((z: tf.Tensor) => tf.sum(tf.mul(tf.neg(tf.logSoftmax(z)), tf.tensor2d([[0, 0, 1], [0, 0, 0], [1, 0, 0]]))))(logits);
    expect(maxAbsDiff(g, gRef)).toBeLessThan(1e-5);
  });
});

describe('attention', () => {
  test('padded keys do not influence unmasked outputs', () => {
    const [b, l, d, h] = [2, 5, 8, 2];
    const w = { q: rand([8, d], 10) as tf.Tensor2D, k: rand([8, d], 11) as tf.Tensor2D, v: rand([8, d], 12) as tf.Tensor2D, o: rand([d, 8], 13) as tf.Tensor2D };
    const mask = tf.tensor2d([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], [b, l], 'int32');
    const x1 = rand([b, l, d], 14) as tf.Tensor3D;
    // change the padded positions of row 0 only
    const noise = tf.mul(rand([b, l, d], 15), tf.reshape(tf.tensor2d([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]]), [b, l, 1]));
    const x2 = tf.add(x1, noise) as tf.Tensor3D;
    const selfAttention = (x: tf.Tensor3D) => {
      const rows = tf.reshape(x, [b * l, d]) as tf.Tensor2D;
      const bias = attentionBias({ queryLength: l, keyLength: l, keyMask: mask });
      return tf.reshape(attention(rows, projectKeyValues(rows, w, linear), w, b, h, bias, NO_DROPOUT, linear), [b, l, d]);
    };
    const y1 = selfAttention(x1);
    const y2 = selfAttention(x2);
    expect(y1.shape).toEqual([b, l, d]);
    expect(maxAbsDiff(tf.slice(y1, [0, 0, 0], [1, 3, d]), tf.slice(y2, [0, 0, 0], [1, 3, d]))).toBeLessThan(1e-5);
    expect(maxAbsDiff(tf.slice(y1, [0, 3, 0], [1, 2, d]), tf.slice(y2, [0, 3, 0], [1, 2, d]))).toBeGreaterThan(1e-3);
  });

  test('causal bias hides later keys', () => {
    expect(Array.from(causalBias(3).dataSync()).map((v) => (v < 0 ? 1 : 0))).toEqual([0, 1, 1, 0, 0, 1, 0, 0, 0]);
    // Two queries at positions 1 and 2 of three keys.
    expect(Array.from(causalBias(2, 3, 1).dataSync()).map((v) => (v < 0 ? 1 : 0))).toEqual([0, 0, 1, 0, 0, 0]);
  });
});

describe('fusion', () => {
  test('screen attention is softmax(Q Kᵀ/√d) V on hand-made tensors, and masked patches get no weight', () => {
    const q = tf.tensor3d([[[1, 0], [0, 2]]]); // [1, 2 queries, d=2]
    const k = tf.tensor3d([[[1, 1], [2, 0], [50, 50]]]); // 3 patches; the last is padding
    const mask = tf.tensor2d([[1, 1, 0]], [1, 3], 'int32');
    const got = screenAttention(q, k, mask).attended.arraySync()[0]!;
    const s = Math.SQRT2;
    for (const [qi, row] of [[1, 0], [0, 2]].entries()) {
      const scores = [qi === 0 ? 1 / s : 2 / s, qi === 0 ? 2 / s : 0];
      const e = scores.map(Math.exp);
      const p = e.map((v) => v / (e[0]! + e[1]!));
      const expected = [p[0]! * 1 + p[1]! * 2, p[0]! * 1 + p[1]! * 0];
      expect(row).toHaveLength(2);
      got[qi]!.forEach((v, j) => expect(v).toBeCloseTo(expected[j]!, 5));
    }
  });

  test('gate λ = sigmoid(W_l H + W_v A + b) lies in (0, 1) and H_fuse = (1−λ)H + λA', () => {
    const hl = tf.tensor3d([[[1, -2]]]);
    const ha = tf.tensor3d([[[3, 0.5]]]);
    const w = { gateLang: tf.tensor2d([[1, 0], [0, 2]]), gateAttn: tf.tensor2d([[0.5, 0], [1, 1]]), gateBias: tf.tensor1d([0.1, -0.2]) };
    const gate = fusionGate(hl, ha, w).dataSync();
    // rows of W are outputs: z0 = 1·1 + 0.5·3 + 0.1 = 2.6; z1 = 2·(−2) + (3 + 0.5) − 0.2 = −0.7
    const sig = (z: number) => 1 / (1 + Math.exp(-z));
    expect(gate[0]).toBeCloseTo(sig(2.6), 5);
    expect(gate[1]).toBeCloseTo(sig(-0.7), 5);
    const fused = gatedFusion(hl, ha, tf.tensor3d([[[0.25, 0.9]]])).dataSync();
    expect(fused[0]).toBeCloseTo(0.75 * 1 + 0.25 * 3, 6);
    expect(fused[1]).toBeCloseTo(0.1 * -2 + 0.9 * 0.5, 6);
  });

  test('projection + fuseScreen: shapes; padded screen patches do not change the output', () => {
    const [b, l, p, s, d] = [2, 3, 4, 5, 6];
    const w = {
      screenProj: rand([d, s], 20) as tf.Tensor2D, screenProjBias: rand([d], 21) as tf.Tensor1D,
      gateLang: rand([d, d], 22) as tf.Tensor2D, gateAttn: rand([d, d], 23) as tf.Tensor2D, gateBias: rand([d], 24) as tf.Tensor1D,
    };
    const lang = rand([b, l, d], 25) as tf.Tensor3D;
    const screen = rand([b, p, s], 26) as tf.Tensor3D;
    const mask = tf.tensor2d([[1, 1, 0, 0], [1, 1, 1, 1]], [b, p], 'int32');
    const changed = tf.add(screen, tf.mul(rand([b, p, s], 27), tf.reshape(tf.tensor2d([[0, 0, 1, 1], [0, 0, 0, 0]]), [b, p, 1]))) as tf.Tensor3D;
    const fuse = (x: tf.Tensor3D, m: tf.Tensor2D | undefined, w: FusionWeights) => fuseScreen(lang, projectScreen(x, w.screenProj, w.screenProjBias), m, w);
    const a = fuse(screen, mask, w);
    const c = fuse(changed, mask, w);
    expect(a.fused.shape).toEqual([b, l, d]);
    expect(maxAbsDiff(a.fused, c.fused)).toBeLessThan(1e-5);
    const gate = a.gate.dataSync();
    expect(Math.min(...gate)).toBeGreaterThan(0);
    expect(Math.max(...gate)).toBeLessThan(1);
    // without the mask, the same change does matter
    expect(maxAbsDiff(fuse(screen, undefined, w).fused, fuse(changed, undefined, w).fused)).toBeGreaterThan(1e-4);
  });
});
