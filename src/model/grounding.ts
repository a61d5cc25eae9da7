import * as tf from '@tensorflow/tfjs-core';
import { fusedGroundingLoss, fusedMeanTokenAttention, hasFused } from '../native/fused_ops.js';
import type { Box, YX } from '../data/types.js';
import { boxHolds, labels } from '../data/geometry.js';
import type { PatchLayout } from '../screen/vision/encoder.js';

/*
 * Grounding supervision for the screen attention (our addition; the paper trains on the action
 * tokens alone). On a tap step the gold point says which screen tokens the goal is about, so we ask
 * the language tokens, on average, to look there:
 *   ā_k    = Σ_t m_t a_tk / Σ_t m_t           (mean attention over real tokens)
 *   L_gnd  = −log Σ_{k ∈ S} ā_k               (S: patches around the gold tap, text items under it)
 * averaged over the tap rows of the batch. The mean over tokens leaves the model free to choose
 * which tokens do the looking; only the attention's total mass near the target is asked for.
 * Why: through the decoder alone the attention gets a weak, indirect signal and stays diffuse;
 * this gives it the direct one.
 */

/**
 * The patch under the tap and the patches whose centre lies within `radius` patches of it (row-major
 * indices into the layout's grid; padding patches never count). The grounding loss uses radius 1 (the
 * patch under the tap and up to four neighbours): a target straddling patch borders is covered
 * whichever side it is on. Radius 0 is the patch under the tap alone; radii above 1 reach no further.
 */
export function groundingPatches(tap: YX, layout: PatchLayout, radius = 1): number[] {
  const y = tap[0] / layout.rowHeight;
  const x = tap[1] / layout.colWidth;
  const cols = layout.grid[1];
  // A tap on the screen's last edge (y or x = 1) is on the last row or column.
  const [row, col] = [Math.min(layout.rows - 1, Math.floor(y)), Math.min(layout.cols - 1, Math.floor(x))];
  const out: number[] = [];
  for (let r = Math.max(0, row - 1); r <= Math.min(layout.rows - 1, row + 1); r++) {
    for (let c = Math.max(0, col - 1); c <= Math.min(layout.cols - 1, col + 1); c++) {
      if ((r === row && c === col) || (y - r - 0.5) ** 2 + (x - c - 0.5) ** 2 <= radius ** 2) out.push(r * cols + c);
    }
  }
  return out;
}

/** Text items (indices) whose box holds the tap: a tap on a labelled control lands inside its label. */
export function groundingTexts(tap: YX, boxes: readonly Box[]): number[] {
  return boxes.flatMap((b, i) => (boxHolds(b, tap) ? [i] : []));
}

/** Text items (indices) that label an icon under the tap: a tap on a launcher icon is a tap on the thing its label names. */
export function groundingLabels(tap: YX, icons: readonly Box[], texts: readonly Box[]): number[] {
  const under = icons.filter((icon) => boxHolds(icon, tap));
  return texts.flatMap((t, i) => (under.some((icon) => labels(t, icon)) ? [i] : []));
}

/** ā [B, S]: the screen attention [B, L, S] over the screen tokens, averaged over the real tokens (inputMask [B, L], 1 = real). */
export function meanTokenAttention(attention: tf.Tensor3D, inputMask: tf.Tensor2D): tf.Tensor2D {
  if (hasFused('meanTokenAttention')) return fusedMeanTokenAttention(attention, inputMask);
  return tf.tidy(() => {
    const m = tf.cast(inputMask, 'float32');
    const tokens = tf.maximum(tf.sum(m, 1, true), 1); // [B, 1]
    return tf.div(tf.squeeze(tf.matMul(tf.expandDims(m, 1), attention), [1]), tokens) as tf.Tensor2D;
  });
}

/**
 * L_gnd for a batch: attention [B, L, S] over the screen tokens, inputMask [B, L] (1 = real
 * token), targets [B, S] (1 on the target set, all zero on rows without a tap, which do not count).
 * 0 when no row has a target.
 */
export function groundingLoss(attention: tf.Tensor3D, inputMask: tf.Tensor2D, targets: tf.Tensor2D): tf.Scalar {
  if (hasFused('groundingLoss')) return fusedGroundingLoss(attention, inputMask, targets);
  return tf.tidy(() => {
    const hit = tf.sum(tf.mul(meanTokenAttention(attention, inputMask), targets), 1); // [B]
    const counted = tf.cast(tf.greater(tf.sum(targets, 1), 0), 'float32');
    const perRow = tf.mul(tf.neg(tf.log(tf.add(hit, 1e-6))), counted);
    return tf.div(tf.sum(perRow), tf.maximum(tf.sum(counted), 1)) as tf.Scalar;
  });
}
