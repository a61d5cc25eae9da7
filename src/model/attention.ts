import * as tf from '@tensorflow/tfjs-core';
import { applyDropout, linear, type DropoutRng } from './layers.js';

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

/** Rows [B·L, H·dk] of a projection → heads [B, H, L, dk]. */
function rowsToHeads(x: tf.Tensor2D, batch: number, numHeads: number): tf.Tensor4D {
  const [n, inner] = x.shape;
  return tf.transpose(tf.reshape(x, [batch, n / batch, numHeads, inner / numHeads]), [0, 2, 1, 3]);
}

/** Heads [B, H, L, dk] → rows [B·L, H·dk]. */
function headsToRows(x: tf.Tensor4D): tf.Tensor2D {
  const [b, h, l, dk] = x.shape;
  return tf.reshape(tf.transpose(x, [0, 2, 1, 3]), [b * l, h * dk]);
}

/** x [B, L, d] as rows [B·L, d] (a reshape shares the data: no copy). */
function rows(x: tf.Tensor3D): tf.Tensor2D {
  const [b, l, d] = x.shape;
  return tf.reshape(x, [b * l, d]);
}

/**
 * T5 self-attention over x [B, L, d]. q, k and v are three matmuls rather than one against
 * [q; k; v]: the fused form needs a concatenated weight (a copy per call, slices in the gradient)
 * and a split of the product, which cost more than two extra matmul calls.
 */
export function selfAttention(x: tf.Tensor3D, w: AttentionWeights, numHeads: number, bias: tf.Tensor4D | null, rng: DropoutRng): tf.Tensor3D {
  const [b, l, d] = x.shape;
  const xr = rows(x);
  const heads = (weight: tf.Tensor2D) => rowsToHeads(linear(xr, weight), b, numHeads);
  const context = attend(heads(w.q), { keys: heads(w.k), values: heads(w.v) }, bias, rng);
  return tf.reshape(linear(headsToRows(context), w.o), [b, l, d]);
}

/** Keys and values of a memory [B, Lk, d] for cross-attention. */
export function projectKeyValues(memory: tf.Tensor3D, w: Pick<AttentionWeights, 'k' | 'v'>, numHeads: number): KeyValues {
  const b = memory.shape[0];
  const m = rows(memory);
  return { keys: rowsToHeads(linear(m, w.k), b, numHeads), values: rowsToHeads(linear(m, w.v), b, numHeads) };
}

/** T5 cross-attention of x [B, Lq, d] over precomputed memory keys/values. */
export function crossAttention(x: tf.Tensor3D, memory: KeyValues, w: Pick<AttentionWeights, 'q' | 'o'>, numHeads: number, bias: tf.Tensor4D | null, rng: DropoutRng): tf.Tensor3D {
  const [b, l, d] = x.shape;
  const q = rowsToHeads(linear(rows(x), w.q), b, numHeads);
  return tf.reshape(linear(headsToRows(attend(q, memory, bias, rng)), w.o), [b, l, d]);
}

/** x [n, in] · Wᵀ for a weight named by HF name, without gradient (incremental decoding). */
export type InferenceLinear = (x: tf.Tensor2D, name: string) => tf.Tensor2D;

/** Keys and values of a memory [B, Lk, d] for incremental decoding; `prefix` names the cross-attention weights. */
export function memoryKeyValues(memory: tf.Tensor3D, project: InferenceLinear, prefix: string, numHeads: number): KeyValues {
  const b = memory.shape[0];
  const m = rows(memory);
  return { keys: rowsToHeads(project(m, `${prefix}.k.weight`), b, numHeads), values: rowsToHeads(project(m, `${prefix}.v.weight`), b, numHeads) };
}

/**
 * One decoding step of self-attention: x [B, 1, d] attends to the cached keys/values plus its own.
 * `prefix` names the layer's weights (e.g. `decoder.block.0.layer.0.SelfAttention`).
 * Returns the output and the grown cache (the caller owns both).
 */
export function selfAttentionStep(
  x: tf.Tensor3D,
  project: InferenceLinear,
  prefix: string,
  numHeads: number,
  cache: KeyValues | null,
  bias: tf.Tensor4D | null,
): { output: tf.Tensor3D; cache: KeyValues } {
  const [b, l, d] = x.shape;
  const xr = rows(x);
  const heads = (name: string) => rowsToHeads(project(xr, `${prefix}.${name}.weight`), b, numHeads);
  const kNew = heads('k');
  const vNew = heads('v');
  const grown: KeyValues = cache
    ? { keys: tf.concat([cache.keys, kNew], 2), values: tf.concat([cache.values, vNew], 2) }
    : { keys: kNew, values: vNew };
  const context = attend(heads('q'), grown, bias, { rate: 0, training: false, nextSeed: () => 0 });
  return { output: tf.reshape(project(headsToRows(context), `${prefix}.o.weight`), [b, l, d]), cache: grown };
}
