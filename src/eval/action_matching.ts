/**
 * AITW action matching, bit-for-bit with google-research's reference
 * `android_in_the_wild/action_matching.py` (Auto-UI ships an identical copy) as Auto-UI runs it.
 *
 * What the reference does, quirks included (each one is pinned by a test):
 * - Precision: the reference runs on jax.numpy with JAX's default x64-disabled config, so every
 *   point, distance, delta and enlarged box is float32. We emulate it with `Math.fround` after each
 *   operation (IEEE float32 + − × √ are exactly reproduced by rounding the double result once).
 *   Annotation boxes arrive as float64 numpy arrays (Auto-UI builds them with `np.array(float_list)`),
 *   so the box enlargement arithmetic is float64 and only its result is rounded to float32.
 * - Tap vs swipe: a dual point is a tap when ‖lift − touch‖ ≤ 0.04 (inclusive).
 * - Box enlargement by 1.4: each side moves out by 0.7·h (or 0.7·w), so the size becomes 2.4·h
 *   ("1.4 == 240% total increase" in the reference's docstring). Then top/left are clamped at 0
 *   WITHOUT shrinking the size, so a box near the top/left edge is pushed down/right (its bottom
 *   ends at 2.4·h instead of y + 1.7·h), and the SIZE is clamped at 1 rather than the bottom/right
 *   edge, so a box may reach past the screen. There is no minimum-size rule: a tiny box stays tiny.
 * - Containment is inclusive on all four edges, with bottom = top + height computed in float32.
 * - Two taps match when some enlarged box holds both touch points, or when the touch points are
 *   within 0.14 (inclusive). Lift points of taps are ignored.
 * - Two swipes match when their main axes agree: argmax(|Δy|, |Δx|) with Δ = lift − touch; a tie
 *   goes to y (numpy argmax takes the first maximum). Direction along the axis is NOT compared.
 * - If either side is not DUAL_POINT only the action types are compared (so DUAL_POINT vs
 *   anything else never matches). A tap never matches a swipe.
 * - No annotations at all: the reference computes the box test for every pair and `jnp.max` over
 *   an empty array raises; Auto-UI's evaluation catches it and counts the step as a miss. We return
 *   false for every pair on such a screen, even two PRESS_BACKs.
 * The result is symmetric in its two actions, so argument order (pred, gold) only documents intent;
 * it mirrors the reference's order (action_1 = prediction, action_2 = gold in Auto-UI's main.py).
 */
import { distanceF32, f32, isTap, mainAxis } from '../data/geometry.js';
import { ActionType, type AitwAction, type Box, type YX } from '../data/types.js';

export const TAP_DISTANCE_THRESHOLD = 0.14;
export const ANNOTATION_AUGMENT_FRACTION = 1.4;

const TAP_THRESHOLD_F32 = f32(TAP_DISTANCE_THRESHOLD);

/** The reference's box enlargement (see the module comment for its clamping quirks), result in float32. */
export function enlargeBox(box: Box, fraction = ANNOTATION_AUGMENT_FRACTION): Box {
  const [y, x, h, w] = box;
  const hc = fraction * h;
  const wc = fraction * w;
  return [f32(Math.max(0, y - hc / 2)), f32(Math.max(0, x - wc / 2)), f32(Math.min(1, h + hc)), f32(Math.min(1, w + wc))];
}

/** Inclusive containment of a point in a float32 box (y, x, h, w). */
export function yxInBox(yx: YX, box: Box): boolean {
  const y = f32(yx[0]);
  const x = f32(yx[1]);
  const [top, left, h, w] = box;
  return y >= top && y <= f32(top + h) && x >= left && x <= f32(left + w);
}

function tapsMatch(a: YX, b: YX, annotations: readonly Box[]): boolean {
  for (const box of annotations) {
    const big = enlargeBox(box);
    if (yxInBox(a, big) && yxInBox(b, big)) return true;
  }
  return distanceF32(a, b) <= TAP_THRESHOLD_F32;
}

/**
 * The AITW screen-wise action match. `annotations` are the gold screen's UI boxes [y, x, h, w].
 * Agrees with the reference on every input; on a screen with no annotations (where the reference
 * raises) it returns false, as Auto-UI's evaluation does.
 */
export function checkActionsMatch(pred: AitwAction, gold: AitwAction, annotations: readonly Box[]): boolean {
  if (annotations.length === 0) return false;
  if (pred.action_type !== ActionType.DUAL_POINT || gold.action_type !== ActionType.DUAL_POINT) {
    return pred.action_type === gold.action_type;
  }
  const predTap = isTap(pred.touch_yx, pred.lift_yx);
  if (predTap !== isTap(gold.touch_yx, gold.lift_yx)) return false;
  if (predTap) return tapsMatch(pred.touch_yx, gold.touch_yx, annotations);
  return mainAxis(pred.touch_yx, pred.lift_yx) === mainAxis(gold.touch_yx, gold.lift_yx);
}
