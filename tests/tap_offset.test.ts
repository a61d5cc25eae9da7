/** Where in the pointed patch a tap lands (model/tap_offset.ts). */
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import type { YX } from '../src/data/types.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { groundingPatches } from '../src/model/grounding.js';
import { gridLayout, patchCentre, type ScreenLayout } from '../src/model/pointer.js';
import { OFFSET_RANGE, OFFSET_SLOTS, offsetLoss, offsetPoint, offsetTargetBatch, offsetTargets, patchOffset, tapOffsets, type OffsetWeights } from '../src/model/tap_offset.js';
import { validateConfig } from '../src/model/config.js';
import '../src/model/register_gradients.js';
import { disposeBatch, microConfig, randomBatch } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

const layout = (rows: number, cols: number): ScreenLayout => ({ patches: gridLayout([rows, cols]), texts: [] });
const unit = fc.double({ min: 0, max: 1, noNaN: true });

describe('patch offsets', () => {
  it('offsetPoint undoes patchOffset for any patch and any point on the screen', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 10 }), fc.nat(), unit, unit, (rows, cols, k, y, x) => {
        const l = layout(rows, cols);
        const p = k % (rows * cols);
        const [py, px] = offsetPoint(p, patchOffset([y, x], p, l), l);
        expect(py).toBeCloseTo(y, 9);
        expect(px).toBeCloseTo(x, 9);
      }),
    );
  });

  it('an offset of half a patch reaches the patch edge; a point never leaves the screen', () => {
    const l = layout(4, 2);
    expect(offsetPoint(0, [0.5, 0.5], l)).toEqual([0.25, 0.5]);
    expect(offsetPoint(0, [0, 0], l)).toEqual(patchCentre(0, l.patches));
    expect(offsetPoint(0, [-OFFSET_RANGE, -OFFSET_RANGE], l)).toEqual([0, 0]);
    expect(offsetPoint(7, [OFFSET_RANGE, OFFSET_RANGE], l)).toEqual([1, 1]);
  });

  it('targets: the grounding patches around each tap, each with the tap\'s offset from its centre, within OFFSET_RANGE; none without a tap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), fc.integer({ min: 2, max: 10 }), unit, unit, (rows, cols, y, x) => {
        const l = layout(rows, cols);
        const [row, none] = offsetTargets([[y, x], null], [l, l]);
        expect(row!.patches).toEqual(groundingPatches([y, x], l.patches));
        expect(row!.patches.length).toBeLessThanOrEqual(OFFSET_SLOTS);
        row!.offsets.forEach((o, i) => {
          expect(o).toEqual(patchOffset([y, x], row!.patches[i]!, l));
          expect(Math.hypot(...o)).toBeLessThanOrEqual(1 + 1e-9);
        });
        expect(none).toEqual({ patches: [], offsets: [] });
      }),
    );
  });

  it('packs OFFSET_SLOTS slots a row, the empty ones masked', () => {
    const t = offsetTargetBatch([{ patches: [3, 4], offsets: [[0.1, -0.2], [0.3, 0.4]] }, { patches: [], offsets: [] }]);
    expect(Array.from(t.patch.dataSync())).toEqual([3, 4, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(t.mask.dataSync())).toEqual([1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(t.offset.arraySync().slice(0, 3)).toEqual([[Math.fround(0.1), Math.fround(-0.2)], [Math.fround(0.3), Math.fround(0.4)], [0, 0]]);
    tf.dispose(Object.values(t));
  });
});

const zeroWeights = (d: number): OffsetWeights => ({
  hidden: tf.zeros([d, d]) as tf.Tensor2D, key: tf.zeros([d, d]) as tf.Tensor2D, bias: tf.zeros([d]) as tf.Tensor1D, out: tf.zeros([2, d]) as tf.Tensor2D, outBias: tf.zeros([2]) as tf.Tensor1D,
});

describe('tapOffsets', () => {
  it('is R·tanh(W_o relu(W_h h + W_k k_j + b_1) + b_o) for the chosen patch of each row', () => {
    // d = 2, two rows of three screen tokens, two slots a row.
    const keys = tf.tensor3d([[[1, 0], [0, 1], [2, 2]], [[-1, 0], [0, -1], [1, -1]]]);
    const hidden = tf.tensor2d([[0.5, 0], [0, 0.5]]);
    const w: OffsetWeights = { hidden: tf.eye(2) as tf.Tensor2D, key: tf.eye(2) as tf.Tensor2D, bias: tf.tensor1d([0, 0.1]), out: tf.tensor2d([[1, 0], [0, -1]]), outBias: tf.tensor1d([0, 0.2]) };
    const o = tapOffsets(hidden, keys, tf.tensor1d([2, 0, 1, 2], 'int32'), w).arraySync();
    const expected = (h: number[], k: number[]) => {
      const z = [Math.max(0, h[0]! + k[0]!), Math.max(0, h[1]! + k[1]! + 0.1)];
      return [OFFSET_RANGE * Math.tanh(z[0]!), OFFSET_RANGE * Math.tanh(-z[1]! + 0.2)];
    };
    [expected([0.5, 0], [2, 2]), expected([0.5, 0], [1, 0]), expected([0, 0.5], [0, -1]), expected([0, 0.5], [1, -1])].forEach((e, i) => {
      expect(o[i]![0]).toBeCloseTo(e[0]!, 5);
      expect(o[i]![1]).toBeCloseTo(e[1]!, 5);
    });
  });

  it('is zero with W_o, b_o = 0 (an untrained head taps the centre), and its loss is the masked mean squared error', () => {
    const keys = tf.randomNormal([2, 5, 4], 0, 1, 'float32', 1) as tf.Tensor3D;
    const o = tapOffsets(tf.randomNormal([2, 4], 0, 1, 'float32', 2) as tf.Tensor2D, keys, tf.tensor1d([0, 4, 1, 1], 'int32'), zeroWeights(4));
    expect(Array.from(o.dataSync())).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const t = { patch: tf.tensor1d([0, 4, 1, 1], 'int32'), offset: tf.tensor2d([[0.3, -0.4], [1, 1], [0.5, 0], [9, 9]]), mask: tf.tensor1d([1, 0, 1, 0]) };
    expect(offsetLoss(tf.tensor2d([[0, 0], [0, 0], [0.5, 0.5], [0, 0]]), t).dataSync()[0]).toBeCloseTo((0.25 + 0.25) / 2, 6);
    expect(offsetLoss(o, { ...t, mask: tf.zeros([4]) as tf.Tensor1D }).dataSync()[0]).toBe(0);
  });

  it('passes no gradient into the decoder state or the screen tokens: the loss trains the head alone', () => {
    const w: OffsetWeights = { ...zeroWeights(3), hidden: tf.eye(3) as tf.Tensor2D, key: tf.eye(3) as tf.Tensor2D, out: tf.ones([2, 3]) as tf.Tensor2D };
    const t = { patch: tf.tensor1d([1], 'int32'), offset: tf.tensor2d([[0.4, -0.2]]), mask: tf.ones([1]) as tf.Tensor1D };
    const [gh, gk] = tf.grads((h: tf.Tensor, k: tf.Tensor) => offsetLoss(tapOffsets(h as tf.Tensor2D, k as tf.Tensor3D, t.patch, w), t))([tf.tensor2d([[0.1, 0.2, 0.3]]), tf.tensor3d([[[1, 0, 0], [0, 1, 0]]])]);
    expect(Array.from(gh!.dataSync()).every((v) => v === 0)).toBe(true);
    expect(Array.from(gk!.dataSync()).every((v) => v === 0)).toBe(true);
    const [gw] = tf.grads((o: tf.Tensor) => offsetLoss(tapOffsets(tf.tensor2d([[0.1, 0.2, 0.3]]), tf.tensor3d([[[1, 0, 0], [0, 1, 0]]]), t.patch, { ...w, out: o as tf.Tensor2D }), t))([w.out]);
    expect(tf.abs(gw!).sum().dataSync()[0]).toBeGreaterThan(0);
  });

  it('learns where the target lies from what the patch shows: a few hundred steps cut the error tenfold', () => {
    // Each patch's key shows the offset of "its" target (two noisy features); the head must read it.
    const d = 8;
    const rows = 32;
    const truth = tf.randomUniform([rows * 2, 2], -0.8, 0.8, 'float32', 3) as tf.Tensor2D;
    const keys = tf.reshape(tf.concat([truth, tf.randomNormal([rows * 2, d - 2], 0, 0.3, 'float32', 4)], 1), [rows, 2, d]) as tf.Tensor3D;
    const hidden = tf.randomNormal([rows, d], 0, 1, 'float32', 5) as tf.Tensor2D;
    const t = { patch: tf.tensor1d(Array.from({ length: rows * 2 }, (_, i) => i % 2), 'int32'), offset: truth, mask: tf.ones([rows * 2]) as tf.Tensor1D };
    const init = (shape: number[], seed: number) => tf.variable(tf.randomNormal(shape, 0, 0.3, 'float32', seed));
    const w = { hidden: init([d, d], 6), key: init([d, d], 7), bias: tf.variable(tf.zeros([d])), out: tf.variable(tf.zeros([2, d])), outBias: tf.variable(tf.zeros([2])) } as unknown as OffsetWeights;
    const loss = () => offsetLoss(tapOffsets(hidden, keys, t.patch, w), t);
    const before = loss().dataSync()[0]!;
    const opt = tf.train.adam(0.03);
    for (let i = 0; i < 300; i++) tf.dispose(opt.minimize(loss, true));
    expect(loss().dataSync()[0]!).toBeLessThan(before / 10);
  });
});

describe('the tap offset in the model', () => {
  it('needs the tap pointer', () => {
    expect(() => validateConfig(microConfig({ tapOffset: true }))).toThrow(/tapOffset needs tapPointer/);
  });

  it('its loss trains W_o (zero at first) from the decoder state at the tap step, and adds the mean squared offset of the patches around the gold tap', () => {
    const model = new AutoUiModel(microConfig({ tapPointer: true, tapOffset: true }), 5);
    const w = model.namedWeights().get('tap_offset.out.weight')!;
    expect(tf.abs(w).sum().dataSync()[0]).toBe(0);
    const batch = randomBatch(model, 2, 5, 4, 6, 9);
    const targets = offsetTargets([[0.3, 0.6] as YX, null], [layout(3, 2), layout(3, 2)]);
    const extra = { tapAt: tf.tensor1d([2, 0], 'int32'), tapOffsets: offsetTargetBatch(targets) };
    const { value, grads } = tf.variableGrads(() => model.loss({ ...batch, ...extra }, false, { ground: 0, refer: 0, offset: 1 }), [w]);
    expect(tf.abs(Object.values(grads)[0]!).sum().dataSync()[0]).toBeGreaterThan(0);
    const without = model.loss({ ...batch, ...extra }, false, { ground: 0, refer: 0, offset: 0 });
    // The untrained head taps the centres, so the gold offsets cost what their squares say.
    const expected = targets[0]!.offsets.reduce((a, [y, x]) => a + y * y + x * x, 0) / targets[0]!.offsets.length;
    expect(value.dataSync()[0]! - without.dataSync()[0]!).toBeCloseTo(expected, 4);
    tf.dispose([value, without, ...Object.values(grads)]);
    disposeBatch(batch);
    tf.dispose([extra.tapAt, ...Object.values(extra.tapOffsets)]);
    model.dispose();
  });
});
