import { pointlessAction } from '../normalize.js';
import { ActionType, type AitwAction, type YX } from '../types.js';
import type { Rect } from './layout.js';
import type { Rng } from '../../util/rng.js';
import type { ScreenSize } from './world.js';

const q4 = (v: number): number => Math.round(v * 1e4) / 1e4;
const clamp01 = (v: number): number => Math.min(0.999, Math.max(0.001, v));


/** A tap near the centre of `rect` (jitter up to 20% of its size each way), as a DUAL_POINT with lift = touch. */
export function tapAction(rect: Rect, size: ScreenSize, rng: Rng): AitwAction {
  const x = rect.x + rect.w * (0.5 + rng.range(-0.2, 0.2));
  const y = rect.y + rect.h * (0.5 + rng.range(-0.2, 0.2));
  const p: YX = [q4(clamp01(y / size.height)), q4(clamp01(x / size.width))];
  return { action_type: ActionType.DUAL_POINT, touch_yx: p, lift_yx: [p[0], p[1]], typed_text: '' };
}

/**
 * A swipe as a finger makes it: starts on one side, ends on the other, with some drift across.
 * `dir` is the finger's direction ('up' scrolls content down into view).
 */
export function swipeAction(dir: 'up' | 'down' | 'left' | 'right', rng: Rng): AitwAction {
  const near = rng.range(0.62, 0.82);
  const far = rng.range(0.18, 0.38);
  const across = rng.range(0.35, 0.65);
  const drift = rng.range(-0.04, 0.04);
  let touch: YX;
  let lift: YX;
  switch (dir) {
    case 'up':
      touch = [near, across];
      lift = [far, across + drift];
      break;
    case 'down':
      touch = [far, across];
      lift = [near, across + drift];
      break;
    case 'left':
      touch = [across, near];
      lift = [across + drift, far];
      break;
    case 'right':
      touch = [across, far];
      lift = [across + drift, near];
      break;
  }
  return { action_type: ActionType.DUAL_POINT, touch_yx: [q4(touch[0]), q4(touch[1])], lift_yx: [q4(lift[0]), q4(lift[1])], typed_text: '' };
}

export const typeAction = (text: string): AitwAction => pointlessAction(ActionType.TYPE, text);
export const enterAction = (): AitwAction => pointlessAction(ActionType.PRESS_ENTER);
export const backAction = (): AitwAction => pointlessAction(ActionType.PRESS_BACK);
export const homeAction = (): AitwAction => pointlessAction(ActionType.PRESS_HOME);
export const completeAction = (): AitwAction => pointlessAction(ActionType.STATUS_TASK_COMPLETE);
