import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ActionType, type ActionTypeId, type AitwAction, type Box, type YX } from '../src/data/types.js';
import { isTap, mainAxis } from '../src/data/geometry.js';
import { checkActionsMatch, enlargeBox, yxInBox } from '../src/eval/action_matching.js';

/**
 * Reference vectors: outputs of google-research's action_matching.py itself, run under a
 * jax.numpy→numpy shim with JAX's float32 defaults (scripts/gen_action_matching_vectors.py).
 */
interface RefCase {
  kind: string;
  pred: AitwAction;
  gold: AitwAction;
  annotations: Box[];
  match: boolean;
  reference_raised?: string;
}
const refCases: RefCase[] = readFileSync(new URL('./fixtures/action_matching/check_actions_match.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => {
    const c = JSON.parse(l) as RefCase;
    c.pred.typed_text = '';
    c.gold.typed_text = '';
    return c;
  });

const dp = (touch: YX, lift: YX = touch): AitwAction => ({ action_type: ActionType.DUAL_POINT, touch_yx: touch, lift_yx: lift, typed_text: '' });
const act = (t: ActionTypeId): AitwAction => ({ action_type: t, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' });
const FAR_BOX: Box[] = [[0.95, 0.95, 0.01, 0.01]];

describe('checkActionsMatch against the reference implementation', () => {
  it('has a few thousand vectors of every kind', () => {
    expect(refCases.length).toBeGreaterThan(4000);
    const kinds = new Set(refCases.map((c) => c.kind));
    for (const k of ['non_dual_point', 'tap_distance', 'tap_box_edge', 'tap_swipe_threshold', 'swipe_axis', 'box_clamp_size', 'empty_annotations']) {
      expect(kinds).toContain(k);
    }
    // both outcomes are well represented, so agreeing is not trivial
    const matches = refCases.filter((c) => c.match).length;
    expect(matches).toBeGreaterThan(1000);
    expect(refCases.length - matches).toBeGreaterThan(1000);
  });

  it('agrees on every vector, in both argument orders', () => {
    const wrong = refCases.filter(
      (c) => checkActionsMatch(c.pred, c.gold, c.annotations) !== c.match || checkActionsMatch(c.gold, c.pred, c.annotations) !== c.match,
    );
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it('counts a miss where the reference raises (no annotations)', () => {
    const raised = refCases.filter((c) => c.reference_raised);
    expect(raised.length).toBeGreaterThan(10);
    for (const c of raised) expect(c.annotations).toEqual([]);
  });
});

describe('reference quirks, by hand', () => {
  it('tap threshold 0.04 is inclusive and computed in float32', () => {
    expect(isTap([0.5, 0.5], [0.5, 0.5])).toBe(true);
    expect(isTap([0.5, 0.5], [0.5, 0.55])).toBe(false);
    // Decimal inputs land on either side of 0.04 depending on precision: float32 (the reference) decides.
    expect(0.14 - 0.1 <= 0.04).toBe(false); // float64 would call this a swipe
    expect(isTap([0.1, 0.3], [0.14, 0.3])).toBe(true);
    expect(0.09 - 0.05 <= 0.04).toBe(true); // float64 would call this a tap
    expect(isTap([0.05, 0.3], [0.09, 0.3])).toBe(false);
  });

  it('enlarges boxes by 0.7·size on each side (2.4× the size), so far-apart taps can match', () => {
    const [top, left, h, w] = enlargeBox([0.5, 0.5, 0.1, 0.2]);
    expect(top).toBeCloseTo(0.43, 6);
    expect(left).toBeCloseTo(0.36, 6);
    expect(h).toBeCloseTo(0.24, 6);
    expect(w).toBeCloseTo(0.48, 6);
    const box: Box = [0.5, 0.5, 0.1, 0.1];
    expect(checkActionsMatch(dp([0.44, 0.52]), dp([0.66, 0.52]), [box])).toBe(true); // 0.22 apart, same box
    expect(checkActionsMatch(dp([0.42, 0.52]), dp([0.66, 0.52]), [box])).toBe(false); // just above it
    expect(checkActionsMatch(dp([0.44, 0.52]), dp([0.68, 0.52]), [box])).toBe(false); // just below it
  });

  it('clamps the top at 0 without shrinking the height, and the size (not the bottom) at 1', () => {
    const [top, , h] = enlargeBox([0.02, 0.1, 0.1, 0.1]);
    expect(top).toBe(0);
    expect(h).toBeCloseTo(0.24, 6); // bottom at 0.24, not at 0.02 + 1.7·0.1 = 0.19: the box is pushed down
    expect(checkActionsMatch(dp([0.0, 0.15]), dp([0.23, 0.15]), [[0.02, 0.1, 0.1, 0.1]])).toBe(true);
    expect(checkActionsMatch(dp([0.0, 0.15]), dp([0.26, 0.15]), [[0.02, 0.1, 0.1, 0.1]])).toBe(false);
    const big = enlargeBox([0.6, 0.0, 0.5, 1.0]);
    expect(big[2]).toBe(1);
    expect(big[0] + big[2]).toBeGreaterThan(1); // the bottom edge may leave the screen
  });

  it('has no minimum box size: tiny boxes only help within their (tiny) enlargement', () => {
    const tiny: Box = [0.5, 0.5, 1e-5, 1e-5];
    expect(checkActionsMatch(dp([0.5, 0.5]), dp([0.5, 0.5]), [tiny])).toBe(true);
    expect(checkActionsMatch(dp([0.5, 0.5]), dp([0.5, 0.65]), [tiny])).toBe(false);
  });

  it('containment is inclusive on the enlarged edges', () => {
    const big = enlargeBox([0.2, 0.2, 0.1, 0.1]);
    const bottom = Math.fround(big[0] + big[2]);
    expect(yxInBox([bottom, 0.25], big)).toBe(true);
    expect(yxInBox([big[0], big[1]], big)).toBe(true);
    expect(yxInBox([bottom + 1e-6, 0.25], big)).toBe(false);
  });

  it('matches taps within 0.14 (inclusive) without any box; both must be in the same box otherwise', () => {
    expect(checkActionsMatch(dp([0.1, 0.1]), dp([0.1, 0.24]), FAR_BOX)).toBe(true);
    expect(checkActionsMatch(dp([0.1, 0.1]), dp([0.1, 0.2401]), FAR_BOX)).toBe(false);
    const two: Box[] = [[0.1, 0.1, 0.05, 0.05], [0.1, 0.4, 0.05, 0.05]];
    expect(checkActionsMatch(dp([0.11, 0.11]), dp([0.11, 0.41]), two)).toBe(false);
  });

  it('ignores the lift point of taps', () => {
    expect(checkActionsMatch(dp([0.3, 0.3], [0.33, 0.3]), dp([0.3, 0.3], [0.3, 0.27]), FAR_BOX)).toBe(true);
  });

  it('compares swipes by main axis only, ties going to y', () => {
    expect(checkActionsMatch(dp([0.8, 0.5], [0.2, 0.5]), dp([0.2, 0.5], [0.8, 0.5]), FAR_BOX)).toBe(true); // up vs down
    expect(checkActionsMatch(dp([0.8, 0.5], [0.2, 0.5]), dp([0.5, 0.2], [0.5, 0.8]), FAR_BOX)).toBe(false);
    expect(mainAxis([0.5, 0.5], [0.625, 0.625])).toBe(0);
    expect(mainAxis([0.5, 0.5], [0.25, 0.75])).toBe(0); // exact tie
    expect(mainAxis([0.5, 0.5], [0.4, 0.6])).toBe(1); // not a tie in float32: |0.6−0.5| > |0.4−0.5|
    expect(mainAxis([0.5, 0.5], [0.4, 0.61])).toBe(1);
  });

  it('never matches a tap with a swipe', () => {
    expect(checkActionsMatch(dp([0.5, 0.5]), dp([0.5, 0.5], [0.6, 0.5]), [[0, 0, 1, 1]])).toBe(false);
  });

  it('compares types only when one side is not a dual point', () => {
    expect(checkActionsMatch(act(ActionType.PRESS_BACK), act(ActionType.PRESS_BACK), FAR_BOX)).toBe(true);
    expect(checkActionsMatch(act(ActionType.PRESS_BACK), act(ActionType.PRESS_HOME), FAR_BOX)).toBe(false);
    expect(checkActionsMatch(dp([0.5, 0.5]), act(ActionType.TYPE), FAR_BOX)).toBe(false);
    // TYPE vs TYPE matches whatever the texts
    expect(checkActionsMatch({ ...act(ActionType.TYPE), typed_text: 'a' }, { ...act(ActionType.TYPE), typed_text: 'b' }, FAR_BOX)).toBe(true);
  });

  it('misses every pair on a screen without annotations', () => {
    expect(checkActionsMatch(act(ActionType.PRESS_BACK), act(ActionType.PRESS_BACK), [])).toBe(false);
    expect(checkActionsMatch(dp([0.5, 0.5]), dp([0.5, 0.5]), [])).toBe(false);
  });

  it('is symmetric and reflexive on arbitrary dual points', () => {
    const coord = fc.double({ min: -0.2, max: 1.2, noNaN: true });
    const yx = fc.tuple(coord, coord) as fc.Arbitrary<YX>;
    const box = fc.tuple(coord, coord, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })) as fc.Arbitrary<Box>;
    fc.assert(
      fc.property(yx, yx, yx, yx, fc.array(box, { minLength: 1, maxLength: 4 }), (a, b, c, d, boxes) => {
        const p = dp(a, b);
        const g = dp(c, d);
        expect(checkActionsMatch(p, g, boxes)).toBe(checkActionsMatch(g, p, boxes));
        expect(checkActionsMatch(p, p, boxes)).toBe(true);
      }),
    );
  });
});
