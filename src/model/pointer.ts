import * as tf from '@tensorflow/tfjs-core';
import type { AitwAction, YX } from '../data/types.js';
import { isTapAction } from '../data/geometry.js';
import { meanTokenAttention } from './grounding.js';
import { InputError } from '../util/errors.js';

/*
 * Where a tap lands (our addition, the reading side of the grounding loss): the decoder still
 * chooses the action and its coordinate tokens, but the tap's point is the centre of the patch the
 * screen attention looks at most, arg-max_p ā_p (ā as in grounding.ts). Why: the grounding loss
 * trains ā to sit on the tap target directly, while the coordinate tokens learn the place only
 * through the decoder; on the demo's validation split the arg-max matched 597 of 671 gold taps
 * against 586 for the tokens (README, Results). It needs a patch grid and a grounded attention, so
 * `auto` uses it only for checkpoints trained with the grounding loss on a grid encoder.
 */

export type TapSource = 'tokens' | 'attention';
export const TAP_SOURCES: readonly (TapSource | 'auto')[] = ['auto', 'attention', 'tokens'];

/** Centre of patch `p` (row-major) of a rows×cols grid, normalised [y, x]. */
export function patchCentre(p: number, grid: readonly [number, number]): YX {
  const [rows, cols] = grid;
  return [(Math.floor(p / cols) + 0.5) / rows, ((p % cols) + 0.5) / cols];
}

/** Per row, the centre of arg-max_p ā_p; attention [B, L, P] with P = rows·cols, inputMask [B, L]. */
export function attentionPointer(attention: tf.Tensor3D, inputMask: tf.Tensor2D, grid: readonly [number, number]): YX[] {
  const P = attention.shape[2];
  if (P !== grid[0] * grid[1]) throw new Error(`attention over ${P} patches does not fit a ${grid[0]}×${grid[1]} grid`);
  const arg = tf.tidy(() => tf.argMax(meanTokenAttention(attention, inputMask), 1));
  const best = arg.dataSync();
  arg.dispose();
  return Array.from(best, (p) => patchCentre(p, grid));
}

/** The action with a tap's touch and lift moved to `yx`; any other action unchanged. */
export function tapAt(action: AitwAction, yx: YX): AitwAction {
  return isTapAction(action) ? { ...action, touch_yx: yx, lift_yx: [...yx] as YX } : action;
}

/**
 * The grid to read taps from, or null for the coordinate tokens. `auto` picks the attention when
 * the encoder has a grid and the checkpoint was trained with the grounding loss (weight > 0);
 * asking for `attention` without a grid is an error, since there is no patch to point at.
 */
export function pointerGrid(
  source: TapSource | 'auto',
  grid: readonly [number, number] | null,
  groundWeight: number,
): readonly [number, number] | null {
  if (source === 'tokens') return null;
  if (source === 'attention') {
    if (!grid) throw new InputError("taps from the attention need an encoder with a patch grid; this checkpoint's has none (use tokens)", '--tap-from');
    return grid;
  }
  return grid && groundWeight > 0 ? grid : null;
}
