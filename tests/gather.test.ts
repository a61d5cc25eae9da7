import { describe, expect, it } from 'vitest';
import { gatherSlices } from '../src/native/gather.js';

describe('gatherSlices', () => {
  it('copies the indexed slices of every batch and outer row, repeats and reorders included', () => {
    // x [batch 2, outer 1, dim 3, slice 2]: x[b, 0, d, :] = [10b + d, −(10b + d)].
    const x = Float32Array.from([0, -0, 1, -1, 2, -2, 10, -10, 11, -11, 12, -12]);
    const out = new Float32Array(2 * 3 * 2);
    gatherSlices(x, Int32Array.from([2, 0, 2, 1, 1, 0]), { batchSize: 2, outerSize: 1, dimSize: 3, sliceSize: 2 }, out);
    expect(Array.from(out)).toEqual([2, -2, 0, -0, 2, -2, 11, -11, 11, -11, 10, -10]);
  });

  it('gathers along an inner axis (outer rows before it)', () => {
    // x [outer 2, dim 2, slice 1] as int32; indices [1] pick the second of each outer row.
    const out = new Int32Array(2);
    gatherSlices(Int32Array.from([5, 6, 7, 8]), Int32Array.from([1]), { batchSize: 1, outerSize: 2, dimSize: 2, sliceSize: 1 }, out);
    expect(Array.from(out)).toEqual([6, 8]);
  });
});
