import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { ActionType, type AitwAction, type YX } from '../src/data/types.js';
import { groundingPatches } from '../src/model/grounding.js';
import { attentionPointer, gridLayout, patchCentre, tapAt, tapPointer, tapSource, tokenCentre } from '../src/model/pointer.js';
import { InputError } from '../src/util/errors.js';
import { AutoUiModel } from '../src/model/autoui.js';
import '../src/model/register_gradients.js';
import { disposeBatch, microConfig, randomBatch } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

const action = (type: AitwAction['action_type'], touch: YX, lift: YX = touch): AitwAction => ({ action_type: type, touch_yx: touch, lift_yx: lift, typed_text: '' });

describe('patchCentre', () => {
  it('is the centre of the row-major patch', () => {
    expect(patchCentre(0, gridLayout([4, 2]))).toEqual([0.125, 0.25]);
    expect(patchCentre(5, gridLayout([4, 2]))).toEqual([0.625, 0.75]);
    expect(patchCentre(7, gridLayout([4, 2]))).toEqual([0.875, 0.75]);
  });

  it('lies under its own patch: the grounding targets of a tap there hold the patch', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 20 }), fc.nat(), (rows, cols, k) => {
        const p = k % (rows * cols);
        const [y, x] = patchCentre(p, gridLayout([rows, cols]));
        expect(Math.floor(y * rows) * cols + Math.floor(x * cols)).toBe(p);
        expect(groundingPatches([y, x], gridLayout([rows, cols]))).toContain(p);
      }),
    );
  });
});

describe('attentionPointer', () => {
  it('takes the arg-max of the attention averaged over real tokens only', () => {
    // 2 rows × 2 cols grid, P = 4. Row 0: token 0 looks at patch 1, token 1 at patch 2 a bit more
    // strongly, token 2 is padding and looks hard at patch 3 — the mean over real tokens picks 2.
    const attention = tf.tensor3d([
      [[0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.8, 0.0], [0, 0, 0, 1]],
      [[0.9, 0.1, 0, 0], [0.9, 0.1, 0, 0], [0.9, 0.1, 0, 0]],
    ]);
    const mask = tf.tensor2d([[1, 1, 0], [1, 1, 1]], [2, 3], 'int32');
    const l = { patches: gridLayout([2, 2]), texts: [] };
    expect(attentionPointer(attention, mask, [l, l])).toEqual([patchCentre(2, gridLayout([2, 2])), patchCentre(0, gridLayout([2, 2]))]);
    tf.dispose([attention, mask]);
  });

  it('lands on a text item\'s box centre when the attention picks the text token', () => {
    // 2×2 patches then two text items; row 0 attends to text item 1, row 1 to patch 3.
    const attention = tf.tensor3d([[[0, 0, 0, 0, 0.1, 0.9]], [[0, 0, 0, 0.7, 0.3, 0]]]);
    const mask = tf.ones([2, 1], 'int32') as tf.Tensor2D;
    const l = { patches: gridLayout([2, 2]), texts: [[0.1, 0.2, 0.1, 0.4], [0.6, 0.1, 0.05, 0.3]] as [number, number, number, number][] };
    const [a, b] = attentionPointer(attention, mask, [l, l]);
    expect(a![0]).toBeCloseTo(0.625);
    expect(a![1]).toBeCloseTo(0.25);
    expect(b).toEqual(patchCentre(3, gridLayout([2, 2])));
    expect(() => tokenCentre(l, 6)).toThrow(/neither one of 4 patches nor one of 2 text items/);
    tf.dispose([attention, mask]);
  });
});

describe('tapAt', () => {
  it('moves a tap to the point, touch and lift alike, and leaves every other action as it is', () => {
    const moved = tapAt(action(ActionType.DUAL_POINT, [0.1, 0.2]), [0.5, 0.6]);
    expect(moved.touch_yx).toEqual([0.5, 0.6]);
    expect(moved.lift_yx).toEqual([0.5, 0.6]);
    const swipe = action(ActionType.DUAL_POINT, [0.8, 0.5], [0.2, 0.5]);
    expect(tapAt(swipe, [0.5, 0.6])).toBe(swipe);
    const back = action(ActionType.PRESS_BACK, [-1, -1]);
    expect(tapAt(back, [0.5, 0.6])).toBe(back);
  });
});

describe('tapSource', () => {
  const grid: [number, number] = [16, 8];

  it('auto reads taps from the pointer when the checkpoint has one, else from the attention of a grounded checkpoint on a grid encoder', () => {
    expect(tapSource('auto', { grid, groundWeight: 1, pointer: true })).toBe('pointer');
    expect(tapSource('auto', { grid, groundWeight: 1, pointer: false })).toBe('attention');
    expect(tapSource('auto', { grid, groundWeight: 0, pointer: false })).toBe('tokens');
    expect(tapSource('auto', { grid: null, groundWeight: 1, pointer: true })).toBe('tokens');
  });

  it('an explicit choice wins; the attention or pointer without a grid, or a pointer the checkpoint lacks, is an input error naming --tap-from', () => {
    expect(tapSource('tokens', { grid, groundWeight: 1, pointer: true })).toBe('tokens');
    expect(tapSource('attention', { grid, groundWeight: 0, pointer: true })).toBe('attention');
    for (const bad of [() => tapSource('attention', { grid: null, groundWeight: 1, pointer: false }), () => tapSource('pointer', { grid, groundWeight: 1, pointer: false })]) {
      expect(bad).toThrow(InputError);
      try {
        bad();
      } catch (e) {
        expect((e as InputError).where).toBe('--tap-from');
      }
    }
  });
});

describe('tapPointer', () => {
  it('with W_p = 0 it is the attention prior, renormalised over real tokens; W_p moves it toward the keys the state agrees with', () => {
    const keys = tf.tensor3d([[[1, 0], [0, 1], [1, 1], [5, 5]]]);
    const mask = tf.tensor2d([[1, 1, 1, 0]]);
    const prior = tf.tensor2d([[0.5, 0.3, 0.1, 0.1]]);
    const hidden = tf.tensor2d([[0, 3]]);
    const zero = tapPointer(hidden, keys, mask, prior, tf.zeros([2, 2]) as tf.Tensor2D).arraySync()[0]!;
    [0.5 / 0.9, 0.3 / 0.9, 0.1 / 0.9, 0].forEach((v, k) => expect(zero[k]).toBeCloseTo(v, 4));
    const eye = tapPointer(hidden, keys, mask, prior, tf.eye(2) as tf.Tensor2D).arraySync()[0]!;
    expect(eye[1]).toBeGreaterThan(zero[1]!);
    expect(eye[0]).toBeLessThan(zero[0]!);
    expect(eye[3]).toBe(0);
    expect(eye.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    tf.dispose([keys, mask, prior, hidden]);
  });

  it('passes no gradient into the prior: the grounding loss alone trains the attention', () => {
    const keys = tf.tensor3d([[[1, 0], [0, 1]]]);
    const hidden = tf.tensor2d([[1, 2]]);
    const w = tf.eye(2) as tf.Tensor2D;
    const g = tf.grad((prior: tf.Tensor) => tf.sum(tf.mul(tapPointer(hidden, keys, undefined, prior as tf.Tensor2D, w), tf.tensor2d([[1, 0]]))))(tf.tensor2d([[0.3, 0.7]]));
    expect(Array.from(g.dataSync())).toEqual([0, 0]);
    tf.dispose([keys, hidden, w, g]);
  });
});

describe('the tap pointer in the model', () => {
  it('its loss trains W_p (zero at first) from the decoder state at the tap step, and adds nothing at weight 0 or without tap steps', () => {
    const model = new AutoUiModel(microConfig({ tapPointer: true }), 5);
    const w = model.namedWeights().get('tap_pointer.weight')!;
    expect(tf.abs(w).sum().dataSync()[0]).toBe(0);
    const batch = randomBatch(model, 2, 5, 4, 6, 9);
    const extra = { groundTargets: tf.tensor2d([[0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]]), tapAt: tf.tensor1d([2, 0], 'int32') };
    const grad = (pointer: number) => {
      const { grads } = tf.variableGrads(() => model.loss({ ...batch, ...extra }, true, { ground: 1, refer: 0, pointer }), [w]);
      const g = tf.abs(Object.values(grads)[0]!).sum().dataSync()[0]!;
      tf.dispose(Object.values(grads));
      return g;
    };
    expect(grad(1)).toBeGreaterThan(0);
    const loss = (b: typeof batch, pointer: number) => tf.tidy(() => model.loss(b, false, { ground: 1, refer: 0, pointer }).dataSync()[0]!);
    expect(loss({ ...batch, ...extra }, 0)).toBe(loss({ ...batch, groundTargets: extra.groundTargets }, 1));
    expect(loss({ ...batch, ...extra }, 1)).toBeGreaterThan(loss({ ...batch, ...extra }, 0));
    // Its own targets (train --pointer-radius), when given, replace the grounding loss's for the pointer alone.
    const same = tf.clone(extra.groundTargets);
    const other = tf.tensor2d([[0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0]]);
    expect(loss({ ...batch, ...extra, pointTargets: same }, 1)).toBe(loss({ ...batch, ...extra }, 1));
    expect(loss({ ...batch, ...extra, pointTargets: other }, 1)).not.toBe(loss({ ...batch, ...extra }, 1));
    expect(loss({ ...batch, ...extra, pointTargets: other }, 0)).toBe(loss({ ...batch, ...extra }, 0));
    tf.dispose([same, other]);
    const e = model.encodeFull(batch.inputIds, batch.inputMask, batch.screen);
    const probs = model.pointTaps(tf.ones([2, 16]) as tf.Tensor2D, e, batch.inputMask);
    expect(probs.shape).toEqual([2, 6]);
    expect(() => new AutoUiModel(microConfig(), 5).pointTaps(tf.ones([2, 16]) as tf.Tensor2D, e, batch.inputMask)).toThrow(/no tap pointer/);
    tf.dispose([...Object.values(extra), ...Object.values(e), probs]);
    disposeBatch(batch);
    model.dispose();
  });
});
