/**
 * AITW's action geometry, shared by normalisation, the model's pointer, batching and the metric: a
 * dual point is a tap or a scroll, and a scroll has a main axis. The arithmetic is float32 because
 * the reference metric (google-research's `action_matching.py`, run on jax.numpy with x64 off) is;
 * normalising with the same tests guarantees that a normalised gold action still matches the raw one.
 * See docs/design.md, "Action matching".
 */
import { ActionType, type AitwAction, type Box, type YX } from './types.js';

/** Touch and lift within this distance (inclusive) make a tap. */
export const SWIPE_DISTANCE_THRESHOLD = 0.04;

export const f32 = Math.fround;
const SWIPE_THRESHOLD_F32 = f32(SWIPE_DISTANCE_THRESHOLD);

/** float32 Euclidean distance, as `jnp.linalg.norm(jnp.array(a) - jnp.array(b))` computes it. */
export function distanceF32(a: YX, b: YX): number {
  const dy = f32(f32(a[0]) - f32(b[0]));
  const dx = f32(f32(a[1]) - f32(b[1]));
  return f32(Math.sqrt(f32(f32(dy * dy) + f32(dx * dx))));
}

/** An AITW (y, x) point in a width×height coordinate space (CSS pixels, device pixels), clamped to it, unrounded. */
export function scalePoint(p: YX, width: number, height: number): { x: number; y: number } {
  const clamp = (v: number): number => Math.min(1, Math.max(0, v));
  return { x: clamp(p[1]) * width, y: clamp(p[0]) * height };
}

/** True when a dual point is a tap: touch and lift within 0.04 (inclusive), in float32. */
export function isTap(touch: YX, lift: YX): boolean {
  return distanceF32(touch, lift) <= SWIPE_THRESHOLD_F32;
}

/** True for a DUAL_POINT action that is a tap (not a scroll). */
export function isTapAction(a: AitwAction): boolean {
  return a.action_type === ActionType.DUAL_POINT && isTap(a.touch_yx, a.lift_yx);
}

/**
 * The main axis of a gesture, 0 = y, 1 = x: argmax(|Δy|, |Δx|) in float32 with the first index
 * winning ties (and NaN counting as the maximum, as numpy's argmax does).
 */
export function mainAxis(touch: YX, lift: YX): 0 | 1 {
  const ay = Math.abs(f32(f32(lift[0]) - f32(touch[0])));
  const ax = Math.abs(f32(f32(lift[1]) - f32(touch[1])));
  if (Number.isNaN(ay)) return 0;
  if (Number.isNaN(ax)) return 1;
  return ax > ay ? 1 : 0;
}

/** Whether the box (y, x, h, w) holds the point, edges included. */
export function boxHolds([y, x, h, w]: Box, p: YX): boolean {
  return p[0] >= y && p[0] <= y + h && p[1] >= x && p[1] <= x + w;
}

/** How close (normalised) a label's box must sit under an icon's, and how well centred, to name it. */
const LABEL_GAP = 0.03;
const LABEL_ALIGN = 0.03;

/** Whether the text box `label` names `icon`: it sits directly under it, centred on it, as app grids (launchers, drawers, share sheets) lay labels out. */
export function labels([ly, lx, , lw]: Box, [y, x, h, w]: Box): boolean {
  return Math.abs(x + w / 2 - (lx + lw / 2)) < LABEL_ALIGN && ly - (y + h) >= 0 && ly - (y + h) < LABEL_GAP;
}
