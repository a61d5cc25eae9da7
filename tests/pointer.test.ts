import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { ActionType, type AitwAction, type YX } from '../src/data/types.js';
import { groundingPatches } from '../src/model/grounding.js';
import { attentionPointer, patchCentre, pointerGrid, tapAt } from '../src/model/pointer.js';
import { InputError } from '../src/util/errors.js';

beforeAll(async () => {
  await initBackend('wasm');
});

const action = (type: AitwAction['action_type'], touch: YX, lift: YX = touch): AitwAction => ({ action_type: type, touch_yx: touch, lift_yx: lift, typed_text: '' });

describe('patchCentre', () => {
  it('is the centre of the row-major patch', () => {
    expect(patchCentre(0, [4, 2])).toEqual([0.125, 0.25]);
    expect(patchCentre(5, [4, 2])).toEqual([0.625, 0.75]);
    expect(patchCentre(7, [4, 2])).toEqual([0.875, 0.75]);
  });

  it('lies under its own patch: the grounding targets of a tap there hold the patch', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 20 }), fc.nat(), (rows, cols, k) => {
        const p = k % (rows * cols);
        const [y, x] = patchCentre(p, [rows, cols]);
        expect(Math.floor(y * rows) * cols + Math.floor(x * cols)).toBe(p);
        expect(groundingPatches([y, x], [rows, cols])).toContain(p);
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
    expect(attentionPointer(attention, mask, [2, 2])).toEqual([patchCentre(2, [2, 2]), patchCentre(0, [2, 2])]);
    tf.dispose([attention, mask]);
  });

  it('refuses a grid that does not fit the attention', () => {
    const attention = tf.ones([1, 2, 6]) as tf.Tensor3D;
    const mask = tf.ones([1, 2], 'int32') as tf.Tensor2D;
    expect(() => attentionPointer(attention, mask, [2, 2])).toThrow(/6 patches/);
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

describe('pointerGrid', () => {
  it('auto reads taps from the attention only for a grounded checkpoint on a grid encoder', () => {
    expect(pointerGrid('auto', [16, 8], 1)).toEqual([16, 8]);
    expect(pointerGrid('auto', [16, 8], 0)).toBeNull();
    expect(pointerGrid('auto', null, 1)).toBeNull();
  });

  it('an explicit choice wins; attention without a grid is an input error naming --tap-from', () => {
    expect(pointerGrid('tokens', [16, 8], 1)).toBeNull();
    expect(pointerGrid('attention', [16, 8], 0)).toEqual([16, 8]);
    expect(() => pointerGrid('attention', null, 1)).toThrow(InputError);
    try {
      pointerGrid('attention', null, 1);
    } catch (e) {
      expect((e as InputError).where).toBe('--tap-from');
    }
  });
});
