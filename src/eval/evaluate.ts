import { actionAt } from '../data/shards.js';
import type { AitwAction, Box } from '../data/types.js';
import { disposeScreenBatch, inputBatch, screenBatch, tableScreen, type BlindMode, type EncodedSplit } from '../model/batch.js';
import type { IncrementalDecoder } from '../infer/generate.js';
import { ensembleDecode } from '../infer/ensemble.js';
import type { ActionCodec } from '../model/codec.js';
import { TargetConstraint } from '../model/constrained.js';
import type { TapSource } from '../model/pointer.js';
import type { ScoredItem } from './metrics.js';
import { progress } from '../util/progress.js';
import * as tf from '@tensorflow/tfjs-core';

export interface Prediction extends ScoredItem {
  plan: number[] | null;
  error?: string;
}

export interface PredictOptions {
  batchSize?: number;
  /** Take away what the model reads off the screen (model/batch.ts BlindMode): the ablation that shows it uses the screen. */
  blind?: BlindMode;
  /** Evaluate only these rows (default: all). */
  rows?: readonly number[];
  quiet?: boolean;
  label?: string;
  /** Where decoded taps land (model/pointer.ts); default: the coordinate tokens. */
  taps?: TapSource;
  /** Beam width for typed text (infer/text_beam.ts); 1 = greedy. */
  textBeams?: number;
  /** A copied typed text held to the start the copy pointer picks (infer/text_beam.ts); default DEFAULT_TEXT_START. */
  textStart?: boolean;
}

/**
 * Greedy, grammar-constrained predictions for rows of a split, in `autoui score`'s input form.
 * Gold actions are scored raw (as AITW stores them): the reference metric takes them that way.
 * Several models answer as one (infer/ensemble.ts).
 */
export function predictSplit<S>(models: readonly IncrementalDecoder<S>[], codec: ActionCodec, split: EncodedSplit, opts: PredictOptions = {}): Prediction[] {
  const { table } = split;
  const rows = opts.rows ?? Array.from({ length: table.rows }, (_, i) => i);
  // Sorting by input length keeps padding small; results go back to row order below.
  const order = [...rows].sort((a, b) => split.inputs[a]!.length - split.inputs[b]!.length);
  const bs = opts.batchSize ?? 64;
  const constraint = new TargetConstraint(codec);
  const bar = progress({ label: opts.label ?? 'eval', total: rows.length, unit: 'screens', quiet: opts.quiet });
  const byRow = new Map<number, Prediction>();
  for (let i = 0; i < order.length; i += bs) {
    const chunk = order.slice(i, i + bs);
    const screens = screenBatch(chunk.map((r) => tableScreen(split, r)), table.encoder, codec.tokenizer.padId, opts.blind);
    const inputs = inputBatch(chunk.map((r) => split.inputs[r]!), codec.tokenizer.padId);
    const gens = ensembleDecode(models, codec, constraint, { ...inputs, ...screens }, { taps: opts.taps, textBeams: opts.textBeams, textStart: opts.textStart });
    tf.dispose([inputs.inputIds, inputs.inputMask]);
    disposeScreenBatch(screens);
    chunk.forEach((r, b) => {
      const g = gens[b]!.result;
      const ann = table.annotations?.[r];
      byRow.set(r, {
        id: `${table.episodeId[r]}/${table.stepId[r]}`,
        subset: table.subset[r],
        gold: actionAt(table, r),
        annotations: (ann?.positions ?? []) as Box[],
        pred: g.ok ? (g.action as AitwAction) : null,
        plan: g.ok ? g.plan : null,
        ...(g.ok ? {} : { error: g.error }),
      });
    });
    bar.tick(chunk.length);
  }
  bar.stop();
  return rows.map((r) => byRow.get(r)!);
}

