import * as tf from '@tensorflow/tfjs-core';
import {
  appendKeyValues, attention, attentionBias, attentionLayer, projectKeyValues, type AttentionBias, type AttentionWeights, type KeyValues, type Linear,
} from './attention.js';
import type { ModelConfig } from './config.js';
import { applyDropout, embed, feedForward, linear, residual, rmsNorm, transposeFlagsAreFree, type DropoutRng, type FeedForwardWeights } from './layers.js';
import { blockNames, finalNormName, relativeBiasName, type AttentionNames, type ParamStore, type Stack } from './params.js';

/*
 * T5 encoder and decoder stacks (HF T5Stack) of pre-norm residual blocks, written once:
 *   sub(x, f) = x + dropout(f(rmsNorm(x)))
 *   T5Block(x) = sub(sub(sub(x, selfAttention), crossAttention), feedForward)   (cross: decoder only)
 * Teacher forcing and incremental decoding run the same block; a decoding step passes its
 * key/value cache in the block's context. Activations are rows [B·L, d] throughout (reshaped
 * only at the stack's ends); the relative position bias is computed from block 0's table and
 * added in every block.
 */

const NO_DROPOUT: DropoutRng = { rate: 0, training: false, nextSeed: () => 0 };

/** One T5 block's tensors: each sub-layer's norm scale [d] and weights. */
export interface BlockWeights {
  selfAttention: { norm: tf.Tensor1D; weights: AttentionWeights };
  /** Decoder blocks only. */
  crossAttention?: { norm: tf.Tensor1D; weights: AttentionWeights };
  feedForward: { norm: tf.Tensor1D; weights: FeedForwardWeights };
}

function attentionWeights(p: ParamStore, names: AttentionNames): AttentionWeights {
  return { q: p.get(names.q), k: p.get(names.k), v: p.get(names.v), o: p.get(names.o) };
}

/** Block i of a stack, by its HF names (params.ts blockNames). */
export function blockWeights(p: ParamStore, config: ModelConfig, stack: Stack, i: number): BlockWeights {
  const n = blockNames(stack, i, config.feedForwardProj);
  const ff = n.feedForward;
  const get = (name: string | undefined) => (name ? p.get<tf.Tensor2D>(name) : undefined);
  return {
    selfAttention: { norm: p.get(n.selfNorm), weights: attentionWeights(p, n.selfAttention) },
    ...(n.crossAttention && n.crossNorm ? { crossAttention: { norm: p.get<tf.Tensor1D>(n.crossNorm), weights: attentionWeights(p, n.crossAttention) } } : {}),
    feedForward: { norm: p.get(n.feedForwardNorm), weights: { wi: get(ff.wi), wi0: get(ff.wi0), wi1: get(ff.wi1), wo: p.get(ff.wo) } },
  };
}

/** What a block needs besides its weights. */
export interface BlockContext {
  /** Sequences in the batch (rows are [batch·length, d]). */
  batch: number;
  numHeads: number;
  epsilon: number;
  rng: DropoutRng;
  linear: Linear;
  selfBias: AttentionBias;
  /** Decoder: the memory the cross-attention reads (its rows, or this block's keys/values when cached), and its bias. */
  cross?: { memory?: tf.Tensor2D; kv?: KeyValues; bias: AttentionBias };
  /** Decoding: this block's self-attention keys/values of the previous steps (null at the first step). */
  cache?: KeyValues | null;
}

/** A block's output rows and, when decoding, its self-attention keys/values grown by this step. */
export interface BlockOutput {
  x: tf.Tensor2D;
  cache?: KeyValues;
}

/**
 * Self-attention of normed rows h [B·L, d] (HF T5LayerSelfAttention without its norm and residual).
 * Decoding (ctx.cache set), this step's keys/values are appended to the cache and returned with it.
 */
function selfAttention(h: tf.Tensor2D, w: AttentionWeights, ctx: BlockContext): { out: tf.Tensor2D; cache?: KeyValues } {
  if (ctx.cache === undefined) return { out: attentionLayer(h, null, w, ctx.batch, ctx.numHeads, ctx.selfBias, ctx.rng, ctx.linear) };
  const cache = appendKeyValues(ctx.cache, projectKeyValues(h, w, ctx.linear), ctx.batch);
  return { out: attention(h, cache, w, ctx.batch, ctx.numHeads, ctx.selfBias, ctx.rng, ctx.linear), cache };
}

/** Cross-attention of normed rows h over the memory (HF T5LayerCrossAttention without its norm and residual). */
function crossAttention(h: tf.Tensor2D, w: AttentionWeights, ctx: BlockContext): tf.Tensor2D {
  if (!ctx.cross) throw new Error('t5Block: a decoder block needs the memory in ctx.cross');
  const { memory, kv, bias } = ctx.cross;
  return kv
    ? attention(h, kv, w, ctx.batch, ctx.numHeads, bias, ctx.rng, ctx.linear)
    : attentionLayer(h, memory!, w, ctx.batch, ctx.numHeads, bias, ctx.rng, ctx.linear);
}

/** HF T5Block on rows x [B·L, d]: self-attention, cross-attention (decoder), feed-forward, each as sub(x, f). */
export function t5Block(w: BlockWeights, x: tf.Tensor2D, ctx: BlockContext): BlockOutput {
  const sub = (input: tf.Tensor2D, norm: tf.Tensor1D, f: (h: tf.Tensor2D) => tf.Tensor2D) =>
    residual(input, f(rmsNorm(input, norm, ctx.epsilon)), ctx.rng);
  let cache: KeyValues | undefined;
  x = sub(x, w.selfAttention.norm, (h) => {
    const r = selfAttention(h, w.selfAttention.weights, ctx);
    cache = r.cache;
    return r.out;
  });
  const cross = w.crossAttention;
  if (cross) x = sub(x, cross.norm, (h) => crossAttention(h, cross.weights, ctx));
  x = sub(x, w.feedForward.norm, (h) => feedForward(h, w.feedForward.weights, ctx.rng));
  return { x, cache };
}

/** tf.tidy over a structure of tensors (tidy keeps every tensor it finds in the returned object). */
function tidyObject<T>(f: () => T): T {
  return tf.tidy(() => f() as unknown as tf.TensorContainer) as unknown as T;
}

/** The relative position part of a stack's self-attention bias. */
function relativePosition(p: ParamStore, config: ModelConfig, stack: Stack) {
  return { table: p.get<tf.Tensor2D>(relativeBiasName(stack)), bidirectional: stack === 'encoder', maxDistance: config.relativeAttentionMaxDistance };
}

function stackContext(config: ModelConfig, batch: number, rng: DropoutRng, selfBias: AttentionBias, lin: Linear = linear): BlockContext {
  return { batch, numHeads: config.numHeads, epsilon: config.layerNormEpsilon, rng, linear: lin, selfBias };
}

/** Token embeddings (shared by encoder and decoder) as rows [B·L, d], with T5's embedding dropout. */
function embedRows(p: ParamStore, ids: tf.Tensor, rng: DropoutRng): tf.Tensor2D {
  return embed(p.get('shared.weight'), tf.reshape(ids, [-1]), rng) as tf.Tensor2D;
}

/** Final norm and dropout, rows → [B, L, d]. */
function finish(p: ParamStore, config: ModelConfig, stack: Stack, x: tf.Tensor2D, shape: [number, number], rng: DropoutRng): tf.Tensor3D {
  const out = applyDropout(rmsNorm(x, p.get(finalNormName(stack)), config.layerNormEpsilon), rng);
  return tf.reshape(out, [...shape, config.dModel]);
}

/** H_language = T5Encoder(inputIds) [B, L, d]; inputMask [B, L] marks real tokens with 1. */
export function encoderStack(p: ParamStore, config: ModelConfig, inputIds: tf.Tensor2D, inputMask: tf.Tensor2D, rng: DropoutRng): tf.Tensor3D {
  const [b, l] = inputIds.shape;
  const bias = attentionBias({ queryLength: l, keyLength: l, position: relativePosition(p, config, 'encoder'), keyMask: inputMask });
  const ctx = stackContext(config, b, rng, bias);
  let x = embedRows(p, inputIds, rng);
  for (let i = 0; i < config.numLayers; i++) x = t5Block(blockWeights(p, config, 'encoder', i), x, ctx).x;
  return finish(p, config, 'encoder', x, [b, l], rng);
}

/** Teacher-forced T5 decoder: hidden states [B, T, d] for decoderInputIds [B, T] attending to memory [B, L, d]. */
export function decoderStack(
  p: ParamStore, config: ModelConfig, decoderInputIds: tf.Tensor2D, memory: tf.Tensor3D, memoryMask: tf.Tensor2D, rng: DropoutRng,
): tf.Tensor3D {
  const [b, t] = decoderInputIds.shape;
  const l = memory.shape[1];
  const selfBias = attentionBias({ queryLength: t, keyLength: t, position: relativePosition(p, config, 'decoder'), causal: true });
  const ctx: BlockContext = {
    ...stackContext(config, b, rng, selfBias),
    cross: { memory: tf.reshape(memory, [b * l, config.dModel]), bias: attentionBias({ queryLength: t, keyLength: l, keyMask: memoryMask }) },
  };
  let x = embedRows(p, decoderInputIds, rng);
  for (let i = 0; i < config.numDecoderLayers; i++) x = t5Block(blockWeights(p, config, 'decoder', i), x, ctx).x;
  return finish(p, config, 'decoder', x, [b, t], rng);
}

function lmHeadWeight(p: ParamStore, config: ModelConfig): tf.Tensor2D {
  return p.get<tf.Tensor2D>(config.tieWordEmbeddings ? 'shared.weight' : 'lm_head.weight');
}

/** Rows [n, d] → logits [n, V]. A tied head reuses shared.weight and first scales by d_model^-½ (HF). */
function lmHeadRows(p: ParamStore, config: ModelConfig, x: tf.Tensor2D, lin: Linear): tf.Tensor2D {
  const scaled = config.tieWordEmbeddings ? (tf.mul(x, config.dModel ** -0.5) as tf.Tensor2D) : x;
  return lin(scaled, lmHeadWeight(p, config));
}

/** LM head: logits [B, T, V]. */
export function lmHead(p: ParamStore, config: ModelConfig, hidden: tf.Tensor3D): tf.Tensor3D {
  const [b, t, d] = hidden.shape;
  return tf.reshape(lmHeadRows(p, config, tf.reshape(hidden, [b * t, d]), linear), [b, t, config.vocabSize]);
}

/** Incremental-decoding state. Cross-attention keys/values are computed once; self-attention keys/values grow by one per step. */
export interface DecoderState {
  /** Tokens already consumed (position of the next query). */
  readonly step: number;
  readonly batchSize: number;
  /** Per decoder layer, rows [B·L, H·dk] of the memory's keys/values. */
  readonly cross: readonly KeyValues[];
  /** Per decoder layer, rows [B·step, H·dk]; empty before the first step. */
  readonly self: readonly KeyValues[];
  /** Bias of the cross-attention over the memory (its padding). */
  readonly crossBias: AttentionBias;
}

/**
 * x · Wᵀ for inference. Where transpose flags are free this reads the variable as it is; on the
 * stock wasm kernel it uses Wᵀ kept by the ParamStore (made once, rebuilt after the variable is
 * assigned), so no request pays for transposing the decoder's weights.
 */
function inferenceLinear(p: ParamStore): Linear {
  if (transposeFlagsAreFree()) return (x, w) => tf.matMul(x, w, false, true);
  return (x, w) => tf.matMul(x, p.transposed(w));
}

/** Cross-attention keys/values for a memory [B, L, d]. All returned tensors are kept (caller disposes). */
export function startDecoder(p: ParamStore, config: ModelConfig, memory: tf.Tensor3D, memoryMask: tf.Tensor2D): DecoderState {
  const project = inferenceLinear(p);
  const state = tidyObject((): DecoderState => {
    const [b, l, d] = memory.shape;
    const rows = tf.reshape(memory, [b * l, d]) as tf.Tensor2D;
    const cross: KeyValues[] = [];
    for (let i = 0; i < config.numDecoderLayers; i++) cross.push(projectKeyValues(rows, blockWeights(p, config, 'decoder', i).crossAttention!.weights, project));
    // The state owns its mask (a clone shares the data): selecting rows disposes the old state's tensors.
    const crossBias = attentionBias({ queryLength: 1, keyLength: l, keyMask: tf.clone(memoryMask) });
    return { step: 0, batchSize: b, cross, self: [], crossBias };
  });
  keepState(state);
  return state;
}

/** One decoder step for tokens [B]: the final hidden states [B, d], logits [B, V] and the next state. The given state's self-attention cache is disposed. */
export function decoderStep(p: ParamStore, config: ModelConfig, state: DecoderState, tokens: tf.Tensor1D): { hidden: tf.Tensor2D; logits: tf.Tensor2D; state: DecoderState } {
  const project = inferenceLinear(p);
  const out = tidyObject(() => {
    const selfBias = attentionBias({
      queryLength: 1, keyLength: state.step + 1, position: relativePosition(p, config, 'decoder'), queryOffset: state.step,
    });
    const ctx = stackContext(config, state.batchSize, NO_DROPOUT, selfBias, project);
    let x = embedRows(p, tokens, NO_DROPOUT);
    const self: KeyValues[] = [];
    for (let i = 0; i < config.numDecoderLayers; i++) {
      const block = t5Block(blockWeights(p, config, 'decoder', i), x, { ...ctx, cross: { kv: state.cross[i]!, bias: state.crossBias }, cache: state.self[i] ?? null });
      x = block.x;
      self.push(block.cache!);
    }
    const hidden = rmsNorm(x, p.get(finalNormName('decoder')), config.layerNormEpsilon);
    return { hidden, logits: lmHeadRows(p, config, hidden, project), self };
  });
  for (const kv of state.self) tf.dispose([kv.keys, kv.values]);
  const next: DecoderState = { ...state, step: state.step + 1, self: out.self };
  keepState(next);
  return { hidden: out.hidden, logits: out.logits, state: next };
}

/** Rows [B·L, w] → the same for the batch rows `idx` (in that order). */
function pickRows(x: tf.Tensor2D, idx: tf.Tensor1D, batch: number): tf.Tensor2D {
  const width = x.shape[1];
  return tf.reshape(tf.gather(tf.reshape(x, [batch, -1, width]), idx), [-1, width]) as tf.Tensor2D;
}

/** Reorders/selects batch rows of a state (beam search). The given state's tensors are disposed. */
export function selectDecoderRows(state: DecoderState, rows: number[]): DecoderState {
  const next = tidyObject((): DecoderState => {
    const idx = tf.tensor1d(rows, 'int32');
    const kv = (list: readonly KeyValues[]) => list.map((k) => ({ keys: pickRows(k.keys, idx, state.batchSize), values: pickRows(k.values, idx, state.batchSize) }));
    const { fused, dense } = state.crossBias;
    const crossBias: AttentionBias = {
      ...(fused ? { fused: { ...fused, keyMask: fused.keyMask && tf.gather(fused.keyMask, idx) } } : {}),
      ...(dense ? { dense: tf.gather(dense, idx) } : {}),
    };
    return { ...state, batchSize: rows.length, cross: kv(state.cross), self: kv(state.self), crossBias };
  });
  disposeDecoderState(state);
  keepState(next);
  return next;
}

function stateTensors(state: DecoderState): tf.Tensor[] {
  const { fused, dense } = state.crossBias;
  return [
    ...state.cross.flatMap((kv) => [kv.keys, kv.values]),
    ...state.self.flatMap((kv) => [kv.keys, kv.values]),
    ...(fused?.keyMask ? [fused.keyMask] : []),
    ...(dense ? [dense] : []),
  ];
}

function keepState(state: DecoderState): void {
  for (const t of stateTensors(state)) tf.keep(t);
}

export function disposeDecoderState(state: DecoderState): void {
  tf.dispose(stateTensors(state));
}
