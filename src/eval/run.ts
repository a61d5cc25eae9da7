import { loadShards } from '../data/shards.js';
import { requireManifest } from '../data/manifest.js';
import type { SplitName } from '../data/types.js';
import { loadCheckpoint } from '../infer/load.js';
import { assertSameEncoder } from '../model/checkpoint.js';
import { encodeSplit } from '../model/batch.js';
import { predictSplit, type Prediction } from './evaluate.js';
import { scoreItems, type Report } from './metrics.js';
import { InputError } from '../util/errors.js';
import type { TapSource } from '../model/pointer.js';

export interface EvalOptions {
  checkpoint: string;
  data: string;
  split: SplitName;
  subsets?: string[];
  blind?: boolean;
  batchSize?: number;
  quiet?: boolean;
  /** Where decoded taps land (model/pointer.ts); default auto. */
  tapFrom?: TapSource | 'auto';
}

/** Scores a checkpoint on a split of a shard directory; refuses shards made by another encoder. */
export async function evaluateCheckpoint(opts: EvalOptions): Promise<{ report: Report; predictions: Prediction[]; checkpoint: string }> {
  const ckpt = await loadCheckpoint(opts.checkpoint, { tapFrom: opts.tapFrom });
  const manifest = await requireManifest(opts.data);
  assertSameEncoder(ckpt.meta.encoder, manifest.encoder, ckpt.dir, opts.data);
  const table = await loadShards(opts.data, { split: opts.split, subsets: opts.subsets });
  if (table.rows === 0) throw new InputError(`the ${opts.split} split has no rows${opts.subsets ? ` for ${opts.subsets.join(', ')}` : ''}`, opts.data);
  const split = encodeSplit(table, ckpt.codec);
  const predictions = predictSplit(ckpt.model, ckpt.codec, split, {
    blind: opts.blind,
    batchSize: opts.batchSize,
    quiet: opts.quiet,
    tapsFromAttention: ckpt.tapsFromAttention,
    label: opts.blind ? 'eval (blind)' : 'eval',
  });
  ckpt.model.dispose();
  return { report: scoreItems(predictions).report, predictions, checkpoint: ckpt.dir };
}
