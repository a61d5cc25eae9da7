/**
 * ChromiumEnv: a phone-sized headless Chromium (Debian's, through playwright-core). Each task gets
 * a fresh browser context at its viewport (isMobile, hasTouch, its DPR), so screenshots are phone
 * screenshots and taps are touch taps. The browser reaches only file:// pages and 127.0.0.1; every
 * other request is refused and counted.
 *
 * Actions as a phone user does them: a tap is a touch tap; a scroll is a touch swipe from the
 * touch to the lift point (the web recorder's own swipe, so a recorded scroll replays as it was
 * recorded); TYPE types into the focused field; ENTER presses Enter; BACK goes back in history
 * (on the task's first page it does nothing), or, while the on-screen keyboard is up, closes it as
 * Android's BACK does; HOME opens the task's home_url (or start_url); the status actions do
 * nothing. A focused text field shows the web recorder's on-screen keyboard (soft_keyboard.ts).
 *
 * The screen after an action is taken once the page is still: its load event, then no change to
 * the document for `quietMs` (capped at `quietMaxMs` for pages that never stop, a clock, say). A
 * page that fills itself in by script after loading (Sphinx's search lists its results a few at a
 * time, then a summary line that moves them all down) would otherwise be shot half drawn, and a
 * tap chosen on that screen lands on whatever has moved under it.
 *
 * Faults: a crashed page or a closed browser makes step()/check() throw EnvironmentError; the next
 * reset() relaunches the browser when it is gone.
 */
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { DEFAULT_VIEWPORT, type SuccessCheck, type TaskSpec, type Viewport } from '../data/suite.js';
import { isTap, scalePoint } from '../data/geometry.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM, isAllowedUrl, touchSwipe } from '../data/web/browser.js';
import { addSoftKeyboard, closeSoftKeyboard } from '../data/web/soft_keyboard.js';
import { ActionType, type AitwAction } from '../data/types.js';
import { InputError } from '../util/errors.js';
import { sleep } from '../util/sleep.js';
import { checkElement, checkUrl, EnvironmentError, observationFromPng, type CheckResult, type ElementFacts, type Environment, type Observation, type PageState } from './environment.js';

export interface ChromiumEnvOptions {
  /** The browser binary (default $CHROMIUM_PATH, else chromium-headless-shell, else chromium). */
  executablePath?: string;
  /** Limit for one navigation, screenshot or input, ms (default 15 000). */
  timeoutMs?: number;
  /** Wait after an action before waiting for the load event, so a navigation it starts is seen (default 120 ms). */
  settleMs?: number;
  /** How long the document must stay unchanged before the screen is taken, ms (default 200). */
  quietMs?: number;
  /** The most to wait for that, ms (default 3000). */
  quietMaxMs?: number;
}

/** Run in the page: resolves once the document has gone `quietMs` without a change, or after `maxMs`. */
function documentStill({ quietMs, maxMs }: { quietMs: number; maxMs: number }): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      watch.disconnect();
      clearTimeout(timer);
      clearTimeout(cap);
      resolve();
    };
    const watch = new MutationObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(done, quietMs);
    });
    let timer = setTimeout(done, quietMs);
    const cap = setTimeout(done, maxMs);
    watch.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  });
}

export class ChromiumEnv implements Environment {
  readonly kind = 'chromium';
  private browser: Browser | undefined;
  private context: BrowserContext | undefined;
  private page: Page | undefined;
  private cdp: CDPSession | undefined;
  private task: TaskSpec | undefined;
  private viewport: Viewport = DEFAULT_VIEWPORT;
  private fault: string | undefined;
  private blocked = 0;
  private readonly timeoutMs: number;
  private readonly settleMs: number;
  private readonly quiet: { quietMs: number; maxMs: number };

  constructor(private readonly opts: ChromiumEnvOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.settleMs = opts.settleMs ?? 120;
    this.quiet = { quietMs: opts.quietMs ?? 200, maxMs: opts.quietMaxMs ?? 3000 };
  }

  private async ensureBrowser(): Promise<Browser> {
    if (this.browser?.isConnected()) return this.browser;
    const executablePath = this.opts.executablePath ?? DEFAULT_CHROMIUM;
    const first = this.browser === undefined;
    const browser = await chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS], timeout: 60_000 }).catch((err: Error) => {
      const why = `cannot start Chromium (${err.message.split('\n')[0]})`;
      // Failing to start at all is a setup problem for the user; failing to restart is this task's fault.
      throw first ? new InputError(why, executablePath) : new EnvironmentError(why);
    });
    browser.on('disconnected', () => {
      if (this.browser === browser) this.fault = 'the browser closed unexpectedly (crashed or killed)';
    });
    this.browser = browser;
    return browser;
  }

  /** A fresh context and page at the task's viewport; the old context is dropped. */
  async reset(task: TaskSpec): Promise<Observation> {
    await this.context?.close().catch(() => {});
    this.context = this.page = this.cdp = undefined;
    const browser = await this.ensureBrowser();
    this.fault = undefined;
    this.task = task;
    this.blocked = 0;
    this.viewport = task.viewport ?? DEFAULT_VIEWPORT;
    return this.guard(async () => {
      const { width, height, dpr } = this.viewport;
      const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr, isMobile: true, hasTouch: true, serviceWorkers: 'block' });
      this.context = context;
      context.setDefaultTimeout(this.timeoutMs);
      await context.route('**/*', (route) => {
        if (isAllowedUrl(route.request().url())) return route.continue();
        this.blocked++;
        return route.abort('blockedbyclient');
      });
      await addSoftKeyboard(context);
      const page = await context.newPage();
      page.on('crash', () => {
        this.fault = 'the page crashed';
      });
      this.page = page;
      this.cdp = await context.newCDPSession(page);
      await this.goto(task.start_url);
      return this.observe();
    });
  }

  async step(action: AitwAction): Promise<Observation> {
    return this.guard(async () => {
      await this.perform(action);
      await this.settle();
      return this.observe();
    });
  }

  async state(): Promise<PageState> {
    return this.guard(async () => {
      const page = this.livePage();
      return { url: page.url(), title: await page.title(), blockedRequests: this.blocked };
    });
  }

  async check(success: SuccessCheck): Promise<CheckResult> {
    return this.guard(async () => {
      const page = this.livePage();
      const byUrl = checkUrl(success, page.url());
      if (byUrl) return byUrl;
      if (!('selector' in success)) throw new RangeError('unknown success check');
      return checkElement(success, await this.elementFacts(success.selector));
    });
  }

  async close(): Promise<void> {
    const browser = this.browser;
    this.browser = undefined;
    await this.context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    this.context = this.page = this.cdp = undefined;
  }

  private livePage(): Page {
    if (this.fault) throw new EnvironmentError(this.fault);
    if (!this.page || !this.task) throw new Error('ChromiumEnv: reset() must come first');
    return this.page;
  }

  /** Runs `f`; a failure after a crash or disconnect is reported as that fault, any other as an EnvironmentError. */
  private async guard<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      if (this.fault) throw new EnvironmentError(this.fault);
      if (err instanceof EnvironmentError || err instanceof RangeError) throw err;
      throw new EnvironmentError((err as Error).message.split('\n')[0] ?? String(err));
    }
  }

  private async goto(url: string): Promise<void> {
    const page = this.livePage();
    const res = await page.goto(url, { waitUntil: 'load' });
    if (res && !res.ok() && !url.startsWith('file:')) throw new EnvironmentError(`${url} answered HTTP ${res.status()}`);
    await this.nextFrames();
  }

  private async perform(a: AitwAction): Promise<void> {
    const page = this.livePage();
    const { width, height } = this.viewport;
    switch (a.action_type) {
      case ActionType.DUAL_POINT: {
        const t = scalePoint(a.touch_yx, width, height);
        if (isTap(a.touch_yx, a.lift_yx)) return page.touchscreen.tap(t.x, t.y);
        return touchSwipe(this.cdp!, t, scalePoint(a.lift_yx, width, height));
      }
      case ActionType.TYPE:
        return page.keyboard.type(a.typed_text);
      case ActionType.PRESS_ENTER:
        return page.keyboard.press('Enter');
      case ActionType.PRESS_BACK:
        if (await closeSoftKeyboard(page)) return;
        await page.goBack({ waitUntil: 'load' });
        // A new tab's history starts at about:blank: BACK on the task's first page stays on it.
        if (page.url() === 'about:blank') await page.goForward({ waitUntil: 'load' });
        return;
      case ActionType.PRESS_HOME:
        return this.goto(this.task!.home_url ?? this.task!.start_url);
      case ActionType.STATUS_TASK_COMPLETE:
      case ActionType.STATUS_TASK_IMPOSSIBLE:
        return;
      default:
        throw new RangeError(`no browser mapping for action type ${String(a.action_type)}`);
    }
  }

  /** Lets a navigation the action started begin, waits for its load event and a still document, then for two painted frames. */
  private async settle(): Promise<void> {
    await sleep(this.settleMs);
    await this.livePage().waitForLoadState('load');
    await this.inPage((page) => page.evaluate(documentStill, this.quiet));
    await this.nextFrames();
  }

  private nextFrames(): Promise<void> {
    return this.inPage((page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())))));
  }

  /** Runs `f` in the page; if a navigation replaces the document meanwhile, once more in the new one after it loads. */
  private async inPage(f: (page: Page) => Promise<void>): Promise<void> {
    const page = this.livePage();
    await f(page).catch(async () => {
      await page.waitForLoadState('load');
      await f(page);
    });
  }

  private async observe(): Promise<Observation> {
    const png = await this.livePage().screenshot({ type: 'png', timeout: this.timeoutMs });
    return observationFromPng(new Uint8Array(png.buffer, png.byteOffset, png.length));
  }

  private async elementFacts(selector: string): Promise<ElementFacts | null> {
    return this.livePage().evaluate((sel) => {
      let el: Element | null;
      try {
        el = document.querySelector(sel);
      } catch {
        throw new Error(`invalid CSS selector ${JSON.stringify(sel)} in the task's success check`);
      }
      if (!el) return null;
      const input = el as HTMLInputElement;
      const aria = el.getAttribute('aria-checked');
      const checkable = el instanceof HTMLInputElement && (input.type === 'checkbox' || input.type === 'radio');
      const hasValue = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement;
      return {
        text: el instanceof HTMLElement ? el.innerText : (el.textContent ?? ''),
        checked: checkable ? input.checked : aria === null ? null : aria === 'true',
        value: hasValue ? (el as HTMLInputElement).value : null,
      };
    }, selector);
  }
}
