import * as tf from '@tensorflow/tfjs-core';
import type { Box } from '../data/types.js';
import { dense, embed } from './layers.js';

/*
 * Screen text as screen tokens (our extension of the paper's H'_screen; docs/design.md, "Screen
 * tokens"). A text item — a string and its box — becomes one token the single-head interaction can
 * attend to, beside the patches:
 *   ē_i       = mean_t E[w_it]                    (E: the model's own token embeddings, shared.weight)
 *   H'_text_i = W_t·[ē_i ; c(box_i)] + b_t        (c: a fixed code of the box)
 *   H'_text_i += W_m·f_i                         (with textMatch: the item's lexical match, text_match.ts)
 *   H'_screen = [W·H_patches ; H'_text]           (keys and values of the interaction)
 * Why the shared embedding: a goal word and the same word on screen start from the same vector, so
 * matching them is a near-identity map for the attention to learn, for every word the tokenizer knows
 * and, through byte tokens, for words it never saw.
 */

/** Frequencies of the box code's sinusoids, in cycles over the screen. */
const BOX_FREQUENCIES = [1, 2, 4, 8] as const;
/** c(box): centre, size, and sin/cos of the centre at each frequency. */
export const BOX_CODE_DIM = 4 + 4 * BOX_FREQUENCIES.length;

/** The fixed code c(box) of a (y, x, h, w) box: [cy, cx, h, w, sin/cos(2π f cy), sin/cos(2π f cx) …]. */
export function boxCode(box: Box, out: Float32Array = new Float32Array(BOX_CODE_DIM), offset = 0): Float32Array {
  const [y, x, h, w] = box;
  const cy = y + h / 2;
  const cx = x + w / 2;
  out.set([cy, cx, h, w], offset);
  BOX_FREQUENCIES.forEach((f, k) => {
    const o = offset + 4 + 4 * k;
    out[o] = Math.sin(2 * Math.PI * f * cy);
    out[o + 1] = Math.cos(2 * Math.PI * f * cy);
    out[o + 2] = Math.sin(2 * Math.PI * f * cx);
    out[o + 3] = Math.cos(2 * Math.PI * f * cx);
  });
  return out;
}

/** A batch of text items, padded: B screens × N items × T tokens. */
export interface TextItemsBatch {
  /** [B, N, T] int32 token ids, pad where unused. */
  ids: tf.Tensor3D;
  /** [B, N, T] 1 on real tokens. */
  tokenMask: tf.Tensor3D;
  /** [B, N] 1 on real items. */
  mask: tf.Tensor2D;
  /** [B, N, BOX_CODE_DIM] box codes. */
  boxes: tf.Tensor3D;
  /** [B, N, MATCH_DIM] each item's lexical match with its screen's goal (text_match.ts); needed by textMatch models. */
  match?: tf.Tensor3D;
}

export interface TextTokenWeights {
  /** E [V, d]. */
  embeddings: tf.Tensor2D;
  /** W_t [d, d + BOX_CODE_DIM] and b_t [d] (HF layout). */
  weight: tf.Tensor2D;
  bias: tf.Tensor1D;
}

/** H'_text [B, N, d]: each item's mean token embedding and box code, projected to d. */
export function textTokens(items: TextItemsBatch, w: TextTokenWeights): tf.Tensor3D {
  return tf.tidy(() => {
    const emb = embed(w.embeddings, items.ids) as tf.Tensor4D; // [B, N, T, d]
    const [b, n, t] = items.ids.shape;
    const m = tf.cast(items.tokenMask, 'float32');
    // ē_i = Σ_t (m_it / Σ_t m_it)·E[w_it]: one [1, T]·[T, d] product per item, whose gradients are products too
    // (a masked sum's gradient broadcasts through a tensor of ones as large as emb).
    const share = tf.div(m, tf.maximum(tf.sum(m, 2, true), 1)); // [B, N, T]
    const mean = tf.reshape(tf.matMul(tf.reshape(share, [b * n, 1, t]), tf.reshape(emb, [b * n, t, -1])), [b, n, -1]) as tf.Tensor3D; // [B, N, d]
    return dense(tf.concat([mean, items.boxes], 2) as tf.Tensor3D, w.weight, w.bias) as tf.Tensor3D;
  });
}
