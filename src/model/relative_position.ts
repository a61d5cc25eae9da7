import * as tf from '@tensorflow/tfjs-core';
import { BoundedMap } from '../util/bounded_map.js';

/**
 * T5's relative position bucket (HF `T5Attention._relative_position_bucket`), for
 * relativePosition = key position − query position.
 *
 * Bidirectional (encoder): half the buckets for keys after the query. Causal (decoder): keys after
 * the query share bucket 0. Distances below maxExact get their own bucket; the rest are spaced
 * logarithmically up to maxDistance, beyond which everything lands in the last bucket.
 * The log term is rounded to float32 at each step as PyTorch does, so bucket edges agree with HF.
 */
export function relativePositionBucket(
  relativePosition: number,
  bidirectional: boolean,
  numBuckets: number,
  maxDistance: number,
): number {
  let buckets = 0;
  let n: number;
  if (bidirectional) {
    numBuckets = Math.floor(numBuckets / 2);
    if (relativePosition > 0) buckets += numBuckets;
    n = Math.abs(relativePosition);
  } else {
    n = -Math.min(relativePosition, 0);
  }
  const maxExact = Math.floor(numBuckets / 2);
  if (n < maxExact) return buckets + n;
  const f = Math.fround;
  const logRatio = f(Math.log(f(n / maxExact)));
  const scaled = f(f(logRatio / f(Math.log(maxDistance / maxExact))) * (numBuckets - maxExact));
  return buckets + Math.min(maxExact + Math.trunc(scaled), numBuckets - 1);
}

const bucketCache = new BoundedMap<string, Int32Array>(256);

/**
 * Bucket index for every (query, key) pair, row-major [queryLength, keyLength]. Query i sits at
 * absolute position queryOffset + i (used by cached decoding); keys start at 0. Memoised because
 * each training shape repeats every step.
 */
export function bucketMatrix(
  queryLength: number,
  keyLength: number,
  bidirectional: boolean,
  numBuckets: number,
  maxDistance: number,
  queryOffset = 0,
): Int32Array {
  const key = `${queryLength},${keyLength},${bidirectional ? 1 : 0},${numBuckets},${maxDistance},${queryOffset}`;
  let out = bucketCache.get(key);
  if (out) return out;
  out = new Int32Array(queryLength * keyLength);
  for (let i = 0; i < queryLength; i++) {
    for (let j = 0; j < keyLength; j++) {
      out[i * keyLength + j] = relativePositionBucket(j - (queryOffset + i), bidirectional, numBuckets, maxDistance);
    }
  }
  bucketCache.set(key, out);
  return out;
}

/**
 * Position bias [1, H, queryLength, keyLength] from the learned table [numBuckets, H]
 * (HF `relative_attention_bias.weight`). The lookup is a one-hot matmul rather than a gather so its
 * gradient avoids UnsortedSegmentSum, which the wasm backend lacks; the one-hot is only (q·k) × buckets.
 */
export function positionBias(
  table: tf.Tensor2D,
  queryLength: number,
  keyLength: number,
  bidirectional: boolean,
  maxDistance: number,
  queryOffset = 0,
): tf.Tensor4D {
  const [numBuckets, numHeads] = table.shape;
  return tf.tidy(() => {
    const buckets = bucketMatrix(queryLength, keyLength, bidirectional, numBuckets, maxDistance, queryOffset);
    const oneHot = tf.oneHot(tf.tensor1d(buckets, 'int32'), numBuckets);
    const values = tf.matMul(oneHot, table); // [q*k, H]
    return tf.expandDims(tf.transpose(tf.reshape(values, [queryLength, keyLength, numHeads]), [2, 0, 1]), 0) as tf.Tensor4D;
  });
}
