/**
 * The main job as one library call: synthesise the built-in set, prepare shards, train `tiny` with
 * the scratch recipe, evaluate on the held-out test split. Every stage resumes: a re-run after a
 * crash (or a second run) redoes only what is missing.
 */
import { join } from 'node:path';
import { prepareFromFiles } from '../data/prepare.js';
import { synthesize } from '../data/synth/writer.js';
import { SUBSETS, type Subset } from '../data/types.js';
import type { Report } from '../eval/metrics.js';
import { evaluateCheckpoint } from '../eval/run.js';
import { recipeOptions } from '../train/trainer.js';
import type { TrainRecipe } from '../train/recipes.js';
import { progress } from '../util/progress.js';
import { train } from './train.js';

export interface DemoOptions {
  /** Everything the demo makes goes under this directory (default: data in runs/demo, the checkpoint in checkpoints/demo). */
  out?: string;
  checkpoint?: string;
  /** Synthetic episodes across the five subsets. */
  episodes: number;
  seed: number;
  maxSteps?: number;
  /** Changes to the scratch recipe (recipes.ts). */
  recipe?: Partial<TrainRecipe>;
  /** No progress bars or stage lines. */
  quiet?: boolean;
}

export const DEMO_DEFAULTS: Readonly<Pick<DemoOptions, 'episodes' | 'seed'>> = { episodes: 3000, seed: 0 };

export interface DemoResult {
  checkpoint: string;
  data: string;
  metrics: Report;
}

/** Where the demo's synthetic set, shards and checkpoint go: all under `out` when given, else the project's defaults. */
export function demoPaths(o: Pick<DemoOptions, 'out' | 'checkpoint'>): { synth: string; shards: string; checkpoint: string } {
  const data = o.out ?? join('runs', 'demo');
  const checkpoint = o.checkpoint ?? (o.out === undefined ? join('checkpoints', 'demo') : join(o.out, 'checkpoints', 'demo'));
  return { synth: join(data, 'synth'), shards: join(data, 'shards'), checkpoint };
}

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const say = (line: string) => o.quiet || process.stderr.write(line + '\n');
  const paths = demoPaths(o);
  say(`[1/4] synthesising ${o.episodes} episodes → ${paths.synth}`);
  const counts = await synthStage(o, paths.synth);
  say(`[2/4] preparing shards (built-in encoder) → ${paths.shards}`);
  await prepareStage(o, paths.synth, paths.shards, counts, say);
  say(`[3/4] training tiny (scratch recipe) → ${paths.checkpoint}`);
  const t = await train({
    ...recipeOptions('scratch'),
    ...o.recipe,
    data: paths.shards,
    out: paths.checkpoint,
    seed: o.seed,
    maxSteps: o.maxSteps,
    resume: true,
    quiet: o.quiet,
  });
  say(`[4/4] evaluating ${t.checkpoint} on the test split`);
  const { report } = await evaluateCheckpoint({ checkpoint: t.checkpoint, data: paths.shards, split: 'test', quiet: o.quiet });
  return { checkpoint: t.checkpoint, data: paths.shards, metrics: report };
}

type SynthCounts = Awaited<ReturnType<typeof synthesize>>['summary']['counts'];

async function synthStage(o: DemoOptions, dir: string): Promise<SynthCounts> {
  let bar: ReturnType<typeof progress> | undefined;
  const synth = await synthesize({
    out: dir,
    episodes: o.episodes,
    seed: o.seed,
    subsets: SUBSETS,
    size: { width: 160, height: 320 },
    onStart: (n) => (bar = progress({ label: 'synth', total: n, unit: 'episodes', quiet: o.quiet })),
    onEpisode: () => bar?.tick(),
  });
  bar?.stop();
  if (synth.unchanged && !o.quiet) process.stderr.write('      already there, reused\n');
  return synth.summary.counts;
}

async function prepareStage(o: DemoOptions, synthDir: string, shardDir: string, counts: SynthCounts, say: (l: string) => void): Promise<void> {
  for (const subset of Object.keys(counts) as Subset[]) {
    const sub = counts[subset]!;
    let bar: ReturnType<typeof progress> | undefined;
    let seen = 0;
    const s = await prepareFromFiles({
      inputs: sub.files.map((f) => join(synthDir, subset, f)),
      splits: join(synthDir, subset, 'split.json'),
      subset,
      out: shardDir,
      onProgress: (p) => {
        bar ??= progress({ label: `prepare ${subset}`, total: sub.steps, unit: 'screens', quiet: o.quiet });
        bar.tick(p.screens - seen);
        seen = p.screens;
      },
    });
    bar?.stop();
    say(`      ${subset}: ${s.upToDate ? 'up to date' : `${s.encoded} screens encoded at ${s.screensPerSecond.toFixed(0)}/s`}`);
  }
}
