import * as tf from '@tensorflow/tfjs-core';
import { InputError } from '../util/errors.js';
import { validateConfig, type ModelConfig } from './config.js';
import { fuseScreen, projectScreen, screenAttentionWeights, type Fusion, type FusionWeights } from './fusion.js';
import { groundingLoss, meanTokenAttention } from './grounding.js';
import { dense, tokenCrossEntropy, type DropoutRng } from './layers.js';
import { ParamStore, parameterSpecs } from './params.js';
import { copyLogProbs, copyLoss, copyPositionLoss, copySource, pointCopy, type CopyPointing, type CopySource, type CopyWeights } from './copy.js';
import { tapPointer } from './pointer.js';
import { offsetLoss, tapOffsets, type OffsetTargets, type OffsetWeights } from './tap_offset.js';
import { BOX_CODE_DIM, textTokens, type TextItemsBatch } from './screen_text.js';
import { MATCH_DIM } from './text_match.js';
import { decoderStack, decoderStep, disposeDecoderState, encoderStack, lmHead, selectDecoderRows, startDecoder, type DecoderState } from './t5.js';

export type { DecoderState } from './t5.js';

/** Label value that contributes no loss (HF convention). */
export const IGNORE_INDEX = -100;

export interface AutoUiBatch {
  /** [B, L] int32 token ids of {goal, previous actions}. */
  inputIds: tf.Tensor2D;
  /** [B, L] 1 for real tokens, 0 for padding. */
  inputMask: tf.Tensor2D;
  /** [B, P, screenDim] float32 frozen vision features. */
  screen: tf.Tensor3D;
  /** [B, P] 1 for real patches, 0 for padding; omitted = all real. */
  screenMask?: tf.Tensor2D;
  /** The screens' text items (models with `screenText`); omitted = none. */
  texts?: TextItemsBatch;
  /** [B, T] int32 target ids; IGNORE_INDEX (-100) where no loss is wanted. */
  labels: tf.Tensor2D;
  /** [B, S] float32 1 on the screen tokens (S = P patches + N text items) around a gold tap (grounding.ts); omitted = no grounding loss. */
  groundTargets?: tf.Tensor2D;
  /** [B, S] the tap pointer's targets, as groundTargets but nearer the tap (train --pointer-radius); omitted = groundTargets. */
  pointTargets?: tf.Tensor2D;
  /** Referring phrases of the screens (train/referring.ts); omitted = no referring loss. */
  refer?: ReferringRows;
  /** [B] int32: the decoder position whose state points at a tap's target (its input is the tap's type token; codec.tapStep), 0 on rows without a tap; omitted = no pointer loss. */
  tapAt?: tf.Tensor1D;
  /** Where the copy pointer writes (copyPointer models; copy.ts); omitted = every step from the vocabulary. */
  copy?: CopySteps;
  /** The patches around each gold tap and the tap's offset from each (tapOffset models; tap_offset.ts); needs tapAt; omitted = no offset loss. */
  tapOffsets?: OffsetTargets;
}

/** The steps of a batch's targets that write typed text, and what they may copy. */
export interface CopySteps {
  /** [B, T] 1 where the label is a TYPE action's text or the eos that ends it (codec.textSteps). */
  steps: tf.Tensor2D;
  /** [B, L] 1 on the goal's input tokens (codec.goalIds), which a text may copy. */
  goal: tf.Tensor2D;
  /** [B, T] int32 at the text steps: the goal position the label comes from, or after the run at its eos (codec.copyPositions); −1 where none is known. Omitted = no position loss. */
  at?: tf.Tensor2D;
}

/** K phrases per screen: rows b·K .. b·K + K − 1 belong to screen b of the batch. */
export interface ReferringRows {
  /** [B·K, Lr] int32 phrase ids. */
  inputIds: tf.Tensor2D;
  /** [B·K, Lr] 1 for real tokens. */
  inputMask: tf.Tensor2D;
  /** [B·K, S] 1 on the screen tokens the phrase's boxes cover; all 0 = no phrase in this row. */
  targets: tf.Tensor2D;
  /** [B·K, N, MATCH_DIM] each phrase's lexical match with its screen's text items (textMatch models). */
  match?: tf.Tensor3D;
}

/** What the model reads of the screens (the screen fields of AutoUiBatch). */
export type ScreenInputs = Pick<AutoUiBatch, 'screen' | 'screenMask' | 'texts'>;

/** H'_screen [B, S, d] (keys = values of the interaction) and its mask [B, S] (undefined: all real). */
interface ScreenTokens {
  keys: tf.Tensor3D;
  mask: tf.Tensor2D | undefined;
  /** N: the text items at the end of the keys (0 for patches alone). */
  texts: number;
}

/** Weights of the losses our training adds to the paper's (0 = off). */
export interface AuxLossWeights {
  /** Tap grounding (grounding.ts). */
  ground: number;
  /** Referring phrases (train/referring.ts). */
  refer: number;
  /** The decoder's tap pointer (pointer.ts), on the batch's pointTargets (else the grounding loss's targets); absent = 0. */
  pointer?: number;
  /** Where in a pointed patch the tap lands (tap_offset.ts); absent = 0. */
  offset?: number;
  /** The copy pointer's positions (copy.ts, copyPositionLoss), on the batch's copy.at; absent = 0. */
  copy?: number;
}

/** The encoder side as decoding needs it: H_fuse, λ and the attention (Fusion), and the screen tokens the interaction read. */
export type Encoded = Fusion & {
  /** H'_screen as the interaction's keys [B, S, d] (with any match), and their mask [B, S] (undefined: all real). */
  keys: tf.Tensor3D;
  keyMask?: tf.Tensor2D;
};

/** Auto-UI: T5 encoder → screen interaction + gated fusion → T5 decoder (paper §3). */
export class AutoUiModel {
  readonly config: ModelConfig;
  readonly params: ParamStore;
  private readonly seed: number;
  private dropoutSeed: number;
  private dropoutCalls = 0;

  constructor(config: ModelConfig, seed = 0) {
    this.config = validateConfig({ ...config });
    this.seed = seed >>> 0;
    this.dropoutSeed = this.seed;
    this.params = new ParamStore(parameterSpecs(this.config), this.seed);
  }

  /** Restarts the dropout mask stream; the trainer keys it by step so a resumed run draws the same masks. */
  setDropoutSeed(seed: number): void {
    this.dropoutSeed = seed >>> 0;
    this.dropoutCalls = 0;
  }

  trainableVariables(): tf.Variable[] {
    return this.params.variables();
  }

  /** HF tensor name → live variable (HF shape). */
  namedWeights(): Map<string, tf.Variable> {
    return this.params.namedWeights();
  }

  parameterCount(): number {
    return this.params.parameterCount();
  }

  /** Language encoder + screen interaction + gated fusion: H_fuse [B, L, d]. */
  encode(inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, screen: tf.Tensor3D, screenMask?: tf.Tensor2D, training = false, texts?: TextItemsBatch): tf.Tensor3D {
    const { fused, ...rest } = this.encodeFull(inputIds, inputMask, screen, screenMask, training, texts);
    tf.dispose(Object.values(rest));
    return fused;
  }

  /** As encode, also returning the fusion gate λ [B, L, d], the screen attention [B, L, S] and the screen tokens it read. */
  encodeFull(inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, screen: tf.Tensor3D, screenMask?: tf.Tensor2D, training = false, texts?: TextItemsBatch): Encoded {
    this.checkEncoderInputs(inputIds, inputMask, screen, screenMask, texts);
    return tf.tidy(() => {
      const { fusion, keys } = this.fuse(inputIds, inputMask, { screen, screenMask, texts }, training);
      // The mask may be the caller's own screenMask: a clone (sharing its data) is the result's to dispose.
      return { ...fusion, keys: keys.keys, ...(keys.mask ? { keyMask: tf.clone(keys.mask) } : {}) };
    });
  }

  /** H_language, H'_screen (screenTokens, matchTokens), then the interaction and gated fusion (fusion.ts); also the screen's tokens before any match. */
  private fuse(inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, s: ScreenInputs, training: boolean): { fusion: Fusion; tokens: ScreenTokens; keys: ScreenTokens } {
    const language = encoderStack(this.params, this.config, inputIds, inputMask, this.rng(training));
    const tokens = this.screenTokens(s);
    const keys = this.matchTokens(tokens, s.texts?.match);
    return { fusion: fuseScreen(language, keys.keys, keys.mask, this.fusionWeights()), tokens, keys };
  }

  /**
   * H'_screen before any match: the projected patches W·H_screen + b, then (with screenText) the
   * text items' tokens (screen_text.ts), [B, P + N, d], with their mask [B, P + N] (undefined: all real).
   */
  private screenTokens(s: ScreenInputs): ScreenTokens {
    const w = this.fusionWeights();
    const patches = projectScreen(s.screen, w.screenProj, w.screenProjBias);
    if (!s.texts || !this.config.screenText) return { keys: patches, mask: s.screenMask, texts: 0 };
    const p = this.params;
    const texts = textTokens(s.texts, { embeddings: p.get<tf.Tensor2D>('shared.weight'), weight: p.get('text_proj.weight'), bias: p.get('text_proj.bias') });
    const [b, n] = patches.shape;
    const patchMask = s.screenMask ?? tf.ones([b, n]);
    return {
      keys: tf.concat([patches, texts], 1) as tf.Tensor3D,
      mask: tf.concat([tf.cast(patchMask, 'float32'), tf.cast(s.texts.mask, 'float32')], 1) as tf.Tensor2D,
      texts: texts.shape[1],
    };
  }

  /**
   * With textMatch, each text item's token also carries W_m·f, f = `match` [B·K, N, MATCH_DIM] its
   * lexical match with one of K queries per screen (text_match.ts): the screen's tokens are then
   * given once per query, rows b·K … b·K + K − 1 for screen b, [B·K, P + N, d]. Unchanged otherwise.
   */
  private matchTokens(t: ScreenTokens, match: tf.Tensor3D | undefined): ScreenTokens {
    if (!this.config.textMatch || t.texts === 0) return t;
    if (!match) throw new InputError("this model matches its screen's text items with the goal (textMatch), but no match features were given", 'encode');
    const [b, s] = t.keys.shape;
    const k = match.shape[0] / b;
    const matched = dense(match, this.params.get<tf.Tensor2D>('text_match.weight')); // [B·K, N, d]
    const onTexts = tf.pad(matched, [[0, 0], [s - t.texts, 0], [0, 0]]); // zero on the patches
    if (k === 1) return { keys: tf.add(t.keys, onTexts) as tf.Tensor3D, mask: t.mask, texts: t.texts };
    // Broadcast over a K axis rather than tf.tile: wasm's Tile (and its gradient) cost ~14× the broadcast add here.
    const d = t.keys.shape[2];
    const keys = tf.reshape(tf.add(tf.expandDims(t.keys, 1), tf.reshape(onTexts, [b, k, s, d])), [b * k, s, d]) as tf.Tensor3D;
    const mask = t.mask && (tf.reshape(tf.mul(tf.expandDims(t.mask, 1), tf.ones([1, k, 1])), [b * k, s]) as tf.Tensor2D);
    return { keys, mask, texts: t.texts };
  }

  /** Teacher-forced decoder: logits [B, T, V] for decoderInputIds [B, T] over H_fuse. */
  decode(hFuse: tf.Tensor3D, inputMask: tf.Tensor2D, decoderInputIds: tf.Tensor2D, training = false): tf.Tensor3D {
    if (decoderInputIds.rank !== 2 || decoderInputIds.shape[0] !== hFuse.shape[0]) {
      throw new InputError(`decoderInputIds must be [B=${hFuse.shape[0]}, T], got [${decoderInputIds.shape.join(', ')}]`, 'decode');
    }
    return tf.tidy(() => {
      const hidden = decoderStack(this.params, this.config, decoderInputIds, hFuse, inputMask, this.rng(training));
      return lmHead(this.params, this.config, hidden);
    });
  }

  /** Decoder inputs for teacher forcing: labels shifted right behind the start token, -100 → pad. */
  shiftRight(labels: tf.Tensor2D): tf.Tensor2D {
    return tf.tidy(() => {
      const [b, t] = labels.shape;
      const start = tf.fill([b, 1], this.config.decoderStartTokenId, 'int32');
      const shifted = tf.concat([start, tf.slice(tf.cast(labels, 'int32'), [0, 0], [b, t - 1])], 1) as tf.Tensor2D;
      return tf.where(tf.equal(shifted, IGNORE_INDEX), tf.fill([b, t], this.config.padTokenId, 'int32'), shifted);
    });
  }

  /**
   * Mean token cross-entropy over labels != -100 (0 when no label counts), plus
   * weights.ground · L_gnd when the batch has groundTargets and weights.refer · L_ref when it has
   * referring phrases.
   */
  loss(batch: AutoUiBatch, training = false, weights: AuxLossWeights = { ground: 0, refer: 0 }): tf.Scalar {
    const { labels } = batch;
    if (labels.rank !== 2 || labels.shape[0] !== batch.inputIds.shape[0]) {
      throw new InputError(`labels must be [B=${batch.inputIds.shape[0]}, T], got [${labels.shape.join(', ')}]`, 'loss');
    }
    this.checkEncoderInputs(batch.inputIds, batch.inputMask, batch.screen, batch.screenMask, batch.texts);
    return tf.tidy(() => {
      const { fusion, tokens, keys } = this.fuse(batch.inputIds, batch.inputMask, batch, training);
      const { fused: hFuse, attention } = fusion;
      const hidden = decoderStack(this.params, this.config, this.shiftRight(labels), hFuse, batch.inputMask, this.rng(training));
      const logits = lmHead(this.params, this.config, hidden);
      const [b, t, v] = logits.shape;
      const copy = this.config.copyPointer ? batch.copy : undefined;
      const flatLabels = tf.reshape(tf.cast(labels, 'int32'), [b * t]) as tf.Tensor1D;
      // Text steps pay the copy mixture's loss instead of the vocabulary's alone.
      const ceLabels = copy ? (tf.where(tf.cast(tf.reshape(copy.steps, [b * t]), 'bool'), tf.fill([b * t], IGNORE_INDEX, 'int32'), flatLabels) as tf.Tensor1D) : flatLabels;
      const perToken = tokenCrossEntropy(tf.reshape(logits, [b * t, v]), ceLabels, IGNORE_INDEX);
      const count = tf.maximum(tf.sum(tf.cast(tf.notEqual(flatLabels, IGNORE_INDEX), 'float32')), 1);
      let summed = tf.sum(perToken) as tf.Scalar;
      if (copy) {
        const w = this.copyWeights();
        const source = copySource(hFuse, batch.inputIds, copy.goal, w.context);
        const pointing = pointCopy(hidden, source, w);
        summed = tf.add(summed, copyLoss(copyLogProbs(hidden, logits, source, w, this.config.eosTokenId, pointing), labels, copy.steps));
        if (copy.at && weights.copy) {
          const ends = tf.mul(tf.cast(copy.steps, 'int32'), tf.cast(tf.equal(labels, this.config.eosTokenId), 'int32')) as tf.Tensor2D;
          summed = tf.add(summed, tf.mul(weights.copy, copyPositionLoss(pointing, copy.at, ends)));
        }
      }
      let total = tf.div(summed, count) as tf.Scalar;
      if (batch.groundTargets && weights.ground !== 0) {
        total = tf.add(total, tf.mul(weights.ground, groundingLoss(attention, batch.inputMask, batch.groundTargets)));
      }
      if (batch.refer && weights.refer !== 0) total = tf.add(total, tf.mul(weights.refer, this.referringLoss(tokens, batch.refer, training)));
      const atTap = batch.tapAt && (tf.sum(tf.mul(hidden, tf.expandDims(tf.oneHot(tf.cast(batch.tapAt, 'int32'), hidden.shape[1]), 2)), 1) as tf.Tensor2D); // [B, d]
      if (this.config.tapPointer && atTap && batch.groundTargets && weights.pointer) {
        const probs = this.pointTaps(atTap, { attention, keys: keys.keys, keyMask: keys.mask }, batch.inputMask);
        total = tf.add(total, tf.mul(weights.pointer, groundingLoss(tf.expandDims(probs, 1) as tf.Tensor3D, tf.ones([probs.shape[0], 1]), batch.pointTargets ?? batch.groundTargets)));
      }
      if (this.config.tapOffset && atTap && batch.tapOffsets && weights.offset) {
        total = tf.add(total, tf.mul(weights.offset, offsetLoss(this.offsetTaps(atTap, keys.keys, batch.tapOffsets.patch), batch.tapOffsets)));
      }
      return total;
    });
  }

  /**
   * L_ref: each phrase, encoded alone, attends to its own screen's H'_screen as the goal's tokens
   * do, and the grounding loss asks that attention to sit on the phrase's boxes. With textMatch the
   * screen's tokens carry each phrase's own match (screenTokens gives them once per phrase); without
   * it the K phrases of a screen are laid side by side as one query sequence against that screen
   * (the attention is per token, so this equals K separate attentions) instead of copying H'_screen.
   */
  private referringLoss(screen: ScreenTokens, refer: ReferringRows, training: boolean): tf.Scalar {
    const b = screen.keys.shape[0];
    const [rows, len] = refer.inputIds.shape;
    const k = rows / b;
    const matchOk = !this.config.textMatch || screen.texts === 0 || (refer.match !== undefined && refer.match.shape[0] === rows);
    const tokens = matchOk ? this.matchTokens(screen, refer.match) : screen;
    const p = tokens.keys.shape[1];
    if (!Number.isInteger(k) || !matchOk || !tf.util.arraysEqual(refer.inputMask.shape, [rows, len]) || !tf.util.arraysEqual(refer.targets.shape, [rows, p])) {
      throw new InputError(
        `referring rows must be [B·K, Lr] ids and mask, [B·K, S=${p}] targets (and [B·K, N, ${MATCH_DIM}] match features for a textMatch model) for B=${b}, got [${refer.inputIds.shape}], [${refer.inputMask.shape}], [${refer.targets.shape}]`,
        'loss',
      );
    }
    const phrases = encoderStack(this.params, this.config, refer.inputIds, refer.inputMask, this.rng(training));
    const perPhrase = tokens.keys.shape[0] === rows;
    const attention = perPhrase
      ? screenAttentionWeights(phrases, tokens.keys, tokens.mask)
      : (tf.reshape(screenAttentionWeights(tf.reshape(phrases, [b, k * len, this.config.dModel]) as tf.Tensor3D, tokens.keys, tokens.mask), [rows, len, p]) as tf.Tensor3D);
    return groundingLoss(attention, refer.inputMask, refer.targets);
  }

  /**
   * π [B, S]: the decoder's tap pointer (pointer.ts) over the screen tokens the interaction read,
   * for decoder states `hidden` [B, d] at the step that writes a tap's first coordinate.
   */
  pointTaps(hidden: tf.Tensor2D, e: Pick<Encoded, 'attention' | 'keys' | 'keyMask'>, inputMask: tf.Tensor2D): tf.Tensor2D {
    if (!this.config.tapPointer) throw new InputError('this model has no tap pointer (tapPointer is off)', 'pointTaps');
    return tf.tidy(() => tapPointer(hidden, e.keys, e.keyMask, meanTokenAttention(e.attention, inputMask), this.params.get<tf.Tensor2D>('tap_pointer.weight')));
  }

  /**
   * o [B·C, 2] (tap_offset.ts): where in patch `patch` [B·C] (C per row, indices into the screen
   * tokens `keys` [B, S, d]) row b's tap lands, in patch units, for decoder states `hidden` [B, d] at the tap.
   */
  offsetTaps(hidden: tf.Tensor2D, keys: tf.Tensor3D, patch: tf.Tensor1D): tf.Tensor2D {
    if (!this.config.tapOffset) throw new InputError('this model has no tap offset (tapOffset is off)', 'offsetTaps');
    const p = this.params;
    const w: OffsetWeights = {
      hidden: p.get('tap_offset.hidden.weight'), key: p.get('tap_offset.key.weight'), bias: p.get('tap_offset.bias'), out: p.get('tap_offset.out.weight'), outBias: p.get('tap_offset.out.bias'),
    };
    return tapOffsets(hidden, keys, patch, w);
  }

  /**
   * log p [R, T, V] of the copy pointer's mixture (copy.ts) for decoder states `hidden` [R, T, d]
   * and their vocabulary logits, row r copying from row r of `source`.
   */
  copyLogProbs(hidden: tf.Tensor3D, logits: tf.Tensor3D, source: CopySource): tf.Tensor3D {
    return copyLogProbs(hidden, logits, source, this.copyWeights(), this.config.eosTokenId);
  }

  /** The copy pointer's weights over each row's goal positions, a [R, T, L], and its stop s [R, L, 1] (copy.ts). */
  copyPointing(hidden: tf.Tensor3D, source: CopySource): CopyPointing {
    return pointCopy(hidden, source, this.copyWeights());
  }

  /** What the copy pointer reads of a batch: H_fuse `keys`, the input ids and the goal's mask, with the pointer's keys made once. */
  copySource(keys: tf.Tensor3D, ids: tf.Tensor2D, goal: tf.Tensor2D): CopySource {
    return copySource(keys, ids, goal, this.copyWeights().context);
  }

  private copyWeights(): CopyWeights {
    if (!this.config.copyPointer) throw new InputError('this model has no copy pointer (copyPointer is off)', 'copyLogProbs');
    const p = this.params;
    const from = this.config.copyContext;
    const stop = this.config.copyStopContext === true;
    const context = from ? { context: { weight: p.get<tf.Tensor2D>('copy_context.weight'), ...(from === 'states' ? {} : { embeddings: p.get<tf.Tensor2D>('shared.weight') }), stop } } : {};
    return { pointer: p.get('copy_pointer.weight'), gate: p.get('copy_gate.weight'), gateBias: p.get('copy_gate.bias'), stop: p.get('copy_stop.weight'), stopBias: p.get('copy_stop.bias'), ...context };
  }

  /** Prepares incremental decoding: cross-attention K/V computed once from H_fuse. */
  startDecoding(hFuse: tf.Tensor3D, inputMask: tf.Tensor2D): DecoderState {
    return startDecoder(this.params, this.config, hFuse, inputMask);
  }

  /**
   * Feeds one token per row ([B] int32; the first call gets decoderStartTokenId) and returns the
   * next-token logits [B, V] and the decoder's final states [B, d] (what the tap pointer reads).
   * Consumes `state` (its self-attention cache is disposed): continue with the returned state and
   * release the last one with disposeDecoding().
   */
  decodeStep(state: DecoderState, tokens: tf.Tensor1D): { hidden: tf.Tensor2D; logits: tf.Tensor2D; state: DecoderState } {
    if (tokens.rank !== 1 || tokens.shape[0] !== state.batchSize) {
      throw new InputError(`tokens must be [B=${state.batchSize}], got [${tokens.shape.join(', ')}]`, 'decodeStep');
    }
    return decoderStep(this.params, this.config, state, tokens);
  }

  /** Keeps/reorders batch rows of a decoding state (e.g. beam search); consumes `state`. */
  selectDecodingRows(state: DecoderState, rows: number[]): DecoderState {
    for (const r of rows) {
      if (!Number.isInteger(r) || r < 0 || r >= state.batchSize) throw new InputError(`row ${r} is outside [0, ${state.batchSize})`, 'selectDecodingRows');
    }
    return selectDecoderRows(state, rows);
  }

  disposeDecoding(state: DecoderState): void {
    disposeDecoderState(state);
  }

  dispose(): void {
    this.params.dispose();
  }

  private fusionWeights(): FusionWeights {
    const p = this.params;
    return {
      screenProj: p.get('screen_proj.weight'),
      screenProjBias: p.get('screen_proj.bias'),
      gateLang: p.get('fusion.gate_lang.weight'),
      gateAttn: p.get('fusion.gate_attn.weight'),
      gateBias: p.get('fusion.gate_attn.bias'),
    };
  }

  private rng(training: boolean): DropoutRng {
    return {
      rate: this.config.dropoutRate,
      training,
      nextSeed: () => (Math.imul(this.dropoutSeed ^ 0x9e3779b9, 0x85ebca6b) + this.dropoutCalls++) >>> 0,
    };
  }

  private checkEncoderInputs(inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, screen: tf.Tensor3D, screenMask?: tf.Tensor2D, texts?: TextItemsBatch): void {
    const where = 'encode';
    if (inputIds.rank !== 2) throw new InputError(`inputIds must be [B, L], got [${inputIds.shape.join(', ')}]`, where);
    const [b, l] = inputIds.shape;
    if (!tf.util.arraysEqual(inputMask.shape, [b, l])) throw new InputError(`inputMask must be [${b}, ${l}] like inputIds, got [${inputMask.shape.join(', ')}]`, where);
    if (screen.rank !== 3 || screen.shape[0] !== b || screen.shape[2] !== this.config.screenDim) {
      throw new InputError(`screen must be [B=${b}, P, screenDim=${this.config.screenDim}], got [${screen.shape.join(', ')}]`, where);
    }
    if (screenMask && !tf.util.arraysEqual(screenMask.shape, [b, screen.shape[1]])) {
      throw new InputError(`screenMask must be [${b}, ${screen.shape[1]}] like screen, got [${screenMask.shape.join(', ')}]`, where);
    }
    if (texts) {
      if (!this.config.screenText) throw new InputError('this model does not read screen text (screenText is off), but text items were given', where);
      const [tb, n, t] = texts.ids.shape;
      const ok =
        tb === b &&
        tf.util.arraysEqual(texts.tokenMask.shape, [b, n, t]) &&
        tf.util.arraysEqual(texts.mask.shape, [b, n]) &&
        tf.util.arraysEqual(texts.boxes.shape, [b, n, BOX_CODE_DIM]) &&
        (!texts.match || tf.util.arraysEqual(texts.match.shape, [b, n, MATCH_DIM]));
      if (!ok) throw new InputError(`text items must be [B=${b}, N, T] ids and token mask, [B, N] mask, [B, N, ${BOX_CODE_DIM}] box codes and [B, N, ${MATCH_DIM}] match features, got [${texts.ids.shape}], [${texts.tokenMask.shape}], [${texts.mask.shape}], [${texts.boxes.shape}], [${texts.match?.shape ?? ''}]`, where);
    }
  }
}
