import * as tf from '@tensorflow/tfjs-core';
import { dense, embed, stopGradient } from './layers.js';

/*
 * The copy pointer (our addition; the pointer-generator of See et al., 2017, with a stop on the
 * pointed position): at the decoder steps that write a TYPE action's text (and the eos that ends
 * it), the next token is drawn from a mixture of the vocabulary and the goal, pointed at by position:
 *   a_t,i  = softmax_i((W_c h_t) · K_i / √d)          over the goal's positions i and the one after it
 *   K_i    = H_i + W_x [E x_i−1; E x_i−2]              (H_i alone without copyContext;
 *                                                       H_i + W_x [H_i−1; H_i−2] with copyContext 'states')
 *   s_i    = σ(w_s · H_i + b_s)                        (1 at the position after the goal;
 *                                                       w_s · K_i with copyStopContext)
 *   g_t    = σ(w_g · h_t + b_g)
 *   p_t(v) = g_t · softmax(logits_t)(v) + (1 − g_t) · Σ_i a_t,i · ((1 − s_i)·[x_i = v] + s_i·[v = eos])
 * where h_t is the decoder's state, H the fused encoder states the decoder reads (H_fuse), x the input
 * ids and E the token embeddings. Why the pointer: a name the vocabulary spells in bytes ("comedy",
 * "Netflix") must otherwise be spelled by the LM head, which has to learn to turn "the query is here"
 * into the ids of its letters; a pointer only has to find where the query is, which the encoder's
 * contextual states say ("for …", quotes), so it carries to names training never showed. Why the
 * stop: where a typed name ends is said by what follows it in the goal (" page", " app", " from"), not
 * by the name, so the stop is read off the position the pointer would copy next, s_i, which does not
 * depend on having seen the name. Why the context in K (copyContext): a search goal holds its query
 * and, after it, the name to open, which often repeats the query ("look up Evans and go to Noah
 * Evans"); which word is the query is said by the words before it (" up", " for"), and a byte-spelled
 * word starts on a lone space token whose fused state says little of them: without W_x the pointer
 * spread its weight evenly over the goal's lone spaces (README Results: "Where the copy pointer
 * looks"). Two ids back also reach the first letter after such a space. Why the states' variant:
 * with the embeddings, W_x finds the query by itself and the fused states are no longer asked where a
 * query sits; reading H_i−1 and H_i−2, trained through W_x, the pointer's loss still reaches the
 * states before the query (README Results). Why the stop may read K too (copyStopContext): whether a
 * run ends at place i is said by what came before it as much as by x_i (" and" after a query, not
 * inside "salt and pepper"), and with H_i alone a seed ran on past the query ("Tanaka and go to Ben
 * Tanaka"; README Results). The vocabulary side writes the case token before the text (codec.ts
 * caseModes: how the copied run is cased, or <free>) and, after <free>, what no run of the goal holds
 * (".com" after "costco"); for codecs without case tokens, a casing the goal lacks ("Yelp" for
 * "install yelp app"), and free text only from the text beam's second beam (infer/text_beam.ts). W_c,
 * W_x, w_g, b_g, w_s and b_s start at zero: an untrained pointer looks at the goal uniformly, the two
 * sides weighted equally.
 */

/** The copy pointer's weights (params.ts). */
export interface CopyWeights {
  /** W_c [d, d]. */
  pointer: tf.Tensor2D;
  /** w_g [1, d]. */
  gate: tf.Tensor2D;
  /** b_g [1]. */
  gateBias: tf.Tensor1D;
  /** w_s [1, d]. */
  stop: tf.Tensor2D;
  /** b_s [1]. */
  stopBias: tf.Tensor1D;
  /**
   * W_x [d, 2d] and what it reads before a place: E [V, d] (copyContext true), or H itself without E ('states');
   * `stop`: the stop reads K as well (copyStopContext). Absent = K is H.
   */
  context?: { weight: tf.Tensor2D; embeddings?: tf.Tensor2D; stop?: boolean };
}

/** What a copy reads, one row per decoder state: the goal's fused states, the pointer's keys, ids and mask. */
export interface CopySource {
  /** H [R, L, d]: the fused encoder states of each row's input. */
  keys: tf.Tensor3D;
  /** K [R, L, d]: the pointer's keys; the very tensor `keys` without copyContext. */
  pointerKeys: tf.Tensor3D;
  /** x [R, L] int32: each row's input ids. */
  ids: tf.Tensor2D;
  /** [R, L] 1 on the goal's tokens (a prefix of the input: what may be copied), 0 on the history and padding. */
  goal: tf.Tensor2D;
}

/** Keeps log p finite where both sides give a token nothing (a masked id, say). */
const FLOOR = 1e-12;

/** The pointer's half of the mixture: a [R, T, L] over each row's goal positions (and the one after) and s [R, L, 1]. */
export interface CopyPointing {
  a: tf.Tensor3D;
  stop: tf.Tensor3D;
}

/**
 * The source of a batch: K computed here once, not at every decoding step that points. `keys`, `ids`
 * and `goal` stay the caller's; disposePointerKeys frees what this makes.
 */
export function copySource(keys: tf.Tensor3D, ids: tf.Tensor2D, goal: tf.Tensor2D, context?: CopyWeights['context']): CopySource {
  return { keys, ids, goal, pointerKeys: context ? tf.tidy(() => tf.add(keys, contextKeys(keys, ids, context))) : keys };
}

/** a_t,i and s_i above, for decoder states `hidden` [R, T, d], row r pointing into row r of the source. */
export function pointCopy(hidden: tf.Tensor3D, source: CopySource, w: CopyWeights): CopyPointing {
  return tf.tidy(() => {
    const [r, l, d] = source.keys.shape;
    const goal = tf.cast(source.goal, 'float32');
    const after = tf.relu(tf.sub(tf.pad(tf.slice(goal, [0, 0], [r, l - 1]), [[0, 0], [1, 0]]), goal)); // [R, L]: 1 just after the goal
    const offRange = tf.mul(tf.sub(1, tf.add(goal, after)), -1e9);
    const q = dense(hidden, w.pointer); // [R, T, d]
    const scores = tf.add(tf.mul(tf.matMul(q, source.pointerKeys, false, true), 1 / Math.sqrt(d)), tf.expandDims(offRange, 1)); // [R, T, L]
    const stopReads = w.context?.stop ? source.pointerKeys : source.keys;
    const stop = tf.expandDims(tf.maximum(tf.reshape(tf.sigmoid(dense(stopReads, w.stop, w.stopBias)), [r, l]), after), 2); // s [R, L, 1]
    return { a: tf.softmax(scores) as tf.Tensor3D, stop: stop as tf.Tensor3D };
  });
}

/**
 * W_x [E x_i−1; E x_i−2] (or W_x [H_i−1; H_i−2] without E) [R, L, d] for fused states `keys` [R, L, d] and
 * input ids [R, L]; before the first position the embedding of id 0 (T5's pad), or a zero state.
 */
function contextKeys(keys: tf.Tensor3D, ids: tf.Tensor2D, w: NonNullable<CopyWeights['context']>): tf.Tensor3D {
  const l = keys.shape[1];
  const shift = <T extends tf.Tensor>(x: T, k: number): T => {
    const begin = x.shape.map(() => 0);
    const size = x.shape.map((n, axis) => (axis === 1 ? Math.max(l - k, 0) : n));
    const pad = x.shape.map((_, axis): [number, number] => (axis === 1 ? [Math.min(k, l), 0] : [0, 0]));
    return tf.pad(tf.slice(x, begin, size), pad) as T;
  };
  let before: (k: number) => tf.Tensor3D;
  if (w.embeddings) {
    // Read, not trained, through W_x: every other token reads these embeddings, and trained through W_x they
    // moved what the agent does after a search's ENTER (README Results: "The copy pointer reads the words before a place").
    const embeddings = stopGradient(w.embeddings);
    const intIds = tf.cast(ids, 'int32');
    before = (k) => embed(embeddings, shift(intIds, k)) as tf.Tensor3D;
  } else {
    before = (k) => shift(keys, k);
  }
  return dense(tf.concat([before(1), before(2)], 2), w.weight);
}

/**
 * log p [R, T, V] of the mixture above, for decoder states `hidden` [R, T, d] with their vocabulary
 * logits [R, T, V], row r copying from row r of the source; `eos` is the id a stop writes. `pointing`
 * is pointCopy's, when the caller has it already.
 */
export function copyLogProbs(hidden: tf.Tensor3D, logits: tf.Tensor3D, source: CopySource, w: CopyWeights, eos: number, pointing?: CopyPointing): tf.Tensor3D {
  return tf.tidy(() => {
    const v = logits.shape[2];
    const { a, stop } = pointing ?? pointCopy(hidden, source, w);
    const copied = tf.mul(tf.sub(1, stop), tf.oneHot(tf.cast(source.ids, 'int32'), v).toFloat()); // [R, L, V]: position i → (1 − s_i)·[x_i]
    const eosColumn = tf.oneHot(tf.tensor1d([eos], 'int32'), v).toFloat(); // [1, V]
    const pCopy = tf.add(tf.matMul(a, copied), tf.mul(tf.matMul(a, stop), eosColumn)); // [R, T, V]
    const g = tf.sigmoid(dense(hidden, w.gate, w.gateBias)); // [R, T, 1]
    const p = tf.add(tf.mul(g, tf.softmax(logits)), tf.mul(tf.sub(1, g), pCopy));
    return tf.log(tf.add(p, FLOOR)) as tf.Tensor3D;
  });
}

/**
 * The position loss (our addition): where the goal says which position a typed id comes from
 * (codec.copyPositions), the pointer is taught it directly, with its stop:
 *   L_pos = −Σ_t [log a_t,p_t + log(1 − s_p_t)] over copied ids − Σ_t [log a_t,e + log s_e] over the eos steps,
 * p_t the id's goal position, e the position after the run. Why: the mixture's loss pays the pointer
 * only for what the vocabulary side does not already write, so a pointer trained on it alone need
 * not learn where a query sits for words the vocabulary knows; on goals naming apps training never
 * showed, it starts at the app's name or runs on past the query's end. On in the scratch recipe,
 * beside renamed searches (train/relabel.ts: renamedSearch), whose names change at every step, so a
 * search's query is told by its place alone (`train --copy-position-weight`; measured in README
 * Results). `at` [R, T] holds p_t, e or −1 (no position known: not a text step, a re-cased id, a
 * text the goal does not hold); `ends` [R, T] is 1 on eos steps.
 */
export function copyPositionLoss(pointing: CopyPointing, at: tf.Tensor2D, ends: tf.Tensor2D): tf.Scalar {
  return tf.tidy(() => {
    const l = pointing.a.shape[2];
    const known = tf.cast(tf.greaterEqual(at, 0), 'float32'); // [R, T]
    const target = tf.oneHot(tf.maximum(tf.cast(at, 'int32'), tf.scalar(0, 'int32')), l).toFloat(); // [R, T, L]
    const pointed = tf.sum(tf.mul(pointing.a, target), 2); // a_t,p [R, T]
    const s = tf.squeeze(tf.matMul(target, pointing.stop), [2]); // s_p [R, T]
    const end = tf.cast(ends, 'float32');
    const stopRight = tf.add(tf.mul(end, s), tf.mul(tf.sub(1, end), tf.sub(1, s)));
    const perStep = tf.add(tf.log(tf.add(pointed, FLOOR)), tf.log(tf.add(stopRight, FLOOR)));
    return tf.neg(tf.sum(tf.mul(perStep, known))) as tf.Scalar;
  });
}

/**
 * Of the goal pieces a copy could start at (`candidates`: places of the same word), the one the
 * pointer weighs most at the text's first step: a [L] over the goal's positions, a piece placed
 * after the ids of the pieces before it (`pieceLengths`). Why: after its first id the mixture points
 * by id, not by place, so where the goal holds a word twice a copy begun at the query can run on
 * into the name after its second place ("Ada Ito" for "look up Ada and go to Ada Ito"); the
 * pointer's first step is the one place the model says which of them it copies.
 */
export function pointedPiece(candidates: readonly number[], pieceLengths: readonly number[], a: ArrayLike<number>): number {
  const place = (piece: number): number => pieceLengths.slice(0, piece).reduce((sum, n) => sum + n, 0);
  return candidates.reduce((best, c) => ((a[place(c)] ?? 0) > (a[place(best)] ?? 0) ? c : best));
}

/**
 * The loss at the text steps: −Σ log p(label) over the positions `steps` [R, T] marks (1), given
 * log p [R, T, V] and labels [R, T] (any value where steps is 0).
 */
export function copyLoss(logProbs: tf.Tensor3D, labels: tf.Tensor2D, steps: tf.Tensor2D): tf.Scalar {
  return tf.tidy(() => {
    const on = tf.cast(steps, 'float32');
    const safe = tf.mul(tf.cast(labels, 'int32'), tf.cast(steps, 'int32'));
    const picked = tf.sum(tf.mul(logProbs, tf.cast(tf.oneHot(safe, logProbs.shape[2]), 'float32')), 2); // [R, T]
    return tf.neg(tf.sum(tf.mul(picked, on))) as tf.Scalar;
  });
}

/** The rows of a source for decoder rows that read batch rows `rows` (beams, text steps). */
export function sourceRows(source: CopySource, rows: readonly number[]): CopySource {
  return tf.tidy(() => {
    const idx = tf.tensor1d(rows as number[], 'int32');
    const keys = tf.gather(source.keys, idx);
    return { keys, pointerKeys: source.pointerKeys === source.keys ? keys : tf.gather(source.pointerKeys, idx), ids: tf.gather(source.ids, idx), goal: tf.gather(source.goal, idx) };
  });
}

/** Frees a source sourceRows made (all of it; K and H are one tensor without the context, and a second dispose does nothing). */
export function disposeSource(source: CopySource): void {
  tf.dispose([source.keys, source.pointerKeys, source.ids, source.goal]);
}

/** Frees what copySource made beside what its caller gave it: K, with copyContext. */
export function disposePointerKeys(source: CopySource): void {
  if (source.pointerKeys !== source.keys) source.pointerKeys.dispose();
}
