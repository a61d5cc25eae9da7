import * as tf from '@tensorflow/tfjs-core';
import type { ScreenBatch } from '../model/batch.js';
import type { ActionCodec, DecodedTarget } from '../model/codec.js';
import { TargetConstraint, type ConstraintState } from '../model/constrained.js';
import type { Fusion } from '../model/fusion.js';
import { attentionPointer, tapAt } from '../model/pointer.js';
import type { TextItemsBatch } from '../model/screen_text.js';

/**
 * What decoding needs from a model: fused encoder states (with the screen attention, where taps may
 * be read from), then one token at a time with cached keys/values.
 */
export interface IncrementalDecoder<State> {
  readonly config: { decoderStartTokenId: number; padTokenId: number; vocabSize: number };
  encodeFull(inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, screen: tf.Tensor3D, screenMask?: tf.Tensor2D, training?: boolean, texts?: TextItemsBatch): Fusion;
  startDecoding(hFuse: tf.Tensor3D, inputMask: tf.Tensor2D): State;
  decodeStep(state: State, tokens: tf.Tensor1D): { logits: tf.Tensor2D; state: State };
  /** Frees a decoding state (the last one; each decodeStep consumes the state it is given). */
  disposeDecoding(state: State): void;
}

export interface Generated {
  ids: number[];
  result: DecodedTarget;
}

/**
 * Batched greedy decoding under the target grammar: at every step the logits of tokens the grammar
 * forbids are −∞, so the model can only emit well-formed actions; a sequence that runs out of length
 * is reported invalid, never repaired. Typed text is copied from the goal when the codec copies
 * (constrained.ts). With `tapsFromAttention` (and screen layouts), a decoded tap lands on the centre
 * of the screen token the interaction attends to most instead of its coordinate tokens (model/pointer.ts).
 */
export function greedyDecode<S>(
  model: IncrementalDecoder<S>,
  codec: ActionCodec,
  constraint: TargetConstraint,
  batch: { inputIds: tf.Tensor2D; inputMask: tf.Tensor2D } & ScreenBatch,
  opts: { tapsFromAttention?: boolean; maxLen?: number } = {},
): Generated[] {
  const B = batch.inputIds.shape[0];
  const V = constraint.vocabSize;
  const maxLen = opts.maxLen ?? codec.config.maxTargetTokens;
  const { fused, gate, attention } = model.encodeFull(batch.inputIds, batch.inputMask, batch.screen, batch.screenMask, false, batch.texts);
  const pointers = opts.tapsFromAttention && batch.layouts ? attentionPointer(attention, batch.inputMask, batch.layouts) : null;
  let state = model.startDecoding(fused, batch.inputMask);
  tf.dispose([fused, gate, attention]);
  const inputs = batch.inputIds.arraySync();
  const states: ConstraintState[] = inputs.map((ids) => constraint.initial(codec.goalIds(ids)));
  const out: number[][] = Array.from({ length: B }, () => []);
  let tokens = new Int32Array(B).fill(model.config.decoderStartTokenId);
  const masks = new Float32Array(B * V);
  for (let t = 0; t < maxLen && !states.every((s) => constraint.isDone(s)); t++) {
    const tokenT = tf.tensor1d(tokens, 'int32');
    const r = model.decodeStep(state, tokenT);
    tokenT.dispose();
    state = r.state;
    constraint.fillMasks(states, masks);
    const nextT = tf.tidy(() => {
      const logits = r.logits.shape[1] === V ? r.logits : tf.slice(r.logits, [0, 0], [B, V]);
      return tf.argMax(tf.add(logits, tf.tensor2d(masks, [B, V])), 1);
    });
    r.logits.dispose();
    const next = nextT.dataSync() as Int32Array;
    nextT.dispose();
    tokens = new Int32Array(B).fill(model.config.padTokenId);
    for (let b = 0; b < B; b++) {
      if (constraint.isDone(states[b]!)) continue;
      states[b] = constraint.advance(states[b]!, next[b]!);
      out[b]!.push(next[b]!);
      tokens[b] = next[b]!;
    }
  }
  model.disposeDecoding(state);
  return out.map((ids, b) => {
    if (!constraint.isDone(states[b]!)) return { ids, result: { ok: false as const, error: `no end of sequence within ${maxLen} tokens` } };
    const result = codec.decodeTarget(ids);
    return { ids, result: result.ok && pointers ? { ...result, action: tapAt(result.action, pointers[b]!) } : result };
  });
}
