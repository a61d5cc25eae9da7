/**
 * From an AITW action to what executes it: an `adb shell input ...` command line for Android, or a
 * PyAutoGUI line (OmniACT's desktop action space: click, scroll/hscroll, write, press, hotkey).
 * Pure functions of (action, screen size); points are converted with the same rounding as the
 * predictor's pixel output, so what is drawn is what is executed.
 */
import { adbInputArgs, checkScreenSize as checkSize, DEFAULT_SWIPE_MS, shellQuote, toPixel, type ScreenSize } from '../data/adb_input.js';
import { scrollDirection } from '../data/normalize.js';
import { ActionType, type AitwAction } from '../data/types.js';
import { isTap } from '../data/geometry.js';

export { shellQuote, type ScreenSize };

export interface AdbOptions {
  /** Swipe duration in ms (default 300: slow enough to scroll, not fling far). */
  swipeMs?: number;
  /** adb's device selector, e.g. 'emulator-5554' (adds `-s <serial>`). */
  serial?: string;
}

export interface PyAutoGuiOptions {
  /** Wheel clicks per scroll (default 5). */
  scrollClicks?: number;
}


/**
 * One shell line that performs the action on an Android device: the device-side arguments of
 * data/adb_input.ts, each quoted once more for the local shell. Status actions do nothing on the
 * device: they give a shell comment.
 */
export function toAdbCommand(action: AitwAction, size: ScreenSize, opts: AdbOptions = {}): string {
  const args = adbInputArgs(action, size, opts.swipeMs ?? DEFAULT_SWIPE_MS);
  if (args === null) {
    return action.action_type === ActionType.STATUS_TASK_COMPLETE
      ? '# STATUS_TASK_COMPLETE: the task is done, nothing to execute'
      : '# STATUS_TASK_IMPOSSIBLE: the agent gives up, nothing to execute';
  }
  const adb = opts.serial ? `adb -s ${shellQuote(opts.serial)} shell` : 'adb shell';
  return `${adb} ${args.map(shellQuote).join(' ')}`;
}

/** A Python string literal (JSON string syntax is a subset of Python's). */
function pyString(s: string): string {
  return JSON.stringify(s);
}

/**
 * One PyAutoGUI line for a desktop. A scroll is named by the finger's direction (AITW), so a finger
 * moving up shows content further down: wheel down (negative clicks); left shows content to the
 * right: hscroll positive. Back/home have no universal desktop key: we use the browser/file
 * manager's back (alt+left) and the Home key; status actions give a Python comment.
 */
export function toPyAutoGui(action: AitwAction, size: ScreenSize, opts: PyAutoGuiOptions = {}): string {
  checkSize(size);
  const clicks = opts.scrollClicks ?? 5;
  switch (action.action_type) {
    case ActionType.DUAL_POINT: {
      const t = toPixel(action.touch_yx, size.width, size.height);
      if (isTap(action.touch_yx, action.lift_yx)) return `pyautogui.click(${t.x}, ${t.y})`;
      const dir = scrollDirection(action.touch_yx, action.lift_yx);
      const at = `x=${t.x}, y=${t.y}`;
      if (dir === 'up') return `pyautogui.scroll(${-clicks}, ${at})`;
      if (dir === 'down') return `pyautogui.scroll(${clicks}, ${at})`;
      if (dir === 'left') return `pyautogui.hscroll(${clicks}, ${at})`;
      return `pyautogui.hscroll(${-clicks}, ${at})`;
    }
    case ActionType.TYPE:
      return `pyautogui.write(${pyString(action.typed_text)})`;
    case ActionType.PRESS_BACK:
      return 'pyautogui.hotkey("alt", "left")';
    case ActionType.PRESS_HOME:
      return 'pyautogui.press("home")';
    case ActionType.PRESS_ENTER:
      return 'pyautogui.press("enter")';
    case ActionType.STATUS_TASK_COMPLETE:
      return '# STATUS_TASK_COMPLETE: the task is done, nothing to execute';
    case ActionType.STATUS_TASK_IMPOSSIBLE:
      return '# STATUS_TASK_IMPOSSIBLE: the agent gives up, nothing to execute';
    default:
      throw new RangeError(`no PyAutoGUI mapping for action type ${String(action.action_type)}`);
  }
}
