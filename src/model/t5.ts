import * as tf from '@tensorflow/tfjs-core';
import {
  attend, causalBias, crossAttention, memoryKeyValues, mergeHeads, paddingBias, projectKeyValues, selfAttention, selfAttentionStep, splitHeads,
  type AttentionWeights, type InferenceLinear, type KeyValues,
} from './attention.js';
import type { ModelConfig } from './config.js';
import { applyDropout, embed, feedForward, geluNew, linear, rmsNorm, transposeFlagsAreFree, type DropoutRng, type FeedForwardWeights } from './layers.js';
import { attentionPrefix, feedForwardLayer, type ParamStore } from './params.js';
import { positionBias } from './relative_position.js';

/*
 * T5 encoder and decoder stacks (HF T5Stack), pre-norm residual blocks:
 *   x ← x + dropout(Attention(rmsNorm(x)))   then   x ← x + dropout(FF(rmsNorm(x)))
 * The relative position bias is computed once from block 0's table and added in every block.
 */

const NO_DROPOUT: DropoutRng = { rate: 0, training: false, nextSeed: () => 0 };

/** tf.tidy over a structure of tensors (tidy keeps every tensor it finds in the returned object). */
function tidyObject<T>(f: () => T): T {
  return tf.tidy(() => f() as unknown as tf.TensorContainer) as unknown as T;
}

function attentionWeights(p: ParamStore, prefix: string): AttentionWeights {
  const w = (name: string) => p.get<tf.Tensor2D>(`${prefix}.${name}.weight`);
  return { q: w('q'), k: w('k'), v: w('v'), o: w('o') };
}

function feedForwardWeights(p: ParamStore, prefix: string): FeedForwardWeights {
  const ff = `${prefix}.DenseReluDense`;
  const w = (name: string) => p.get<tf.Tensor2D>(`${ff}.${name}.weight`);
  return p.has(`${ff}.wi.weight`) ? { wi: w('wi'), wo: w('wo') } : { wi0: w('wi_0'), wi1: w('wi_1'), wo: w('wo') };
}

function norm(p: ParamStore, name: string, x: tf.Tensor3D, config: ModelConfig): tf.Tensor3D {
  return rmsNorm(x, p.get<tf.Tensor1D>(name), config.layerNormEpsilon);
}

function relativeBiasTable(p: ParamStore, stack: 'encoder' | 'decoder'): tf.Tensor2D {
  return p.get(`${attentionPrefix(stack, 0)}.relative_attention_bias.weight`);
}

function feedForwardBlock(p: ParamStore, config: ModelConfig, stack: 'encoder' | 'decoder', i: number, x: tf.Tensor3D, rng: DropoutRng): tf.Tensor3D {
  const prefix = `${stack}.block.${i}.layer.${feedForwardLayer(stack)}`;
  const h = feedForward(norm(p, `${prefix}.layer_norm.weight`, x, config), feedForwardWeights(p, prefix), rng);
  return tf.add(x, applyDropout(h, rng));
}

/** Token embeddings (shared by encoder and decoder) with T5's embedding dropout. */
function embedTokens(p: ParamStore, ids: tf.Tensor, rng: DropoutRng): tf.Tensor3D {
  return applyDropout(embed(p.get('shared.weight'), ids) as tf.Tensor3D, rng);
}

/** H_language = T5Encoder(inputIds) [B, L, d]; inputMask [B, L] marks real tokens with 1. */
export function encoderStack(p: ParamStore, config: ModelConfig, inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, rng: DropoutRng): tf.Tensor3D {
  const length = inputIds.shape[1];
  const bias = tf.add(
    positionBias(relativeBiasTable(p, 'encoder'), length, length, true, config.relativeAttentionMaxDistance),
    paddingBias(inputMask),
  ) as tf.Tensor4D;
  let x = embedTokens(p, inputIds, rng);
  for (let i = 0; i < config.numLayers; i++) {
    const prefix = attentionPrefix('encoder', i);
    const h = selfAttention(norm(p, `encoder.block.${i}.layer.0.layer_norm.weight`, x, config), attentionWeights(p, prefix), config.numHeads, bias, rng);
    x = tf.add(x, applyDropout(h, rng));
    x = feedForwardBlock(p, config, 'encoder', i, x, rng);
  }
  return applyDropout(norm(p, 'encoder.final_layer_norm.weight', x, config), rng);
}

/** Teacher-forced T5 decoder: hidden states [B, T, d] for decoderInputIds [B, T] attending to memory [B, L, d]. */
export function decoderStack(
  p: ParamStore, config: ModelConfig, decoderInputIds: tf.Tensor2D, memory: tf.Tensor3D, memoryMask: tf.Tensor2D, rng: DropoutRng,
): tf.Tensor3D {
  const length = decoderInputIds.shape[1];
  const selfBias = tf.add(
    positionBias(relativeBiasTable(p, 'decoder'), length, length, false, config.relativeAttentionMaxDistance),
    causalBias(length),
  ) as tf.Tensor4D;
  const crossBias = paddingBias(memoryMask);
  let x = embedTokens(p, decoderInputIds, rng);
  for (let i = 0; i < config.numDecoderLayers; i++) {
    const selfW = attentionWeights(p, attentionPrefix('decoder', i));
    let h = selfAttention(norm(p, `decoder.block.${i}.layer.0.layer_norm.weight`, x, config), selfW, config.numHeads, selfBias, rng);
    x = tf.add(x, applyDropout(h, rng));
    const crossW = attentionWeights(p, attentionPrefix('decoder', i, true));
    const memoryKv = projectKeyValues(memory, crossW, config.numHeads);
    h = crossAttention(norm(p, `decoder.block.${i}.layer.1.layer_norm.weight`, x, config), memoryKv, crossW, config.numHeads, crossBias, rng);
    x = tf.add(x, applyDropout(h, rng));
    x = feedForwardBlock(p, config, 'decoder', i, x, rng);
  }
  return applyDropout(norm(p, 'decoder.final_layer_norm.weight', x, config), rng);
}

/** LM head: logits [B, T, V]. A tied head reuses shared.weight and first scales by d_model^-½ (HF). */
export function lmHead(p: ParamStore, config: ModelConfig, hidden: tf.Tensor3D): tf.Tensor3D {
  const [b, t, d] = hidden.shape;
  let x = tf.reshape(hidden, [b * t, d]) as tf.Tensor2D;
  if (config.tieWordEmbeddings) x = tf.mul(x, config.dModel ** -0.5);
  const weight = p.get<tf.Tensor2D>(config.tieWordEmbeddings ? 'shared.weight' : 'lm_head.weight');
  return tf.reshape(linear(x, weight), [b, t, config.vocabSize]);
}

/** Incremental-decoding state. Cross-attention keys/values are computed once; self-attention keys/values grow by one per step. */
export interface DecoderState {
  /** Tokens already consumed (position of the next query). */
  readonly step: number;
  readonly batchSize: number;
  /** Per decoder layer, [B, H, L, dk]. */
  readonly cross: readonly KeyValues[];
  /** Per decoder layer, [B, H, step, dk]; empty before the first step. */
  readonly self: readonly KeyValues[];
  /** [B, 1, 1, L] padding bias over the memory. */
  readonly crossBias: tf.Tensor4D;
}

/**
 * x · Wᵀ for inference. Where transpose flags are free this reads the variable as it is; on the
 * stock wasm kernel it uses Wᵀ kept by the ParamStore (made once, rebuilt after the variable is
 * assigned), so no request pays for transposing the decoder's weights.
 */
function inferenceLinear(p: ParamStore): InferenceLinear {
  if (transposeFlagsAreFree()) return (x, name) => tf.matMul(x, p.get<tf.Tensor2D>(name), false, true);
  return (x, name) => tf.matMul(x, p.derived(`transposed:${name}`, [name], (w) => tf.transpose(w as tf.Tensor2D)));
}

function lmHeadName(config: ModelConfig): string {
  return config.tieWordEmbeddings ? 'shared.weight' : 'lm_head.weight';
}

/** Cross-attention keys/values for a memory [B, L, d]. All returned tensors are kept (caller disposes). */
export function startDecoder(p: ParamStore, config: ModelConfig, memory: tf.Tensor3D, memoryMask: tf.Tensor2D): DecoderState {
  const project = inferenceLinear(p);
  const state = tidyObject((): DecoderState => {
    const cross: KeyValues[] = [];
    for (let i = 0; i < config.numDecoderLayers; i++) cross.push(memoryKeyValues(memory, project, attentionPrefix('decoder', i, true), config.numHeads));
    return { step: 0, batchSize: memory.shape[0], cross, self: [], crossBias: paddingBias(memoryMask) };
  });
  keepState(state);
  return state;
}

/** One decoder step for tokens [B]: logits [B, V] and the next state. The given state's self-attention cache is disposed. */
export function decoderStep(p: ParamStore, config: ModelConfig, state: DecoderState, tokens: tf.Tensor1D): { logits: tf.Tensor2D; state: DecoderState } {
  const project = inferenceLinear(p);
  const out = tidyObject(() => {
    const b = state.batchSize;
    const bias = positionBias(relativeBiasTable(p, 'decoder'), 1, state.step + 1, false, config.relativeAttentionMaxDistance, state.step);
    let x = embed(p.get('shared.weight'), tf.reshape(tokens, [-1, 1])) as tf.Tensor3D;
    const self: KeyValues[] = [];
    for (let i = 0; i < config.numDecoderLayers; i++) {
      const normed = norm(p, `decoder.block.${i}.layer.0.layer_norm.weight`, x, config);
      const step = selfAttentionStep(normed, project, attentionPrefix('decoder', i), config.numHeads, state.self[i] ?? null, bias);
      self.push(step.cache);
      x = tf.add(x, step.output);
      const cross = attentionPrefix('decoder', i, true);
      const h = tf.reshape(norm(p, `decoder.block.${i}.layer.1.layer_norm.weight`, x, config), [b, config.dModel]) as tf.Tensor2D;
      const q = splitHeads(tf.reshape(project(h, `${cross}.q.weight`), [b, 1, -1]), config.numHeads);
      const context = tf.reshape(mergeHeads(attend(q, state.cross[i]!, state.crossBias, NO_DROPOUT)), [b, -1]) as tf.Tensor2D;
      x = tf.add(x, tf.reshape(project(context, `${cross}.o.weight`), [b, 1, config.dModel]));
      const ffPrefix = `decoder.block.${i}.layer.${feedForwardLayer('decoder')}`;
      const ffIn = tf.reshape(norm(p, `${ffPrefix}.layer_norm.weight`, x, config), [b, config.dModel]) as tf.Tensor2D;
      x = tf.add(x, tf.reshape(feedForwardStep(p, ffPrefix, ffIn, project), [b, 1, config.dModel]));
    }
    let hidden = tf.reshape(norm(p, 'decoder.final_layer_norm.weight', x, config), [b, config.dModel]) as tf.Tensor2D;
    if (config.tieWordEmbeddings) hidden = tf.mul(hidden, config.dModel ** -0.5) as tf.Tensor2D;
    return { logits: project(hidden, lmHeadName(config)), self };
  });
  for (const kv of state.self) tf.dispose([kv.keys, kv.values]);
  const next: DecoderState = { ...state, step: state.step + 1, self: out.self };
  keepState(next);
  return { logits: out.logits, state: next };
}

/** The feed-forward sub-layer of a decoding step on rows x [B, d] (no dropout), through `project`. */
function feedForwardStep(p: ParamStore, prefix: string, x: tf.Tensor2D, project: InferenceLinear): tf.Tensor2D {
  const ff = `${prefix}.DenseReluDense`;
  const h = p.has(`${ff}.wi.weight`)
    ? tf.relu(project(x, `${ff}.wi.weight`))
    : tf.mul(geluNew(project(x, `${ff}.wi_0.weight`)), project(x, `${ff}.wi_1.weight`));
  return project(h as tf.Tensor2D, `${ff}.wo.weight`);
}

/** Reorders/selects batch rows of a state (beam search). The given state's tensors are disposed. */
export function selectDecoderRows(state: DecoderState, rows: number[]): DecoderState {
  const next = tidyObject((): DecoderState => {
    const idx = tf.tensor1d(rows, 'int32');
    const pick = <T extends tf.Tensor>(t: T): T => tf.gather(t, idx) as T;
    const kv = (list: readonly KeyValues[]) => list.map((k) => ({ keys: pick(k.keys), values: pick(k.values) }));
    return { ...state, batchSize: rows.length, cross: kv(state.cross), self: kv(state.self), crossBias: pick(state.crossBias) };
  });
  for (const kv of [...state.cross, ...state.self]) tf.dispose([kv.keys, kv.values]);
  state.crossBias.dispose();
  keepState(next);
  return next;
}

function stateTensors(state: DecoderState): tf.Tensor[] {
  return [
    ...state.cross.flatMap((kv) => [kv.keys, kv.values]),
    ...state.self.flatMap((kv) => [kv.keys, kv.values]),
    state.crossBias,
  ];
}

function keepState(state: DecoderState): void {
  for (const t of stateTensors(state)) tf.keep(t);
}

export function disposeDecoderState(state: DecoderState): void {
  tf.dispose(stateTensors(state));
}
