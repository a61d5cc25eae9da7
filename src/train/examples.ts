import * as tf from '@tensorflow/tfjs-core';
import type { AutoUiBatch } from '../model/autoui.js';
import { groundTargetBatch, inputBatch, padIds, screenBatch, type EncodedSplit } from '../model/batch.js';
import type { Rng } from '../util/rng.js';
import { referringBatch, type ReferringPhrase } from './referring.js';

export interface BatchExtras {
  /** Add the tap targets of the grounding loss. */
  grounding?: boolean;
  /** Add `perRow` referring phrases per screen (referring.ts), drawn by `rng`. */
  refer?: { phrases: readonly (readonly ReferringPhrase[])[]; perRow: number; rng: Rng };
}

/** One training batch, with the targets of our auxiliary losses when asked (and the encoder has a patch grid). */
export function makeBatch(split: EncodedSplit, rows: readonly number[], padId: number, extras: BatchExtras = {}): AutoUiBatch {
  const grid = split.table.encoder.grid;
  const { refer } = extras;
  return {
    ...(extras.grounding && grid ? { groundTargets: groundTargetBatch(split.table, rows, grid) } : {}),
    ...(refer && grid ? { refer: referringBatch(rows.map((r) => refer.phrases[r]!), refer.perRow, grid[0] * grid[1], padId, refer.rng) } : {}),
    ...inputBatch(rows.map((r) => split.inputs[r]!), padId),
    screen: screenBatch(split.table, rows),
    labels: (() => {
      const seqs = rows.map((r) => split.targets[r]!);
      const { ids, len } = padIds(seqs, -100);
      return tf.tensor2d(ids, [rows.length, len], 'int32');
    })(),
  };
}

export function disposeBatch(b: AutoUiBatch): void {
  tf.dispose([b.inputIds, b.inputMask, b.screen, b.labels, ...(b.groundTargets ? [b.groundTargets] : []), ...(b.refer ? Object.values(b.refer) : [])]);
}
