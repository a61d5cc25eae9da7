import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { historyOf, normalizeAction, planOf, pointlessAction, roundTo4, SCROLL_POINTS, scrollDirection } from '../src/data/normalize.js';
import { ACTION_TYPE_IDS, ActionType, type ActionTypeId, type AitwAction, type Box, type YX } from '../src/data/types.js';
import { isTap, mainAxis } from '../src/data/geometry.js';
import { checkActionsMatch } from '../src/eval/action_matching.js';

/** Outputs of Auto-UI's own normalisation helpers (utils_data.py) and Python's round(), see scripts/. */
interface NormCase {
  touch_yx: YX;
  lift_yx: YX;
  is_tap: boolean;
  touch_rounded?: YX;
  direction?: string;
}
const normCases: NormCase[] = readFileSync(new URL('./fixtures/action_matching/autoui_normalize.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as NormCase);

const dp = (touch: YX, lift: YX): AitwAction => ({ action_type: ActionType.DUAL_POINT, touch_yx: touch, lift_yx: lift, typed_text: '' });

const coord = fc.double({ min: -0.1, max: 1.1, noNaN: true });
const yx = fc.tuple(coord, coord) as fc.Arbitrary<YX>;
const anyAction: fc.Arbitrary<AitwAction> = fc.record({
  action_type: fc.constantFrom(...ACTION_TYPE_IDS),
  touch_yx: yx,
  lift_yx: fc.oneof(yx, yx.map(([y, x]) => [y + 0.01, x - 0.02] as YX)),
  typed_text: fc.string(),
});
const box = fc.tuple(coord, coord, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })) as fc.Arbitrary<Box>;

describe('agreement with Auto-UI (utils_data.py, Python round)', () => {
  it('classifies taps, rounds them and names scroll directions as Auto-UI does', () => {
    expect(normCases.length).toBeGreaterThan(1000);
    expect(normCases.some((c) => c.is_tap) && normCases.some((c) => !c.is_tap)).toBe(true);
    const wrong = normCases.filter((c) => {
      if (isTap(c.touch_yx, c.lift_yx) !== c.is_tap) return true;
      const n = normalizeAction(dp(c.touch_yx, c.lift_yx));
      if (c.is_tap) return n.touch_yx[0] !== c.touch_rounded![0] || n.touch_yx[1] !== c.touch_rounded![1];
      return scrollDirection(c.touch_yx, c.lift_yx) !== c.direction;
    });
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});

describe('roundTo4', () => {
  it("rounds like Python's round(x, 4), halves to even", () => {
    expect(roundTo4(0.03125)).toBe(0.0312);
    expect(roundTo4(0.09375)).toBe(0.0938);
    expect(roundTo4(0.12345)).toBe(0.1235); // 0.12345 is stored slightly above the half
    expect(roundTo4(1.00005)).toBe(1.0001); // stored slightly above the half
    expect(roundTo4(0.30005)).toBe(0.3); // stored slightly below the half
    expect(roundTo4(0.12355)).toBe(0.1235);
    expect(roundTo4(0.99996)).toBe(1);
    expect(roundTo4(-0.25)).toBe(-0.25);
    expect(roundTo4(0.5)).toBe(0.5);
  });

  it('is within half a unit of the 4th decimal and idempotent', () => {
    fc.assert(
      fc.property(fc.double({ min: -2, max: 2, noNaN: true }), (x) => {
        const r = roundTo4(x);
        expect(Math.abs(r - x)).toBeLessThanOrEqual(0.00005 + 1e-12);
        expect(roundTo4(r)).toBe(r);
        expect(Number(r.toFixed(4)) === r).toBe(true); // at most 4 decimals (±0 alike)
      }),
    );
  });
});

describe('pointlessAction', () => {
  it('stores unused points as AITW does, and normalising leaves it as it is', () => {
    expect(pointlessAction(ActionType.PRESS_HOME)).toEqual({ action_type: 6, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' });
    const typed = pointlessAction(ActionType.TYPE, 'coffee maker');
    expect(typed.typed_text).toBe('coffee maker');
    expect(normalizeAction(typed)).toEqual(typed);
  });
});

describe('normalizeAction', () => {
  it('maps scrolls to the paper table, finger direction naming, left/right on the x axis', () => {
    expect(normalizeAction(dp([0.7, 0.5], [0.3, 0.55]))).toEqual(dp([0.8, 0.5], [0.2, 0.5])); // finger up
    expect(normalizeAction(dp([0.3, 0.5], [0.7, 0.45]))).toEqual(dp([0.2, 0.5], [0.8, 0.5])); // finger down
    expect(normalizeAction(dp([0.5, 0.9], [0.52, 0.1]))).toEqual(dp([0.5, 0.8], [0.5, 0.2])); // finger left
    expect(normalizeAction(dp([0.5, 0.1], [0.48, 0.9]))).toEqual(dp([0.5, 0.2], [0.5, 0.8])); // finger right
    expect(scrollDirection([0.5, 0.5], [0.25, 0.75])).toBe('up'); // exact tie goes to y
  });

  it('keeps taps at 4 decimals with lift = touch', () => {
    expect(normalizeAction(dp([0.123456, 0.654321], [0.13, 0.66]))).toEqual(dp([0.1235, 0.6543], [0.1235, 0.6543]));
  });

  it('clears points for other actions and text for non-TYPE', () => {
    const type: AitwAction = { action_type: ActionType.TYPE, touch_yx: [0.1, 0.1], lift_yx: [0.2, 0.2], typed_text: 'Hi' };
    expect(normalizeAction(type)).toEqual({ ...type, touch_yx: [-1, -1], lift_yx: [-1, -1] });
    expect(normalizeAction({ ...type, action_type: ActionType.PRESS_HOME }).typed_text).toBe('');
    expect(normalizeAction({ ...dp([0.5, 0.5], [0.5, 0.5]), typed_text: 'x' }).typed_text).toBe('');
  });

  it('always matches the raw action under checkActionsMatch (any non-empty annotations)', () => {
    fc.assert(
      fc.property(anyAction, fc.array(box, { minLength: 1, maxLength: 3 }), (a, boxes) => {
        const n = normalizeAction(a);
        expect(checkActionsMatch(n, a, boxes)).toBe(true);
        expect(checkActionsMatch(a, n, boxes)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent and keeps tap-ness, main axis and direction', () => {
    fc.assert(
      fc.property(anyAction, (a) => {
        const n = normalizeAction(a);
        expect(normalizeAction(n)).toEqual(n);
        if (a.action_type === ActionType.DUAL_POINT) {
          expect(isTap(n.touch_yx, n.lift_yx)).toBe(isTap(a.touch_yx, a.lift_yx));
          if (!isTap(a.touch_yx, a.lift_yx)) {
            expect(mainAxis(n.touch_yx, n.lift_yx)).toBe(mainAxis(a.touch_yx, a.lift_yx));
            expect(scrollDirection(n.touch_yx, n.lift_yx)).toBe(scrollDirection(a.touch_yx, a.lift_yx));
          }
        }
      }),
    );
  });

  it('fixed scroll points are swipes named by their own direction', () => {
    for (const [dir, [t, l]] of Object.entries(SCROLL_POINTS)) {
      expect(isTap(t, l)).toBe(false);
      expect(scrollDirection(t, l)).toBe(dir);
    }
  });
});

describe('chain-of-action windows', () => {
  const ep = (types: ActionTypeId[]): AitwAction[] => types.map((t, i) => ({ action_type: t, touch_yx: [i / 100, 0], lift_yx: [i / 100, 0], typed_text: '' }));

  it('history: previous actions, at most 8, oldest first', () => {
    const actions = ep(Array.from({ length: 12 }, () => ActionType.DUAL_POINT));
    expect(historyOf(actions, 0)).toEqual([]);
    expect(historyOf(actions, 3)).toEqual(actions.slice(0, 3));
    expect(historyOf(actions, 11)).toEqual(actions.slice(3, 11));
    expect(historyOf(actions, 12, 2)).toEqual(actions.slice(10, 12));
  });

  it('plan: types of current and following steps, at most 4', () => {
    const T = ActionType;
    const actions = ep([T.DUAL_POINT, T.TYPE, T.PRESS_ENTER, T.DUAL_POINT, T.DUAL_POINT, T.STATUS_TASK_COMPLETE]);
    expect(planOf(actions, 0)).toEqual([T.DUAL_POINT, T.TYPE, T.PRESS_ENTER, T.DUAL_POINT]);
    expect(planOf(actions, 4)).toEqual([T.DUAL_POINT, T.STATUS_TASK_COMPLETE]);
    expect(planOf(actions, 6)).toEqual([]);
  });

  it('windows have the right lengths for any episode and step', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ACTION_TYPE_IDS), { maxLength: 30 }), fc.nat(), fc.integer({ min: 1, max: 10 }), (types, k, max) => {
        const actions = ep(types);
        const step = k % (actions.length + 1);
        const h = historyOf(actions, step, max);
        expect(h.length).toBe(Math.min(step, max));
        if (h.length > 0) expect(h[h.length - 1]).toBe(actions[step - 1]);
        expect(planOf(actions, step, max)).toEqual(types.slice(step, step + max));
      }),
    );
  });

  it('rejects step indexes outside the episode', () => {
    expect(() => historyOf(ep([ActionType.TYPE]), 2)).toThrow(RangeError);
    expect(() => planOf(ep([ActionType.TYPE]), -1)).toThrow(RangeError);
  });
});
