import * as tf from '@tensorflow/tfjs-core';
import { fusedAttentionProbs, hasFused } from '../native/fused_ops.js';
import { paddingBias } from './attention.js';
import { dense } from './layers.js';

/*
 * Auto-UI's screen interaction and gated fusion (paper §3; docs/design.md, "The model"):
 *   H'_screen = W·H_screen
 *   H_attn    = softmax(Q Kᵀ / √d) V,   Q = H_language, K = V = H'_screen   (one head)
 *   λ         = sigmoid(W_l·H_language + W_v·H_attn)
 *   H_fuse    = (1 − λ)·H_language + λ·H_attn
 */

export interface FusionWeights {
  /** W [d, screenDim] and its bias [d] (HF layout). */
  screenProj: tf.Tensor2D;
  screenProjBias: tf.Tensor1D;
  /** W_l and W_v [d, d], and the gate bias [d]. */
  gateLang: tf.Tensor2D;
  gateAttn: tf.Tensor2D;
  gateBias: tf.Tensor1D;
}

/** H'_screen = W·H_screen + b: [B, P, screenDim] → [B, P, d]. */
export function projectScreen(screen: tf.Tensor3D, weight: tf.Tensor2D, bias: tf.Tensor1D): tf.Tensor3D {
  return dense(screen, weight, bias);
}

/** softmax(H_language H'_screenᵀ / √d), [B, L, P]: where each language token looks (padded patches get nothing). */
export function screenAttentionWeights(language: tf.Tensor3D, screen: tf.Tensor3D, screenMask?: tf.Tensor2D): tf.Tensor3D {
  const d = language.shape[2];
  if (hasFused('attentionProbs')) return fusedAttentionProbs(language, screen, screenMask, 1 / Math.sqrt(d));
  let scores = tf.mul(tf.matMul(language, screen, false, true), 1 / Math.sqrt(d)) as tf.Tensor3D;
  if (screenMask) scores = tf.add(scores, tf.squeeze(paddingBias(screenMask), [1])) as tf.Tensor3D;
  return tf.softmax(scores);
}

/** H_attn = softmax(H_language H'_screenᵀ / √d) H'_screen, [B, L, d], with the softmax weights [B, L, P]. */
export function screenAttention(language: tf.Tensor3D, screen: tf.Tensor3D, screenMask?: tf.Tensor2D): { attended: tf.Tensor3D; weights: tf.Tensor3D } {
  const weights = screenAttentionWeights(language, screen, screenMask);
  return { attended: tf.matMul(weights, screen), weights };
}

/**
 * λ = sigmoid(W_l·H_language + W_v·H_attn + b), as two matmuls: one matmul of [H_language; H_attn]
 * against [W_l W_v] would copy both activations and both weights (and slice their gradients).
 */
export function fusionGate(language: tf.Tensor3D, attended: tf.Tensor3D, w: Pick<FusionWeights, 'gateLang' | 'gateAttn' | 'gateBias'>): tf.Tensor3D {
  return tf.sigmoid(tf.add(tf.add(dense(language, w.gateLang), dense(attended, w.gateAttn)), w.gateBias)) as tf.Tensor3D;
}

/** H_fuse = (1 − λ)·H_language + λ·H_attn, written as H_language + λ·(H_attn − H_language). */
export function gatedFusion(language: tf.Tensor3D, attended: tf.Tensor3D, gate: tf.Tensor3D): tf.Tensor3D {
  return tf.add(language, tf.mul(gate, tf.sub(attended, language)));
}

// A type alias, not an interface, so tf.tidy accepts it as a TensorContainer.
export type Fusion = {
  /** H_fuse [B, L, d]. */
  fused: tf.Tensor3D;
  /** λ [B, L, d]. */
  gate: tf.Tensor3D;
  /** The screen attention weights [B, L, P] (for grounding supervision and inspection). */
  attention: tf.Tensor3D;
};

/** Interaction and fusion over the projected screen H'_screen (projectScreen): H_fuse, with λ and the attention weights. */
export function fuseScreen(language: tf.Tensor3D, projected: tf.Tensor3D, screenMask: tf.Tensor2D | undefined, w: FusionWeights): Fusion {
  const { attended, weights: attention } = screenAttention(language, projected, screenMask);
  const gate = fusionGate(language, attended, w);
  return { fused: gatedFusion(language, attended, gate), gate, attention };
}
