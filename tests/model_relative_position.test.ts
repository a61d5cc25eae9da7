import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { initBackend } from '../src/backend.js';
import { bucketMatrix, positionBias, relativePositionBucket } from '../src/model/relative_position.js';

beforeAll(async () => {
  await initBackend('cpu');
});

/*
 * Expected values worked out by hand from HF's _relative_position_bucket with 32 buckets and
 * max_distance 128 (cross-checked against PyTorch). Bidirectional: 16 buckets per direction,
 * max_exact 8, large distances n map to 8 + floor(log(n/8) / log(16) * 8), capped at 15, +16 when
 * the key is after the query. Causal: max_exact 16, 16 + floor(log(n/16) / log(8) * 16), capped at 31,
 * keys after the query → 0.
 */
const BIDIRECTIONAL: Array<[number, number]> = [
  [0, 0], [-1, 1], [-7, 7], [-8, 8], [-9, 8], [-12, 9], [-15, 9], [-16, 10], [-17, 10], [-31, 11], [-32, 12],
  [-33, 12], [-63, 13], [-64, 14], [-100, 15], [-127, 15], [-128, 15], [-300, 15],
  [1, 17], [7, 23], [8, 24], [9, 24], [12, 25], [16, 26], [32, 28], [64, 30], [100, 31], [127, 31], [128, 31], [300, 31],
];
const CAUSAL: Array<[number, number]> = [
  [0, 0], [1, 0], [7, 0], [300, 0], [-1, 1], [-7, 7], [-12, 12], [-15, 15], [-16, 16], [-17, 16], [-31, 21], [-32, 21],
  [-33, 21], [-63, 26], [-64, 26], [-100, 30], [-127, 31], [-128, 31], [-300, 31],
];

describe('relativePositionBucket', () => {
  test.each(BIDIRECTIONAL)('bidirectional %i → %i', (rel, bucket) => {
    expect(relativePositionBucket(rel, true, 32, 128)).toBe(bucket);
  });
  test.each(CAUSAL)('causal %i → %i', (rel, bucket) => {
    expect(relativePositionBucket(rel, false, 32, 128)).toBe(bucket);
  });
  test('small table (8 buckets, max distance 16)', () => {
    // bidirectional: 4 per side, max_exact 2 → n ≥ 2: 2 + floor(log(n/2)/log(8)*2), capped at 3
    expect([0, -1, -2, -3, -5, -6, -100, 1, 2, 6, 100].map((r) => relativePositionBucket(r, true, 8, 16))).toEqual([0, 1, 2, 2, 2, 3, 3, 5, 6, 7, 7]);
    // causal: max_exact 4 → 4 + floor(log(n/4)/log(4)*4), capped at 7
    expect([0, 3, -3, -4, -5, -7, -8, -15, -16, -100].map((r) => relativePositionBucket(r, false, 8, 16))).toEqual([0, 0, 3, 4, 4, 5, 6, 7, 7, 7]);
  });
  test('buckets are in range and monotone in distance on each side', () => {
    fc.assert(fc.property(fc.integer({ min: -500, max: 500 }), fc.boolean(), (rel, bidirectional) => {
      const b = relativePositionBucket(rel, bidirectional, 32, 128);
      expect(b).toBeGreaterThanOrEqual(0);
      expect(b).toBeLessThan(32);
      const further = relativePositionBucket(rel <= 0 ? rel - 1 : rel + 1, bidirectional, 32, 128);
      expect(further).toBeGreaterThanOrEqual(b);
    }));
  });
});

describe('bucketMatrix / positionBias', () => {
  test('matrix rows use key − query, with a query offset for cached decoding', () => {
    const full = bucketMatrix(5, 5, false, 32, 128);
    const lastRow = bucketMatrix(1, 5, false, 32, 128, 4);
    expect([...lastRow]).toEqual([...full.slice(20, 25)]);
    expect([...bucketMatrix(2, 3, true, 32, 128)]).toEqual([0, 17, 18, 1, 0, 17]);
  });
  test('bias picks the table row of each bucket for every head', () => {
    const table = tf.tensor2d([[0, 10], [1, 11], [2, 12], [3, 13], [4, 14], [5, 15], [6, 16], [7, 17]]); // [8 buckets, 2 heads]
    const bias = positionBias(table, 2, 3, true, 16);
    expect(bias.shape).toEqual([1, 2, 2, 3]);
    const buckets = [...bucketMatrix(2, 3, true, 8, 16)];
    expect([...bias.dataSync()]).toEqual([...buckets, ...buckets.map((b) => b + 10)]);
    tf.dispose([table, bias]);
  });
});
