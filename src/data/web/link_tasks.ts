/**
 * Tasks over a site's links, executed for real: one-step grounding, scroll-to-find, multi-step
 * navigation along shortest link paths, Sphinx search, and open-then-back. Each returns undefined
 * when the live page does not allow the task (the link is hidden on a phone, too far down, ...);
 * the caller then tries another draw.
 */
import type { Rng } from '../../util/rng.js';
import type { CssBox } from './annotate.js';
import type { LinkOnPage } from './dom.js';
import { backGoal, groundGoal, navigateGoal, scrollGoal, searchGoal, searchWord } from './goals.js';
import { inReach, isTaskPage, shortestPaths } from './graph.js';
import { SWIPE_FROM, SWIPE_TO, tapAction, type Recorder } from './recorder.js';
import { onPage, pageOf, pageUrl, taskPages, type Episode, type SiteModel } from './site_model.js';

/** A tap target must sit inside this band of the screen (fractions of its height): clear of bars and the edge. */
const TOP = 0.01;
const BOTTOM = 0.95;
/** At most this many swipes to bring a target into view. */
export const MAX_SWIPES = 3;

/** Inside the tap band vertically and wholly on screen horizontally (wide pages overflow to the right). */
const inBand = (b: CssBox, h: number, w: number): boolean => b.y >= TOP * h && b.y + b.h <= BOTTOM * h && b.x >= 0 && b.x + b.w <= w;
/** Could come into the band by swiping up: not past the screen's right edge. */
const reachable = (b: CssBox, w: number): boolean => b.x >= 0 && b.x + b.w <= w;
const usableText = (t: string): boolean => t.length >= 2 && t.length <= 48 && /[A-Za-z]/.test(t);

/** Links on screen now to other task pages of the site, with usable text, one per target page. */
export function visibleTaskLinks(m: SiteModel, links: readonly LinkOnPage[], here: string, height: number, width: number): (LinkOnPage & { page: string })[] {
  const seen = new Set<string>();
  const out: (LinkOnPage & { page: string })[] = [];
  for (const l of links) {
    const page = pageOf(m, l.href);
    if (!page || page === here || !m.graph.has(page) || seen.has(page) || !usableText(l.text) || !inBand(l.box, height, width)) continue;
    seen.add(page);
    out.push({ ...l, page });
  }
  return out;
}

/** Swipes until a link to `href` is in the tap band; its box, or undefined when it never gets there. */
async function scrollToLink(rec: Recorder, href: string): Promise<CssBox | undefined> {
  for (let swipes = 0; ; swipes++) {
    const view = await rec.screen.view();
    const boxes = (await rec.screen.links()).filter((l) => l.href === href && l.box.y >= TOP * view.height && reachable(l.box, view.width)).map((l) => l.box);
    const box = boxes[0];
    if (!box) return undefined;
    if (inBand(box, view.height, view.width)) return box;
    if (swipes >= MAX_SWIPES || box.y < TOP * view.height) return undefined;
    if ((await rec.swipeUp()) < 1) return undefined;
  }
}

async function start(rec: Recorder, m: SiteModel, page: string): Promise<string> {
  await rec.screen.goto(pageUrl(m, page));
  return page;
}

/** From `page`'s top: taps one of the task links visible on the first screen; the link, or undefined when none works. */
async function tapVisibleLink(rec: Recorder, m: SiteModel, rng: Rng, page: string) {
  await start(rec, m, page);
  const view = await rec.screen.view();
  const links = visibleTaskLinks(m, await rec.screen.links(), page, view.height, view.width);
  if (links.length === 0) return undefined;
  const l = rng.pick(links);
  return (await rec.tap(l.box, { href: l.href }, true)) ? l : undefined;
}

/**
 * One screen, many one-step tasks: the first screen of `page` and up to `perScreen` of its visible
 * task links, each named in a "tap X" goal whose gold step is the tap on it (taken on the same
 * captured screen; nothing is tapped). An evaluation set: the tap on a named visible link, measured
 * on many links per rendered (and OCR'd) screen.
 */
export async function linkScreen(rec: Recorder, m: SiteModel, rng: Rng, page: string, perScreen: number): Promise<Episode[]> {
  await start(rec, m, page);
  const view = await rec.screen.view();
  // Links named by the words they show (not icons known by their aria-label), that a tap reaches.
  const visible = visibleTaskLinks(m, await rec.screen.links(), page, view.height, view.width).filter((l) => l.shown);
  const reached: typeof visible = [];
  for (const l of visible) if (await rec.reaches(l.box, { href: l.href }, view)) reached.push(l);
  const links = rng.sample(reached, perScreen);
  if (links.length === 0) return [];
  const shot = await rec.shot();
  return links.map((l) => ({ kind: 'ground', goal: groundGoal(rng, l.text), start: page, steps: [{ shot, action: tapAction(l.box, view.width, view.height) }], success: onPage(l.page) }));
}

export async function groundTask(rec: Recorder, m: SiteModel, rng: Rng, page: string): Promise<Episode | undefined> {
  const l = await tapVisibleLink(rec, m, rng, page);
  if (!l) return undefined;
  await rec.complete();
  return { kind: 'ground', goal: groundGoal(rng, l.text), start: page, steps: rec.steps, success: onPage(l.page) };
}

export async function scrollTask(rec: Recorder, m: SiteModel, rng: Rng, page: string): Promise<Episode | undefined> {
  await start(rec, m, page);
  const view = await rec.screen.view();
  const all = await rec.screen.links();
  const firstScreen = new Set(all.filter((l) => l.box.y < view.height).map((l) => l.text.toLowerCase()));
  const reach = view.height * (BOTTOM + MAX_SWIPES * (SWIPE_FROM[0] - SWIPE_TO[0])) - 40;
  // Below the fold, within reach, and named by a text that no link on the first screen shares.
  const below = all.filter((l) => l.box.y > view.height && l.box.y < reach && reachable(l.box, view.width) && !firstScreen.has(l.text.toLowerCase()) && usableText(l.text));
  const cands = below.filter((l) => {
    const p = pageOf(m, l.href);
    return p && p !== page && m.graph.has(p) && below.filter((o) => o.text.toLowerCase() === l.text.toLowerCase()).length === 1;
  });
  if (cands.length === 0) return undefined;
  const l = rng.pick(cands);
  const box = await scrollToLink(rec, l.href);
  if (!box || rec.steps.length === 0 || !(await rec.tap(box, { href: l.href }, true))) return undefined;
  await rec.complete();
  return { kind: 'scroll', goal: scrollGoal(rng, l.text), start: page, steps: rec.steps, success: onPage(pageOf(m, l.href)!) };
}

/** The most links a navigation follows. */
const MAX_LINKS = 3;

/** Pages at 2–3 links from `page` (else 1), by shortest path over links within reach. */
function navigationTargets(m: SiteModel, page: string): Map<string, string[]> {
  const paths = shortestPaths(m.graph, page, isTaskPage, inReach);
  const named = [...paths].filter(([p, path]) => path.length > 0 && m.names.get(p) && (m.names.get(p)?.length ?? 0) <= 60);
  const far = named.filter(([, path]) => path.length >= 2 && path.length <= MAX_LINKS);
  return new Map(far.length ? far : named.filter(([, path]) => path.length === 1));
}

/**
 * The links a navigation's gold follows to `target`, after HOME when `home` is set. HOME first when
 * the walk starts away from the site's entry page, the target is more than one link away, and the
 * entry page reaches it in at most MAX_LINKS links. Why: the link back towards a site's contents
 * differs from site to site (a header title, an "Up" link, a back arrow), so on a site the model
 * never saw none of them is known, while HOME (the task's home page, its entry page) is one action
 * everywhere.
 */
export function navigationRoute(m: SiteModel, page: string, target: string, path: readonly string[]): { home: boolean; links: readonly string[] } {
  if (page === m.start || path.length < 2) return { home: false, links: path };
  const fromEntry = shortestPaths(m.graph, m.start, isTaskPage, inReach).get(target);
  return fromEntry && fromEntry.length <= MAX_LINKS ? { home: true, links: fromEntry } : { home: false, links: path };
}

export async function navigateTask(rec: Recorder, m: SiteModel, rng: Rng, page: string): Promise<Episode | undefined> {
  const targets = navigationTargets(m, page);
  if (targets.size === 0) return undefined;
  const [target, path] = rng.pick([...targets]);
  const route = navigationRoute(m, page, target, path);
  await start(rec, m, page);
  if (route.home) await rec.home(pageUrl(m, m.start));
  for (const next of route.links) {
    const box = await scrollToLink(rec, pageUrl(m, next));
    if (!box || !(await rec.tap(box, { href: pageUrl(m, next) }, true))) return undefined;
  }
  await rec.complete();
  return { kind: 'navigate', goal: navigateGoal(rng, m.names.get(target)!, m.label), start: page, steps: rec.steps, success: onPage(target) };
}

export async function backTask(rec: Recorder, m: SiteModel, rng: Rng, page: string): Promise<Episode | undefined> {
  const l = await tapVisibleLink(rec, m, rng, page);
  if (!l) return undefined;
  await rec.back();
  await rec.complete();
  return { kind: 'back', goal: backGoal(rng, l.text), start: page, steps: rec.steps, success: onPage(page) };
}

/** Sphinx search: tap the box, type a word of the target's title, Enter, open the target among the results. */
export async function searchTask(rec: Recorder, m: SiteModel, rng: Rng): Promise<Episode | undefined> {
  if (!m.searchPage) return undefined;
  const target = rng.pick(taskPages(m).filter((p) => m.names.get(p)));
  const name = m.names.get(target)!;
  const query = searchWord(name, rng, m.label);
  if (!query) return undefined;
  await start(rec, m, m.searchPage);
  const input = 'input[name="q"]';
  const box = await rec.screen.box(input);
  if (!box || !(await rec.tap(box, { selector: input }, false))) return undefined;
  await rec.type(query);
  await rec.enter(true);
  await rec.screen.sphinxResults();
  const hit = await scrollToLink(rec, pageUrl(m, target));
  if (!hit || !(await rec.tap(hit, { href: pageUrl(m, target) }, true))) return undefined;
  await rec.complete();
  return { kind: 'search', goal: searchGoal(rng, query, name), start: m.searchPage, steps: rec.steps, success: onPage(target) };
}
