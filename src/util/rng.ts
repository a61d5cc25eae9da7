/**
 * Seeded PRNG (mulberry32): tiny, fast, and its whole state is one uint32, so data order and
 * sampling can be reproduced exactly on resume. Not for cryptography.
 */
export class Rng {
  constructor(public state: number) {
    this.state = state >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }
}

/** Derives an independent seed for a named stream (e.g. epoch 3's data order) from a base seed. */
export function deriveSeed(base: number, ...parts: (string | number)[]): number {
  let h = (base ^ 0x9e3779b9) >>> 0;
  for (const ch of parts.join('/')) {
    h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  }
  return new Rng(h).int(2 ** 32);
}
