import * as tf from '@tensorflow/tfjs-core';
import type { AitwAction, Box, YX } from '../data/types.js';
import { isTapAction } from '../data/geometry.js';
import { patchBox, type PatchLayout } from '../screen/vision/encoder.js';
import { meanTokenAttention } from './grounding.js';
import { InputError } from '../util/errors.js';

/*
 * Where a tap lands (our addition, the reading side of the grounding loss): the decoder still
 * chooses the action and its coordinate tokens, but the tap's point is the centre of the screen
 * token the interaction looks at most, arg-max_k ā_k (ā as in grounding.ts) — a patch's cell or a
 * text item's box. Why: the grounding loss trains ā to sit on the tap target directly, while the
 * coordinate tokens learn the place only through the decoder. It needs screen tokens with places and
 * a grounded attention, so `auto` uses it only for checkpoints trained with the grounding loss on an
 * encoder with a patch grid.
 */

export type TapSource = 'tokens' | 'attention';
export const TAP_SOURCES: readonly (TapSource | 'auto')[] = ['auto', 'attention', 'tokens'];

/** Where each screen token of one screen lies: the patches by their layout, then the text items' boxes. */
export interface ScreenLayout {
  patches: PatchLayout;
  texts: readonly Box[];
}

/** The layout of a grid that covers the whole screen (the 'stretch' layout). */
export function gridLayout(grid: readonly [number, number]): PatchLayout {
  return { grid, rows: grid[0], cols: grid[1], rowHeight: 1 / grid[0], colWidth: 1 / grid[1] };
}

const centreOf = ([y, x, h, w]: readonly number[]): YX => [y! + h! / 2, x! + w! / 2];

/** Centre of patch `p` (row-major), normalised [y, x]. */
export function patchCentre(p: number, layout: PatchLayout): YX {
  return centreOf(patchBox(layout, p));
}

/** Centre of screen token k: patch k, or text item k − P. */
export function tokenCentre(l: ScreenLayout, k: number): YX {
  const P = l.patches.grid[0] * l.patches.grid[1];
  if (k < P) return patchCentre(k, l.patches);
  const box = l.texts[k - P];
  if (!box) throw new RangeError(`screen token ${k} is neither one of ${P} patches nor one of ${l.texts.length} text items`);
  return centreOf(box);
}

/** Per row, the centre of arg-max_k ā_k; attention [B, L, S] over the screen tokens, inputMask [B, L]. */
export function attentionPointer(attention: tf.Tensor3D, inputMask: tf.Tensor2D, layouts: readonly ScreenLayout[]): YX[] {
  const arg = tf.tidy(() => tf.argMax(meanTokenAttention(attention, inputMask), 1));
  const best = arg.dataSync();
  arg.dispose();
  return Array.from(best, (k, b) => tokenCentre(layouts[b]!, k));
}

/** The action with a tap's touch and lift moved to `yx`; any other action unchanged. */
export function tapAt(action: AitwAction, yx: YX): AitwAction {
  return isTapAction(action) ? { ...action, touch_yx: yx, lift_yx: [...yx] as YX } : action;
}

/**
 * Whether taps are read from the attention (else from the coordinate tokens). `auto` picks the
 * attention when the encoder has a grid and the checkpoint was trained with the grounding loss
 * (weight > 0); asking for `attention` without a grid is an error, since there is no patch to point at.
 */
export function tapsFromAttention(source: TapSource | 'auto', grid: readonly [number, number] | null, groundWeight: number): boolean {
  if (source === 'tokens') return false;
  if (source === 'attention') {
    if (!grid) throw new InputError("taps from the attention need an encoder with a patch grid; this checkpoint's has none (use tokens)", '--tap-from');
    return true;
  }
  return grid !== null && groundWeight > 0;
}
