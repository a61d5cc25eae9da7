import * as tf from '@tensorflow/tfjs-core';
import type { ActionCodec } from '../model/codec.js';
import { disposeSource, pointedPiece, sourceRows, type CopySource } from '../model/copy.js';
import { GrammarNode, startedCopy, startPieces, type ConstraintState, type TargetConstraint } from '../model/constrained.js';
import type { IncrementalDecoder } from './generate.js';

/**
 * Beam search over a TYPE action's text, after greedy decoding has chosen the action: the typed
 * text is the run the grammar allows with the highest mean log-probability per token (its eos
 * included), kept among `width` hypotheses, instead of the run greedy decoding starts with its first
 * token. Why: the first token of a copy decides where in the goal it starts, and a word that is more
 * likely to come first than the query's true first word ("Shopping" before "Amazon Shopping")
 * commits greedy decoding to it. Why the mean: a byte-spelled word is many tokens, each nearly
 * certain once it has begun, so a raw sum of log-probabilities would favour the shorter run for its
 * fewer factors, not for being more likely word by word.
 *
 * A codec with case tokens (codec.ts caseModes) says itself whether the text is a run of the goal
 * or free: the beam starts at the case token. Without them, and with the copy constraint and width >
 * 1, a second beam of the same width searches texts free of it: what a user types is not always in
 * the goal ("costco.com" for "… on costco"), and only the vocabulary writes it. Each beam scores
 * over the ids its own constraint allows, so the best run of the goal, its probabilities gathered on
 * fewer ids, wins unless the model puts clearly more on a text the goal lacks. Chosen on the
 * validation split (README Results); scored over every id, both beams put misspelt names first on
 * names training never showed.
 *
 * With `started` (models with a copy pointer, codecs without case tokens), a text the beams would type
 * whose first word the goal holds at several places is decoded again by a copy beam held to the
 * place the pointer weighs most (model/copy.ts pointedPiece; constrained.ts startedCopy), its texts
 * ranked by their whole log-probability. Why: the mixture points by id after the first, so where the
 * goal holds a word twice the per-token beam runs on from the query into the name after it ("Ada
 * Ito" for "look up Ada and go to Ada Ito"), and a per-token mean pays little for going on past the
 * query's end.
 *
 * Each row gets the texts it finished, best first (at most TEXT_CHOICES; the first is the one typed),
 * or, when none finished, the one the length limit cut off: what else the model weighed, for
 * whoever asks why it typed what it did.
 *
 * Rows are decoded again from their greedy prefix (plan, act, TYPE): grouped by prefix length so a
 * group steps in lockstep, then each row's state is copied per hypothesis. A hypothesis is dropped
 * once no completion could beat the best text its row has finished in either beam (scores only
 * fall, lengths are bounded).
 */
export function beamTypedText<S>(
  model: IncrementalDecoder<S>,
  constraint: TargetConstraint,
  codec: ActionCodec,
  encoded: TextBeamInputs,
  rows: readonly TextRow[],
  width: number,
  started = DEFAULT_TEXT_START,
): TextChoice[][] {
  const groups = new Map<number, number[]>();
  rows.forEach((r, i) => groups.set(r.prefix.length, [...(groups.get(r.prefix.length) ?? []), i]));
  const out: TextChoice[][] = new Array(rows.length);
  for (const members of groups.values()) {
    const group = members.map((i) => rows[i]!);
    const texts = beamGroup(model, constraint, codec, encoded, group, width, null);
    if (started && encoded.copy && model.copyPointing && !codec.casesText) {
      restart(texts, group, codec, constraint, (held, places) => beamGroup(model, constraint, codec, encoded, held.map((n) => group[n]!), width, places));
    }
    members.forEach((i, n) => (out[i] = texts[n]!.map((c) => ({ ids: [...rows[i]!.prefix, ...c.ids], score: c.score }))));
  }
  return out;
}

/**
 * Where the beams would type a text whose first word the goal holds at more than one place, the
 * text a copy held to the place the pointer picks types instead (first, the beams' texts after it).
 * Why the beams decide the word: whether a text is copied or written, and which word it starts
 * with, is their comparison, chosen on the validation split; only which place is the pointer's.
 */
function restart(texts: TextChoice[][], rows: readonly TextRow[], codec: ActionCodec, constraint: TargetConstraint, held: (rows: number[], places: number[][]) => TextChoice[][]): void {
  const places = texts.map((t, n) => {
    const copy = constraint.initial(rows[n]!.goal).copy;
    const text = t[0]!.ids.slice(0, -1); // its eos off
    return copy && codec.copyPositions(rows[n]!.goal, text) ? startPieces(copy.pieces, text) : [];
  });
  const twice = places.flatMap((p, n) => (p.length > 1 ? [n] : []));
  if (twice.length === 0) return;
  held(twice, twice.map((n) => places[n]!)).forEach(([best], k) => {
    const n = twice[k]!;
    const key = best!.ids.join(',');
    texts[n] = [best!, ...texts[n]!.filter((t) => t.ids.join(',') !== key)].slice(0, TEXT_CHOICES);
  });
}

/** A typed text the beam finished: the target's ids with it (eos included) and its mean log-probability per token. */
export interface TextChoice {
  ids: number[];
  score: number;
}

/** The most finished texts a row reports, best first (the first is the one typed). */
export const TEXT_CHOICES = 5;

/** The batch's encoder side: H_fuse and its mask, and what the copy pointer reads (null: a model without one). */
export interface TextBeamInputs {
  hFuse: tf.Tensor3D;
  inputMask: tf.Tensor2D;
  copy: CopySource | null;
}

/** A row to decode again: its batch row, goal ids (for the copy) and greedy prefix up to its TYPE token. */
export interface TextRow {
  batchRow: number;
  goal: readonly number[];
  prefix: readonly number[];
}

/** The default beam width for typed text (1 = greedy). */
export const DEFAULT_TEXT_BEAMS = 4;
/** Whether a copied text whose first word the goal holds twice is held to the place the pointer picks (restart), by default. */
export const DEFAULT_TEXT_START = true;

interface Hypothesis {
  ids: number[];
  /** Sum of the tokens' log-probabilities; a finished text is ranked by score / ids.length. */
  score: number;
  state: ConstraintState;
  /** Row of the decoder state that holds this hypothesis' cache. */
  at: number;
  /** The group's row this hypothesis extends. */
  row: number;
}

/** One group of rows with equal prefix lengths: each row's finished texts (ids after the prefix, eos included), best first. */
function beamGroup<S>(
  model: IncrementalDecoder<S>,
  constraint: TargetConstraint,
  codec: ActionCodec,
  encoded: TextBeamInputs,
  rows: readonly TextRow[],
  width: number,
  hold: readonly (readonly number[])[] | null,
): TextChoice[][] {
  if (!model.selectDecodingRows) throw new Error('beamTypedText: the model cannot reorder its decoding rows');
  const V = constraint.vocabSize;
  const [hFuse, inputMask] = tf.tidy(() => {
    const idx = tf.tensor1d(rows.map((r) => r.batchRow), 'int32');
    return [tf.gather(encoded.hFuse, idx), tf.gather(encoded.inputMask, idx)] as const;
  });
  let state = model.startDecoding(hFuse, inputMask);
  tf.dispose([hFuse, inputMask]);
  const copy = encoded.copy && sourceRows(encoded.copy, rows.map((r) => r.batchRow));
  const starts = rows.map((r) => r.prefix.reduce((s, id) => constraint.advance(s, id), constraint.initial(r.goal)));
  if (starts.some((s) => s.node !== GrammarNode.Text && s.node !== GrammarNode.Case)) throw new Error('beamTypedText: a prefix does not end at a TYPE action');
  // A case token first (codec.casesText) is the vocabulary's to write; the copy mixes in from the text's first id.
  const cased = starts[0]!.node === GrammarNode.Case;
  // Feed the start token and the prefix; the last logits are the first token after TYPE.
  let logits: Float32Array = new Float32Array(0);
  let pointing: StepPointing | undefined;
  for (let t = 0; t <= rows[0]!.prefix.length; t++) {
    const last = t === rows[0]!.prefix.length;
    const ids = rows.map((r) => (t === 0 ? model.config.decoderStartTokenId : r.prefix[t - 1]!));
    ({ state, logits, pointing } = step(model, state, ids, V, last && !cased ? copy : null, rows.map((_, i) => i), last && hold !== null));
  }
  // Held to a start: the copy begins at the place of its word the pointer weighs most (copy.ts pointedPiece), with no
  // free beam beside it, and its texts are ranked by their whole log-probability: they share their first word, so a
  // longer run is not favoured for its many near-certain ids, only for what the model puts on going on past the end.
  let started = starts;
  if (pointing && hold) {
    const { a, length } = pointing;
    started = starts.map((s, i) => {
      if (!s.copy) return s;
      const first = pointedPiece(hold[i]!, s.copy.pieces.map((p) => p[0]!.length), a.subarray(i * length, (i + 1) * length));
      return { ...s, copy: startedCopy(s.copy, first) };
    });
  }
  const rank = (h: Hypothesis): number => (hold ? h.score : mean(h));
  const longest = codec.config.maxTargetTokens - rows[0]!.prefix.length;
  // Beside the copy, a beam free of it (width > 1, no case token, no start held): a text the goal does not hold, written
  // by the vocabulary.
  let beams: Hypothesis[][] = started.flatMap((s, row) => (width > 1 && s.copy && !cased && !hold ? [s, { ...s, copy: null }] : [s]).map((state) => [{ ids: [], score: 0, state, at: row, row }]));
  // Each row's best finished text, over both its beams; and its best text cut off by the length limit, kept only for a
  // row with no other. Why: a run the limit ended did not end, and its mean score can be high for the wrong reason
  // (a free beam repeating a letter: each repeat is likely once it has begun).
  const best: (Hypothesis | null)[] = rows.map(() => null);
  const cut: (Hypothesis | null)[] = rows.map(() => null);
  const done: Hypothesis[][] = rows.map(() => []);
  while (beams.some((b) => b.length > 0)) {
    beams = beams.map((beam) => {
      const grown = beam.flatMap((h) => {
        const lp = maskedLogSoftmax(logits.subarray(h.at * V, (h.at + 1) * V), constraint.mask(h.state));
        return Array.from(constraint.allowedIds(h.state), (id) => ({ h, id, score: h.score + lp[id]! }));
      });
      grown.sort((a, b) => b.score - a.score);
      const kept: Hypothesis[] = [];
      for (const { h, id, score } of grown.slice(0, width)) {
        const next = { ids: [...h.ids, id], score, state: constraint.advance(h.state, id), at: h.at, row: h.row };
        if (id !== codec.eosId) {
          kept.push(next);
          continue;
        }
        const ended = constraint.textRoom(h.state); // else the length limit cut it off
        if (ended) done[h.row]!.push(next);
        const keep = ended ? best : cut;
        if (!keep[h.row] || rank(next) > rank(keep[h.row]!)) keep[h.row] = next;
      }
      // A completion of h scores at most h.score (≤ 0) over at most `longest` tokens: drop h once that cannot beat the
      // best text either of its row's beams has found (a confident free text would otherwise run to the length limit).
      return kept.filter((h) => !best[h.row] || (hold ? h.score > best[h.row]!.score : h.score / longest > mean(best[h.row]!)));
    });
    const open = beams.flat();
    if (open.length === 0) break;
    state = model.selectDecodingRows(state, open.map((h) => h.at));
    open.forEach((h, n) => (h.at = n));
    ({ state, logits } = step(model, state, open.map((h) => h.ids[h.ids.length - 1]!), V, copy, open.map((h) => h.row)));
  }
  if (copy) disposeSource(copy);
  model.disposeDecoding(state);
  return done.map((finished, i) => {
    const h = cut[i];
    if (finished.length === 0 && !h) throw new Error(`beamTypedText: row ${rows[i]!.batchRow} found no typed text that ends`);
    const ranked = finished.length > 0 ? [...finished].sort((a, b) => rank(b) - rank(a)) : [h!];
    return ranked.slice(0, TEXT_CHOICES).map((c) => ({ ids: c.ids, score: mean(c) }));
  });
}

/**
 * One decoding step: the next-token scores [ids.length · V] of each row, from the copy pointer's
 * mixture when `copy` is given (rows[k] names the source row that row k copies from), else the logits.
 */
function step<S>(
  model: IncrementalDecoder<S>,
  state: S,
  ids: readonly number[],
  V: number,
  copy: CopySource | null,
  rows: readonly number[],
  point = false,
): { state: S; logits: Float32Array; pointing?: StepPointing } {
  const tokens = tf.tensor1d(ids as number[], 'int32');
  const r = model.decodeStep(state, tokens);
  tokens.dispose();
  let pointing: StepPointing | undefined;
  if (point && copy && model.copyPointing) {
    const a = tf.tidy(() => tf.reshape(model.copyPointing!(tf.expandDims(r.hidden, 1) as tf.Tensor3D, sourceRows(copy, rows)).a, [ids.length, -1]));
    pointing = { a: a.dataSync() as Float32Array, length: a.shape[1]! };
    a.dispose();
  }
  const scores = tf.tidy(() => {
    const cut = r.logits.shape[1] === V ? r.logits : tf.slice(r.logits, [0, 0], [ids.length, V]);
    if (!copy) return tf.clone(cut);
    const mixed = model.copyLogProbs!(tf.expandDims(r.hidden, 1) as tf.Tensor3D, tf.expandDims(cut, 1) as tf.Tensor3D, sourceRows(copy, rows));
    return tf.reshape(mixed, [ids.length, V]);
  });
  tf.dispose([r.hidden, r.logits]);
  const logits = scores.dataSync() as Float32Array;
  scores.dispose();
  return { state: r.state, logits, ...(pointing ? { pointing } : {}) };
}

/** The copy pointer at a text's first step, row by row: a [rows · length] over each row's input positions. */
interface StepPointing {
  a: Float32Array;
  length: number;
}

/** log softmax over the ids the mask allows (0); the rest stay −∞. */
function maskedLogSoftmax(logits: Float32Array, mask: Float32Array): Float32Array {
  let max = -Infinity;
  for (let v = 0; v < logits.length; v++) if (mask[v] === 0 && logits[v]! > max) max = logits[v]!;
  let sum = 0;
  for (let v = 0; v < logits.length; v++) if (mask[v] === 0) sum += Math.exp(logits[v]! - max);
  const lse = max + Math.log(sum);
  const out = new Float32Array(logits.length).fill(-Infinity);
  for (let v = 0; v < logits.length; v++) if (mask[v] === 0) out[v] = logits[v]! - lse;
  return out;
}

const mean = (h: Hypothesis): number => h.score / h.ids.length;
