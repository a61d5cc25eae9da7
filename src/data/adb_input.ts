/**
 * From an AITW action to the `input` command an Android device runs to perform it, as an argument
 * list for `adb [-s SERIAL] shell ...`. Shared by the command lines the server prints
 * (infer/adapters.ts) and the adb environment that executes them (env/adb.ts), so what is printed
 * is what is executed. Pure functions of (action, screen size).
 */
import { isTap } from './geometry.js';
import { ActionType, type AitwAction, type YX } from './types.js';

export interface ScreenSize {
  width: number;
  height: number;
}

export interface PixelPoint {
  x: number;
  y: number;
}

/** Default swipe duration in ms: slow enough to scroll, not fling far. */
export const DEFAULT_SWIPE_MS = 300;

/** Normalised [y, x] → integer pixel of a width×height image, clamped onto the image. */
export function toPixel(p: YX, width: number, height: number): PixelPoint {
  const clamp = (v: number, n: number): number => Math.min(n - 1, Math.max(0, Math.round(v * n)));
  return { x: clamp(p[1], width), y: clamp(p[0], height) };
}

/** POSIX shell single-quoting: safe for any string (a ' becomes '\''). */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_.,:@%/+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function checkScreenSize(size: ScreenSize): void {
  for (const k of ['width', 'height'] as const) {
    if (!Number.isInteger(size[k]) || size[k] < 1) throw new RangeError(`screen ${k} must be a positive integer, got ${size[k]}`);
  }
}

const ADB_KEYS: Partial<Record<number, string>> = {
  [ActionType.PRESS_BACK]: 'KEYCODE_BACK',
  [ActionType.PRESS_HOME]: 'KEYCODE_HOME',
  [ActionType.PRESS_ENTER]: 'KEYCODE_ENTER',
};

/**
 * The device-side command as arguments (`['input', 'tap', '270', '1200']`), or null for the status
 * actions, which do nothing on the device. `input text` reads `%s` as a space, so spaces become %s;
 * the text argument is quoted once for the device's shell, because adb joins its arguments into one
 * remote command line. Note `input text` types ASCII only on most Android versions.
 */
export function adbInputArgs(action: AitwAction, size: ScreenSize, swipeMs = DEFAULT_SWIPE_MS): string[] | null {
  checkScreenSize(size);
  switch (action.action_type) {
    case ActionType.DUAL_POINT: {
      const t = toPixel(action.touch_yx, size.width, size.height);
      if (isTap(action.touch_yx, action.lift_yx)) return ['input', 'tap', String(t.x), String(t.y)];
      const l = toPixel(action.lift_yx, size.width, size.height);
      return ['input', 'swipe', String(t.x), String(t.y), String(l.x), String(l.y), String(swipeMs)];
    }
    case ActionType.TYPE:
      return ['input', 'text', shellQuote(action.typed_text.replace(/ /g, '%s'))];
    case ActionType.STATUS_TASK_COMPLETE:
    case ActionType.STATUS_TASK_IMPOSSIBLE:
      return null;
    default: {
      const key = ADB_KEYS[action.action_type];
      if (!key) throw new RangeError(`no adb mapping for action type ${action.action_type}`);
      return ['input', 'keyevent', key];
    }
  }
}
