import * as tf from '@tensorflow/tfjs-core';
import type { Encoded } from '../model/autoui.js';
import { goalMaskBatch, type ScreenBatch } from '../model/batch.js';
import { disposePointerKeys, type CopyPointing, type CopySource } from '../model/copy.js';
import type { ActionCodec, DecodedTarget } from '../model/codec.js';
import { decidesNext, GrammarNode, TargetConstraint, type ConstraintState } from '../model/constrained.js';
import { argmaxTokens, attentionPointer, patchTokens, tapAt, tokenCentre, type TapSource } from '../model/pointer.js';
import { offsetPoint } from '../model/tap_offset.js';
import type { TextItemsBatch } from '../model/screen_text.js';
import { ACTION_TYPE_IDS, ACTION_TYPE_NAMES, ActionType, type AitwAction, type TypedTextChoice, type TypeProbs, type YX } from '../data/types.js';
import { beamTypedText, DEFAULT_TEXT_BEAMS, DEFAULT_TEXT_START, type TextBeamInputs } from './text_beam.js';
import { avoidedOf, avoidedTokens, maskAvoided } from './avoid.js';

/**
 * What decoding needs from a model: fused encoder states (with the screen attention and the screen
 * tokens, where taps may be read from), then one token at a time with cached keys/values, and (for
 * models with one) the tap pointer over a decoder state.
 */
export interface IncrementalDecoder<State> {
  readonly config: { decoderStartTokenId: number; padTokenId: number; vocabSize: number; copyPointer?: boolean; tapOffset?: boolean };
  encodeFull(inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, screen: tf.Tensor3D, screenMask?: tf.Tensor2D, training?: boolean, texts?: TextItemsBatch): Encoded;
  startDecoding(hFuse: tf.Tensor3D, inputMask: tf.Tensor2D): State;
  decodeStep(state: State, tokens: tf.Tensor1D): { hidden: tf.Tensor2D; logits: tf.Tensor2D; state: State };
  /** Frees a decoding state (the last one; each decodeStep consumes the state it is given). */
  disposeDecoding(state: State): void;
  pointTaps?(hidden: tf.Tensor2D, e: Pick<Encoded, 'attention' | 'keys' | 'keyMask'>, inputMask: tf.Tensor2D): tf.Tensor2D;
  /** Where in a pointed patch the tap lands (models with tapOffset; model/tap_offset.ts). */
  offsetTaps?(hidden: tf.Tensor2D, keys: tf.Tensor3D, patch: tf.Tensor1D): tf.Tensor2D;
  /** log p [R, T, V] of the copy pointer's mixture (models with copyPointer; model/copy.ts). */
  copyLogProbs?(hidden: tf.Tensor3D, logits: tf.Tensor3D, source: CopySource): tf.Tensor3D;
  /** The copy pointer's weights over the goal and its stop (models with copyPointer; model/copy.ts). */
  copyPointing?(hidden: tf.Tensor3D, source: CopySource): CopyPointing;
  /** What the copy pointer reads of a batch (models with copyPointer; model/copy.ts). */
  copySource?(keys: tf.Tensor3D, ids: tf.Tensor2D, goal: tf.Tensor2D): CopySource;
  /** Keeps/reorders/repeats rows of a decoding state (consumes it); what a beam search needs. */
  selectDecodingRows?(state: State, rows: number[]): State;
}

export interface Generated {
  ids: number[];
  result: DecodedTarget;
  /**
   * The model's probability of each action type as the plan's first step (under the grammar and
   * what was avoided): where it decides what to do next, before the plan it writes conditions the
   * action. Empty when decoding stopped before it.
   */
  typeProbs: TypeProbs;
  /**
   * A TYPE action's texts the text beam finished, best first with their mean log-probability per token
   * (text_beam.ts; the first is the one typed, each text once); empty for other actions and for greedy
   * decoding (textBeams 1).
   */
  textChoices: TypedTextChoice[];
}

/** How greedyDecode decodes: see it. */
export interface DecodeOptions {
  taps?: TapSource;
  maxLen?: number;
  textBeams?: number;
  textStart?: boolean;
  avoid?: readonly (readonly AitwAction[])[];
}

/**
 * Batched greedy decoding under the target grammar: at every step the logits of tokens the grammar
 * forbids are −∞, so the model can only emit well-formed actions; a sequence that runs out of length
 * is reported invalid, never repaired. Typed text is copied from the goal when the codec copies
 * (constrained.ts), and a TYPE action's text is then chosen by a beam of `textBeams` (default
 * DEFAULT_TEXT_BEAMS; 1 = greedy; text_beam.ts). With `taps` 'attention' or 'pointer' (and screen layouts), a decoded tap lands on
 * the centre of the screen token the interaction attends to most, or the decoder's pointer picks,
 * instead of its coordinate tokens (model/pointer.ts); with 'pointer', a pointed patch's tap moves
 * by the offset head where the model has one (model/tap_offset.ts). `avoid[b]`: actions row b must not
 * answer with (avoid.ts).
 */
export function greedyDecode<S>(
  model: IncrementalDecoder<S>,
  codec: ActionCodec,
  constraint: TargetConstraint,
  batch: { inputIds: tf.Tensor2D; inputMask: tf.Tensor2D } & ScreenBatch,
  opts: DecodeOptions = {},
): Generated[] {
  const B = batch.inputIds.shape[0];
  const V = constraint.vocabSize;
  const maxLen = opts.maxLen ?? codec.config.maxTargetTokens;
  const encoded = model.encodeFull(batch.inputIds, batch.inputMask, batch.screen, batch.screenMask, false, batch.texts);
  const taps = batch.layouts ? opts.taps ?? 'tokens' : 'tokens';
  const avoided = opts.avoid?.some((a) => a.length > 0) ? opts.avoid.map((a) => avoidedOf(codec, a, taps !== 'tokens')) : null;
  const unpointed = avoided && batch.layouts ? avoided.map((a, b) => avoidedTokens(a, batch.layouts![b]!)) : undefined;
  const fromAttention = taps === 'attention' ? attentionPointer(encoded.attention, batch.inputMask, batch.layouts!, unpointed) : null;
  // The pointer reads the decoder's state at the step that writes a tap's first coordinate (codec.writesPointNext).
  const tapStates = taps === 'pointer' || taps === 'pointer-centre' ? new Float32Array(B * encoded.fused.shape[2]) : null;
  let state = model.startDecoding(encoded.fused, batch.inputMask);
  const inputs = batch.inputIds.arraySync();
  const copy = copySource(model, codec, encoded, batch.inputIds, inputs);
  const states: ConstraintState[] = inputs.map((ids) => constraint.initial(codec.goalIds(ids)));
  const out: number[][] = Array.from({ length: B }, () => []);
  const typeProbs: Generated['typeProbs'][] = Array.from({ length: B }, () => ({}));
  let tokens = new Int32Array(B).fill(model.config.decoderStartTokenId);
  const masks = new Float32Array(B * V);
  for (let t = 0; t < maxLen && !states.every((s) => constraint.isDone(s)); t++) {
    const tokenT = tf.tensor1d(tokens, 'int32');
    const r = model.decodeStep(state, tokenT);
    tokenT.dispose();
    state = r.state;
    if (tapStates) keepTapStates(r.hidden, out, codec, tapStates);
    constraint.fillMasks(states, masks);
    if (avoided) maskAvoided(codec, states, avoided, masks, V);
    const deciding = states.map(decidesNext);
    const [nextT, probsT] = tf.tidy(() => {
      const logits = r.logits.shape[1] === V ? r.logits : tf.slice(r.logits, [0, 0], [B, V]);
      const scores = tf.add(copy ? textStepScores(model, r.hidden, logits, copy, states) : logits, tf.tensor2d(masks, [B, V]));
      return [tf.argMax(scores, 1), deciding.some(Boolean) ? tf.softmax(scores) : null] as const;
    });
    tf.dispose([r.hidden, r.logits]);
    const next = nextT.dataSync() as Int32Array;
    if (probsT) keepTypeProbs(probsT.dataSync() as Float32Array, deciding, codec, V, typeProbs);
    tf.dispose([nextT, probsT ?? []]);
    tokens = new Int32Array(B).fill(model.config.padTokenId);
    for (let b = 0; b < B; b++) {
      if (constraint.isDone(states[b]!)) continue;
      states[b] = constraint.advance(states[b]!, next[b]!);
      out[b]!.push(next[b]!);
      tokens[b] = next[b]!;
    }
  }
  model.disposeDecoding(state);
  const textBeams = opts.textBeams ?? DEFAULT_TEXT_BEAMS;
  const textChoices = textBeams > 1 ? retypeTexts(model, codec, constraint, { hFuse: encoded.fused, inputMask: batch.inputMask, copy }, inputs, out, states, textBeams, opts.textStart ?? DEFAULT_TEXT_START) : [];
  const points = fromAttention ?? (tapStates ? pointed(model, tapStates, encoded, batch, taps === 'pointer', unpointed) : null);
  tf.dispose(Object.values(encoded));
  if (copy) {
    tf.dispose(copy.goal); // its keys are H_fuse and its ids the batch's
    disposePointerKeys(copy);
  }
  return out.map((ids, b) => {
    const choices = textChoices[b] ?? [];
    if (!constraint.isDone(states[b]!)) return { ids, result: { ok: false as const, error: `no end of sequence within ${maxLen} tokens` }, typeProbs: typeProbs[b]!, textChoices: choices };
    const result = codec.decodeTarget(ids);
    return { ids, result: result.ok && points ? { ...result, action: tapAt(result.action, points[b]!) } : result, typeProbs: typeProbs[b]!, textChoices: choices };
  });
}

/** What the copy pointer reads of a batch (models with one): H_fuse, the input ids and the goal's mask. */
function copySource<S>(model: IncrementalDecoder<S>, codec: ActionCodec, encoded: Encoded, inputIds: tf.Tensor2D, inputs: number[][]): CopySource | null {
  if (!model.config.copyPointer || !model.copyLogProbs || !model.copySource || !codec.config.copyText) return null;
  return model.copySource(encoded.fused, inputIds, goalMaskBatch(inputs, codec));
}

/**
 * Next-token scores [B, V] for one decoding step: the copy pointer's log-probabilities on the rows
 * that write typed text (the grammar's Text node), the vocabulary logits elsewhere. Only the arg-max
 * of a row is taken, so rows may be on different scales.
 */
function textStepScores<S>(model: IncrementalDecoder<S>, hidden: tf.Tensor2D, logits: tf.Tensor2D, copy: CopySource, states: readonly ConstraintState[]): tf.Tensor2D {
  const writing = states.map((s) => (s.node === GrammarNode.Text ? 1 : 0));
  if (!writing.some((w) => w === 1)) return logits;
  const [b, v] = logits.shape;
  const mixed = tf.reshape(model.copyLogProbs!(tf.expandDims(hidden, 1) as tf.Tensor3D, tf.expandDims(logits, 1) as tf.Tensor3D, copy), [b, v]);
  return tf.where(tf.cast(tf.tensor2d(writing, [b, 1], 'int32'), 'bool'), mixed, logits) as tf.Tensor2D;
}

/** Each deciding row's probabilities [B, V] of the action-type tokens, by type name, into `into`. */
function keepTypeProbs(probs: Float32Array, deciding: readonly boolean[], codec: ActionCodec, V: number, into: Generated['typeProbs'][]): void {
  deciding.forEach((d, b) => {
    if (!d) return;
    for (const type of ACTION_TYPE_IDS) {
      const p = probs[b * V + codec.typeId(type)]!;
      if (p > 0) into[b]![ACTION_TYPE_NAMES[type]] = p;
    }
  });
}

/**
 * Replaces the typed text of each row that decoded to a TYPE action with the text beam search's
 * (text_beam.ts); returns each batch row's finished texts, best first (none for the other rows).
 */
function retypeTexts<S>(
  model: IncrementalDecoder<S>,
  codec: ActionCodec,
  constraint: TargetConstraint,
  encoded: TextBeamInputs,
  inputs: number[][],
  out: number[][],
  states: ConstraintState[],
  width: number,
  started: boolean,
): TypedTextChoice[][] {
  const typeId = codec.typeId(ActionType.TYPE);
  const choices: TypedTextChoice[][] = out.map(() => []);
  const rows = out.flatMap((ids, b) => {
    const at = ids.indexOf(codec.actId) + 1;
    return constraint.isDone(states[b]!) && at > 0 && ids[at] === typeId ? [{ batchRow: b, goal: codec.goalIds(inputs[b]!), prefix: ids.slice(0, at + 1) }] : [];
  });
  if (rows.length === 0) return choices;
  const texts = beamTypedText(model, constraint, codec, encoded, rows, width, started);
  rows.forEach((r, i) => {
    out[r.batchRow] = texts[i]![0]!.ids;
    for (const { ids, score } of texts[i]!) {
      const decoded = codec.decodeTarget(ids);
      const text = decoded.ok ? decoded.action.typed_text : null;
      if (text !== null && !choices[r.batchRow]!.some((c) => c.text === text)) choices[r.batchRow]!.push({ text, score });
    }
  });
  return choices;
}

/** Copies the decoder states [B, d] of the rows whose next token is a tap's first coordinate into `into` [B·d]. */
function keepTapStates(hidden: tf.Tensor2D, generated: readonly number[][], codec: ActionCodec, into: Float32Array): void {
  const rows = generated.flatMap((ids, b) => (codec.writesPointNext(ids) ? [b] : []));
  if (rows.length === 0) return;
  const d = hidden.shape[1];
  const data = hidden.dataSync();
  for (const b of rows) into.set(data.subarray(b * d, (b + 1) * d), b * d);
}

/**
 * Per row, where the tap pointer's pick lies, from the kept decoder states: a text item's centre, or a
 * patch's centre moved by the offset head (`offsets`, models with one).
 */
function pointed<S>(
  model: IncrementalDecoder<S>,
  states: Float32Array,
  e: Encoded,
  batch: { inputMask: tf.Tensor2D } & ScreenBatch,
  offsets: boolean,
  exclude?: readonly (readonly number[])[],
): YX[] {
  if (!model.pointTaps) throw new Error('greedyDecode: taps from the pointer need a model with pointTaps');
  const [b, , d] = e.fused.shape;
  const layouts = batch.layouts!;
  const hidden = tf.tensor2d(states, [b, d]);
  try {
    const probs = model.pointTaps(hidden, e, batch.inputMask);
    const picks = argmaxTokens(probs, exclude);
    probs.dispose();
    if (!offsets || !model.config.tapOffset || !model.offsetTaps) return picks.map((k, r) => tokenCentre(layouts[r]!, k));
    const onPatch = picks.map((k, r) => k < patchTokens(layouts[r]!));
    const patch = tf.tensor1d(picks.map((k, r) => (onPatch[r] ? k : 0)), 'int32');
    const o = model.offsetTaps(hidden, e.keys, patch);
    const moved = o.dataSync();
    tf.dispose([patch, o]);
    return picks.map((k, r) => (onPatch[r] ? offsetPoint(k, [moved[2 * r]!, moved[2 * r + 1]!], layouts[r]!) : tokenCentre(layouts[r]!, k)));
  } finally {
    hidden.dispose();
  }
}
