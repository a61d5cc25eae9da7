import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import type { Box, YX } from '../src/data/types.js';
import { groundingLabels, groundingLoss, groundingPatches } from '../src/model/grounding.js';
import { gridLayout } from '../src/model/pointer.js';
import { groundTargetBatch } from '../src/model/batch.js';
import '../src/model/register_gradients.js';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('groundingPatches', () => {
  it('a tap at a patch centre gets that patch and its four edge neighbours; corners get fewer', () => {
    // 4 rows × 2 cols; centre of row 1, col 0 is (0.375, 0.25).
    expect(groundingPatches([0.375, 0.25], gridLayout([4, 2])).sort((a, b) => a - b)).toEqual([0, 2, 3, 4]);
    // A tap on the corner shared by four patches: each centre is √0.5 away.
    expect(groundingPatches([0.5, 0.5], gridLayout([4, 2])).sort((a, b) => a - b)).toEqual([2, 3, 4, 5]);
    expect(groundingPatches([0, 0], gridLayout([4, 2]))).toEqual([0]);
  });

  it('always holds the patch under the tap, and only patches within one patch of it', () => {
    const unit = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(unit, unit, fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 20 }), (y, x, rows, cols) => {
        const got = groundingPatches([y, x] as YX, gridLayout([rows, cols]));
        const under = Math.min(rows - 1, Math.floor(y * rows)) * cols + Math.min(cols - 1, Math.floor(x * cols));
        expect(got).toContain(under);
        for (const p of got) {
          const r = Math.floor(p / cols);
          const c = p % cols;
          expect(Math.hypot(y * rows - r - 0.5, x * cols - c - 0.5)).toBeLessThanOrEqual(1 + 1e-9);
        }
        expect(new Set(got).size).toBe(got.length);
      }),
    );
  });

  it('radius 0 is the patch under the tap alone; radius 0.5 adds only patches whose centre is that near', () => {
    const unit = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(unit, unit, fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 20 }), (y, x, rows, cols) => {
        const layout = gridLayout([rows, cols]);
        const under = Math.min(rows - 1, Math.floor(y * rows)) * cols + Math.min(cols - 1, Math.floor(x * cols));
        expect(groundingPatches([y, x] as YX, layout, 0)).toEqual([under]);
        const half = groundingPatches([y, x] as YX, layout, 0.5);
        expect(half).toContain(under);
        for (const p of half.filter((p) => p !== under)) {
          expect(Math.hypot(y * rows - Math.floor(p / cols) - 0.5, x * cols - (p % cols) - 0.5)).toBeLessThanOrEqual(0.5 + 1e-9);
        }
      }),
    );
    // The tap at the centre of row 1, col 0 of 4 × 2: its neighbours' centres are a whole patch away.
    expect(groundingPatches([0.375, 0.25], gridLayout([4, 2]), 0.5)).toEqual([2]);
  });
});

describe('groundingLoss', () => {
  it('is −log of the mean attention mass on the target, over real tokens and tap rows only', () => {
    // Row 0: two real tokens + one padded; row 1 has no target and must not count.
    const attention = tf.tensor3d([
      [[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [1, 0, 0]],
      [[0.2, 0.3, 0.5], [0.2, 0.3, 0.5], [0.2, 0.3, 0.5]],
    ]);
    const mask = tf.tensor2d([[1, 1, 0], [1, 1, 1]], undefined, 'int32');
    const targets = tf.tensor2d([[0, 1, 0], [0, 0, 0]]);
    // Mean over the two real tokens of row 0 on patch 1: (0.25 + 0.8) / 2.
    expect(groundingLoss(attention, mask, targets).dataSync()[0]).toBeCloseTo(-Math.log(0.525), 5);
    const two = tf.tensor2d([[1, 1, 0], [0, 0, 1]]);
    const expected = (-Math.log((0.75 + 0.9) / 2) - Math.log(0.5)) / 2;
    expect(groundingLoss(attention, mask, two).dataSync()[0]).toBeCloseTo(expected, 5);
    expect(groundingLoss(attention, mask, tf.zeros([2, 3])).dataSync()[0]).toBe(0);
  });

  it('pulls attention logits toward the target patches', () => {
    const logits = tf.variable(tf.zeros([1, 2, 4]));
    const mask = tf.tensor2d([[1, 1]], undefined, 'int32');
    const targets = tf.tensor2d([[0, 0, 1, 0]]);
    const g = tf.grad((l: tf.Tensor) => groundingLoss(tf.softmax(l) as tf.Tensor3D, mask, targets))(logits).arraySync() as number[][][];
    for (const row of g[0]!) {
      expect(row[2]).toBeLessThan(0); // descending the gradient raises the target logit
      [0, 1, 3].forEach((p) => expect(row[p]).toBeGreaterThan(0));
    }
  });
});

describe('groundTargetBatch', () => {
  it('marks the screen tokens around gold taps — patches nearby, text items under the tap — and leaves other actions without a target', () => {
    const tap = { action_type: 4 as const, touch_yx: [0.375, 0.25] as [number, number], lift_yx: [0.375, 0.25] as [number, number], typed_text: '' };
    const swipe = { action_type: 4 as const, touch_yx: [0.8, 0.5] as [number, number], lift_yx: [0.2, 0.5] as [number, number], typed_text: '' };
    const type = { action_type: 3 as const, touch_yx: [-1, -1] as [number, number], lift_yx: [-1, -1] as [number, number], typed_text: 'hello' };
    const patches = gridLayout([4, 2]);
    // Two text slots: the first item of row 1 lies under the tap, the second does not.
    const layouts = [
      { patches, texts: [] },
      { patches, texts: [[0.3, 0.1, 0.1, 0.3], [0.9, 0.1, 0.05, 0.2]] as [number, number, number, number][] },
      { patches, texts: [] },
    ];
    const screen = tf.zeros([3, 8, 4]) as tf.Tensor3D;
    const texts = { ids: tf.zeros([3, 2, 1], 'int32') as tf.Tensor3D, tokenMask: tf.zeros([3, 2, 1]) as tf.Tensor3D, mask: tf.zeros([3, 2]) as tf.Tensor2D, boxes: tf.zeros([3, 2, 20]) as tf.Tensor3D };
    const t = groundTargetBatch([type, tap, swipe], { screen, texts, layouts }).arraySync();
    expect(t).toEqual([
      [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
      [1, 0, 1, 1, 1, 0, 0, 0, 1, 0],
      [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ]);
    // The tap pointer's targets at radius 0: the patch under the tap and the text item under it.
    expect(groundTargetBatch([type, tap, swipe], { screen, texts, layouts }, [], 0).arraySync()[1]).toEqual([0, 0, 1, 0, 0, 0, 0, 0, 1, 0]);
    tf.dispose([screen, ...Object.values(texts)]);
  });
});

describe('groundingLabels', () => {
  it('a tap on an icon also names the text item that labels it (directly under it, centred), not its neighbours', () => {
    const icons: Box[] = [[0.3, 0.1, 0.08, 0.16], [0.3, 0.5, 0.08, 0.16]];
    const texts: Box[] = [[0.39, 0.1, 0.02, 0.16], [0.39, 0.5, 0.02, 0.16], [0.5, 0.1, 0.02, 0.16]];
    expect(groundingLabels([0.34, 0.18], icons, texts)).toEqual([0]);
    expect(groundingLabels([0.34, 0.58], icons, texts)).toEqual([1]);
    expect(groundingLabels([0.6, 0.58], icons, texts)).toEqual([]);
  });
});
