/**
 * `data web`: renders every site's episodes and writes them the way `data synth` writes subsets:
 *   OUT/SITE/SITE-NNNNN.tfrecord.gz   AITW records, PNG screens
 *   OUT/SITE/split.json               {train, val, test} episode ids (held-out sites: test only)
 *   OUT/SITE/pages/                   the pages the episodes ran on (suites point here)
 *   OUT/SITE/suite-{train,val,test}.jsonl and OUT/suite-{split}.jsonl   with --suite
 *   OUT/SITE/gold-{train,val,test}.jsonl and OUT/gold-{split}.jsonl     with --suite: the gold actions (autoui run --script)
 *   OUT/SITE/links/                   held-out sites with linkScreens: one-step "tap X" tasks on named
 *                                     visible links, several per rendered screen (records + split.json, test only)
 *   OUT/SITE/site.json                the site's arguments and counts, written last
 *   OUT/sites.json                    every site: kind, pages, episodes, held out or not
 * A re-run skips every site whose site.json records the same arguments and whose files exist.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { EpisodeShardWriter, splitEpisodes } from '../episode_shards.js';
import type { Splits } from '../types.js';
import { replaceDirAtomic, writeFileAtomic } from '../../util/atomic.js';
import { InputError } from '../../util/errors.js';
import { readJsonIfExists } from '../../util/json.js';
import { Rng } from '../../util/rng.js';
import { APP_SITES, appModel, type AppSiteSpec } from './app_model.js';
import { writeAppSite } from './app_pages.js';
import { launchChromium } from './browser.js';
import { copySitePages } from './pages.js';
import { episodeRecords, goldScriptText, suiteText } from './records.js';
import { runLinkScreens, runSite, type AttemptInfo, type SiteEpisode } from './runner.js';
import { siteModel, type SiteModel } from './site_model.js';
import { DEFAULT_HELD_OUT, DEFAULT_MANUAL_CACHE, locateManual, MANUALS, searchRoots, SHARED_SCRIPT_PACKAGES, type ManualSpec, type SiteKind } from './sites.js';

export const WEB_GENERATOR_VERSION = 2;

export { DEFAULT_HELD_OUT };
export const ALL_SITES: readonly string[] = [...MANUALS.map((m) => m.site), ...APP_SITES.map((a) => a.site)];
const SPLITS = ['train', 'val', 'test'] as const;

/** The sites a build may use; tests pass their own. */
export interface Catalogue {
  manuals: readonly ManualSpec[];
  apps: readonly AppSiteSpec[];
}
export const DEFAULT_CATALOGUE: Catalogue = { manuals: MANUALS, apps: APP_SITES };

export interface WebOptions {
  out: string;
  catalogue?: Catalogue;
  sites?: readonly string[];
  heldOut?: readonly string[];
  /** Episodes per site. */
  episodes: number;
  seed: number;
  /** Capture scale of training sites' screens; undefined = the device's own (full phone resolution). */
  dpr?: number;
  /** Capture scale of held-out sites' screens; undefined = the device's own. */
  testDpr?: number;
  suite?: boolean;
  manualCache?: string;
  chromium?: string;
  shardEpisodes?: number;
  /** Sites rendered at once (each has its own browser contexts). */
  concurrency?: number;
  /** Held-out sites only: screens rendered for the named-link set (OUT/SITE/links), LINKS_PER_SCREEN tasks each. */
  linkScreens?: number;
  onStart?: (episodes: number, skippedSites: number) => void;
  onEpisode?: (site: string) => void;
  onAttempt?: (e: AttemptInfo) => void;
}

interface SiteArgs {
  seed: number;
  episodes: number;
  dpr: number | null;
  heldOut: boolean;
  suite: boolean;
  linkScreens: number;
}

/** Named links taken from one rendered screen of the named-link set. */
export const LINKS_PER_SCREEN = 6;
/** Where a site's named-link set goes, and the subset name its records prepare under. */
export const LINKS_DIR = 'links';

export interface SiteSummary {
  generator: 'autoui-web';
  version: number;
  site: string;
  kind: SiteKind;
  args: SiteArgs;
  pages: number;
  episodes: number;
  steps: number;
  /** Episode indexes no draw could execute. */
  failed: number;
  heldOut: boolean;
  splits: { train: number; val: number; test: number };
  kinds: Record<string, number>;
  files: string[];
  /** The named-link set (held-out sites with linkScreens): its files are under links/. */
  links: { screens: number; tasks: number; files: string[] } | null;
  seconds: number;
}

export interface WebSummary {
  generator: 'autoui-web';
  version: number;
  seed: number;
  sites: Array<Pick<SiteSummary, 'site' | 'kind' | 'pages' | 'episodes' | 'steps' | 'heldOut' | 'splits'> & { links: { screens: number; tasks: number } | null }>;
  totals: { episodes: number; steps: number; trainSteps: number; heldOutSteps: number };
}

export interface WebResult {
  summary: WebSummary;
  skipped: string[];
  seconds: number;
}

const siteNames = (c: Catalogue): string[] => [...c.manuals.map((m) => m.site), ...c.apps.map((a) => a.site)];

function checkSites(o: WebOptions, c: Catalogue): { sites: string[]; heldOut: Set<string> } {
  const known = siteNames(c);
  const sites = [...new Set(o.sites ?? known)];
  for (const s of sites) if (!known.includes(s)) throw new InputError(`unknown site '${s}' (known: ${known.join(', ')})`, '--sites');
  const heldOut = new Set(o.heldOut ?? DEFAULT_HELD_OUT.filter((s) => sites.includes(s)));
  for (const s of heldOut) if (!sites.includes(s)) throw new InputError(`held-out site '${s}' is not among the sites being built (${sites.join(', ')})`, '--held-out');
  return { sites, heldOut };
}

async function filesExist(dir: string, files: readonly string[]): Promise<boolean> {
  for (const f of files) if (!(await stat(join(dir, f)).catch(() => undefined))) return false;
  return true;
}

async function finishedSite(dir: string, args: SiteArgs): Promise<SiteSummary | undefined> {
  const s = (await readJsonIfExists(join(dir, 'site.json'), '; remove it to rebuild the site')) as SiteSummary | undefined;
  if (!s || s.version !== WEB_GENERATOR_VERSION || JSON.stringify(s.args) !== JSON.stringify(args)) return undefined;
  const suites = args.suite ? SPLITS.flatMap((x) => [`suite-${x}.jsonl`, `gold-${x}.jsonl`]) : [];
  const links = s.links ? [...s.links.files, 'split.json'].map((f) => join(LINKS_DIR, f)) : [];
  return (await filesExist(dir, [...s.files, 'split.json', ...suites, ...links])) ? s : undefined;
}

/** Copies (manual) or generates (app) the site's pages into DIR/pages and reads its model. */
async function prepareSite(site: string, dir: string, o: WebOptions, c: Catalogue): Promise<SiteModel> {
  const pagesDir = join(dir, 'pages');
  const manual = c.manuals.find((m) => m.site === site);
  if (manual) {
    const cache = o.manualCache ?? DEFAULT_MANUAL_CACHE;
    const src = locateManual(manual, cache);
    await copySitePages(src, pagesDir, searchRoots(cache, [manual.pkg, ...SHARED_SCRIPT_PACKAGES]));
    return siteModel({ site, kind: 'manual', label: manual.label, pagesDir, start: manual.start, sphinx: manual.sphinx });
  }
  const spec = c.apps.find((a) => a.site === site)!;
  const app = appModel(spec, o.seed);
  await replaceDirAtomic(pagesDir, async (tmp) => {
    await writeAppSite(app, tmp);
  });
  return siteModel({ site, kind: 'app', label: spec.brand, pagesDir, start: 'index.html', sphinx: false, app });
}

async function writeEpisodes(dir: string, m: SiteModel, eps: readonly SiteEpisode[], shardEpisodes: number, prefix = m.site): Promise<{ files: string[]; steps: number }> {
  const shards = new EpisodeShardWriter(dir, prefix, shardEpisodes);
  let steps = 0;
  try {
    for (const ep of eps) {
      await shards.writeEpisode(episodeRecords(m, ep));
      steps += ep.steps.length;
    }
  } catch (err) {
    await shards.abort();
    throw err;
  }
  return { files: await shards.close(), steps };
}

async function writeSuites(dir: string, m: SiteModel, eps: readonly SiteEpisode[], splits: Splits): Promise<void> {
  for (const split of SPLITS) {
    const ids = new Set(splits[split]);
    const these = eps.filter((e) => ids.has(e.id));
    await writeFileAtomic(join(dir, `suite-${split}.jsonl`), suiteText(m, these, ''));
    await writeFileAtomic(join(dir, `gold-${split}.jsonl`), goldScriptText(these));
  }
}

async function buildSite(browser: Browser, site: string, args: SiteArgs, o: WebOptions, c: Catalogue): Promise<SiteSummary> {
  const t0 = performance.now();
  const dir = join(o.out, site);
  const m = await prepareSite(site, dir, o, c);
  const { episodes, failed } = await runSite(browser, m, { seed: o.seed, episodes: o.episodes, dpr: args.dpr ?? undefined, onEpisode: () => o.onEpisode?.(site), onAttempt: o.onAttempt });
  const { files, steps } = await writeEpisodes(dir, m, episodes, o.shardEpisodes ?? 100);
  const ids = episodes.map((e) => e.id);
  const splits: Splits = args.heldOut ? { train: [], val: [], test: ids } : splitEpisodes(ids, Rng.from('autoui-web-split', o.seed, site));
  await writeFileAtomic(join(dir, 'split.json'), JSON.stringify(splits) + '\n');
  if (args.suite) await writeSuites(dir, m, episodes, splits);
  const links = args.linkScreens > 0 ? await buildLinkSet(browser, dir, m, args, o) : null;
  const kinds: Record<string, number> = {};
  for (const e of episodes) kinds[e.kind] = (kinds[e.kind] ?? 0) + 1;
  const summary: SiteSummary = {
    generator: 'autoui-web',
    version: WEB_GENERATOR_VERSION,
    site,
    kind: m.kind,
    args,
    pages: m.graph.size,
    episodes: episodes.length,
    steps,
    failed,
    heldOut: args.heldOut,
    splits: { train: splits.train.length, val: splits.val.length, test: splits.test.length },
    kinds,
    files,
    links,
    seconds: Math.round((performance.now() - t0) / 10) / 100,
  };
  await writeFileAtomic(join(dir, 'site.json'), JSON.stringify(summary, null, 2) + '\n');
  return summary;
}

/** The named-link set of a held-out site: records under DIR/links and a split that puts them all in test. */
async function buildLinkSet(browser: Browser, dir: string, m: SiteModel, args: SiteArgs, o: WebOptions): Promise<NonNullable<SiteSummary['links']>> {
  const eps = await runLinkScreens(browser, m, { seed: o.seed, screens: args.linkScreens, perScreen: LINKS_PER_SCREEN, dpr: args.dpr ?? undefined });
  const linksDir = join(dir, LINKS_DIR);
  const { files } = await writeEpisodes(linksDir, m, eps, o.shardEpisodes ?? 100, `${m.site}-${LINKS_DIR}`);
  await writeFileAtomic(join(linksDir, 'split.json'), JSON.stringify({ train: [], val: [], test: eps.map((e) => e.id) }) + '\n');
  return { screens: new Set(eps.map((e) => e.id.slice(0, e.id.lastIndexOf('-')))).size, tasks: eps.length, files };
}

/** OUT/suite-SPLIT.jsonl: every site's tasks of that split, URLs re-rooted at OUT; OUT/gold-SPLIT.jsonl: their gold actions. */
async function writeCombinedSuites(out: string, sites: readonly string[]): Promise<void> {
  for (const split of SPLITS) {
    const lines: string[] = [];
    const gold: string[] = [];
    for (const site of sites) {
      gold.push(await readFile(join(out, site, `gold-${split}.jsonl`), 'utf8'));
      const text = await readFile(join(out, site, `suite-${split}.jsonl`), 'utf8');
      for (const line of text.split('\n').filter(Boolean)) {
        const t = JSON.parse(line) as { start_url: string; home_url?: string };
        t.start_url = `${site}/${t.start_url}`;
        if (t.home_url) t.home_url = `${site}/${t.home_url}`;
        lines.push(JSON.stringify(t) + '\n');
      }
    }
    await writeFileAtomic(join(out, `suite-${split}.jsonl`), lines.join(''));
    await writeFileAtomic(join(out, `gold-${split}.jsonl`), gold.join(''));
  }
}

function summarize(o: WebOptions, done: readonly SiteSummary[]): WebSummary {
  const sum = (f: (s: SiteSummary) => number): number => done.reduce((a, s) => a + f(s), 0);
  return {
    generator: 'autoui-web',
    version: WEB_GENERATOR_VERSION,
    seed: o.seed,
    sites: done.map(({ site, kind, pages, episodes, steps, heldOut, splits, links }) => ({ site, kind, pages, episodes, steps, heldOut, splits, links: links && { screens: links.screens, tasks: links.tasks } })),
    totals: { episodes: sum((s) => s.episodes), steps: sum((s) => s.steps), trainSteps: sum((s) => (s.heldOut ? 0 : s.steps)), heldOutSteps: sum((s) => (s.heldOut ? s.steps : 0)) },
  };
}

/** Runs `f` over `items` with at most `n` at once, keeping results in input order. */
async function pool<T, R>(items: readonly T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, worker));
  return out;
}

/** Builds (or completes) the web dataset in `o.out`. */
export async function buildWebDataset(o: WebOptions): Promise<WebResult> {
  const t0 = performance.now();
  const c = o.catalogue ?? DEFAULT_CATALOGUE;
  const { sites, heldOut } = checkSites(o, c);
  for (const spec of c.manuals) if (sites.includes(spec.site)) locateManual(spec, o.manualCache ?? DEFAULT_MANUAL_CACHE);
  const argsOf = (s: string): SiteArgs => {
    const held = heldOut.has(s);
    return { seed: o.seed, episodes: o.episodes, dpr: (held ? o.testDpr : o.dpr) ?? null, heldOut: held, suite: !!o.suite, linkScreens: held ? o.linkScreens ?? 0 : 0 };
  };
  const prior = new Map<string, SiteSummary>();
  for (const s of sites) {
    const f = await finishedSite(join(o.out, s), argsOf(s));
    if (f) prior.set(s, f);
  }
  const todo = sites.filter((s) => !prior.has(s));
  o.onStart?.(todo.length * o.episodes, prior.size);
  let browser: Browser | undefined;
  try {
    if (todo.length) browser = await launchChromium(o.chromium);
    const built = await pool(todo, o.concurrency ?? 2, (s) => buildSite(browser!, s, argsOf(s), o, c));
    for (const b of built) prior.set(b.site, b);
  } finally {
    await browser?.close();
  }
  const done = sites.map((s) => prior.get(s)!);
  if (o.suite) await writeCombinedSuites(o.out, sites);
  const summary = summarize(o, done);
  await writeFileAtomic(join(o.out, 'sites.json'), JSON.stringify(summary, null, 2) + '\n');
  return { summary, skipped: sites.filter((s) => !todo.includes(s)), seconds: (performance.now() - t0) / 1000 };
}
