import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { AitwAction, YX } from '../src/data/types.js';
import { shellQuote, toAdbCommand, toPyAutoGui } from '../src/infer/adapters.js';

const act = (action_type: AitwAction['action_type'], touch: YX = [-1, -1], lift: YX = touch, typed_text = ''): AitwAction => ({ action_type, touch_yx: touch, lift_yx: lift, typed_text });
const phone = { width: 1080, height: 2400 };
const desktop = { width: 1920, height: 1080 };

describe('adb', () => {
  test.each([
    [act(4, [0.5, 0.25]), 'adb shell input tap 270 1200'],
    [act(4, [0.1, 0.9], [0.11, 0.9]), 'adb shell input tap 972 240'],
    [act(4, [0.8, 0.5], [0.2, 0.5]), 'adb shell input swipe 540 1920 540 480 300'],
    [act(4, [0.5, 0.2], [0.5, 0.8]), 'adb shell input swipe 216 1200 864 1200 300'],
    [act(5), 'adb shell input keyevent KEYCODE_BACK'],
    [act(6), 'adb shell input keyevent KEYCODE_HOME'],
    [act(7), 'adb shell input keyevent KEYCODE_ENTER'],
    [act(3, undefined, undefined, 'hello'), 'adb shell input text hello'],
    [act(3, undefined, undefined, 'hello world'), 'adb shell input text hello%sworld'],
    [act(10), '# STATUS_TASK_COMPLETE: the task is done, nothing to execute'],
    [act(11), '# STATUS_TASK_IMPOSSIBLE: the agent gives up, nothing to execute'],
  ])('%j → %s', (a, line) => {
    expect(toAdbCommand(a, phone)).toBe(line);
  });

  test('corner points stay on the screen; serial and swipe time are options', () => {
    expect(toAdbCommand(act(4, [1, 1]), phone)).toBe('adb shell input tap 1079 2399');
    expect(toAdbCommand(act(4, [0, 0]), phone)).toBe('adb shell input tap 0 0');
    expect(toAdbCommand(act(4, [0.2, 0.5], [0.8, 0.5]), phone, { serial: 'emulator-5554', swipeMs: 500 })).toBe('adb -s emulator-5554 shell input swipe 540 480 540 1920 500');
  });

  test('typed text survives both shells (local, then the device shell adb runs)', () => {
    // Stand-ins: `adb` hands its arguments to a second shell as one command line (as adb shell
    // does), where `input text` prints its argument with %s turned back into spaces.
    const run = (line: string): string =>
      execFileSync('bash', ['-c', `adb() { shift; sh -c "input() { shift; printf '%s' \\"\\$1\\" | sed 's/%s/ /g'; }; $*"; }; ${line}`], { encoding: 'utf8' });
    for (const text of [`it's "quoted" $HOME \`x\` \\ ; & | * ?`, 'a  b', "'", 'ü 🙂']) {
      expect(run(toAdbCommand(act(3, undefined, undefined, text), phone))).toBe(text);
    }
  });

  test('shellQuote output is one word for bash, whatever the string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => !s.includes('\0')), (s) => {
        const out = execFileSync('bash', ['-c', `printf '%s' ${shellQuote(s)}`], { encoding: 'utf8' });
        return out === s;
      }),
      { numRuns: 25 },
    );
  });
});

describe('PyAutoGUI', () => {
  test.each([
    [act(4, [0.5, 0.25]), 'pyautogui.click(480, 540)'],
    // finger up = content moves up = wheel down
    [act(4, [0.8, 0.5], [0.2, 0.5]), 'pyautogui.scroll(-5, x=960, y=864)'],
    [act(4, [0.2, 0.5], [0.8, 0.5]), 'pyautogui.scroll(5, x=960, y=216)'],
    [act(4, [0.5, 0.8], [0.5, 0.2]), 'pyautogui.hscroll(5, x=1536, y=540)'],
    [act(4, [0.5, 0.2], [0.5, 0.8]), 'pyautogui.hscroll(-5, x=384, y=540)'],
    [act(3, undefined, undefined, 'Seattle, WA'), 'pyautogui.write("Seattle, WA")'],
    [act(3, undefined, undefined, 'say "hi"\n'), 'pyautogui.write("say \\"hi\\"\\n")'],
    [act(5), 'pyautogui.hotkey("alt", "left")'],
    [act(6), 'pyautogui.press("home")'],
    [act(7), 'pyautogui.press("enter")'],
    [act(10), '# STATUS_TASK_COMPLETE: the task is done, nothing to execute'],
  ])('%j → %s', (a, line) => {
    expect(toPyAutoGui(a, desktop)).toBe(line);
  });

  test('scroll amount is an option; bad screen sizes are refused', () => {
    expect(toPyAutoGui(act(4, [0.8, 0.5], [0.2, 0.5]), desktop, { scrollClicks: 2 })).toBe('pyautogui.scroll(-2, x=960, y=864)');
    expect(() => toPyAutoGui(act(5), { width: 0, height: 10 })).toThrow(/width/);
    expect(() => toAdbCommand(act(5), { width: 10, height: 1.5 })).toThrow(/height/);
  });
});
