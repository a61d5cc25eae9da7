import * as tf from '@tensorflow/tfjs-core';
import type { AitwAction, Box, YX } from '../data/types.js';
import { isTapAction } from '../data/geometry.js';
import { patchBox, type PatchLayout } from '../screen/vision/encoder.js';
import { meanTokenAttention } from './grounding.js';
import { dense, stopGradient } from './layers.js';
import { InputError } from '../util/errors.js';

/*
 * Where a tap lands (our addition, the reading side of the grounding loss): the decoder still
 * chooses the action and its coordinate tokens, but the tap's point is the centre of a screen token
 * — a patch's cell or a text item's box:
 *   attention:  arg-max_k ā_k                              (ā as in grounding.ts: the interaction's look)
 *   pointer:    arg-max_k π_k,  π = softmax((W_p h) Kᵀ/√d + log(ā + ε))
 * where h is the decoder's state at the step that writes the tap's first coordinate and K the
 * screen tokens (keys of the interaction). Why: the grounding loss trains ā to sit on the tap target
 * directly, while the coordinate tokens learn the place only through the decoder; but ā is the
 * encoder's look, made before any decision, and it cannot tell the second of three "Add to cart"
 * buttons from the first. The pointer asks the decoder, which has read the goal, the history and its
 * own plan, to refine that look; W_p starts at zero, so an untrained pointer is the attention's.
 * Both need screen tokens with places, so `auto` uses the pointer for checkpoints that have one and
 * the attention for those trained with the grounding loss on an encoder with a patch grid.
 */

/** 'pointer' moves a pointed patch's tap by the offset head where the checkpoint has one (tap_offset.ts); 'pointer-centre' keeps the token's centre. */
export type TapSource = 'tokens' | 'attention' | 'pointer' | 'pointer-centre';
export const TAP_SOURCES: readonly (TapSource | 'auto')[] = ['auto', 'pointer', 'pointer-centre', 'attention', 'tokens'];

/** ε in log(ā + ε). */
const PRIOR_FLOOR = 1e-6;

/**
 * π [B, S]: the decoder pointer over the screen tokens. hidden [B, d] (the decoder's states at the
 * tap's step), keys [B, S, d] with their mask [B, S] (undefined: all real), prior ā [B, S], W_p [d, d].
 */
export function tapPointer(hidden: tf.Tensor2D, keys: tf.Tensor3D, mask: tf.Tensor2D | undefined, prior: tf.Tensor2D, weight: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const d = keys.shape[2];
    const q = tf.expandDims(dense(hidden, weight), 1); // [B, 1, d]
    let scores = tf.reshape(tf.matMul(q, keys, false, true), [keys.shape[0], keys.shape[1]]); // [B, S]
    // The log-prior passes no gradient: the grounding loss alone trains ā.
    scores = tf.add(tf.mul(scores, 1 / Math.sqrt(d)), tf.log(tf.add(stopGradient(prior), PRIOR_FLOOR)));
    if (mask) scores = tf.add(scores, tf.mul(tf.sub(1, tf.cast(mask, 'float32')), -1e9));
    return tf.softmax(scores) as tf.Tensor2D;
  });
}

/** Per row, arg-max_k of a distribution [B, S] over the screen tokens (the first on a tie), leaving out the tokens `exclude[b]` names. */
export function argmaxTokens(probs: tf.Tensor2D, exclude?: readonly (readonly number[])[]): number[] {
  const [B, S] = probs.shape;
  const p = probs.dataSync().slice();
  exclude?.forEach((ks, b) => ks.forEach((k) => (p[b * S + k] = -Infinity)));
  return Array.from({ length: B }, (_, b) => {
    let best = 0;
    for (let k = 1; k < S; k++) if (p[b * S + k]! > p[b * S + best]!) best = k;
    return best;
  });
}

/** Per row, the centre of arg-max_k of a distribution [B, S] over the screen tokens (without `exclude[b]`). */
export function argmaxCentres(probs: tf.Tensor2D, layouts: readonly ScreenLayout[], exclude?: readonly (readonly number[])[]): YX[] {
  return argmaxTokens(probs, exclude).map((k, b) => tokenCentre(layouts[b]!, k));
}

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

/** P: the patch tokens of a screen, padding included; its text items' tokens follow them. */
export function patchTokens(l: ScreenLayout): number {
  return l.patches.grid[0] * l.patches.grid[1];
}

/** Centre of screen token k: patch k, or text item k − P. */
export function tokenCentre(l: ScreenLayout, k: number): YX {
  const P = patchTokens(l);
  if (k < P) return patchCentre(k, l.patches);
  const box = l.texts[k - P];
  if (!box) throw new RangeError(`screen token ${k} is neither one of ${P} patches nor one of ${l.texts.length} text items`);
  return centreOf(box);
}

/** Per row, the centre of arg-max_k ā_k (without the tokens `exclude[b]`); attention [B, L, S] over the screen tokens, inputMask [B, L]. */
export function attentionPointer(attention: tf.Tensor3D, inputMask: tf.Tensor2D, layouts: readonly ScreenLayout[], exclude?: readonly (readonly number[])[]): YX[] {
  const mean = meanTokenAttention(attention, inputMask);
  try {
    return argmaxCentres(mean, layouts, exclude);
  } finally {
    mean.dispose();
  }
}

/** The action with a tap's touch and lift moved to `yx`; any other action unchanged. */
export function tapAt(action: AitwAction, yx: YX): AitwAction {
  return isTapAction(action) ? { ...action, touch_yx: yx, lift_yx: [...yx] as YX } : action;
}

/**
 * Where taps are read from. `auto` picks the pointer for a checkpoint that has one, else the
 * attention when the encoder has a grid and the checkpoint was trained with the grounding loss
 * (weight > 0), else the coordinate tokens. Asking for the pointer or the attention without a grid is
 * an error (there is no patch to point at), and for the pointer of a checkpoint without one.
 */
export function tapSource(source: TapSource | 'auto', c: { grid: readonly [number, number] | null; groundWeight: number; pointer: boolean }): TapSource {
  if (source === 'tokens') return 'tokens';
  if (source !== 'auto' && !c.grid) throw new InputError(`taps from the ${source} need an encoder with a patch grid; this checkpoint's has none (use tokens)`, '--tap-from');
  if ((source === 'pointer' || source === 'pointer-centre') && !c.pointer) throw new InputError('this checkpoint has no tap pointer (trained before it, or with --pointer-weight 0); use attention or tokens', '--tap-from');
  if (source !== 'auto') return source;
  if (!c.grid) return 'tokens';
  if (c.pointer) return 'pointer';
  return c.groundWeight > 0 ? 'attention' : 'tokens';
}
