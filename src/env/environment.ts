/**
 * What executes an agent's actions: a screen it can look at, act on and check. Implementations:
 * ChromiumEnv (a phone-sized headless browser, chromium.ts) and AdbEnv (an Android device over
 * adb, adb.ts). Points arrive in AITW form, (y, x) normalised to the screenshot, so an environment
 * maps them onto its own coordinates.
 *
 * Contract: reset() starts a task from its start_url on a fresh state and may be called after any
 * failure (it restarts whatever crashed); step() performs one action and returns the screen once
 * it settled; check() evaluates a task's success check on the current state. An environment fault
 * (crash, disconnect, timeout) is thrown as EnvironmentError; a task the environment cannot run
 * at all is an InputError.
 */
import sharp from 'sharp';
import { decodeScreen } from '../data/image.js';
import { withoutFragment, type SuccessCheck, type TaskSpec } from '../data/suite.js';
import type { AitwAction } from '../data/types.js';
import type { ScreenText } from '../screen/text/types.js';
import type { RawImage } from '../screen/types.js';

/** The screen after reset() or step(). */
export interface Observation {
  /** The screenshot as PNG bytes, device pixels. */
  png: Uint8Array;
  width: number;
  height: number;
  /** Texts the environment knows without reading pixels (an Android UI tree); [] for a browser. */
  texts: ScreenText[];
  /** The decoded RGB pixels (decoded on first call, then kept). */
  image(): Promise<RawImage>;
}

/** Where the environment is: the page's URL and title, '' where there is none (an Android screen). */
export interface PageState {
  url: string;
  title: string;
  /** Requests refused since reset() (the browser may reach only file:// and 127.0.0.1). */
  blockedRequests: number;
}

/** A success check's outcome, with what was seen (for the report). */
export interface CheckResult {
  ok: boolean;
  detail: string;
}

export interface Environment {
  /** 'chromium' or 'adb'; recorded in trajectories as the device type. */
  readonly kind: string;
  reset(task: TaskSpec): Promise<Observation>;
  step(action: AitwAction): Promise<Observation>;
  state(): Promise<PageState>;
  check(success: SuccessCheck): Promise<CheckResult>;
  close(): Promise<void>;
}

/** The environment failed (crashed, disconnected, timed out): the task fails, the next reset() recovers. */
export class EnvironmentError extends Error {
  override name = 'EnvironmentError';
}

/** Builds an Observation from PNG bytes; the size comes from the PNG header, pixels are decoded lazily. */
export async function observationFromPng(png: Uint8Array, texts: ScreenText[] = []): Promise<Observation> {
  const meta = await sharp(png).metadata();
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (!(width > 0 && height > 0) || meta.format !== 'png') throw new EnvironmentError(`the screenshot is not a PNG with pixels (${meta.format ?? 'unknown'} ${width}×${height})`);
  let decoded: Promise<RawImage> | undefined;
  return {
    png,
    width,
    height,
    texts,
    image: () => (decoded ??= decodeScreen(png, height, width, 3, 'screenshot')),
  };
}

/** The URL check forms, evaluated on a URL; null for the forms that need the page itself. URLs compare without #fragment. */
export function checkUrl(success: SuccessCheck, url: string): CheckResult | null {
  const here = withoutFragment(url);
  if ('url' in success) {
    const want = withoutFragment(success.url);
    return { ok: here === want, detail: here === want ? `at ${here}` : `at ${here}, not ${want}` };
  }
  if ('url_endswith' in success) {
    const ok = here.endsWith(success.url_endswith);
    return { ok, detail: ok ? `at ${here}` : `at ${here}, which does not end with ${success.url_endswith}` };
  }
  return null;
}

/** What a page tells about the element a check names: null when no element matches. */
export interface ElementFacts {
  /** Its rendered text (innerText). */
  text: string;
  /** `checked` of an input, else aria-checked === 'true'; null when it has neither. */
  checked: boolean | null;
  /** `value` of a form field; null for other elements. */
  value: string | null;
}

/** The element check forms, evaluated on the facts of the first element the selector matches. */
export function checkElement(success: SuccessCheck, facts: ElementFacts | null): CheckResult {
  if (!('selector' in success)) throw new RangeError('checkElement needs a selector check');
  const sel = success.selector;
  if (!facts) return { ok: false, detail: `no element matches ${sel}` };
  const short = (s: string): string => JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
  if ('text_contains' in success) {
    const ok = facts.text.includes(success.text_contains);
    return { ok, detail: `${sel} ${ok ? 'contains' : 'does not contain'} ${short(success.text_contains)}` + (ok ? '' : ` (text ${short(facts.text)})`) };
  }
  if ('checked' in success) {
    const ok = facts.checked === success.checked;
    return { ok, detail: `${sel} is ${facts.checked === null ? 'not checkable' : facts.checked ? 'checked' : 'unchecked'}` };
  }
  const ok = facts.value === success.value;
  return { ok, detail: `${sel} has value ${facts.value === null ? 'none' : short(facts.value)}` + (ok ? '' : `, not ${short(success.value)}`) };
}
