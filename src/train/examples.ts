import * as tf from '@tensorflow/tfjs-core';
import type { AutoUiBatch } from '../model/autoui.js';
import { disposeScreenBatch, groundTargetBatch, inputBatch, padIds, screenBatch, screenTokenCount, tableScreen, type EncodedSplit } from '../model/batch.js';
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
  const { refer } = extras;
  const { layouts, ...screens } = screenBatch(rows.map((r) => tableScreen(split, r)), split.table.encoder, padId);
  const S = screenTokenCount(screens);
  return {
    ...(extras.grounding && layouts ? { groundTargets: groundTargetBatch(split.table, rows, { ...screens, layouts }) } : {}),
    ...(refer && layouts ? { refer: referringBatch(rows.map((r) => refer.phrases[r]!), refer.perRow, S, padId, refer.rng) } : {}),
    ...inputBatch(rows.map((r) => split.inputs[r]!), padId),
    ...screens,
    labels: (() => {
      const { ids, len } = padIds(rows.map((r) => split.targets[r]!), -100);
      return tf.tensor2d(ids, [rows.length, len], 'int32');
    })(),
  };
}

export function disposeBatch(b: AutoUiBatch): void {
  disposeScreenBatch({ screen: b.screen, screenMask: b.screenMask, texts: b.texts, layouts: null });
  tf.dispose([b.inputIds, b.inputMask, b.labels, ...(b.groundTargets ? [b.groundTargets] : []), ...(b.refer ? Object.values(b.refer) : [])]);
}
