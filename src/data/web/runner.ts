/**
 * Runs one site's episodes in the browser: each episode draws its task kind, device and colour
 * scheme from a stream seeded by (seed, site, episode, attempt), executes on a fresh tab, and is
 * retried with the next attempt's stream when the live page does not allow the drawn task, so the
 * output depends only on the seed and the pages.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { Rng } from '../../util/rng.js';
import { contactSearchTask, formTask, launchTask, toggleTask } from './app_tasks.js';
import { DEVICES, PhoneScreen, phoneContext, type ColorScheme, type Device } from './browser.js';
import type { TaskKind } from './goals.js';
import { backTask, groundTask, linkScreen, navigateTask, scrollTask, searchTask } from './link_tasks.js';
import { Recorder, type ShotCache } from './recorder.js';
import { taskPages, type Episode, type SiteModel } from './site_model.js';

/** Draws per site before an episode index is given up (each draw is a fresh page). */
const ATTEMPTS = 8;
/** A draw taking longer than this is stuck (each browser wait has its own 30 s limit). */
const ATTEMPT_MS = 120_000;
const CLOSE_MS = 10_000;

/** `p`, or a rejection once `ms` have passed. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
const DARK_SHARE = 0.3;

/** A page that never loads or a target that times out makes one draw unusable, not the run. */
function unusableDraw(err: unknown): boolean {
  return err instanceof Error && /Timeout|timed out|net::|Target page|Execution context/.test(err.message);
}

/**
 * Task mixes: manuals with and without search, and apps. Typing tasks (search, form) get the
 * largest shares where a site has them: only they give the web's typing steps, and the text-less
 * fields tapped before them, which the synthetic set (fields with hint text) does not teach.
 */
export function kindWeights(m: SiteModel): [TaskKind, number][] {
  if (m.kind === 'app')
    return [['toggle', 0.25], ['launch', 0.1], ['form', 0.2], ['search', 0.2], ['navigate', 0.1], ['ground', 0.05], ['back', 0.05], ['scroll', 0.05]];
  return m.searchPage
    ? [['ground', 0.2], ['navigate', 0.2], ['scroll', 0.1], ['search', 0.4], ['back', 0.1]]
    : [['ground', 0.3], ['navigate', 0.3], ['scroll', 0.2], ['back', 0.2]];
}

export interface EpisodeSetup {
  kind: TaskKind;
  device: Device;
  scheme: ColorScheme;
}

export function drawSetup(m: SiteModel, rng: Rng): EpisodeSetup {
  return { kind: rng.weighted(kindWeights(m)), device: rng.pick(DEVICES), scheme: rng.chance(DARK_SHARE) ? 'dark' : 'light' };
}

/** Start pages for link tasks: the site's entry page a third of the time, else any task page. */
function startPage(m: SiteModel, rng: Rng): string {
  return rng.chance(1 / 3) ? m.start : rng.pick(taskPages(m));
}

async function runTask(kind: TaskKind, rec: Recorder, m: SiteModel, rng: Rng): Promise<Episode | undefined> {
  switch (kind) {
    case 'ground':
      return groundTask(rec, m, rng, startPage(m, rng));
    case 'scroll':
      return scrollTask(rec, m, rng, startPage(m, rng));
    case 'navigate':
      return navigateTask(rec, m, rng, startPage(m, rng));
    case 'back':
      return backTask(rec, m, rng, startPage(m, rng));
    case 'search':
      return m.app ? contactSearchTask(rec, m, rng) : searchTask(rec, m, rng);
    case 'toggle':
      return toggleTask(rec, m, rng);
    case 'launch':
      return launchTask(rec, m, rng);
    case 'form':
      return formTask(rec, m, rng);
  }
}

/**
 * Hides the text caret and stops transitions before any page script runs: a blinking caret or a
 * half-finished switch animation would make two runs' screenshots differ.
 */
const STEADY_CSS = `*,*::before,*::after{caret-color:transparent!important;transition:none!important;animation:none!important}`;
function steadyScript(css: string): void {
  const add = (): void => {
    const s = document.createElement('style');
    s.textContent = css;
    document.documentElement.appendChild(s);
  };
  if (document.documentElement) add();
  else document.addEventListener('DOMContentLoaded', add);
}

export interface SiteEpisode extends Episode {
  id: string;
  setup: EpisodeSetup;
  dpr: number;
}

/**
 * One browser context, tab and screen cache per device, scheme and capture scale. The tab is
 * reused across episodes (each starts with a fresh navigation); opening a tab costs a renderer start.
 */
interface Phone {
  ctx: BrowserContext;
  screen: PhoneScreen;
  cache: ShotCache;
}

class Phones {
  private readonly open = new Map<string, Phone>();
  constructor(private readonly browser: Browser) {}

  async get(device: Device, scheme: ColorScheme, dpr: number): Promise<Phone> {
    const key = `${device.name}|${scheme}|${dpr}`;
    let c = this.open.get(key);
    if (!c) {
      const ctx = await phoneContext(this.browser, { device, colorScheme: scheme });
      await ctx.addInitScript(steadyScript, STEADY_CSS);
      this.open.set(key, (c = { ctx, screen: await PhoneScreen.open(ctx, dpr), cache: new Map() }));
    }
    return c;
  }

  /** Drops a phone left in an unknown state by a failed draw; the next draw gets a fresh context. */
  async drop(device: Device, scheme: ColorScheme, dpr: number): Promise<void> {
    const key = `${device.name}|${scheme}|${dpr}`;
    const p = this.open.get(key);
    this.open.delete(key);
    if (p) await withTimeout(p.ctx.close(), CLOSE_MS).catch(() => {});
  }

  async close(): Promise<void> {
    for (const c of this.open.values()) await withTimeout(c.ctx.close(), CLOSE_MS).catch(() => {});
    this.open.clear();
  }
}

export interface RunSiteOptions {
  seed: number;
  episodes: number;
  /** Capture scale; undefined = each device's own pixel ratio. */
  dpr?: number;
  onEpisode?: () => void;
  /** Told how every draw went (for --verbose). */
  onAttempt?: (e: AttemptInfo) => void;
}

export interface AttemptInfo {
  site: string;
  episode: number;
  attempt: number;
  kind: TaskKind;
  /** 'ok N "goal"', 'not possible' or 'error …'. */
  outcome: string;
  ms: number;
}

async function attempt(phones: Phones, m: SiteModel, o: RunSiteOptions, i: number, a: number): Promise<SiteEpisode | undefined> {
  const rng = Rng.from('autoui-web', o.seed, m.site, i, a);
  const setup = drawSetup(m, rng);
  const dpr = o.dpr ?? setup.device.dpr;
  const phone = await phones.get(setup.device, setup.scheme, dpr);
  const t0 = performance.now();
  const debug = (outcome: string): void => o.onAttempt?.({ site: m.site, episode: i, attempt: a, kind: setup.kind, outcome, ms: performance.now() - t0 });
  try {
    const ep = await withTimeout(runTask(setup.kind, new Recorder(phone.screen, phone.cache), m, rng.fork('task')), ATTEMPT_MS);
    debug(ep ? `ok ${ep.steps.length} "${ep.goal}"` : 'not possible');
    return ep && { ...ep, id: `${m.site}-${String(i).padStart(5, '0')}`, setup, dpr };
  } catch (err) {
    debug(`error ${(err as Error).message.split('\n')[0]}`);
    if (unusableDraw(err)) {
      await phones.drop(setup.device, setup.scheme, dpr);
      return undefined;
    }
    throw err;
  }
}

/** Executes the site's episodes; indexes whose every draw failed are skipped (counted in `failed`). */
export async function runSite(browser: Browser, m: SiteModel, o: RunSiteOptions): Promise<{ episodes: SiteEpisode[]; failed: number }> {
  const phones = new Phones(browser);
  const episodes: SiteEpisode[] = [];
  let failed = 0;
  try {
    for (let i = 0; i < o.episodes; i++) {
      let ep: SiteEpisode | undefined;
      for (let a = 0; a < ATTEMPTS && !ep; a++) ep = await attempt(phones, m, o, i, a);
      if (ep) episodes.push(ep);
      else failed++;
      o.onEpisode?.();
    }
  } finally {
    await phones.close();
  }
  return { episodes, failed };
}

export interface LinkScreenOptions {
  seed: number;
  /** Screens to render; each gives up to `perScreen` one-step tasks. */
  screens: number;
  perScreen: number;
  /** Capture scale; undefined = each device's own pixel ratio. */
  dpr?: number;
  onScreen?: () => void;
}

/**
 * The link screens of a site (link_tasks.ts linkScreen): screen i draws its device, colour scheme and
 * page from a stream seeded by (seed, site, i, attempt), retried like an episode when the page shows
 * no usable link. Episode ids are SITE-L<screen>-<k>.
 */
export async function runLinkScreens(browser: Browser, m: SiteModel, o: LinkScreenOptions): Promise<SiteEpisode[]> {
  const phones = new Phones(browser);
  const out: SiteEpisode[] = [];
  try {
    for (let i = 0; i < o.screens; i++) {
      for (let a = 0; a < ATTEMPTS; a++) {
        const rng = Rng.from('autoui-web-links', o.seed, m.site, i, a);
        const setup: EpisodeSetup = { ...drawSetup(m, rng), kind: 'ground' };
        const dpr = o.dpr ?? setup.device.dpr;
        const phone = await phones.get(setup.device, setup.scheme, dpr);
        const eps = await withTimeout(linkScreen(new Recorder(phone.screen, phone.cache), m, rng.fork('task'), startPage(m, rng), o.perScreen), ATTEMPT_MS).catch(async (err: unknown) => {
          if (!unusableDraw(err)) throw err;
          await phones.drop(setup.device, setup.scheme, dpr);
          return [];
        });
        if (eps.length === 0) continue;
        eps.forEach((ep, k) => out.push({ ...ep, id: `${m.site}-L${String(i).padStart(3, '0')}-${k}`, setup, dpr }));
        break;
      }
      o.onScreen?.();
    }
  } finally {
    await phones.close();
  }
  return out;
}
