import { loadShards } from '../data/shards.js';
import { requireManifest, type Manifest } from '../data/manifest.js';
import type { SplitName } from '../data/types.js';
import { loadCheckpoints } from '../infer/load.js';
import { assertSameEncoder } from '../model/checkpoint.js';
import { encodeSplit, type BlindMode } from '../model/batch.js';
import { predictSplit, type Prediction } from './evaluate.js';
import { scoreItems, type Report } from './metrics.js';
import { InputError } from '../util/errors.js';
import type { TapSource } from '../model/pointer.js';

export interface EvalOptions {
  /** A checkpoint, or several that answer as one (infer/ensemble.ts). */
  checkpoint: string | readonly string[];
  data: string;
  split: SplitName;
  subsets?: string[];
  blind?: BlindMode;
  batchSize?: number;
  quiet?: boolean;
  /** Where decoded taps land (model/pointer.ts); default auto. */
  tapFrom?: TapSource | 'auto';
  /** Beam width for typed text (infer/text_beam.ts); 1 = greedy. */
  textBeams?: number;
  /** A copied typed text held to the start the copy pointer picks (infer/text_beam.ts); default DEFAULT_TEXT_START. */
  textStart?: boolean;
}

/** Scores a checkpoint on a split of a shard directory; refuses shards made by another encoder. */
export async function evaluateCheckpoint(opts: EvalOptions): Promise<{ report: Report; predictions: Prediction[]; checkpoint: string }> {
  const members = await loadCheckpoints(opts.checkpoint, { tapFrom: opts.tapFrom });
  const ckpt = members[0]!;
  const manifest = await requireManifest(opts.data);
  assertSameEncoder(ckpt.meta.encoder, manifest.encoder, ckpt.dir, opts.data);
  const texts = ckpt.meta.screenText ?? null;
  if (texts) assertShardTexts(manifest, opts);
  const table = await loadShards(opts.data, { split: opts.split, subsets: opts.subsets, texts: texts !== null });
  if (table.rows === 0) throw new InputError(`the ${opts.split} split has no rows${opts.subsets ? ` for ${opts.subsets.join(', ')}` : ''}`, opts.data);
  const split = encodeSplit(table, ckpt.codec, texts);
  const predictions = predictSplit(members.map((m) => m.model), ckpt.codec, split, {
    blind: opts.blind,
    batchSize: opts.batchSize,
    quiet: opts.quiet,
    taps: ckpt.taps,
    textBeams: opts.textBeams,
    textStart: opts.textStart,
    label: opts.blind ? `eval (blind: ${opts.blind})` : 'eval',
  });
  for (const m of members) m.model.dispose();
  return { report: scoreItems(predictions).report, predictions, checkpoint: ckpt.dir };
}

/** A checkpoint that reads screen text needs shards prepared with a text source. */
function assertShardTexts(manifest: Manifest, opts: EvalOptions): void {
  const without = (opts.subsets ?? Object.keys(manifest.subsets)).filter((s) => (manifest.subsets[s]?.screenText ?? 'none') === 'none');
  if (without.length > 0) {
    throw new InputError(
      `the checkpoint reads screen text, but subset(s) ${without.join(', ')} were prepared without it; re-run 'autoui data prepare' with --screen-text annotations or ocr`,
      opts.data,
    );
  }
}
