/**
 * AdbEnv: an Android device or emulator over `adb`. Screenshots come from `exec-out screencap -p`,
 * screen texts from `uiautomator dump` (pulled and parsed by screen/text/ui_tree.ts), and actions
 * run as `shell input ...` with the arguments data/adb_input.ts builds (the same lines the server
 * prints). Commands run without a local shell (execFile), so only the device's shell parses them.
 *
 * Tasks: reset() presses HOME, then opens start_url: `android-app://PACKAGE` launches that app,
 * any other URL goes to `am start -a android.intent.action.VIEW -d URL` (the device must be able to
 * open it: file:// paths of this machine are not on the device). Success checks: Android screens
 * have no URL or DOM, so only {"selector": "*", "text_contains": T} (T shown anywhere on the
 * screen, as the UI tree reports it) can be checked; other forms are refused at reset().
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adbInputArgs, DEFAULT_SWIPE_MS, shellQuote } from '../data/adb_input.js';
import type { SuccessCheck, TaskSpec } from '../data/suite.js';
import type { AitwAction } from '../data/types.js';
import { parseUiTree } from '../screen/text/ui_tree.js';
import { InputError } from '../util/errors.js';
import { sleep } from '../util/sleep.js';
import { EnvironmentError, observationFromPng, type CheckResult, type Environment, type Observation, type PageState } from './environment.js';

export interface AdbEnvOptions {
  /** The adb binary (default 'adb' on PATH). */
  adb?: string;
  /** Device serial (adds `-s SERIAL` to every command). */
  serial?: string;
  swipeMs?: number;
  /** Wait after an action before the screenshot, ms (default 800: Android animations). */
  settleMs?: number;
  /** Read screen texts with uiautomator after every action (default true). */
  uiTree?: boolean;
  /** Limit for one adb command, ms (default 20 000). */
  timeoutMs?: number;
}

/** Where the dump is written on the device before it is pulled. */
export const REMOTE_DUMP = '/sdcard/autoui_window_dump.xml';

/** True when the check can be evaluated on an Android screen (see the header). */
export function adbCanCheck(success: SuccessCheck): boolean {
  return 'selector' in success && 'text_contains' in success && success.selector === '*';
}

export class AdbEnv implements Environment {
  readonly kind = 'adb';
  private last: Observation | undefined;

  constructor(private readonly opts: AdbEnvOptions = {}) {}

  /** Runs `adb [-s SERIAL] ARGS`; stdout as bytes. */
  run(args: readonly string[]): Promise<Buffer> {
    const full = [...(this.opts.serial ? ['-s', this.opts.serial] : []), ...args];
    const adb = this.opts.adb ?? 'adb';
    return new Promise((resolve, reject) => {
      execFile(adb, full, { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024, timeout: this.opts.timeoutMs ?? 20_000 }, (err, stdout, stderr) => {
        if (err) {
          const why = stderr.toString('utf8').trim().split('\n')[0] || err.message.split('\n')[0];
          reject(new EnvironmentError(`${adb} ${full.join(' ')} failed: ${why}`));
        } else resolve(stdout);
      });
    });
  }

  async reset(task: TaskSpec): Promise<Observation> {
    if (!adbCanCheck(task.success)) {
      throw new InputError(`an Android screen can only check {"selector": "*", "text_contains": ...}, not ${JSON.stringify(task.success)}`, `task ${task.id} success`);
    }
    await this.run(['shell', 'input', 'keyevent', 'KEYCODE_HOME']);
    const app = /^android-app:\/\/([A-Za-z0-9_.]+)\/?$/.exec(task.start_url);
    if (app) await this.run(['shell', 'monkey', '-p', app[1]!, '-c', 'android.intent.category.LAUNCHER', '1']);
    else await this.run(['shell', 'am', 'start', '-a', 'android.intent.action.VIEW', '-d', shellQuote(task.start_url)]);
    return this.observe();
  }

  async step(action: AitwAction): Promise<Observation> {
    const size = this.last ?? (await this.observe());
    const args = adbInputArgs(action, size, this.opts.swipeMs ?? DEFAULT_SWIPE_MS);
    if (args) await this.run(['shell', ...args]);
    return this.observe();
  }

  /** An Android screen has no URL or title. */
  async state(): Promise<PageState> {
    return { url: '', title: '', blockedRequests: 0 };
  }

  async check(success: SuccessCheck): Promise<CheckResult> {
    if (!adbCanCheck(success) || !('text_contains' in success)) throw new InputError(`cannot check ${JSON.stringify(success)} on an Android screen`, 'success');
    const texts = this.last?.texts ?? (await this.observe()).texts;
    const ok = texts.some((t) => t.text.includes(success.text_contains));
    return { ok, detail: `the screen ${ok ? 'shows' : 'does not show'} ${JSON.stringify(success.text_contains)} (${texts.length} texts in the UI tree)` };
  }

  async close(): Promise<void> {
    this.last = undefined;
  }

  private async observe(): Promise<Observation> {
    await sleep(this.opts.settleMs ?? 800);
    const png = await this.run(['exec-out', 'screencap', '-p']);
    const bare = await observationFromPng(new Uint8Array(png.buffer, png.byteOffset, png.length));
    const texts = this.opts.uiTree === false ? [] : await this.uiTexts(bare);
    this.last = { ...bare, texts };
    return this.last;
  }

  /** Dumps the UI tree on the device (twice at most: uiautomator refuses while the screen animates), pulls and parses it. */
  private async uiTexts(size: { width: number; height: number }): Promise<Observation['texts']> {
    await this.run(['shell', 'uiautomator', 'dump', REMOTE_DUMP]).catch(async () => {
      await sleep(this.opts.settleMs ?? 800);
      await this.run(['shell', 'uiautomator', 'dump', REMOTE_DUMP]);
    });
    const dir = await mkdtemp(join(tmpdir(), 'autoui-adb-'));
    try {
      const local = join(dir, 'window_dump.xml');
      await this.run(['pull', REMOTE_DUMP, local]);
      return parseUiTree(await readFile(local, 'utf8'), size, `uiautomator dump from ${this.opts.serial ?? 'the device'}`);
    } catch (err) {
      // A malformed dump is the device's fault, not the user's input.
      throw err instanceof InputError ? new EnvironmentError(err.message) : err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
