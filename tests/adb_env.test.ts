/**
 * AdbEnv against a fake `adb` (a script that records its arguments, answers screencap with a fixed
 * PNG and uiautomator with a fixed dump): the commands a real device would get. Nothing here
 * touches a device; AdbEnv is untested on hardware.
 */
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { expandInputs, readAitwEpisodes } from '../src/data/aitw.js';
import { parseSuite } from '../src/data/suite.js';
import type { AitwAction } from '../src/data/types.js';
import { AdbEnv, REMOTE_DUMP } from '../src/env/adb.js';
import { ScriptedAgent } from '../src/eval/tasks/agents.js';
import { runSuite } from '../src/eval/tasks/run_tasks.js';
import { InputError } from '../src/util/errors.js';

/** POSIX sh, so each call costs a few ms; one line per call, arguments tab-separated. */
const FAKE_ADB = `#!/bin/sh
D=$(dirname "$0")
{ for a in "$@"; do printf '%s\t' "$a"; done; printf '\n'; } >> "$D/commands.log"
[ "$1" = "-s" ] && shift 2
case "$1 $2" in
  "exec-out screencap") cat "$D/screen.png" ;;
  "shell uiautomator") echo "UI hierchary dumped to: $4" ;;
  "shell fail") echo "error: device offline" >&2; exit 1 ;;
esac
[ "$1" = pull ] && cp "$D/screen.xml" "$3"
exit 0
`;

const DUMP = `<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0"><node text="" content-desc="" bounds="[0,0][1080,2400]">
<node text="Wi-Fi" content-desc="" bounds="[0,600][1080,720]"/><node text="" content-desc="More options" bounds="[960,84][1080,231]"/></node></hierarchy>`;

let dir: string;
let adb: string;
let log: string;

const key = (action_type: AitwAction['action_type'], typed_text = ''): AitwAction => ({ action_type, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text });
const tap: AitwAction = { action_type: 4, touch_yx: [0.5, 0.25], lift_yx: [0.5, 0.25], typed_text: '' };
const swipeUp: AitwAction = { action_type: 4, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' };

async function commands(): Promise<string[][]> {
  return (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => l.split('\t').slice(0, -1));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-adb-'));
  adb = join(dir, 'adb');
  log = join(dir, 'commands.log');
  const png = join(dir, 'screen.png');
  await sharp({ create: { width: 1080, height: 2400, channels: 3, background: { r: 240, g: 240, b: 250 } } }).png().toFile(png);
  await writeFile(join(dir, 'screen.xml'), DUMP);
  await writeFile(adb, FAKE_ADB);
  await chmod(adb, 0o755);
});

describe('AdbEnv (fake adb)', () => {
  it('sends the expected commands: launch, screencap + uiautomator per screen, input per action', async () => {
    await writeFile(log, '');
    const env = new AdbEnv({ adb, serial: 'emulator-5554', settleMs: 0 });
    const [task] = parseSuite(JSON.stringify({ id: 'wifi', goal: 'open wi-fi', start_url: 'android-app://com.android.settings', success: { selector: '*', text_contains: 'Wi-Fi' } }), join(dir, 's.jsonl'));
    const first = await env.reset(task!);
    expect(first).toMatchObject({ width: 1080, height: 2400 });
    expect(first.texts.map((t) => t.text)).toEqual(['Wi-Fi', 'More options']);
    expect(first.texts[0]!.box).toEqual([0.25, 0, 0.05, 1]);
    for (const a of [tap, swipeUp, key(3, "it's on"), key(5), key(6), key(7), key(10)]) await env.step(a);
    expect(await env.check(task!.success)).toMatchObject({ ok: true });
    expect(await env.check({ selector: '*', text_contains: 'Bluetooth' })).toMatchObject({ ok: false });

    const cmds = (await commands()).map((c) => c.join(' '));
    const screen = ['-s emulator-5554 exec-out screencap -p', `-s emulator-5554 shell uiautomator dump ${REMOTE_DUMP}`, expect.stringMatching(new RegExp(`^-s emulator-5554 pull ${REMOTE_DUMP} /.+/window_dump\\.xml$`))];
    const on = (c: string): string => `-s emulator-5554 shell ${c}`;
    expect(cmds).toEqual([
      on('input keyevent KEYCODE_HOME'),
      on('monkey -p com.android.settings -c android.intent.category.LAUNCHER 1'),
      ...screen,
      on('input tap 270 1200'),
      ...screen,
      on('input swipe 540 1920 540 480 300'),
      ...screen,
      on(`input text 'it'\\''s%son'`),
      ...screen,
      on('input keyevent KEYCODE_BACK'),
      ...screen,
      on('input keyevent KEYCODE_HOME'),
      ...screen,
      on('input keyevent KEYCODE_ENTER'),
      ...screen,
      // STATUS_TASK_COMPLETE runs nothing on the device.
      ...screen,
    ]);
  });

  it('opens a URL with am start; refuses checks an Android screen cannot make; adb failures are environment errors', async () => {
    await writeFile(log, '');
    const env = new AdbEnv({ adb, settleMs: 0, uiTree: false });
    const [web, byUrl] = parseSuite(
      [
        JSON.stringify({ id: 'web', goal: 'g', start_url: 'http://127.0.0.1:8000/a b', success: { selector: '*', text_contains: 'x' } }),
        JSON.stringify({ id: 'url', goal: 'g', start_url: 'http://127.0.0.1:8000/', success: { url_endswith: '/b' } }),
      ].join('\n'),
      join(dir, 's.jsonl'),
    );
    expect((await env.reset(web!)).texts).toEqual([]);
    expect((await commands()).map((c) => c.join(' '))).toEqual(['shell input keyevent KEYCODE_HOME', "shell am start -a android.intent.action.VIEW -d 'http://127.0.0.1:8000/a b'", 'exec-out screencap -p']);
    await expect(env.reset(byUrl!)).rejects.toThrow(InputError);
    await expect(env.run(['shell', 'fail'])).rejects.toThrow(/shell fail failed: error: device offline/);
  });

  it('runs a suite: success from the UI tree, trajectories carry its texts as annotations', async () => {
    const env = new AdbEnv({ adb, settleMs: 0 });
    const tasks = parseSuite(JSON.stringify({ id: 'wifi', goal: 'open wi-fi', start_url: 'android-app://com.android.settings', success: { selector: '*', text_contains: 'Wi-Fi' } }), join(dir, 's.jsonl'));
    const out = join(dir, 'run');
    const { summary } = await runSuite({ tasks, out, agent: new ScriptedAgent(new Map([['wifi', [tap, key(10)]]])), env, quiet: true });
    expect(summary).toMatchObject({ tasks: 1, success_rate: 1, reached_rate: 1, mean_steps: 2 });
    const episodes = [];
    for await (const ep of readAitwEpisodes(await expandInputs([join(out, 'trajectories')]))) episodes.push(ep);
    expect(episodes).toHaveLength(1);
    expect(episodes[0]!.steps[0]!.annotations.text).toEqual(['Wi-Fi', 'More options']);
    expect(episodes[0]!.steps[0]!.deviceType).toBe('adb');
  });
});
