/** The lexical match of screen text items with a goal (model/text_match.ts): hand-made cases and properties. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MATCH_DIM, matchFeatures, normalizeText } from '../src/model/text_match.js';

const rows = (f: Float32Array): number[][] => Array.from({ length: f.length / MATCH_DIM }, (_, i) => Array.from(f.slice(i * MATCH_DIM, (i + 1) * MATCH_DIM)));

describe('normalizeText', () => {
  it('folds case and width, and turns every run of punctuation into one space', () => {
    expect(normalizeText('  C/C++ Addons — With Node-API ')).toBe('c c addons with node api');
    expect(normalizeText('ＷＩ-ＦＩ')).toBe('wi fi');
    expect(normalizeText('...')).toBe('');
  });
});

describe('matchFeatures', () => {
  it('an item the goal names, in another case and punctuation, is wholly found; an unrelated one is not', () => {
    const [named, other, empty] = rows(matchFeatures('tap on "sanitizer special case list"', ['Sanitizer Special-Case List', 'MSVC compatibility', '—']));
    expect(named![0]).toBe(1);
    expect(named![2]).toBe(1);
    expect(named![3]).toBe(1);
    expect(other![0]).toBe(0);
    expect(other![2]).toBe(0);
    expect(empty).toEqual([0, 0, 0, 0]);
  });

  it('a longer name shares more with the goal than a word of it, though both are wholly found', () => {
    const [whole, word, longer] = rows(matchFeatures('click on Control Flow Integrity and then go back', ['Control Flow Integrity', 'Integrity', 'Control Flow Integrity Design']));
    expect(whole![0]).toBe(1);
    expect(word![0]).toBe(1);
    expect(whole![1]).toBeGreaterThan(word![1]!);
    expect(whole![3]).toBeGreaterThan(word![3]!);
    expect(longer![0]).toBeLessThan(1);
    expect(longer![2]).toBe(0);
  });

  it('a word inside a longer word is not a whole-word run', () => {
    const [f] = rows(matchFeatures('open Uberall', ['Uber']));
    expect(f![2]).toBe(0);
    expect(f![3]).toBe(0);
  });

  it('features lie in [0, 1], ignore case, and an item equal to the goal is found whole', () => {
    const text = fc.string({ unit: fc.constantFrom(...'abcXYZ é1-. '.split('')), maxLength: 24 });
    fc.assert(
      fc.property(text, fc.array(text, { maxLength: 5 }), (goal, items) => {
        const f = matchFeatures(goal, items);
        for (const v of f) {
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1);
        }
        expect(matchFeatures(goal.toUpperCase(), items.map((s) => s.toLowerCase()))).toEqual(f);
        const [self] = rows(matchFeatures(goal, [goal]));
        if (normalizeText(goal) !== '') expect([self![0], self![2]]).toEqual([1, 1]);
      }),
      { numRuns: 200 },
    );
  });
});
