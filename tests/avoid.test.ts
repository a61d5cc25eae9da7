import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ActionType, type AitwAction, type RawImage, type YX } from '../src/data/types.js';
import { avoidedOf, avoidedTokens, maskAvoided, requestAvoid } from '../src/infer/avoid.js';
import { ActionCodec } from '../src/model/codec.js';
import { TargetConstraint, type ConstraintState } from '../src/model/constrained.js';
import { gridLayout } from '../src/model/pointer.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';
import { changedShare, UNCHANGED_SHARE } from '../src/eval/tasks/screen_change.js';

const codec = new ActionCodec(buildWordTokenizer(['open the settings app'], { minCount: 1 }));
const key = (t: AitwAction['action_type']): AitwAction => ({ action_type: t, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' });
const tap = (p: YX): AitwAction => ({ action_type: ActionType.DUAL_POINT, touch_yx: p, lift_yx: p, typed_text: '' });
const swipeUp: AitwAction = { action_type: ActionType.DUAL_POINT, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' };

describe('avoided actions', () => {
  it('keys and status actions ban their type; taps go to the pointer (or to the touch bins without one); scrolls ban their start', () => {
    const a = avoidedOf(codec, [key(ActionType.PRESS_BACK), tap([0.3, 0.4]), swipeUp], true);
    expect(a.typeIds).toEqual([codec.typeId(ActionType.PRESS_BACK)]);
    expect(a.taps).toEqual([tap([0.3, 0.4])]);
    expect(a.touches).toEqual([[codec.quantize(0.8), codec.quantize(0.5)]]);
    expect(avoidedOf(codec, [tap([0.3, 0.4])], false).touches).toEqual([[codec.quantize(0.3), codec.quantize(0.4)]]);
  });

  it('masks the banned type at the action type and the banned x after the banned y, nothing else', () => {
    const c = new TargetConstraint(codec);
    const V = c.vocabSize;
    let s: ConstraintState = c.initial();
    const walk = (ids: number[]) => ids.forEach((id) => (s = c.advance(s, id)));
    walk([codec.planId, codec.typeId(ActionType.DUAL_POINT), codec.actId]);
    const atType = s;
    walk([codec.typeId(ActionType.DUAL_POINT), codec.yBase + codec.quantize(0.8)]);
    const atX = s;
    const avoided = [avoidedOf(codec, [key(ActionType.PRESS_HOME), swipeUp], true)];
    for (const [state, banned] of [
      [atType, codec.typeId(ActionType.PRESS_HOME)],
      [atX, codec.xBase + codec.quantize(0.5)],
    ] as const) {
      const masks = new Float32Array(V);
      c.fillMasks([state], masks);
      const before = masks.slice();
      maskAvoided(codec, [state], avoided, masks, V);
      expect(before[banned]).toBe(0);
      expect(masks[banned]).toBe(-Infinity);
      expect([...masks].filter((m, i) => m !== before[i])).toHaveLength(1);
    }
  });

  it("a banned type is banned as the plan's first step too, and only there in the plan", () => {
    const c = new TargetConstraint(codec);
    const V = c.vocabSize;
    let s: ConstraintState = c.advance(c.initial(), codec.planId);
    const first = s;
    s = c.advance(s, codec.typeId(ActionType.TYPE));
    const second = s;
    const avoided = [avoidedOf(codec, [key(ActionType.TYPE)], true)];
    const masked = (state: ConstraintState) => {
      const masks = new Float32Array(V);
      c.fillMasks([state], masks);
      maskAvoided(codec, [state], avoided, masks, V);
      return masks[codec.typeId(ActionType.TYPE)];
    };
    expect(masked(first)).toBe(-Infinity);
    expect(masked(second)).toBe(0);
  });

  it('a request avoids typing again right after a TYPE, and nothing more after anything else', () => {
    const typed: AitwAction = { ...key(ActionType.TYPE), typed_text: 'cats' };
    const given = [key(ActionType.PRESS_BACK)];
    expect(requestAvoid([tap([0.2, 0.3]), typed], given).map((a) => a.action_type)).toEqual([ActionType.PRESS_BACK, ActionType.TYPE]);
    expect(requestAvoid([typed, tap([0.2, 0.3])], given)).toEqual(given);
    expect(requestAvoid([], [])).toEqual([]);
  });

  it('a tap bans the patch under it and the text items that hold it', () => {
    const layout = { patches: gridLayout([4, 2]), texts: [[0.3, 0.1, 0.1, 0.3], [0.9, 0.1, 0.05, 0.2]] as [number, number, number, number][] };
    const a = avoidedOf(codec, [tap([0.35, 0.25])], true);
    expect(avoidedTokens(a, layout).sort((x, y) => x - y)).toEqual([2, 8]);
  });
});

describe('changedShare', () => {
  const screen = (w: number, h: number, fill = 200): RawImage => ({ width: w, height: h, channels: 3, data: new Uint8Array(w * h * 3).fill(fill) });
  const paint = (img: RawImage, x0: number, y0: number, w: number, h: number, v: number): RawImage => {
    const data = img.data.slice();
    for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data.fill(v, (y * img.width + x) * 3, (y * img.width + x) * 3 + 3);
    return { ...img, data };
  };

  it('a few stray pixels are no change; one narrow typed letter or a switch knob is', () => {
    const s = screen(1080, 2400);
    expect(changedShare(s, s)).toBe(0);
    expect(changedShare(s, paint(s, 500, 600, 2, 10, 0))).toBeLessThanOrEqual(UNCHANGED_SHARE);
    expect(changedShare(s, paint(s, 100, 600, 3, 24, 0))).toBeGreaterThan(UNCHANGED_SHARE);
    expect(changedShare(s, paint(s, 900, 600, 60, 60, 0))).toBeGreaterThan(UNCHANGED_SHARE);
    expect(changedShare(s, screen(1080, 2401))).toBe(1);
  });

  it('is the share of pixels whose largest channel change passes the tolerance', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 255 }), (w, h, v) => {
        const s = screen(20, 20);
        const painted = paint(s, 0, 0, w, h, v);
        expect(changedShare(s, painted)).toBe(Math.abs(v - 200) > 24 ? (w * h) / 400 : 0);
      }),
    );
  });
});
