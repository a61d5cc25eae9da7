import { Rng } from '../util/rng.js';

export interface BatchPlanOptions {
  batchSize: number;
  seed: number;
  epoch: number;
  /** Fraction of each subset's rows drawn per epoch (Auto-UI: GoogleApps at 10%; above 1, rows repeat); missing = 1. */
  subsetFraction?: Record<string, number>;
  /** Sort by length within windows of this many batches, so padding stays small but order stays random. */
  bucketWindow?: number;
}

/**
 * The batches of one epoch as lists of example indices: a pure function of (lengths, subsets, options),
 * so a resumed run rebuilds exactly the same order from the epoch number alone.
 */
export function planEpoch(lengths: ArrayLike<number>, subsets: ArrayLike<string>, opts: BatchPlanOptions): number[][] {
  const rng = Rng.from(opts.seed, 'epoch', opts.epoch);
  const bySubset = new Map<string, number[]>();
  for (let i = 0; i < lengths.length; i++) {
    const s = subsets[i]!;
    if (!bySubset.has(s)) bySubset.set(s, []);
    bySubset.get(s)!.push(i);
  }
  const chosen: number[] = [];
  for (const [subset, idx] of [...bySubset.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const frac = Math.max(0, opts.subsetFraction?.[subset] ?? 1);
    // Above 1 a subset is oversampled: every row floor(frac) times, then a random share for the rest.
    const whole = Math.floor(frac);
    const shuffled = rng.shuffle(idx);
    for (let k = 0; k < whole; k++) chosen.push(...shuffled);
    chosen.push(...shuffled.slice(0, Math.round(idx.length * (frac - whole))));
  }
  const order = rng.shuffle(chosen);
  const window = opts.batchSize * (opts.bucketWindow ?? 16);
  const batches: number[][] = [];
  for (let start = 0; start < order.length; start += window) {
    const chunk = order.slice(start, start + window).sort((a, b) => lengths[a]! - lengths[b]! || a - b);
    for (let b = 0; b < chunk.length; b += opts.batchSize) batches.push(chunk.slice(b, b + opts.batchSize));
  }
  return rng.shuffle(batches);
}
