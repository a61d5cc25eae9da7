import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { ActionType, type AitwAction, type YX } from '../src/data/types.js';
import { groundingPatches } from '../src/model/grounding.js';
import { attentionPointer, gridLayout, patchCentre, tapAt, tapsFromAttention, tokenCentre } from '../src/model/pointer.js';
import { InputError } from '../src/util/errors.js';

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

describe('tapsFromAttention', () => {
  it('auto reads taps from the attention only for a grounded checkpoint on a grid encoder', () => {
    expect(tapsFromAttention('auto', [16, 8], 1)).toBe(true);
    expect(tapsFromAttention('auto', [16, 8], 0)).toBe(false);
    expect(tapsFromAttention('auto', null, 1)).toBe(false);
  });

  it('an explicit choice wins; attention without a grid is an input error naming --tap-from', () => {
    expect(tapsFromAttention('tokens', [16, 8], 1)).toBe(false);
    expect(tapsFromAttention('attention', [16, 8], 0)).toBe(true);
    expect(() => tapsFromAttention('attention', null, 1)).toThrow(InputError);
    try {
      tapsFromAttention('attention', null, 1);
    } catch (e) {
      expect((e as InputError).where).toBe('--tap-from');
    }
  });
});
