import * as tf from '@tensorflow/tfjs-core';
import { fusedAttention, fusedAttentionLayer, hasFused, type FusedAttentionBias } from '../native/fused_ops.js';
import { applyDropout, drawDropout, type DropoutRng } from './layers.js';
import { bucketMatrix, positionBias } from './relative_position.js';

/*
 * T5 attention (HF T5Attention) on row layouts: activations are [B·L, d] rows and projections
 * [B·L, H·dk] rows (head h in columns h·dk … h·dk + dk − 1), so the fused kernel reads the heads
 * where the projection wrote them. The unfused path splits and merges heads around its matmuls.
 */

/** Additive score for masked positions; large but finite so that sums of two masks stay finite. */
export const MASKED = -1e9;

/** HF T5Attention weights, each [out, in]: q, k, v [H·dk, d]; o [d, H·dk]. */
export interface AttentionWeights {
  q: tf.Tensor2D;
  k: tf.Tensor2D;
  v: tf.Tensor2D;
  o: tf.Tensor2D;
}

/** Keys and values as rows [B·Lk, H·dk]. */
export interface KeyValues {
  keys: tf.Tensor2D;
  values: tf.Tensor2D;
}

/** x·Wᵀ for rows x [n, in] and an HF weight W [out, in] (training: layers.linear; decoding may use cached transposes). */
export type Linear = (x: tf.Tensor2D, weight: tf.Tensor2D) => tf.Tensor2D;

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

/** Causal bias [1, 1, Lq, Lk]: query i (at position queryOffset + i) may see keys j ≤ queryOffset + i. Built in TS (a constant per shape). */
export function causalBias(queryLength: number, keyLength = queryLength, queryOffset = 0): tf.Tensor4D {
  const values = new Float32Array(queryLength * keyLength);
  for (let i = 0; i < queryLength; i++) for (let j = queryOffset + i + 1; j < keyLength; j++) values[i * keyLength + j] = MASKED;
  return tf.tensor4d(values, [1, 1, queryLength, keyLength]);
}

/**
 * What one attention's scores get added. Built by attentionBias in the form the active path
 * takes: the fused kernel's description, or one bias tensor broadcastable to [B, H, Lq, Lk].
 */
export interface AttentionBias {
  fused?: FusedAttentionBias;
  dense?: tf.Tensor4D;
}

/** The parts of an attention bias: T5's relative position bias, key padding, causality. */
export interface BiasSpec {
  queryLength: number;
  keyLength: number;
  /** Relative position bias from the stack's table [numBuckets, H]. */
  position?: { table: tf.Tensor2D; bidirectional: boolean; maxDistance: number };
  /** [B, Lk], 1 = real key. */
  keyMask?: tf.Tensor2D;
  causal?: boolean;
  /** Absolute position of the first query (incremental decoding). */
  queryOffset?: number;
}

/**
 * The bias of an attention for the active path. Unfused, the parts are summed once into one
 * tensor in the order position + padding + causal, which every block of a stack then reuses.
 */
export function attentionBias(spec: BiasSpec): AttentionBias {
  const offset = spec.queryOffset ?? 0;
  const pos = spec.position;
  if (hasFused('attention')) {
    const position = pos && {
      table: pos.table,
      buckets: bucketMatrix(spec.queryLength, spec.keyLength, pos.bidirectional, pos.table.shape[0], pos.maxDistance, offset),
    };
    return { fused: { position, keyMask: spec.keyMask, causal: spec.causal ?? false, queryOffset: offset } };
  }
  const parts: tf.Tensor4D[] = [];
  if (pos) parts.push(positionBias(pos.table, spec.queryLength, spec.keyLength, pos.bidirectional, pos.maxDistance, offset));
  if (spec.keyMask) parts.push(paddingBias(spec.keyMask));
  if (spec.causal) parts.push(causalBias(spec.queryLength, spec.keyLength, offset));
  if (parts.length === 0) return {};
  return { dense: parts.reduce((sum, p) => tf.add(sum, p)) };
}

/**
 * softmax(q kᵀ + bias) v per head. No 1/√dk: T5 folds it into the initialisation of q.
 * q [B, H, Lq, dk], keys/values [B, H, Lk, dk], bias broadcastable to [B, H, Lq, Lk].
 */
export function attend(q: tf.Tensor4D, keys: tf.Tensor4D, values: tf.Tensor4D, bias: tf.Tensor4D | null, rng: DropoutRng): tf.Tensor4D {
  let scores: tf.Tensor4D = tf.matMul(q, keys, false, true);
  if (bias) scores = tf.add(scores, bias);
  const weights = applyDropout(tf.softmax(scores), rng);
  return tf.matMul(weights, values);
}

/** Rows [B·L, H·dk] → heads [B, H, L, dk]. */
function rowsToHeads(x: tf.Tensor2D, batch: number, numHeads: number): tf.Tensor4D {
  const [n, inner] = x.shape;
  return tf.transpose(tf.reshape(x, [batch, n / batch, numHeads, inner / numHeads]), [0, 2, 1, 3]);
}

/** Heads [B, H, L, dk] → rows [B·L, H·dk]. */
function headsToRows(x: tf.Tensor4D): tf.Tensor2D {
  const [b, h, l, dk] = x.shape;
  return tf.reshape(tf.transpose(x, [0, 2, 1, 3]), [b * l, h * dk]);
}

/**
 * Multi-head attention on rows: q [B·Lq, H·dk] over keys/values [B·Lk, H·dk] → [B·Lq, H·dk],
 * dropout on the attention weights. One fused kernel for all heads when available.
 */
export function multiHeadAttention(q: tf.Tensor2D, kv: KeyValues, batch: number, numHeads: number, bias: AttentionBias, rng: DropoutRng): tf.Tensor2D {
  if (hasFused('attention')) {
    const { rate, seed } = drawDropout(rng);
    return fusedAttention(q, kv.keys, kv.values, batch, numHeads, bias.fused ?? {}, rate, seed);
  }
  const heads = (x: tf.Tensor2D) => rowsToHeads(x, batch, numHeads);
  return headsToRows(attend(heads(q), heads(kv.keys), heads(kv.values), bias.dense ?? null, rng));
}

/** Keys and values of rows x [B·Lk, d] for an attention's k and v. */
export function projectKeyValues(x: tf.Tensor2D, w: Pick<AttentionWeights, 'k' | 'v'>, linear: Linear): KeyValues {
  return { keys: linear(x, w.k), values: linear(x, w.v) };
}

/** T5Attention: rows x [B·Lq, d] attend over keys/values → o·(attention) [B·Lq, d]. */
export function attention(
  x: tf.Tensor2D, kv: KeyValues, w: Pick<AttentionWeights, 'q' | 'o'>, batch: number, numHeads: number, bias: AttentionBias, rng: DropoutRng, linear: Linear,
): tf.Tensor2D {
  return linear(multiHeadAttention(linear(x, w.q), kv, batch, numHeads, bias, rng), w.o);
}

/**
 * The T5 attention sub-layer on rows: x [B·Lq, d] attends over `source` [B·Lk, d] (null: over x
 * itself) → [B·Lq, d]. Fused, the projections, attention and output projection are one op each way.
 */
export function attentionLayer(
  x: tf.Tensor2D, source: tf.Tensor2D | null, w: AttentionWeights, batch: number, numHeads: number, bias: AttentionBias, rng: DropoutRng, linear: Linear,
): tf.Tensor2D {
  if (hasFused('attentionLayer') && hasFused('attention')) {
    const { rate, seed } = drawDropout(rng);
    return fusedAttentionLayer(x, source, w, batch, numHeads, bias.fused ?? {}, rate, seed);
  }
  return attention(x, projectKeyValues(source ?? x, w, linear), w, batch, numHeads, bias, rng, linear);
}

/** Keys/values rows [B·t, H·dk] with one more step [B, H·dk] appended per sequence → [B·(t + 1), H·dk]. */
export function appendKeyValues(cache: KeyValues | null, step: KeyValues, batch: number): KeyValues {
  if (!cache) return step;
  const grow = (past: tf.Tensor2D, now: tf.Tensor2D) => {
    const width = now.shape[1];
    const joined = tf.concat([tf.reshape(past, [batch, -1, width]), tf.reshape(now, [batch, 1, width])], 1);
    return tf.reshape(joined, [-1, width]) as tf.Tensor2D;
  };
  return { keys: grow(cache.keys, step.keys), values: grow(cache.values, step.values) };
}
