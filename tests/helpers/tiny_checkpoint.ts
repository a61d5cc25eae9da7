/**
 * Builds a small untrained checkpoint on disk for inference tests and benchmarks. Untrained weights
 * still give well-formed actions: decoding is grammar-constrained.
 */
import { initBackend } from '../../src/backend.js';
import { AutoUiModel } from '../../src/model/autoui.js';
import { ActionCodec } from '../../src/model/codec.js';
import { modelConfig, type ModelConfig, type PresetName } from '../../src/model/config.js';
import { buildWordTokenizer } from '../../src/model/tokenizer.js';
import { BUILTIN_INFO } from '../../src/screen/vision/index.js';
import type { EncoderInfo } from '../../src/screen/vision/index.js';
import { CHECKPOINT_FORMAT, saveCheckpoint } from '../../src/model/checkpoint.js';
import type { AutoUiCheckpointMeta } from '../../src/model/checkpoint.js';
import { DEFAULT_TEXT_LIMITS } from '../../src/model/batch.js';

export const TINY_GOALS = [
  'open the settings app',
  'search for hotels in paris',
  'turn on wifi',
  'open chrome and go to ebay',
  'type hello world',
  'scroll down to the bottom',
];

export interface TinyCheckpointOptions {
  preset?: PresetName;
  seed?: number;
  encoder?: EncoderInfo;
  /** Overrides of the preset (e.g. fewer layers for speed). */
  overrides?: Partial<ModelConfig>;
  /** Give the model a text channel (trained on annotation texts, as the checkpoint will say). */
  screenText?: boolean;
}

/** Writes a random-weight checkpoint to `dir` (replacing it) and returns its meta. */
export async function makeTinyCheckpoint(dir: string, opts: TinyCheckpointOptions = {}): Promise<AutoUiCheckpointMeta> {
  await initBackend();
  const encoder = opts.encoder ?? BUILTIN_INFO;
  const codec = new ActionCodec(buildWordTokenizer([...TINY_GOALS, ...TINY_GOALS], { minCount: 1 }));
  const config = modelConfig(opts.preset ?? 'tiny', { ...opts.overrides, vocabSize: codec.vocabSize, screenDim: encoder.dim, screenText: opts.screenText ?? false });
  const model = new AutoUiModel(config, opts.seed ?? 1);
  const meta: AutoUiCheckpointMeta = {
    format: CHECKPOINT_FORMAT,
    model: config,
    codec: codec.toJSON(),
    encoder: { ...encoder },
    screenText: opts.screenText ? { source: 'annotations', ...DEFAULT_TEXT_LIMITS } : null,
    training: { note: 'random weights (test fixture)', recipe: 'scratch', preset: opts.preset ?? 'tiny', seed: opts.seed ?? 1 },
    created: new Date(0).toISOString(),
    autoui: '0.1.0',
  };
  await saveCheckpoint(dir, { meta, weights: model.namedWeights() });
  model.dispose();
  return meta;
}
