/** BoundedMap (util/bounded_map.ts): at most `limit` entries, the oldest insertion forgotten first. */
import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../src/util/bounded_map.js';

describe('BoundedMap', () => {
  it('keeps the newest `limit` keys and forgets the oldest first', () => {
    const m = new BoundedMap<string, number>(3);
    for (const [i, k] of ['a', 'b', 'c', 'd'].entries()) m.set(k, i);
    expect(['a', 'b', 'c', 'd'].map((k) => m.get(k))).toEqual([undefined, 1, 2, 3]);
    expect(m.has('a')).toBe(false);
  });

  it('a key set again keeps its value fresh without forgetting another', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.set('b', 3);
    expect([m.get('a'), m.get('b')]).toEqual([1, 3]);
  });
});
