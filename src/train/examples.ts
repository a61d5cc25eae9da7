import * as tf from '@tensorflow/tfjs-core';
import { actionAt } from '../data/shards.js';
import type { Box } from '../data/types.js';
import { isTapAction } from '../data/geometry.js';
import type { AutoUiBatch, CopySteps } from '../model/autoui.js';
import { disposeScreenBatch, EMPTY_TEXTS, goalMaskBatch, groundTargetBatch, inputBatch, padIds, screenBatch, screenTokenCount, tableScreen, type EncodedSplit, type EncodedTexts } from '../model/batch.js';
import type { ActionCodec } from '../model/codec.js';
import { offsetTargetBatch, offsetTargets } from '../model/tap_offset.js';
import type { Rng } from '../util/rng.js';
import { referringBatch, type ReferringPhrase } from './referring.js';
import type { Example } from './relabel.js';

export interface BatchExtras {
  /** Add the tap targets of the grounding loss. */
  grounding?: boolean;
  /** Add the tap pointer's own targets, the patches within this many patches of each gold tap (when it is not the grounding loss's 1). */
  pointerRadius?: number;
  /** Add `perRow` referring phrases per screen (referring.ts), drawn by `rng`. */
  refer?: { phrases: readonly (readonly ReferringPhrase[])[]; perRow: number; rng: Rng };
  /** Add the decoder positions the tap pointer reads (codec.tapStep of each target). */
  tapStep?: (target: readonly number[]) => number;
  /** Add the steps the copy pointer writes and the goal it copies from (copyPointer models). */
  copy?: ActionCodec;
  /** With copy: add the goal position each typed id comes from (the copy pointer's position loss). */
  copyPositions?: boolean;
  /** Add the patches around each gold tap and the tap's offset from each (tapOffset models). */
  offsets?: boolean;
}

/** Row r of a split as recorded: its screen, input, target and gold action. */
export function splitExample(split: EncodedSplit, r: number): Example {
  return { row: r, input: split.inputs[r]!, target: split.targets[r]!, action: actionAt(split.table, r), texts: split.texts?.[r] ?? null };
}

/** The screen texts of the step before row r's in its episode, when the split holds that step and the model reads text. */
export function previousTexts(split: EncodedSplit, r: number): EncodedTexts | null {
  const t = split.table;
  const before = r > 0 && t.episodeId[r - 1] === t.episodeId[r] && t.stepId[r - 1] === t.stepId[r]! - 1;
  return before ? split.texts?.[r - 1] ?? null : null;
}

/** The untexted boxes (icons) of a row's screen, when the split was loaded with its annotations. */
function iconsOf(split: EncodedSplit, r: number): Box[] {
  const ann = split.table.annotations?.[r];
  return ann ? ann.positions.filter((_, i) => ann.text[i]!.trim() === '') : [];
}

/** One training batch, with the targets of our auxiliary losses when asked (and the encoder has a patch grid). */
export function makeBatch(split: EncodedSplit, examples: readonly Example[], padId: number, extras: BatchExtras = {}): AutoUiBatch {
  const { refer } = extras;
  const screenRows = examples.map((ex) => ({ ...tableScreen(split, ex.row), texts: ex.texts }));
  const { layouts, ...screens } = screenBatch(screenRows, split.table.encoder, padId);
  const S = screenTokenCount(screens);
  const texts = screens.texts && { screens: screenRows.map((s) => s.texts ?? EMPTY_TEXTS), items: screens.texts.mask.shape[1] };
  const copy = extras.copy && copyBatch(examples, extras.copy, extras.copyPositions ?? false);
  // The grounding loss and the tap pointer may both want targets: the screens' icons are listed once, when first asked.
  let icons: Box[][] | undefined;
  const targets = (radius: number) => groundTargetBatch(examples.map((ex) => ex.action), { ...screens, layouts }, (icons ??= examples.map((ex) => iconsOf(split, ex.row))), radius);
  return {
    ...(extras.grounding && layouts ? { groundTargets: targets(1) } : {}),
    ...(extras.pointerRadius !== undefined && extras.pointerRadius !== 1 && layouts ? { pointTargets: targets(extras.pointerRadius) } : {}),
    ...(refer && layouts ? { refer: referringBatch(examples.map((ex) => refer.phrases[ex.row]!), refer.perRow, S, padId, refer.rng, texts) } : {}),
    ...(extras.offsets && layouts ? { tapOffsets: offsetTargetBatch(offsetTargets(examples.map((ex) => (isTapAction(ex.action) ? ex.action.touch_yx : null)), layouts)) } : {}),
    ...(extras.tapStep ? { tapAt: tf.tensor1d(examples.map((ex) => Math.max(0, extras.tapStep!(ex.target))), 'int32') } : {}),
    ...(copy ? { copy } : {}),
    ...inputBatch(examples.map((ex) => ex.input), padId),
    ...screens,
    labels: (() => {
      const { ids, len } = padIds(examples.map((ex) => ex.target), -100);
      return tf.tensor2d(ids, [examples.length, len], 'int32');
    })(),
  };
}

/**
 * The copy pointer's steps [B, T] (T as the padded labels), goal mask [B, L] (L as the padded inputs)
 * and, with `positions`, the goal position of each text step's label (codec.copyPositions; −1 where
 * none is known); undefined when no example types, as most batches: then no ops are spent on the pointer.
 */
function copyBatch(examples: readonly Example[], codec: ActionCodec, positions: boolean): CopySteps | undefined {
  const textSteps = examples.map((ex) => codec.textSteps(ex.target));
  if (textSteps.every((t) => t.length === 0)) return undefined;
  const len = Math.max(1, ...examples.map((ex) => ex.target.length));
  const steps = new Int32Array(examples.length * len);
  const at = new Int32Array(examples.length * len).fill(-1);
  textSteps.forEach((ts, b) => {
    ts.forEach((t) => (steps[b * len + t] = 1));
    const found = positions && ts.length > 1 ? codec.copyPositions(codec.goalIds(examples[b]!.input), ts.slice(0, -1).map((t) => examples[b]!.target[t]!)) : null;
    if (found) [...found.at, found.end].forEach((p, k) => (at[b * len + ts[k]!] = p));
  });
  return {
    steps: tf.tensor2d(steps, [examples.length, len], 'int32'),
    goal: goalMaskBatch(examples.map((ex) => ex.input), codec),
    ...(positions ? { at: tf.tensor2d(at, [examples.length, len], 'int32') } : {}),
  };
}

export function disposeBatch(b: AutoUiBatch): void {
  disposeScreenBatch({ screen: b.screen, screenMask: b.screenMask, texts: b.texts, layouts: null });
  tf.dispose([b.inputIds, b.inputMask, b.labels, ...(b.groundTargets ? [b.groundTargets] : []), ...(b.pointTargets ? [b.pointTargets] : []), ...(b.refer ? Object.values(b.refer) : []), ...(b.tapAt ? [b.tapAt] : []), ...(b.copy ? [b.copy.steps, b.copy.goal, ...(b.copy.at ? [b.copy.at] : [])] : []), ...(b.tapOffsets ? Object.values(b.tapOffsets) : [])]);
}
