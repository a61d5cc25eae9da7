/**
 * The main job as one library call: build the data (the built-in synthetic set, its unseen-apps
 * split, and real screens rendered in Chromium), prepare shards, train `tiny` with the scratch recipe,
 * then measure it where it was not trained: the synthetic test split, apps it never saw, whole web
 * sites it never saw (read from raw screenshots through OCR, as a user's screenshot arrives), and
 * tasks on those sites run live in the browser. Every stage resumes: a re-run after a crash (or a
 * second run) redoes only what is missing.
 */
import { join } from 'node:path';
import { requireManifest } from '../data/manifest.js';
import { readSuite, type TaskSpec } from '../data/suite.js';
import { SUBSETS, WEB_SUBSET, type AitwAction } from '../data/types.js';
import type { Report } from '../eval/metrics.js';
import { evaluateCheckpoint } from '../eval/run.js';
import { readScriptFile } from '../eval/tasks/agents.js';
import { recipeOptions } from '../train/trainer.js';
import type { TrainRecipe } from '../train/recipes.js';
import { heldOutSiteReport, closedLoop, type ClosedLoopResult, type HeldOutSites } from './demo_measure.js';
import { buildDemoData, demoPaths, type DemoPaths } from './demo_data.js';
import { train } from './train.js';

export { demoPaths, type DemoPaths } from './demo_data.js';

export interface DemoOptions {
  /** Everything the demo makes goes under this directory (default: data in runs/demo, the checkpoint in checkpoints/demo). */
  out?: string;
  checkpoint?: string;
  /** Synthetic episodes across the five subsets, and episodes of apps training never shows. */
  episodes: number;
  unseenEpisodes: number;
  /** Width ÷ height of the synthetic screens, one drawn per episode at 320 px high (data/synth/writer.ts); absent = 160×320 alone. */
  aspects?: readonly number[];
  /** Web episodes per site (0 = no web screens: the synthetic set alone). */
  webEpisodes: number;
  /** Screens of each held-out site rendered for the named-link set (data/web/writer.ts; 0 = none). */
  linkScreens: number;
  /** Web sites to build (default: every site this machine can render; data/web/sites.ts, app_model.ts). */
  sites?: readonly string[];
  /** Tasks run live in Chromium on the held-out sites (0 = none). */
  runTasks: number;
  seed: number;
  maxSteps?: number;
  /** Changes to the scratch recipe (recipes.ts). */
  recipe?: Partial<TrainRecipe>;
  /** No progress bars or stage lines. */
  quiet?: boolean;
}

export const DEMO_DEFAULTS: Readonly<Pick<DemoOptions, 'episodes' | 'unseenEpisodes' | 'aspects' | 'webEpisodes' | 'linkScreens' | 'runTasks' | 'seed'>> = {
  episodes: 3000,
  unseenEpisodes: 300,
  // Phone screens from a 1080×2400 (0.45) to a 16:9 (0.5625) one: a model trained at one shape loses
  // ~2 points of action matching at another (README, Results).
  aspects: [0.45, 0.5, 0.5625],
  webEpisodes: 20,
  linkScreens: 20,
  runTasks: 20,
  seed: 0,
};

export interface DemoResult {
  checkpoint: string;
  data: string;
  /** The synthetic test split (the five AITW-style subsets). */
  metrics: Report;
  /** Test episodes of the web sites training saw (other episodes of the same sites); null without web screens or such episodes. */
  web: Report | null;
  /** Synthetic episodes whose target app never appears in training. */
  unseenApps: Report;
  /** Whole sites never used in training, screens read through OCR; null without web screens. */
  heldOutSites: HeldOutSites | null;
  /** Tasks on the held-out sites run live; null when none were run. */
  closedLoop: ClosedLoopResult | null;
}

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  // Each stage line says when it started, so a user sees where the run's time goes.
  const t0 = performance.now();
  const clock = () => {
    const sec = Math.round((performance.now() - t0) / 1000);
    return `${Math.floor(sec / 60)}:${String(sec % 60).padStart(2, '0')}`;
  };
  const say = (line: string) => o.quiet || process.stderr.write(/^\[(\d|done)/.test(line) ? `${clock()} ${line}\n` : line + '\n');
  const paths = demoPaths(o);
  const background = new AbortController();
  const data = await buildDemoData(o, paths, say, background.signal);
  let heldOutReady = false;
  void data.heldOutShards.catch(() => {}).then(() => (heldOutReady = true));
  say(`[5/7] training tiny (scratch recipe) → ${paths.checkpoint}`);
  const t = await train({ ...recipeOptions('scratch'), ...o.recipe, data: paths.shards, out: paths.checkpoint, seed: o.seed, maxSteps: o.maxSteps, resume: true, quiet: o.quiet }).catch((err: unknown) => {
    background.abort();
    throw err;
  });
  if (!heldOutReady) say("      waiting for the held-out sites' OCR (it runs beside training)…");
  await data.heldOutShards;
  say(`[6/7] evaluating ${t.checkpoint}: synthetic test, web test, unseen apps, held-out sites`);
  const evaluate = (dir: string, subsets?: string[]) => evaluateCheckpoint({ checkpoint: t.checkpoint, data: dir, split: 'test', subsets, quiet: o.quiet });
  const metrics = (await evaluate(paths.shards, [...SUBSETS])).report;
  const web = data.web && (await testRows(paths.shards, WEB_SUBSET)) > 0 ? (await evaluate(paths.shards, [WEB_SUBSET])).report : null;
  const unseenApps = (await evaluate(paths.unseenShards)).report;
  const { suite, gold } = data.web ? await heldOutSuite(paths, data.web.heldOut) : { suite: [], gold: new Map() };
  const heldOutSites = data.web ? heldOutSiteReport(await evaluate(paths.heldOutShards, data.web.heldOut), suite, data.web.linkSets.length > 0 ? await evaluate(paths.heldOutShards, data.web.linkSets) : null) : null;
  say(`[7/7] running ${Math.min(o.runTasks, suite.length)} held-out-site tasks live in Chromium → ${paths.run}`);
  const loop = o.runTasks > 0 && suite.length > 0 ? await closedLoop(t.checkpoint, suite.slice(0, o.runTasks), gold, paths.run, heldOutSites, o.quiet) : null;
  say('[done]');
  return { checkpoint: t.checkpoint, data: paths.shards, metrics, web, unseenApps, heldOutSites, closedLoop: loop };
}

/** Test rows a subset has (a small web build may put no episode of the training sites in test). */
async function testRows(dir: string, subset: string): Promise<number> {
  return (await requireManifest(dir)).subsets[subset]?.screens.test ?? 0;
}

/** The held-out sites' test tasks, in a fixed interleaved order (site by site would measure one site first), and their gold actions. */
async function heldOutSuite(paths: DemoPaths, sites: readonly string[]): Promise<{ suite: TaskSpec[]; gold: Map<string, AitwAction[]> }> {
  const perSite = await Promise.all(sites.map((s) => readSuite(join(paths.web, s, 'suite-test.jsonl'))));
  const suite: TaskSpec[] = [];
  for (let i = 0; perSite.some((l) => i < l.length); i++) for (const l of perSite) if (i < l.length) suite.push(l[i]!);
  const gold = new Map<string, AitwAction[]>();
  for (const s of sites) for (const [id, actions] of await readScriptFile(join(paths.web, s, 'gold-test.jsonl'), `${s}'s gold actions`)) gold.set(id, actions);
  return { suite, gold };
}
