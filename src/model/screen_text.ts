import * as tf from '@tensorflow/tfjs-core';
import type { Box } from '../data/types.js';
import { customGrad, dense, embed } from './layers.js';

/*
 * Screen text as screen tokens (our extension of the paper's H'_screen; docs/design.md, "Screen
 * tokens"). A text item — a string and its box — becomes one token the single-head interaction can
 * attend to, beside the patches:
 *   ē_i       = mean_t E[w_it]                    (E: the model's own token embeddings, shared.weight)
 *   H'_text_i = W_t·[ē_i ; c(box_i)] + b_t        (c: a fixed code of the box)
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
    const m = tf.expandDims(tf.cast(items.tokenMask, 'float32'), 3); // [B, N, T, 1]
    const mean = tf.div(tf.sum(tf.mul(emb, m), 2), tf.maximum(tf.sum(m, 2), 1)) as tf.Tensor3D; // [B, N, d]
    return dense(tf.concat([mean, items.boxes], 2) as tf.Tensor3D, w.weight, w.bias) as tf.Tensor3D;
  });
}

/*
 * The lexical match (our extension; docs/design.md, "Lexical match"): how well an item's spelling
 * is found in the model's input, computed from the model's own embeddings, so it holds for names
 * the model never saw (a spelled name matches itself, byte for byte):
 *   g_t   = [E w_t ; E w_t+1 ; E w_t+2] / ‖·‖        (a token in its trigram; zeros past the end)
 *   s_it  = max_l g_it · g_l                          (best agreement with any input token l)
 *   f_i   = [mean_t s_it ; min_t s_it]                (over the item's real tokens)
 *   H'_text_i += W_m·f_i
 * A trigram, not a token: a single byte or a common word is found in almost any goal, three in a
 * row mostly where the name is. The attention still decides what to look at: f_i is one more input
 * to its keys, with a learned weight W_m.
 * g_it · g_l is computed from the token Gram matrix G = E_item E_inputᵀ as G[t,l] + G[t+1,l+1] +
 * G[t+2,l+2] over the norms, which is one matmul and shifts of a small tensor instead of three
 * copies of every embedding. No gradient flows into E through the match: the match needs no
 * training to find a name spelled the same way, and the gradient of its max over positions cost
 * more than the rest of a `tiny` step on the wasm backend.
 */

/** Tokens in one match code: the token and the next two. */
const MATCH_NGRAM = 3;
/** f_i: the mean and the worst of an item's token agreements. */
export const MATCH_DIM = 2;
/** Added to a score to keep it out of a max or a min (cosines lie in [−1, 1]). */
const OUT_OF_REACH = 4;

/** The model's input tokens, which the items are matched against. */
export interface MatchQuery {
  /** [B, L] int32. */
  ids: tf.Tensor2D;
  /** [B, L] 1 on real tokens. */
  mask: tf.Tensor2D;
}

/** Σ_k x[..., i + k, j + k] over k < MATCH_NGRAM, zeros past either end: the trigram sum of a Gram matrix [X, I, J]. */
function diagonalSums(x: tf.Tensor3D): tf.Tensor3D {
  const [n, i, j] = x.shape;
  const padded = tf.pad(x, [[0, 0], [0, MATCH_NGRAM - 1], [0, MATCH_NGRAM - 1]]);
  let sum: tf.Tensor = x;
  for (let k = 1; k < MATCH_NGRAM; k++) sum = tf.add(sum, tf.slice(padded, [0, k, k], [n, i, j]));
  return sum as tf.Tensor3D;
}

/** ‖g_t‖ from squared token norms [X, T]: the square root of their trigram sums. */
function trigramNorms(squares: tf.Tensor2D): tf.Tensor2D {
  const [x, t] = squares.shape;
  const padded = tf.pad(squares, [[0, 0], [0, MATCH_NGRAM - 1]]);
  let sum: tf.Tensor = squares;
  for (let k = 1; k < MATCH_NGRAM; k++) sum = tf.add(sum, tf.slice(padded, [0, k], [x, t]));
  return tf.sqrt(tf.maximum(sum, 1e-12)) as tf.Tensor2D;
}

/** f [B, N, MATCH_DIM]: each item's lexical match with its screen's query (zeros on padded or empty items). */
export function lexicalMatch(items: TextItemsBatch, query: MatchQuery, embeddings: tf.Tensor2D): tf.Tensor3D {
  // Inside customGrad the match's own ops stay off the gradient tape.
  const match = customGrad((e: tf.Tensor, _save: tf.GradSaveFunc) => ({ value: matchFeatures(items, query, e as tf.Tensor2D), gradFunc: () => tf.zerosLike(e) }));
  return match(embeddings) as tf.Tensor3D;
}

function matchFeatures(items: TextItemsBatch, query: MatchQuery, embeddings: tf.Tensor2D): tf.Tensor3D {
  return tf.tidy(() => {
    const [b, n, t] = items.ids.shape;
    const l = query.ids.shape[1];
    const d = embeddings.shape[1];
    const itemEmb: tf.Tensor3D = tf.reshape(tf.mul(embed(embeddings, items.ids), tf.expandDims(tf.cast(items.tokenMask, 'float32'), 3)), [b, n * t, d]);
    const queryEmb = tf.mul(embed(embeddings, query.ids), tf.expandDims(tf.cast(query.mask, 'float32'), 2));
    const gram = tf.reshape(tf.matMul(itemEmb, queryEmb as tf.Tensor3D, false, true), [b * n, t, l]) as tf.Tensor3D; // token pairs, per item
    // Item trigrams end at the item's last token; the query's run on, so pairs near the query's end are padded too.
    const dots = tf.reshape(diagonalSums(gram), [b, n * t, l]);
    const itemNorms = tf.reshape(trigramNorms(tf.reshape(tf.sum(tf.square(itemEmb), 2), [b * n, t]) as tf.Tensor2D), [b, n * t, 1]);
    const queryNorms = tf.expandDims(trigramNorms(tf.sum(tf.square(queryEmb), 2)), 1);
    const cosines = tf.div(dots, tf.mul(itemNorms, queryNorms)); // [B, N·T, L]
    const queryPad = tf.mul(tf.sub(1, tf.cast(query.mask, 'float32')), OUT_OF_REACH);
    const best = tf.reshape(tf.max(tf.sub(cosines, tf.expandDims(queryPad, 1)), 2), [b, n, t]);
    const real = tf.cast(items.tokenMask, 'float32');
    const count = tf.sum(real, 2);
    const mean = tf.div(tf.sum(tf.mul(best, real), 2), tf.maximum(count, 1));
    const worst = tf.min(tf.add(best, tf.mul(tf.sub(1, real), OUT_OF_REACH)), 2);
    const present = tf.mul(tf.cast(items.mask, 'float32'), tf.cast(tf.greater(count, 0), 'float32')); // items with a token
    return tf.mul(tf.stack([mean, worst], 2), tf.expandDims(present, 2)) as tf.Tensor3D;
  });
}
