import * as tf from '@tensorflow/tfjs-core';
import { applyDropout, dense, denseTransposed, type DropoutRng } from './layers.js';

/** Additive score for masked positions; large but finite so that sums of two masks stay finite. */
export const MASKED = -1e9;

/** HF T5Attention weights, each [out, in]: q, k, v [H·dk, d]; o [d, H·dk]. */
export interface AttentionWeights {
  q: tf.Tensor2D;
  k: tf.Tensor2D;
  v: tf.Tensor2D;
  o: tf.Tensor2D;
}

/** Keys and values per head, [B, H, L, dk]. */
export interface KeyValues {
  keys: tf.Tensor4D;
  values: tf.Tensor4D;
}

/** [B, L, H·dk] → [B, H, L, dk] */
export function splitHeads(x: tf.Tensor3D, numHeads: number): tf.Tensor4D {
  const [b, l, inner] = x.shape;
  return tf.transpose(tf.reshape(x, [b, l, numHeads, inner / numHeads]), [0, 2, 1, 3]);
}

/** [B, H, L, dk] → [B, L, H·dk] */
export function mergeHeads(x: tf.Tensor4D): tf.Tensor3D {
  const [b, h, l, dk] = x.shape;
  return tf.reshape(tf.transpose(x, [0, 2, 1, 3]), [b, l, h * dk]);
}

/** Padding mask [B, Lk] (1 = keep, 0 = pad) → additive bias [B, 1, 1, Lk]. */
export function paddingBias(mask: tf.Tensor2D): tf.Tensor4D {
  return tf.tidy(() => {
    const [b, l] = mask.shape;
    return tf.reshape(tf.mul(tf.sub(1, tf.cast(mask, 'float32')), MASKED), [b, 1, 1, l]);
  });
}

/** Causal bias [1, 1, T, T]: query i may see keys j ≤ i. Built in TS (it is a constant per length). */
export function causalBias(length: number): tf.Tensor4D {
  const values = new Float32Array(length * length);
  for (let i = 0; i < length; i++) for (let j = i + 1; j < length; j++) values[i * length + j] = MASKED;
  return tf.tensor4d(values, [1, 1, length, length]);
}

/**
 * softmax(q kᵀ + bias) v per head. No 1/√dk: T5 folds it into the initialisation of q.
 * q [B, H, Lq, dk], keys/values [B, H, Lk, dk], bias broadcastable to [B, H, Lq, Lk].
 */
export function attend(q: tf.Tensor4D, kv: KeyValues, bias: tf.Tensor4D | null, rng: DropoutRng): tf.Tensor4D {
  let scores: tf.Tensor4D = tf.matMul(q, kv.keys, false, true);
  if (bias) scores = tf.add(scores, bias);
  const weights = applyDropout(tf.softmax(scores), rng);
  return tf.matMul(weights, kv.values);
}

/** T5 self-attention over x [B, L, d], with q, k and v computed by one fused matmul. */
export function selfAttention(x: tf.Tensor3D, w: AttentionWeights, numHeads: number, bias: tf.Tensor4D | null, rng: DropoutRng): tf.Tensor3D {
  const inner = w.q.shape[0];
  const qkv = dense(x, tf.concat([w.q, w.k, w.v], 0));
  const [q, k, v] = tf.split(qkv, [inner, inner, inner], -1) as [tf.Tensor3D, tf.Tensor3D, tf.Tensor3D];
  const context = attend(splitHeads(q, numHeads), { keys: splitHeads(k, numHeads), values: splitHeads(v, numHeads) }, bias, rng);
  return dense(mergeHeads(context), w.o);
}

/** Keys and values of a memory [B, Lk, d] for cross-attention (one fused matmul). */
export function projectKeyValues(memory: tf.Tensor3D, w: Pick<AttentionWeights, 'k' | 'v'>, numHeads: number): KeyValues {
  const inner = w.k.shape[0];
  const kv = dense(memory, tf.concat([w.k, w.v], 0));
  const [k, v] = tf.split(kv, [inner, inner], -1) as [tf.Tensor3D, tf.Tensor3D];
  return { keys: splitHeads(k, numHeads), values: splitHeads(v, numHeads) };
}

/** T5 cross-attention of x [B, Lq, d] over precomputed memory keys/values. */
export function crossAttention(x: tf.Tensor3D, memory: KeyValues, w: Pick<AttentionWeights, 'q' | 'o'>, numHeads: number, bias: tf.Tensor4D | null, rng: DropoutRng): tf.Tensor3D {
  const q = splitHeads(dense(x, w.q), numHeads);
  return dense(mergeHeads(attend(q, memory, bias, rng)), w.o);
}

/** Attention weights pre-transposed and fused for incremental decoding: qkvT [d, 3·inner], oT [inner, d]. */
export interface PreparedSelfAttention {
  qkvT: tf.Tensor2D;
  oT: tf.Tensor2D;
}

export function prepareSelfAttention(w: AttentionWeights): PreparedSelfAttention {
  return tf.tidy(() => ({ qkvT: tf.transpose(tf.concat([w.q, w.k, w.v], 0)), oT: tf.transpose(w.o) }));
}

/**
 * One decoding step of self-attention: x [B, 1, d] attends to the cached keys/values plus its own.
 * Returns the output and the grown cache (the caller owns both).
 */
export function selfAttentionStep(
  x: tf.Tensor3D,
  w: PreparedSelfAttention,
  numHeads: number,
  cache: KeyValues | null,
  bias: tf.Tensor4D | null,
): { output: tf.Tensor3D; cache: KeyValues } {
  const inner = w.oT.shape[0];
  const qkv = denseTransposed(x, w.qkvT);
  const [q, k, v] = tf.split(qkv, [inner, inner, inner], -1) as [tf.Tensor3D, tf.Tensor3D, tf.Tensor3D];
  const kNew = splitHeads(k, numHeads);
  const vNew = splitHeads(v, numHeads);
  const grown: KeyValues = cache
    ? { keys: tf.concat([cache.keys, kNew], 2), values: tf.concat([cache.values, vNew], 2) }
    : { keys: kNew, values: vNew };
  const context = attend(splitHeads(q, numHeads), grown, bias, { rate: 0, training: false, nextSeed: () => 0 });
  return { output: denseTransposed(mergeHeads(context), w.oT), cache: grown };
}
