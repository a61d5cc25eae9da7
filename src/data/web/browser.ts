/**
 * Headless Debian Chromium (through playwright-core) as a phone: a viewport of a real device's CSS
 * size and pixel ratio, touch, emulated light/dark scheme, and every request that leaves file://
 * (and 127.0.0.1) refused, so rendering never touches the network. Screens are captured through
 * CDP with `optimizeForSpeed` (a faster PNG deflate setting; Playwright's own screenshot is ~3×
 * slower at DPR 2.625) and a clip of exactly the visual viewport at the capture scale. Scrolling is
 * a finger swipe of CDP touch events (`touchSwipe`), shared with the closed-loop environment. A
 * focused text field brings up an on-screen keyboard, as on a phone (soft_keyboard.ts).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { InputError } from '../../util/errors.js';
import { sleep } from '../../util/sleep.js';
import { collectScreenItems, ICON_TYPES, toAnnotations } from './annotate.js';
import { addSoftKeyboard, SOFT_KEYBOARD_ATTR } from './soft_keyboard.js';
import { boxOf, listLinks, viewState, type LinkOnPage, type ViewState } from './dom.js';
import type { CssBox } from './annotate.js';
import type { UiAnnotations } from '../types.js';

/**
 * Debian's `chromium-headless-shell` first: Chromium's headless mode without the full browser
 * around it, the same pixels for the manuals' screens at about half the CPU of `/usr/bin/chromium`
 * (whose wrapper also adds desktop flags); the full browser when only it is installed.
 */
const CHROMIUM_CANDIDATES: readonly string[] = ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium'];
export const DEFAULT_CHROMIUM = process.env.CHROMIUM_PATH ?? CHROMIUM_CANDIDATES.find((p) => existsSync(p)) ?? CHROMIUM_CANDIDATES[0]!;

/** What to tell a user whose machine has no Chromium. */
export const CHROMIUM_HINT = "install Debian's chromium-headless-shell (scripts/install-deps.sh) or set CHROMIUM_PATH";

/** Flags for a quiet, offline, sandbox-free headless Chromium (containers have no user namespaces). */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A phone: CSS viewport and its native device pixel ratio. */
export interface Device {
  name: string;
  width: number;
  height: number;
  dpr: number;
}

/** 412×915 at 2.625 is a 1080×2400-class phone (1082×2402 after rounding up); 360×800 at 3 a 1080×2400 one. */
export const DEVICES: readonly Device[] = [
  { name: 'phone-412', width: 412, height: 915, dpr: 2.625 },
  { name: 'phone-360', width: 360, height: 800, dpr: 3 },
];

export type ColorScheme = 'light' | 'dark';

export async function launchChromium(executablePath = DEFAULT_CHROMIUM): Promise<Browser> {
  if (!existsSync(executablePath))
    throw new InputError(`Chromium not found; ${CHROMIUM_HINT}`, executablePath);
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}

/** True for URLs the browser may load: local files, inline data, and the loopback address 127.0.0.1. */
export function isAllowedUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (['file:', 'data:', 'blob:', 'about:'].includes(u.protocol)) return true;
  return ['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) && u.hostname === '127.0.0.1';
}

export interface CssPoint {
  x: number;
  y: number;
}

/**
 * Touch-move events per swipe and the pause after each; then the finger rests before it lifts, so
 * no fling follows. With fewer, longer moves Chromium sometimes flings ~20 px further; at these
 * values the content moves by the swipe's length less Chromium's 15 px touch slop, as a finger's does.
 */
const SWIPE_MOVES = 12;
const SWIPE_MOVE_MS = 16;
const SWIPE_HOLD_MS = 60;

/**
 * A finger from `from` to `to` (CSS px) through CDP touch events: down, moves, a still hold, up.
 * The web recorder and the closed-loop environment both scroll with it, so a recorded scroll's
 * effect is what executing that scroll does. (Input.synthesizeScrollGesture does not scroll a
 * headless page.)
 */
export async function touchSwipe(cdp: CDPSession, from: CssPoint, to: CssPoint): Promise<void> {
  const at = (k: number): CssPoint[] => [{ x: from.x + ((to.x - from.x) * k) / SWIPE_MOVES, y: from.y + ((to.y - from.y) * k) / SWIPE_MOVES }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(0) });
  for (let k = 1; k <= SWIPE_MOVES; k++) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(k) });
    await sleep(SWIPE_MOVE_MS);
  }
  await sleep(SWIPE_HOLD_MS);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(SWIPE_MOVES) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

/** One captured screen: PNG bytes, its size, annotations and what identifies its state. */
export interface Shot {
  png: Uint8Array;
  width: number;
  height: number;
  annotations: UiAnnotations;
  view: ViewState;
}

/** PNG width and height from the IHDR chunk (bytes 16–23), without decoding. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

export interface ScreenOptions {
  device: Device;
  colorScheme: ColorScheme;
}

/**
 * A browser context set up as one phone; pages opened from it share its device and scheme. Pages
 * always lay out at the device's own pixel ratio (text metrics, and so line breaks and link
 * positions, change with it), whatever scale screens are captured at, so a recorded tap lands
 * where it lands on the real device.
 */
export async function phoneContext(browser: Browser, o: ScreenOptions): Promise<BrowserContext> {
  const ctx = await browser.newContext({
    viewport: { width: o.device.width, height: o.device.height },
    deviceScaleFactor: o.device.dpr,
    isMobile: true,
    hasTouch: true,
    colorScheme: o.colorScheme,
    reducedMotion: 'reduce',
    serviceWorkers: 'block',
  });
  await ctx.route((url) => !isAllowedUrl(url.href), (route) => route.abort('blockedbyclient'));
  await addSoftKeyboard(ctx);
  return ctx;
}

/** One tab of a phone, with the actions AITW records. */
export class PhoneScreen {
  private constructor(
    readonly page: Page,
    private readonly cdp: CDPSession,
    private readonly dpr: number,
  ) {}

  static async open(ctx: BrowserContext, dpr: number): Promise<PhoneScreen> {
    const page = await ctx.newPage();
    // Megabyte-long manual pages on a busy machine take seconds to load; 30 s only ends real hangs.
    page.setDefaultTimeout(30_000);
    return new PhoneScreen(page, await ctx.newCDPSession(page), dpr);
  }

  async goto(url: string): Promise<void> {
    await this.page.goto(url, { waitUntil: 'load' });
    await this.settle();
  }

  /** Waits for fonts and two frames, so a capture shows the finished layout. */
  async settle(): Promise<void> {
    await this.page.evaluate(async () => {
      await document.fonts.ready;
      // Two frames, or 500 ms if frames stop (a tab the browser does not paint).
      await Promise.race([
        new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))),
        new Promise<void>((r) => setTimeout(r, 500)),
      ]);
    });
  }

  view(): Promise<ViewState> {
    return this.page.evaluate(viewState);
  }

  links(): Promise<LinkOnPage[]> {
    return this.page.evaluate(listLinks);
  }

  box(selector: string): Promise<CssBox | null> {
    return this.page.evaluate(boxOf, selector);
  }

  annotations(view: ViewState): Promise<UiAnnotations> {
    return this.page.evaluate(collectScreenItems, { iconTypes: { ...ICON_TYPES }, keyboardAttr: SOFT_KEYBOARD_ATTR }).then((items) => toAnnotations(items, view.width, view.height));
  }

  /** The screen as the phone shows it now. */
  async capture(view?: ViewState): Promise<Shot> {
    const v = view ?? (await this.view());
    const annotations = await this.annotations(v);
    const r = (await this.cdp.send('Page.captureScreenshot', {
      format: 'png',
      optimizeForSpeed: true,
      captureBeyondViewport: false,
      clip: { x: v.pageX, y: v.pageY, width: v.width, height: v.height, scale: this.dpr },
    })) as { data: string };
    const png = new Uint8Array(Buffer.from(r.data, 'base64'));
    return { png, ...pngSize(png), annotations, view: v };
  }

  /** Taps a point (CSS px in the viewport); when `navigates`, waits for the new page to load. */
  async tap(x: number, y: number, navigates: boolean): Promise<void> {
    const before = this.page.url();
    await this.page.touchscreen.tap(x, y);
    if (navigates) await this.page.waitForURL((u) => u.href !== before, { waitUntil: 'load' });
    await this.settle();
  }

  /** A finger swipe from `from` to `to` (CSS px in the viewport); waits for the moved screen. */
  async swipe(from: CssPoint, to: CssPoint): Promise<void> {
    await touchSwipe(this.cdp, from, to);
    await this.settle();
  }

  async type(text: string): Promise<void> {
    await this.page.keyboard.insertText(text);
    await this.settle();
  }

  async enter(navigates: boolean): Promise<void> {
    const before = this.page.url();
    await this.page.keyboard.press('Enter');
    if (navigates) await this.page.waitForURL((u) => u.href !== before, { waitUntil: 'load' });
    await this.settle();
  }

  async back(): Promise<void> {
    await this.page.goBack({ waitUntil: 'load' });
    await this.settle();
  }

  /** Waits until Sphinx's client-side search has listed its results. */
  async sphinxResults(): Promise<void> {
    await this.page.waitForFunction(() => /Search finished|did not match/.test(document.getElementById('search-results')?.textContent ?? ''));
    await this.settle();
  }

  async close(): Promise<void> {
    await this.page.close();
  }
}
