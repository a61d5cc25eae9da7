import { InputError } from '../util/errors.js';

/** Hyper-parameters of Auto-UI: a T5 encoder-decoder plus the screen projection and gated fusion. Field names follow HF `T5Config`. */
export interface ModelConfig {
  vocabSize: number;
  dModel: number;
  /** Width of one attention head (HF `d_kv`); the attention inner width is numHeads * dKv. */
  dKv: number;
  numHeads: number;
  dFf: number;
  numLayers: number;
  numDecoderLayers: number;
  relativeAttentionNumBuckets: number;
  relativeAttentionMaxDistance: number;
  feedForwardProj: 'relu' | 'gated-gelu';
  tieWordEmbeddings: boolean;
  layerNormEpsilon: number;
  dropoutRate: number;
  /** Width of the frozen vision features per patch. */
  screenDim: number;
  /** The screen's text items join the patches as screen tokens (screen_text.ts); absent = false, the paper's model. */
  screenText?: boolean;
  /** Each text item also carries its lexical match with the goal (text_match.ts); absent = false. Needs screenText. */
  textMatch?: boolean;
  /** A tap's point comes from the decoder pointer over the screen tokens (pointer.ts, `tap_pointer.weight`); absent = false. */
  tapPointer?: boolean;
  /** A pointed patch's tap moves to where in it the target lies (tap_offset.ts, `tap_offset.*`); needs tapPointer; absent = false. */
  tapOffset?: boolean;
  /** A TYPE action's text may be copied from the goal by the copy pointer (copy.ts, `copy_pointer.*`, `copy_gate.*`, `copy_stop.*`); absent = false. */
  copyPointer?: boolean;
  /**
   * The copy pointer's keys also read the two goal tokens before each position (copy.ts, `copy_context.weight`):
   * true reads their embeddings, 'states' their fused states; needs copyPointer; absent = false.
   */
  copyContext?: boolean | 'states';
  /** The copy pointer's stop reads the keys with their context too, not the fused state alone (copy.ts); needs copyContext; absent = false. */
  copyStopContext?: boolean;
  padTokenId: number;
  eosTokenId: number;
  decoderStartTokenId: number;
}

export type PresetName = 'tiny' | 'small' | 'base' | 'large';
export type PresetConfig = Omit<ModelConfig, 'vocabSize' | 'screenDim'>;

const T5_COMMON = {
  relativeAttentionNumBuckets: 32,
  relativeAttentionMaxDistance: 128,
  feedForwardProj: 'gated-gelu',
  tieWordEmbeddings: false,
  layerNormEpsilon: 1e-6,
  dropoutRate: 0.1,
  padTokenId: 0,
  eosTokenId: 1,
  decoderStartTokenId: 0,
} as const;

/** small/base/large are the t5-v1_1 / FLAN-T5 sizes; tiny trains in minutes on 2 CPU cores (wasm backend). */
export const PRESETS: Record<PresetName, PresetConfig> = {
  tiny: { ...T5_COMMON, dModel: 128, dKv: 32, numHeads: 4, dFf: 256, numLayers: 2, numDecoderLayers: 2 },
  small: { ...T5_COMMON, dModel: 512, dKv: 64, numHeads: 6, dFf: 1024, numLayers: 8, numDecoderLayers: 8 },
  base: { ...T5_COMMON, dModel: 768, dKv: 64, numHeads: 12, dFf: 2048, numLayers: 12, numDecoderLayers: 12 },
  large: { ...T5_COMMON, dModel: 1024, dKv: 64, numHeads: 16, dFf: 2816, numLayers: 24, numDecoderLayers: 24 },
};

export function isPresetName(name: string): name is PresetName {
  return Object.prototype.hasOwnProperty.call(PRESETS, name);
}

/** A preset plus the data-dependent sizes (and any overrides), validated. */
export function modelConfig(
  preset: PresetName,
  sizes: Pick<ModelConfig, 'vocabSize' | 'screenDim'> & Partial<ModelConfig>,
): ModelConfig {
  if (!isPresetName(preset)) throw new InputError(`unknown preset '${String(preset)}' (expected one of ${Object.keys(PRESETS).join(', ')})`, 'model preset');
  return validateConfig({ ...PRESETS[preset], ...sizes });
}

/** Attention inner width (HF `inner_dim`). */
export function innerDim(config: ModelConfig): number {
  return config.numHeads * config.dKv;
}

const POSITIVE_INTS = [
  'vocabSize', 'dModel', 'dKv', 'numHeads', 'dFf', 'numLayers', 'numDecoderLayers',
  'relativeAttentionNumBuckets', 'relativeAttentionMaxDistance', 'screenDim',
] as const;
const TOKEN_IDS = ['padTokenId', 'eosTokenId', 'decoderStartTokenId'] as const;

/** Checks every field (configs come from checkpoint files too); throws InputError naming the bad field. */
export function validateConfig(config: ModelConfig, where = 'model config'): ModelConfig {
  const c = config as unknown as Record<string, unknown>;
  for (const key of POSITIVE_INTS) {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new InputError(`${key} must be a positive integer, got ${JSON.stringify(v)}`, where);
  }
  for (const key of TOKEN_IDS) {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= config.vocabSize) {
      throw new InputError(`${key} must be an integer in [0, vocabSize=${config.vocabSize}), got ${JSON.stringify(v)}`, where);
    }
  }
  if (config.feedForwardProj !== 'relu' && config.feedForwardProj !== 'gated-gelu') {
    throw new InputError(`feedForwardProj must be 'relu' or 'gated-gelu', got ${JSON.stringify(config.feedForwardProj)}`, where);
  }
  if (config.screenText !== undefined && typeof config.screenText !== 'boolean') throw new InputError(`screenText must be a boolean, got ${JSON.stringify(config.screenText)}`, where);
  if (config.textMatch !== undefined && typeof config.textMatch !== 'boolean') throw new InputError(`textMatch must be a boolean, got ${JSON.stringify(config.textMatch)}`, where);
  if (config.textMatch && !config.screenText) throw new InputError('textMatch needs screenText: there is no screen text to match', where);
  if (config.tapPointer !== undefined && typeof config.tapPointer !== 'boolean') throw new InputError(`tapPointer must be a boolean, got ${JSON.stringify(config.tapPointer)}`, where);
  if (config.tapOffset !== undefined && typeof config.tapOffset !== 'boolean') throw new InputError(`tapOffset must be a boolean, got ${JSON.stringify(config.tapOffset)}`, where);
  if (config.tapOffset && !config.tapPointer) throw new InputError('tapOffset needs tapPointer: the offset moves the pointed patch', where);
  if (config.copyPointer !== undefined && typeof config.copyPointer !== 'boolean') throw new InputError(`copyPointer must be a boolean, got ${JSON.stringify(config.copyPointer)}`, where);
  if (config.copyContext !== undefined && typeof config.copyContext !== 'boolean' && config.copyContext !== 'states') throw new InputError(`copyContext must be a boolean or 'states', got ${JSON.stringify(config.copyContext)}`, where);
  if (config.copyContext && !config.copyPointer) throw new InputError('copyContext needs copyPointer: the context is part of the pointer\'s keys', where);
  if (config.copyStopContext !== undefined && typeof config.copyStopContext !== 'boolean') throw new InputError(`copyStopContext must be a boolean, got ${JSON.stringify(config.copyStopContext)}`, where);
  if (config.copyStopContext && !config.copyContext) throw new InputError('copyStopContext needs copyContext: the stop reads the context the keys hold', where);
  if (typeof config.tieWordEmbeddings !== 'boolean') throw new InputError(`tieWordEmbeddings must be a boolean, got ${JSON.stringify(config.tieWordEmbeddings)}`, where);
  if (typeof config.layerNormEpsilon !== 'number' || !(config.layerNormEpsilon > 0)) {
    throw new InputError(`layerNormEpsilon must be a positive number, got ${JSON.stringify(config.layerNormEpsilon)}`, where);
  }
  if (typeof config.dropoutRate !== 'number' || !(config.dropoutRate >= 0 && config.dropoutRate < 1)) {
    throw new InputError(`dropoutRate must be in [0, 1), got ${JSON.stringify(config.dropoutRate)}`, where);
  }
  if (config.relativeAttentionNumBuckets < 4) {
    throw new InputError(`relativeAttentionNumBuckets must be at least 4, got ${config.relativeAttentionNumBuckets}`, where);
  }
  return config;
}
