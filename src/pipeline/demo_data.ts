/**
 * The demo's data: where it goes, and building it stage by stage (each stage skips what is already
 * there). Training shards hold the synthetic subsets and the web training sites (as one subset,
 * 'web'); apps training never shows and sites training never sees get shard directories of their own,
 * so no evaluation can mix them with what was trained on. Held-out sites' screens are read by OCR,
 * as a user's screenshot would be; everything else keeps its records' own texts.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareFromFiles, type PrepareRequest, type PrepareSummary } from '../data/prepare.js';
import { synthesize, type SynthOptions } from '../data/synth/writer.js';
import { subsetsFor } from '../data/synth/episode.js';
import { SUBSETS, WEB_SUBSET, type Splits } from '../data/types.js';
import { CHROMIUM_HINT, DEFAULT_CHROMIUM } from '../data/web/browser.js';
import { DEFAULT_MANUAL_CACHE, locateManual, MANUALS } from '../data/web/sites.js';
import { ALL_SITES, buildWebDataset, DEFAULT_HELD_OUT, LINKS_DIR, type SiteSummary, type WebSummary } from '../data/web/writer.js';
import { writeFileAtomic } from '../util/atomic.js';
import { progress } from '../util/progress.js';
import { canPrepareInBackground, prepareInBackground, type BackgroundRequest } from './background_prepare.js';
import type { DemoOptions } from './demo.js';

export interface DemoPaths {
  synth: string;
  unseenSynth: string;
  web: string;
  shards: string;
  unseenShards: string;
  heldOutShards: string;
  run: string;
  checkpoint: string;
}

/** Where the demo's data and checkpoint go: all under `out` when given, else runs/demo and checkpoints/demo. */
export function demoPaths(o: Pick<DemoOptions, 'out' | 'checkpoint'>): DemoPaths {
  const data = o.out ?? join('runs', 'demo');
  const checkpoint = o.checkpoint ?? (o.out === undefined ? join('checkpoints', 'demo') : join(o.out, 'checkpoints', 'demo'));
  const at = (name: string) => join(data, name);
  return { synth: at('synth'), unseenSynth: at('unseen-synth'), web: at('web'), shards: at('shards'), unseenShards: at('unseen-shards'), heldOutShards: at('heldout-shards'), run: at('run'), checkpoint };
}

export interface DemoData {
  /** The web sites built (and the subsets of the held-out sites' named-link sets), or null when the demo runs on the synthetic set alone. */
  web: { trainSites: string[]; heldOut: string[]; linkSets: string[] } | null;
  /** Settles when the held-out sites' shards are written: they are read by OCR beside training when they can be (background_prepare.ts). */
  heldOutShards: Promise<void>;
}

type Say = (line: string) => void;

/** Builds the demo's data; `signal` stops the held-out sites' preparation when it runs beside training. */
export async function buildDemoData(o: DemoOptions, p: DemoPaths, say: Say, signal?: AbortSignal): Promise<DemoData> {
  const sitesToBuild = o.webEpisodes > 0 ? availableSites(say).filter((s) => !o.sites || o.sites.includes(s)) : [];
  say(`[1/7] synthesising ${o.episodes} episodes → ${p.synth}, and ${o.unseenEpisodes} of unseen apps → ${p.unseenSynth}`);
  // Rendering waits on the browser most of the time (page loads, finger swipes: about half of one
  // core), so it runs beside the synthesis and encoding of the synthetic set, which use both cores;
  // the demo's training starts ~30 s sooner than with the stages in turn.
  say(sitesToBuild.length > 0 ? `[2/7] rendering web screens in Chromium (${o.webEpisodes} episodes on each of ${sitesToBuild.length} sites), beside stages 1 and 3 → ${p.web}` : '[2/7] no web screens');
  const rendering = sitesToBuild.length > 0 ? webData(o, p.web, sitesToBuild, say) : Promise.resolve(null);
  // Awaited after stage 3; until then a failure must not count as unhandled.
  rendering.catch(() => {});
  const seen = await synth(o, { out: p.synth, episodes: o.episodes, subsets: SUBSETS, apps: 'seen' });
  const unseen = await synth(o, { out: p.unseenSynth, episodes: o.unseenEpisodes, subsets: subsetsFor('unseen'), apps: 'unseen' });
  say(`[3/7] preparing synthetic shards (built-in encoder, the records' texts): training → ${p.shards}, unseen apps → ${p.unseenShards}`);
  for (const [subset, s] of Object.entries(seen)) await prepare(o, say, { inputs: s.files.map((f) => join(p.synth, subset, f)), splits: join(p.synth, subset, 'split.json'), subset, out: p.shards });
  for (const [subset, s] of Object.entries(unseen)) await prepare(o, say, { inputs: s.files.map((f) => join(p.unseenSynth, subset, f)), splits: join(p.unseenSynth, subset, 'split.json'), subset, out: p.unseenShards });
  const web = await rendering;
  if (!web) return { web: null, heldOutShards: Promise.resolve() };
  const sites = siteLists(web);
  const beside = canPrepareInBackground();
  say(`[4/7] preparing web shards, screens read by OCR: training sites → ${p.shards}, held-out sites → ${p.heldOutShards}${beside ? ' (beside training, at low priority)' : ''}`);
  // Read by OCR in training too, not from the DOM: at use a screenshot's texts come from OCR, which
  // reads an on-screen keyboard's keys, a field's floating label or a heading differently from the
  // DOM (a lower-case key as a capital, keys missed), and a model trained on the DOM's texts meets
  // texts it never saw. The synthetic set keeps its records' texts: its screens are drawn for them.
  await prepare(o, say, { ...(await mergedSites(p.web, sites.trainSites)), subset: WEB_SUBSET, out: p.shards, screenText: 'ocr' });
  const heldOut: BackgroundRequest[] = [];
  const linkSets: string[] = [];
  for (const site of sites.heldOut) {
    const summary = await siteSummary(p.web, site);
    heldOut.push({ inputs: summary.files.map((f) => join(p.web, site, f)), splits: join(p.web, site, 'split.json'), subset: site, out: p.heldOutShards, screenText: 'ocr' });
    if (!summary.links || summary.links.tasks === 0) continue;
    const dir = join(p.web, site, LINKS_DIR);
    heldOut.push({ inputs: summary.links.files.map((f) => join(dir, f)), splits: join(dir, 'split.json'), subset: linkSetSubset(site), out: p.heldOutShards, screenText: 'ocr' });
    linkSets.push(linkSetSubset(site));
  }
  if (!beside) {
    for (const req of heldOut) await prepare(o, say, req);
    return { web: { ...sites, linkSets }, heldOutShards: Promise.resolve() };
  }
  const heldOutShards = prepareInBackground(heldOut, (s) => say(`      ${s.subset}: ${encodedLine(s)} (beside training)`), { signal });
  // Awaited before evaluation (the demo fails there); said at once, so a user need not wait for training to learn of it.
  heldOutShards.catch((err: Error) => signal?.aborted || say(`      held-out sites: ${err.message}`));
  return { web: { ...sites, linkSets }, heldOutShards };
}

async function synth(o: DemoOptions, s: Pick<SynthOptions, 'out' | 'episodes' | 'subsets' | 'apps'>) {
  let bar: ReturnType<typeof progress> | undefined;
  const r = await synthesize({
    ...s,
    seed: o.seed,
    size: { width: 160, height: 320 },
    aspects: o.aspects,
    onStart: (n) => (bar = progress({ label: `synth ${s.apps}`, total: n, unit: 'episodes', quiet: o.quiet })),
    onEpisode: () => bar?.tick(),
  });
  bar?.stop();
  return r.summary.counts as Record<string, { files: string[]; steps: number }>;
}

/**
 * The web sites this machine can render: none without Chromium, and no manual that is neither
 * installed nor fetched (scripts/fetch-manuals.sh) — the demo says so and goes on with the rest.
 */
function availableSites(say: Say): string[] {
  if (!existsSync(DEFAULT_CHROMIUM)) {
    say(`      note: ${DEFAULT_CHROMIUM} is missing (${CHROMIUM_HINT}): no web screens, no held-out sites, no live tasks`);
    return [];
  }
  const missing = MANUALS.filter((m) => {
    try {
      locateManual(m, DEFAULT_MANUAL_CACHE);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) say(`      note: manuals not found (run scripts/fetch-manuals.sh): ${missing.map((m) => m.pkg).join(', ')}; their sites are left out`);
  return ALL_SITES.filter((s) => !missing.some((m) => m.site === s));
}

/** Renders the web sites; progress goes out as lines (a tenth of the episodes at a time), since other stages' bars run meanwhile. */
async function webData(o: DemoOptions, out: string, sites: string[], say: Say): Promise<WebSummary> {
  let total = 0;
  let done = 0;
  const t0 = performance.now();
  const r = await buildWebDataset({
    out,
    sites,
    heldOut: DEFAULT_HELD_OUT.filter((s) => sites.includes(s)),
    episodes: o.webEpisodes,
    seed: o.seed,
    // Training screens at CSS resolution (the built-in encoder resizes them anyway; capture is ~2× faster);
    // held-out screens at the phone's own resolution, as a real screenshot arrives.
    dpr: 1,
    suite: true,
    linkScreens: o.linkScreens,
    // Six sites at a time: the synthetic stages now finish before the rendering, which ends the demo's first phase 35 s
    // sooner on average than with four (3:58 against 4:33 over three alternations; four beat two, 265 s against 291).
    concurrency: 6,
    onStart: (n) => (total = n),
    onEpisode: () => {
      done++;
      if (done === total || done % Math.max(1, Math.round(total / 10)) === 0) say(`      web: ${done}/${total} episodes rendered`);
    },
  });
  say(`      web: ${r.summary.totals.episodes} episodes on ${sites.length} sites (${r.summary.totals.steps} steps) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return r.summary;
}

function siteLists(w: WebSummary): { trainSites: string[]; heldOut: string[] } {
  return { trainSites: w.sites.filter((s) => !s.heldOut).map((s) => s.site), heldOut: w.sites.filter((s) => s.heldOut).map((s) => s.site) };
}

/** What `data web` built of a site (its site.json): record files, and the named-link set's. */
async function siteSummary(dir: string, site: string): Promise<SiteSummary> {
  return JSON.parse(await readFile(join(dir, site, 'site.json'), 'utf8')) as SiteSummary;
}

/** The shard subset a held-out site's named-link set prepares under. */
export function linkSetSubset(site: string): string {
  return `${site}-${LINKS_DIR}`;
}

/** One split file over the training sites (their episode ids are distinct), so they prepare as one subset. */
async function mergedSites(dir: string, sites: readonly string[]): Promise<Pick<PrepareRequest, 'inputs' | 'splits'>> {
  const merged: Splits = { train: [], val: [], test: [] };
  const inputs: string[] = [];
  for (const site of sites) {
    const s = JSON.parse(await readFile(join(dir, site, 'split.json'), 'utf8')) as Splits;
    for (const k of ['train', 'val', 'test'] as const) merged[k].push(...s[k]);
    inputs.push(...(await siteSummary(dir, site)).files.map((f) => join(dir, site, f)));
  }
  const splits = join(dir, 'training-sites.split.json');
  await writeFileAtomic(splits, JSON.stringify(merged) + '\n');
  return { inputs, splits };
}

async function prepare(o: DemoOptions, say: Say, req: PrepareRequest): Promise<void> {
  let bar: ReturnType<typeof progress> | undefined;
  let seen = 0;
  const s = await prepareFromFiles({
    ...req,
    onProgress: (p) => {
      bar ??= progress({ label: `prepare ${req.subset}`, total: p.estimatedTotal, unit: 'screens', quiet: o.quiet });
      // The total is estimated from the bytes read so far; it firms up as files finish.
      bar.setTotal(p.estimatedTotal);
      bar.tick(p.screens - seen);
      seen = p.screens;
    },
  });
  bar?.stop();
  say(`      ${req.subset}: ${encodedLine(s)}`);
}

function encodedLine(s: PrepareSummary): string {
  return s.upToDate ? 'up to date' : `${s.encoded} screens encoded at ${s.screensPerSecond.toFixed(s.screensPerSecond < 10 ? 1 : 0)}/s`;
}
