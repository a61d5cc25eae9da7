/**
 * Auto-UI's preprocessing, as pure functions: coordinate normalisation (paper §3.3) and the
 * chain-of-action windows (previous actions, future plan).
 *
 * Direction convention (Auto-UI's `utils_data.py`, and ours): a scroll is named by the way the
 * finger moves, Δ = lift − touch with points (y, x) and y growing downwards. "up" means the finger
 * moves up the screen (lift y < touch y), which scrolls the content down — we keep the name of the
 * gesture, not of the content motion. The main axis and the tap test are exactly the ones action
 * matching uses (float32, ties to y), so a normalised gold action always matches the raw one.
 */
import { isTap, mainAxis } from './geometry.js';
import { ActionType, type ActionTypeId, type AitwAction, type YX } from './types.js';

export type ScrollDirection = 'up' | 'down' | 'left' | 'right';

/**
 * Fixed points per direction, from the paper's table. Auto-UI's code maps left/right onto the y
 * axis ([0.8,0.5]→[0.2,0.5]), which turns a horizontal gold swipe into a vertical one; the paper's
 * x-axis mapping keeps the main axis, hence the gesture's meaning.
 */
export const SCROLL_POINTS: Readonly<Record<ScrollDirection, readonly [YX, YX]>> = {
  up: [[0.8, 0.5], [0.2, 0.5]],
  down: [[0.2, 0.5], [0.8, 0.5]],
  left: [[0.5, 0.8], [0.5, 0.2]],
  right: [[0.5, 0.2], [0.5, 0.8]],
};

const UNUSED: YX = [-1, -1];

/** Finger direction of a gesture along its main axis (float32 deltas, as in Auto-UI). */
export function scrollDirection(touch: YX, lift: YX): ScrollDirection {
  const axis = mainAxis(touch, lift);
  const delta = Math.fround(Math.fround(lift[axis]) - Math.fround(touch[axis]));
  if (axis === 0) return delta < 0 ? 'up' : 'down';
  return delta < 0 ? 'left' : 'right';
}

/**
 * Python's `round(x, 4)`: round half to even on the exact binary value, then the nearest double.
 * Hand-written because `Math.round(x * 1e4) / 1e4` both mis-rounds after the multiplication and
 * rounds exact halves (e.g. 0.03125) up; this keeps our tap targets identical to Auto-UI's.
 */
export function roundTo4(x: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e15) return x;
  // toFixed(100) is the exact decimal expansion of any double ≥ 2^-48; smaller ones round to 0 anyway.
  const [intPart, frac] = Math.abs(x).toFixed(100).split('.') as [string, string];
  const rest = frac.slice(4);
  const half = '5'.padEnd(rest.length, '0');
  let scaled = BigInt(intPart + frac.slice(0, 4));
  if (rest > half || (rest === half && scaled % 2n === 1n)) scaled += 1n;
  const digits = scaled.toString().padStart(5, '0');
  const value = Number(`${digits.slice(0, -4)}.${digits.slice(-4)}`);
  return x < 0 || Object.is(x, -0) ? -value : value;
}

/** An action without a point (a key, a typed text, a status), its points stored as AITW stores unused ones. */
export function pointlessAction(action_type: ActionTypeId, typed_text = ''): AitwAction {
  return { action_type, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text };
}

/**
 * Paper §3.3 coordinate normalisation. Taps keep their touch point rounded to 4 decimals, with
 * lift = touch; scrolls become the fixed points of their direction; other actions get [-1,-1].
 * typed_text is kept for TYPE only (Auto-UI's extra quote/backslash stripping belongs to the
 * serialisation of targets, not here).
 */
export function normalizeAction(a: AitwAction): AitwAction {
  const typed_text = a.action_type === ActionType.TYPE ? a.typed_text : '';
  if (a.action_type !== ActionType.DUAL_POINT) {
    return { action_type: a.action_type, touch_yx: [...UNUSED], lift_yx: [...UNUSED], typed_text };
  }
  if (isTap(a.touch_yx, a.lift_yx)) {
    const touch: YX = [roundTo4(a.touch_yx[0]), roundTo4(a.touch_yx[1])];
    return { action_type: a.action_type, touch_yx: touch, lift_yx: [...touch], typed_text };
  }
  const [touch, lift] = SCROLL_POINTS[scrollDirection(a.touch_yx, a.lift_yx)];
  return { action_type: a.action_type, touch_yx: [...touch], lift_yx: [...lift], typed_text };
}

function checkStep(actions: readonly unknown[], stepIndex: number): void {
  if (!Number.isInteger(stepIndex) || stepIndex < 0 || stepIndex > actions.length) {
    throw new RangeError(`step index ${stepIndex} outside 0..${actions.length}`);
  }
}

/** The episode's actions before `stepIndex`, the last `max` of them, oldest first. */
export function historyOf(actions: readonly AitwAction[], stepIndex: number, max = 8): AitwAction[] {
  checkStep(actions, stepIndex);
  return actions.slice(Math.max(0, stepIndex - max), stepIndex);
}

/** The action types of the step at `stepIndex` and the ones after it, at most `max`. */
export function planOf(actions: readonly AitwAction[], stepIndex: number, max = 4): ActionTypeId[] {
  checkStep(actions, stepIndex);
  return actions.slice(stepIndex, stepIndex + max).map((a) => a.action_type);
}
