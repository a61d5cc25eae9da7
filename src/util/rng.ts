import { createHash } from 'node:crypto';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';

/** 128-bit generator state from a label path; sha256 so that nearby labels give unrelated streams. */
function stateFor(labels: readonly (string | number)[]): number[] {
  const digest = createHash('sha256').update(JSON.stringify(labels)).digest();
  const words = [0, 4, 8, 12].map((o) => digest.readInt32LE(o));
  // xoroshiro's all-zero state is a fixed point: avoid it.
  if (!words.some((w) => w !== 0)) words[0] = 1;
  return words;
}

/**
 * Seeded random stream for the synthetic set. Every draw comes from here (never Math.random or the
 * clock), and independent parts (subset, episode, world) fork their own stream by label, so one part's
 * changes never shift another part's numbers.
 */
export class Rng {
  private constructor(
    private readonly labels: readonly (string | number)[],
    private readonly gen: RandomGenerator,
  ) {}

  static from(...labels: (string | number)[]): Rng {
    return new Rng(labels, xoroshiro128plusFromState(stateFor(labels)));
  }

  /** An independent stream named by this one's labels plus `label`; does not advance this stream. */
  fork(...label: (string | number)[]): Rng {
    return Rng.from(...this.labels, ...label);
  }

  /** Uniform integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return uniformInt(this.gen, lo, hi);
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return uniformFloat64(this.gen);
  }

  /** Uniform float in [lo, hi). */
  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.float();
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[this.int(0, items.length - 1)]!;
  }

  /** Picks by weight; weights need not sum to 1. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((s, [, w]) => s + w, 0);
    let r = this.float() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1]![0];
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** `n` distinct items in random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    return this.shuffle(items).slice(0, Math.min(n, items.length));
  }

  /** A string of `n` decimal digits, the first one non-zero. */
  digits(n: number): string {
    let s = String(this.int(1, 9));
    for (let i = 1; i < n; i++) s += String(this.int(0, 9));
    return s;
  }
}
