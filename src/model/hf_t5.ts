/**
 * Initialising Auto-UI's language model from a Hugging Face T5-family folder (T5 v1.0, T5 v1.1 /
 * FLAN-T5, FLAN-Alpaca): config.json → ModelConfig, model.safetensors (or a sharded
 * model.safetensors.index.json) → weights by HF name, tokenizer from the folder.
 *
 * Our parameters already carry HF names and shapes (params.ts), so the mapping is the identity on
 * names; what this module adds is checking (every T5 tensor present, nothing unknown, every shape
 * right, all problems listed at once), the few names HF checkpoints carry but never use, and
 * growing the vocabulary for the action codec's tokens.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InputError } from '../util/errors.js';
import { readSafetensors, type NamedTensor } from '../util/safetensors.js';
import type { AutoUiModel } from './autoui.js';
import { validateConfig, type ModelConfig } from './config.js';
import { loadHfTokenizer } from './hf_tokenizer.js';
import { parameterSpecs } from './params.js';
import type { TextTokenizer } from './tokenizer.js';

/** A ModelConfig without the data-dependent screen width (the encoder decides it). */
export type LanguageConfig = Omit<ModelConfig, 'screenDim'>;

export interface HfT5Init {
  /** The checkpoint's architecture; vocabSize is the checkpoint's embedding rows. */
  config: LanguageConfig;
  /** T5 tensors under our (= HF) names, float32, HF shapes. */
  weights: Map<string, NamedTensor>;
  tokenizer: TextTokenizer;
  /** Tensors in the files that HF itself ignores (tied copies, unused tables), for the log. */
  ignored: string[];
  /** The folder, resolved. */
  source: string;
}

/** Auto-UI's own tensors (projection, fusion gate): not in a T5 checkpoint, initialised fresh. */
export const AUTOUI_EXTRA_TENSORS = ['screen_proj.weight', 'screen_proj.bias', 'fusion.gate_lang.weight', 'fusion.gate_attn.weight', 'fusion.gate_attn.bias'] as const;
/** The text channel's tensors (models with screenText only). */
export const TEXT_TENSORS = ['text_proj.weight', 'text_proj.bias', 'text_match.weight'] as const;
/** The decoder's tap pointer (models with tapPointer only). */
export const POINTER_TENSORS = ['tap_pointer.weight'] as const;
/** The copy pointer over the goal (models with copyPointer only). */
export const COPY_TENSORS = ['copy_pointer.weight', 'copy_gate.weight', 'copy_gate.bias', 'copy_stop.weight', 'copy_stop.bias', 'copy_context.weight'] as const;
const EXTRA = new Set<string>([...AUTOUI_EXTRA_TENSORS, ...TEXT_TENSORS, ...POINTER_TENSORS, ...COPY_TENSORS]);

type Json = Record<string, unknown>;

/**
 * HF T5Config (as saved in config.json) → our config. Missing fields take T5Config's defaults
 * (num_decoder_layers = num_layers, relative_attention_max_distance = 128, tied embeddings).
 */
export function languageConfigFromHf(hf: Json, where = 'config.json'): LanguageConfig {
  const modelType = hf['model_type'];
  if (modelType !== undefined && modelType !== 't5' && modelType !== 'mt5') {
    throw new InputError(`model_type is ${JSON.stringify(modelType)}; only T5-family checkpoints ('t5', 'mt5') can initialise Auto-UI`, where);
  }
  const int = (key: string, fallback?: number): number => {
    const v = hf[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw new InputError(`field '${key}' must be an integer, got ${JSON.stringify(hf[key])}`, where);
    return v;
  };
  const num = (key: string, fallback: number): number => {
    const v = hf[key] ?? fallback;
    if (typeof v !== 'number') throw new InputError(`field '${key}' must be a number, got ${JSON.stringify(hf[key])}`, where);
    return v;
  };
  const proj = hf['feed_forward_proj'] ?? 'relu';
  if (proj !== 'relu' && proj !== 'gated-gelu') {
    throw new InputError(`feed_forward_proj ${JSON.stringify(proj)} is not supported (T5 uses 'relu', T5 v1.1 / FLAN-T5 'gated-gelu')`, where);
  }
  const act = hf['dense_act_fn'];
  if (act !== undefined && act !== (proj === 'relu' ? 'relu' : 'gelu_new')) {
    throw new InputError(`dense_act_fn ${JSON.stringify(act)} is not supported with feed_forward_proj '${proj}'`, where);
  }
  const tie = hf['tie_word_embeddings'] ?? true;
  if (typeof tie !== 'boolean') throw new InputError(`field 'tie_word_embeddings' must be a boolean, got ${JSON.stringify(tie)}`, where);
  const numLayers = int('num_layers', 6);
  const config: ModelConfig = {
    vocabSize: int('vocab_size', 32128),
    dModel: int('d_model', 512),
    dKv: int('d_kv', 64),
    numHeads: int('num_heads', 8),
    dFf: int('d_ff', 2048),
    numLayers,
    numDecoderLayers: int('num_decoder_layers', numLayers),
    relativeAttentionNumBuckets: int('relative_attention_num_buckets', 32),
    relativeAttentionMaxDistance: int('relative_attention_max_distance', 128),
    feedForwardProj: proj,
    tieWordEmbeddings: tie,
    layerNormEpsilon: num('layer_norm_epsilon', 1e-6),
    dropoutRate: num('dropout_rate', 0.1),
    screenDim: 1,
    padTokenId: int('pad_token_id', 0),
    eosTokenId: int('eos_token_id', 1),
    decoderStartTokenId: int('decoder_start_token_id', 0),
  };
  const { screenDim: _unused, ...language } = validateConfig(config, where);
  return language;
}

/** The T5 tensors (name → HF shape) a checkpoint of this config must hold. */
export function t5TensorShapes(config: LanguageConfig): Map<string, number[]> {
  const specs = parameterSpecs({ ...config, screenDim: 1 });
  return new Map(specs.filter((s) => !EXTRA.has(s.name)).map((s) => [s.name, s.shape]));
}

/** Names HF checkpoints may carry that T5ForConditionalGeneration never reads (or ties to shared). */
function isIgnorable(name: string, config: LanguageConfig): boolean {
  if (/^decoder\.block\.\d+\.layer\.1\.EncDecAttention\.relative_attention_bias\.weight$/.test(name)) return true;
  if (name === 'encoder.embed_tokens.weight' || name === 'decoder.embed_tokens.weight') return true;
  return name === 'lm_head.weight' && config.tieWordEmbeddings;
}

function sameValues(a: NamedTensor, b: NamedTensor): boolean {
  if (a.shape.join('x') !== b.shape.join('x')) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}

/**
 * Checks a checkpoint's tensors against the config and keeps the T5 ones. Every problem (missing,
 * unexpected, mis-shaped, non-float) goes into one InputError naming the file.
 */
export function mapT5Weights(config: LanguageConfig, tensors: Map<string, NamedTensor>, where: string): { weights: Map<string, NamedTensor>; ignored: string[] } {
  const want = t5TensorShapes(config);
  const problems: string[] = [];
  const weights = new Map<string, NamedTensor>();
  const ignored: string[] = [];
  // Some exports keep the embedding only under a tied alias.
  const shared = tensors.get('shared.weight') ?? tensors.get('encoder.embed_tokens.weight') ?? tensors.get('decoder.embed_tokens.weight');
  for (const [name, shape] of want) {
    const t = name === 'shared.weight' ? shared : tensors.get(name);
    if (!t) {
      problems.push(`missing tensor '${name}' [${shape.join(', ')}]`);
      continue;
    }
    if (t.shape.join('x') !== shape.join('x')) {
      problems.push(`tensor '${name}' has shape [${t.shape.join(', ')}], config.json implies [${shape.join(', ')}]`);
      continue;
    }
    if (!(t.data instanceof Float32Array)) {
      problems.push(`tensor '${name}' has dtype ${t.dtype}, expected a float type`);
      continue;
    }
    weights.set(name, t);
  }
  for (const [name, t] of tensors) {
    if (want.has(name)) continue;
    if (!isIgnorable(name, config)) {
      problems.push(`unexpected tensor '${name}' [${t.shape.join(', ')}] (not part of a T5 model with this config.json)`);
      continue;
    }
    if (name.endsWith('embed_tokens.weight') && shared && t !== shared && !sameValues(t, shared)) {
      problems.push(`tensor '${name}' differs from shared.weight; autoui ties the encoder and decoder embeddings`);
      continue;
    }
    ignored.push(name);
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 12).join('; ');
    throw new InputError(`${problems.length} problem(s) with the T5 weights: ${shown}${problems.length > 12 ? `; and ${problems.length - 12} more` : ''}`, where);
  }
  return { weights, ignored: ignored.sort() };
}

/** All tensors of model.safetensors, or of every shard a model.safetensors.index.json lists. */
export async function readHfSafetensors(dir: string): Promise<{ tensors: Map<string, NamedTensor>; where: string }> {
  const single = join(dir, 'model.safetensors');
  if (existsSync(single)) return { tensors: (await readSafetensors(single)).tensors, where: single };
  const index = join(dir, 'model.safetensors.index.json');
  if (existsSync(index)) {
    let map: unknown;
    try {
      map = (JSON.parse(await readFile(index, 'utf8')) as Json)['weight_map'];
    } catch (err) {
      throw new InputError(`not valid JSON (${(err as Error).message})`, index);
    }
    if (typeof map !== 'object' || map === null) throw new InputError("field 'weight_map' must be an object", index);
    const files = [...new Set(Object.values(map as Record<string, unknown>))];
    const tensors = new Map<string, NamedTensor>();
    for (const f of files) {
      if (typeof f !== 'string' || f.includes('/') || f.includes('\\')) throw new InputError(`weight_map names a bad file ${JSON.stringify(f)}`, index);
      for (const [name, t] of (await readSafetensors(join(dir, f))).tensors) tensors.set(name, t);
    }
    return { tensors, where: index };
  }
  if (existsSync(join(dir, 'pytorch_model.bin'))) {
    throw new InputError(
      'this folder has only pytorch_model.bin (a pickle autoui cannot read). Convert it once with ' +
        `'/usr/bin/python3 scripts/bin_to_safetensors.py ${dir}' (needs python3-torch), then retry`,
      dir,
    );
  }
  throw new InputError('no model.safetensors (or model.safetensors.index.json) here: not a Hugging Face model folder', dir);
}

/**
 * `autoui train --init <dir>`: reads a Hugging Face T5-family folder. The returned config has the
 * checkpoint's vocabulary; build the model with the codec's (larger) vocabulary and the encoder's
 * screen width, then call `loadPretrainedInto`.
 */
export async function initFromHuggingFace(dir: string): Promise<HfT5Init> {
  const source = resolve(dir);
  if (!existsSync(source)) throw new InputError('no such folder', dir);
  const configPath = join(source, 'config.json');
  if (!existsSync(configPath)) throw new InputError('no config.json here: not a Hugging Face model folder', source);
  let hf: unknown;
  try {
    hf = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (err) {
    throw new InputError(`not valid JSON (${(err as Error).message})`, configPath);
  }
  if (typeof hf !== 'object' || hf === null || Array.isArray(hf)) throw new InputError('must hold a JSON object', configPath);
  const config = languageConfigFromHf(hf as Json, configPath);
  const { tensors, where } = await readHfSafetensors(source);
  const { weights, ignored } = mapT5Weights(config, tensors, where);
  const tokenizer = await loadHfTokenizer(source, { vocabSize: config.vocabSize });
  if (tokenizer.padId !== config.padTokenId || tokenizer.eosId !== config.eosTokenId) {
    throw new InputError(
      `the tokenizer's pad/eos ids (${tokenizer.padId}/${tokenizer.eosId}) differ from config.json's pad_token_id/eos_token_id (${config.padTokenId}/${config.eosTokenId})`,
      source,
    );
  }
  return { config, weights, tokenizer, ignored, source };
}

/** The model config for a pretrained language part plus the codec's vocabulary and the encoder's width. */
export function pretrainedModelConfig(init: Pick<HfT5Init, 'config'>, sizes: { vocabSize: number; screenDim: number; screenText?: boolean; textMatch?: boolean; tapPointer?: boolean; copyPointer?: boolean }): ModelConfig {
  if (sizes.vocabSize < init.config.vocabSize) {
    throw new InputError(`the codec's vocabulary (${sizes.vocabSize}) is smaller than the checkpoint's (${init.config.vocabSize})`, 'train --init');
  }
  return validateConfig({ ...init.config, ...sizes });
}

export interface PretrainedLoadReport {
  /** T5 tensors copied. */
  loaded: number;
  /** Rows appended to shared.weight (and lm_head.weight) for the codec's tokens. */
  addedRows: number;
  /** Auto-UI tensors left at their fresh initialisation. */
  fresh: string[];
}

/**
 * Copies the T5 weights into a freshly built model. When the model's vocabulary is larger (the
 * codec's tokens), the embedding (and untied head) rows beyond the checkpoint's start at the mean
 * of the pretrained rows plus a tenth of their spread times the model's own random draw, so new
 * tokens start where the pretrained ones live but differ from each other (HF's resize uses the
 * same mean-centred idea).
 */
export function loadPretrainedInto(model: AutoUiModel, init: Pick<HfT5Init, 'config' | 'weights'>, where = 'train --init'): PretrainedLoadReport {
  const mc = model.config;
  const lc = init.config;
  const diffs = (Object.keys(lc) as (keyof LanguageConfig)[]).filter((k) => k !== 'vocabSize' && k !== 'dropoutRate' && mc[k] !== lc[k]);
  if (diffs.length > 0) throw new InputError(`the model's ${diffs.map((k) => `${k} (${String(mc[k])} vs ${String(lc[k])})`).join(', ')} differ from the checkpoint`, where);
  if (mc.vocabSize < lc.vocabSize) throw new InputError(`the model's vocabulary (${mc.vocabSize}) is smaller than the checkpoint's (${lc.vocabSize})`, where);
  const vars = model.namedWeights();
  const addedRows = mc.vocabSize - lc.vocabSize;
  const out = new Map<string, tf.Tensor>();
  try {
    for (const [name, t] of init.weights) {
      const v = vars.get(name);
      if (!v) throw new InputError(`the model has no parameter '${name}'`, where);
      if (addedRows > 0 && (name === 'shared.weight' || name === 'lm_head.weight')) {
        out.set(name, tf.tensor2d(extendRows(t, v.dataSync() as Float32Array, mc.vocabSize, v.shape[1]!), [mc.vocabSize, v.shape[1]!]));
      } else {
        out.set(name, tf.tensor(t.data, t.shape, 'float32'));
      }
    }
    model.params.load(out, { where });
  } finally {
    for (const t of out.values()) t.dispose();
  }
  return { loaded: init.weights.size, addedRows, fresh: [...vars.keys()].filter((n) => !init.weights.has(n)) };
}

/** Pretrained rows, then new rows = mean + 0.1·std·z with z the model's own init standardised. */
function extendRows(t: NamedTensor, current: Float32Array, rows: number, d: number): Float32Array {
  const old = t.shape[0]!;
  const out = new Float32Array(rows * d);
  out.set(t.data.subarray(0, old * d));
  const mean = new Float64Array(d);
  let sq = 0;
  for (let r = 0; r < old; r++) for (let j = 0; j < d; j++) mean[j] += t.data[r * d + j]! / old;
  for (let r = 0; r < old; r++) for (let j = 0; j < d; j++) sq += (t.data[r * d + j]! - mean[j]!) ** 2;
  const std = Math.sqrt(sq / (old * d));
  let zsq = 0;
  for (let i = old * d; i < rows * d; i++) zsq += current[i]! ** 2;
  const zstd = Math.sqrt(zsq / Math.max(1, (rows - old) * d)) || 1;
  for (let r = old; r < rows; r++) for (let j = 0; j < d; j++) out[r * d + j] = mean[j]! + (0.1 * std * current[r * d + j]!) / zstd;
  return out;
}
