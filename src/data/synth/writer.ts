import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { exampleFromStep } from '../aitw.js';
import { EpisodeShardWriter, shardName as sharedShardName, splitEpisodes } from '../episode_shards.js';
import { SUBSETS, type Splits, type Subset } from '../types.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { readJsonIfExists } from '../../util/json.js';
import { InputError } from '../../util/errors.js';
import { APP_SPLITS, type AppSplit } from './apps.js';
import { GENERATOR_VERSION, generateTrace, renderTrace, subsetsFor } from './episode.js';
import { Rng } from '../../util/rng.js';
import type { ScreenSize } from './world.js';

export const DEFAULT_SHARD_EPISODES = 200;
/** Episodes rendered ahead of the one being written (sharp renders them on its thread pool). */
const IN_FLIGHT = 4;

export interface SynthOptions {
  out: string;
  /** Total across the chosen subsets. */
  episodes: number;
  seed: number;
  subsets: readonly Subset[];
  size: ScreenSize;
  /**
   * Width ÷ height of the screens: each episode draws one (seeded per episode) and keeps `size`'s
   * height. Absent or empty = `size` alone. Phones range from 20:9 (0.45) to 16:9 (0.5625).
   */
  aspects?: readonly number[];
  /**
   * Which apps the set is built around (apps.ts: UNSEEN_APP_IDS). 'seen' (default): no held-out app
   * appears anywhere. 'unseen': every goal's target is a held-out app and every episode is in the test
   * split; only the subsets subsetsFor('unseen') lists can be asked for.
   */
  apps?: AppSplit;
  shardEpisodes?: number;
  /** Overwrite a DIR that holds a synth set made with other arguments. */
  force?: boolean;
  /** Called once generation really starts (not for a no-op re-run), with the episode total. */
  onStart?: (episodes: number) => void;
  /** Called after each episode is written. */
  onEpisode?: (subset: Subset) => void;
}

export interface SubsetSummary {
  episodes: number;
  steps: number;
  splits: { train: number; val: number; test: number };
  files: string[];
}

/** DIR/synth.json: what was generated and from which arguments. */
export interface SynthSummary {
  generator: 'autoui-synth';
  version: number;
  seed: number;
  episodes: number;
  subsets: Subset[];
  screen: ScreenSize;
  /** The aspects episodes drew from (absent: every screen is `screen`). */
  aspects?: number[];
  apps: AppSplit;
  shardEpisodes: number;
  counts: Partial<Record<Subset, SubsetSummary>>;
  totals: { episodes: number; steps: number };
}

export interface SynthResult {
  summary: SynthSummary;
  /** True when DIR already held exactly this set, so nothing was written. */
  unchanged: boolean;
  seconds: number;
}

/** Splits the total evenly over subsets; the first ones take the remainder. */
export function episodesPerSubset(total: number, subsets: readonly Subset[]): Map<Subset, number> {
  const base = Math.floor(total / subsets.length);
  const extra = total % subsets.length;
  return new Map(subsets.map((s, i) => [s, base + (i < extra ? 1 : 0)]));
}

/** ~80/10/10 by episode, shuffled by seed; an unseen-app set is all test (it exists to be tested on). */
export function splitsFor(ids: readonly string[], rng: Rng, apps: AppSplit): Splits {
  return apps === 'unseen' ? { train: [], val: [], test: [...ids] } : splitEpisodes(ids, rng);
}

export { splitEpisodes };

export function shardName(subset: Subset, index: number): string {
  return sharedShardName(subset, index);
}

const appsOf = (o: SynthOptions): AppSplit => o.apps ?? 'seen';

const sameArgs = (a: SynthSummary, o: SynthOptions, shard: number): boolean =>
  a.generator === 'autoui-synth' &&
  a.version === GENERATOR_VERSION &&
  a.seed === o.seed &&
  a.episodes === o.episodes &&
  a.shardEpisodes === shard &&
  a.screen?.width === o.size.width &&
  a.screen?.height === o.size.height &&
  JSON.stringify(a.aspects ?? []) === JSON.stringify(o.aspects ?? []) &&
  a.apps === appsOf(o) &&
  JSON.stringify(a.subsets) === JSON.stringify(o.subsets);

/** Episode i's screen: `size`'s height at one of `aspects` (a seeded draw), the width rounded to even pixels. */
export function episodeSize(o: Pick<SynthOptions, 'size' | 'aspects' | 'seed'>, subset: Subset, i: number): ScreenSize {
  if (!o.aspects || o.aspects.length === 0) return o.size;
  const aspect = Rng.from('autoui-synth-aspect', o.seed, subset, i).pick(o.aspects);
  return { width: 2 * Math.round((o.size.height * aspect) / 2), height: o.size.height };
}

/** Rejects arguments no set can be made from, naming the option at fault. */
function checkOptions(o: SynthOptions): void {
  const apps = appsOf(o);
  if (!APP_SPLITS.includes(apps)) throw new InputError(`unknown app split '${String(apps)}' (known: ${APP_SPLITS.join(', ')})`, '--apps');
  for (const a of o.aspects ?? []) if (!(a >= 0.25 && a <= 1)) throw new InputError(`an aspect is a phone screen's width ÷ height, in [0.25, 1] (got ${a})`, '--aspects');
  for (const s of o.subsets) if (!SUBSETS.includes(s)) throw new InputError(`unknown subset '${s}' (known: ${SUBSETS.join(', ')})`, '--subsets');
  const possible = subsetsFor(apps);
  for (const s of o.subsets)
    if (!possible.includes(s))
      throw new InputError(`subset '${s}' has no task whose goal names an app, so a --apps ${apps} set cannot hold it (possible: ${possible.join(', ')})`, '--subsets');
}

async function existing(out: string): Promise<SynthSummary | undefined> {
  return (await readJsonIfExists(join(out, 'synth.json'), '; remove it or pick another --out')) as SynthSummary | undefined;
}

async function allFilesPresent(out: string, s: SynthSummary): Promise<boolean> {
  for (const [subset, c] of Object.entries(s.counts)) {
    for (const f of [...(c?.files ?? []), 'split.json']) {
      try {
        await stat(join(out, subset, f));
      } catch {
        return false;
      }
    }
  }
  return true;
}

/** Writes one subset's shards and split.json; removes older shards of ours that this run did not write. */
async function writeSubset(o: SynthOptions, subset: Subset, count: number, shard: number): Promise<SubsetSummary> {
  const dir = join(o.out, subset);
  const ids: string[] = [];
  let steps = 0;
  const shards = new EpisodeShardWriter(dir, subset, shard);
  const pending: Promise<Uint8Array[]>[] = [];
  const start = (i: number): Promise<Uint8Array[]> => {
    const size = episodeSize(o, subset, i);
    const trace = generateTrace(o.seed, subset, i, size, o.subsets, appsOf(o));
    ids.push(trace.episodeId);
    return renderTrace(trace, size).then((st) => Promise.all(st.map((s) => exampleFromStep(s, { imageFormat: 'raw' }))));
  };
  try {
    let next = 0;
    for (let i = 0; i < count; i++) {
      while (next < count && next < i + IN_FLIGHT) pending.push(start(next++));
      const records = await pending.shift()!;
      await shards.writeEpisode(records);
      steps += records.length;
      o.onEpisode?.(subset);
    }
  } catch (err) {
    await shards.abort();
    await Promise.allSettled(pending);
    throw err;
  }
  const files = await shards.close();
  const splits = splitsFor(ids, Rng.from('autoui-synth-split', o.seed, subset), appsOf(o));
  await writeFileAtomic(join(dir, 'split.json'), JSON.stringify(splits) + '\n');
  return { episodes: count, steps, splits: { train: splits.train.length, val: splits.val.length, test: splits.test.length }, files };
}

/**
 * Generates the synthetic AITW set into `out`. Re-running with the same arguments over a complete
 * directory does nothing (synth.json, written last, records the arguments).
 */
export async function synthesize(o: SynthOptions): Promise<SynthResult> {
  const t0 = performance.now();
  const shard = o.shardEpisodes ?? DEFAULT_SHARD_EPISODES;
  checkOptions(o);
  const prior = await existing(o.out);
  if (prior) {
    if (sameArgs(prior, o, shard) && (await allFilesPresent(o.out, prior)))
      return { summary: prior, unchanged: true, seconds: (performance.now() - t0) / 1000 };
    if (!sameArgs(prior, o, shard) && !o.force)
      throw new InputError(
        `already holds a synthetic set made with other arguments (seed ${prior.seed}, ${prior.episodes} episodes, ${prior.screen?.width}×${prior.screen?.height}, subsets ${prior.subsets?.join(',')}, ${prior.apps ?? 'seen'} apps, generator version ${prior.version}); use --force to replace it or pick another --out`,
        join(o.out, 'synth.json'),
      );
  }
  o.onStart?.(o.episodes);
  const counts: Partial<Record<Subset, SubsetSummary>> = {};
  for (const [subset, n] of episodesPerSubset(o.episodes, o.subsets)) counts[subset] = await writeSubset(o, subset, n, shard);
  const summary: SynthSummary = {
    generator: 'autoui-synth',
    version: GENERATOR_VERSION,
    seed: o.seed,
    episodes: o.episodes,
    subsets: [...o.subsets],
    screen: { width: o.size.width, height: o.size.height },
    ...(o.aspects && o.aspects.length > 0 ? { aspects: [...o.aspects] } : {}),
    apps: appsOf(o),
    shardEpisodes: shard,
    counts,
    totals: {
      episodes: Object.values(counts).reduce((a, c) => a + (c?.episodes ?? 0), 0),
      steps: Object.values(counts).reduce((a, c) => a + (c?.steps ?? 0), 0),
    },
  };
  await writeFileAtomic(join(o.out, 'synth.json'), JSON.stringify(summary, null, 2) + '\n');
  return { summary, unchanged: false, seconds: (performance.now() - t0) / 1000 };
}
