import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTION_TYPE_IDS, ActionType, type ActionTypeId, type AitwAction, type Box, type YX } from '../src/data/types.js';
import { formatReport } from '../src/eval/format_report.js';
import { boxUnder, scoreItems, typedTextMatches, type ScoredItem } from '../src/eval/metrics.js';

const BOXES: Box[] = [[0.9, 0.9, 0.02, 0.02]];
const dp = (touch: YX, lift: YX = touch): AitwAction => ({ action_type: ActionType.DUAL_POINT, touch_yx: touch, lift_yx: lift, typed_text: '' });
const act = (t: ActionTypeId, text = ''): AitwAction => ({ action_type: t, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text });
let nextId = 0;
const item = (pred: AitwAction | null, gold: AitwAction, subset?: string): ScoredItem => ({
  id: `s${nextId++}`,
  pred,
  gold,
  annotations: BOXES,
  ...(subset === undefined ? {} : { subset }),
});

const TAP = dp([0.5, 0.5]);
const NEAR_TAP = dp([0.55, 0.5]);
const FAR_TAP = dp([0.1, 0.1]);
const UP = dp([0.8, 0.5], [0.2, 0.5]);
const RIGHT = dp([0.5, 0.2], [0.5, 0.8]);

describe('typedTextMatches (Auto-UI containment)', () => {
  it('accepts containment either way, ignoring case and the prediction’s surrounding spaces', () => {
    expect(typedTextMatches('New York', 'new york hotels')).toBe(true);
    expect(typedTextMatches('new york hotels', 'NEW YORK')).toBe(true);
    expect(typedTextMatches('  paris ', 'Paris')).toBe(true);
    expect(typedTextMatches('', 'anything')).toBe(true); // "" is in every string, as in Python
    expect(typedTextMatches('rome', 'paris')).toBe(false);
  });
});

describe('scoreItems', () => {
  it('computes each accuracy over its own denominator', () => {
    const items = [
      item(NEAR_TAP, TAP), // click hit
      item(FAR_TAP, TAP), // click miss (type right)
      item(dp([0.79, 0.4], [0.1, 0.45]), UP), // scroll hit (same axis)
      item(RIGHT, UP), // scroll miss (type right)
      item(act(ActionType.TYPE, 'Coffee'), act(ActionType.TYPE, 'coffee shop')), // text hit
      item(act(ActionType.TYPE, 'tea'), act(ActionType.TYPE, 'coffee')), // text miss, still an action match
      item(act(ActionType.PRESS_ENTER), act(ActionType.TYPE, 'x')), // not in text denominator
      item(null, act(ActionType.PRESS_BACK)), // invalid
      item(act(ActionType.PRESS_HOME), act(ActionType.PRESS_HOME)),
      item(null, TAP), // invalid on a tap: a click miss
    ];
    const { report, details } = scoreItems(items);
    expect(details.map((d) => d.match)).toEqual([true, false, true, false, true, true, false, false, true, false]);
    expect(details.map((d) => d.id)).toEqual(items.map((i) => i.id));
    expect(report.n).toBe(10);
    expect(report.invalid).toBe(2);
    expect(report.action_match).toBeCloseTo(50, 10);
    expect(report.type_acc).toBeCloseTo(70, 10);
    expect(report.click_acc).toBeCloseTo(100 / 3, 10);
    expect(report.scroll_acc).toBeCloseTo(50, 10);
    expect(report.text_acc).toBeCloseTo(50, 10);
    expect(report.text_exact).toBe(0); // 'Coffee' contains in 'coffee shop' but is not it
    expect(report.subsets).toEqual({});
  });

  it('reports null, never NaN, for empty denominators', () => {
    const { report } = scoreItems([item(act(ActionType.PRESS_BACK), act(ActionType.PRESS_BACK))]);
    expect(report).toEqual({ n: 1, action_match: 100, type_acc: 100, text_acc: null, text_exact: null, click_acc: null, scroll_acc: null, tap_in_box: null, invalid: 0, subsets: {} });
    const empty = scoreItems([]).report;
    expect(empty.action_match).toBeNull();
    expect(empty.n).toBe(0);
  });

  it('averages subsets for the overall score (macro), with totals for n and invalid', () => {
    const items = [
      item(TAP, TAP, 'install'),
      item(FAR_TAP, TAP, 'install'),
      item(FAR_TAP, TAP, 'install'),
      item(null, TAP, 'install'),
      item(TAP, TAP, 'general'),
      item(FAR_TAP, TAP, 'general'),
    ];
    const { report } = scoreItems(items);
    expect(Object.keys(report.subsets)).toEqual(['general', 'install']);
    expect(report.subsets.general!.action_match).toBe(50);
    expect(report.subsets.install!.action_match).toBe(25);
    expect(report.action_match).toBe(37.5); // micro would be 33.3
    expect(report.n).toBe(6);
    expect(report.invalid).toBe(1);
    expect(report.scroll_acc).toBeNull();
  });

  it('reproduces the paper’s overall column as the mean of its subset scores', () => {
    // Auto-UI unified: 68.24 / 76.89 / 71.37 / 84.58 / 70.26 → 74.27 overall; 1e4 steps per subset.
    const paper: Record<string, number> = { general: 6824, install: 7689, google_apps: 7137, single: 8458, web_shopping: 7026 };
    const items: ScoredItem[] = [];
    for (const [subset, hits] of Object.entries(paper)) {
      for (let i = 0; i < 10_000; i++) items.push(item(i < hits ? act(ActionType.PRESS_BACK) : act(ActionType.PRESS_HOME), act(ActionType.PRESS_BACK), subset));
    }
    const { report } = scoreItems(items);
    expect(Object.keys(report.subsets)).toEqual(['general', 'install', 'google_apps', 'single', 'web_shopping']);
    expect(report.action_match!.toFixed(2)).toBe('74.27');
  });

  it('groups items without a subset as "unspecified" when others have one', () => {
    const { report } = scoreItems([item(TAP, TAP, 'single'), item(FAR_TAP, TAP)]);
    expect(Object.keys(report.subsets)).toEqual(['single', 'unspecified']);
    expect(report.action_match).toBe(50);
  });

  it('stays within bounds and equals the share of matches without subsets', () => {
    const coord = fc.double({ min: 0, max: 1, noNaN: true });
    const yx = fc.tuple(coord, coord) as fc.Arbitrary<YX>;
    const action: fc.Arbitrary<AitwAction> = fc.record({
      action_type: fc.constantFrom(...ACTION_TYPE_IDS),
      touch_yx: yx,
      lift_yx: yx,
      typed_text: fc.constantFrom('', 'a', 'ab', 'b'),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.option(action), action), { maxLength: 30 }), (pairs) => {
        const { report, details } = scoreItems(pairs.map(([p, g]) => item(p, g)));
        const hits = details.filter((d) => d.match).length;
        expect(report.action_match).toBe(pairs.length === 0 ? null : (100 * hits) / pairs.length);
        for (const k of ['action_match', 'type_acc', 'text_acc', 'text_exact', 'click_acc', 'scroll_acc', 'tap_in_box'] as const) {
          const v = report[k];
          if (v !== null) expect(v >= 0 && v <= 100).toBe(true);
        }
        expect(report.invalid).toBe(pairs.filter(([p]) => p === null).length);
        for (const [i, d] of details.entries()) if (pairs[i]![0] === null) expect(d.match).toBe(false);
      }),
    );
  });
});

describe('formatReport', () => {
  it('prints one row per subset and an overall row, "-" for null', () => {
    const { report } = scoreItems([item(TAP, TAP, 'general'), item(null, UP, 'install')]);
    const text = formatReport(report);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^subset\s+n\s+action_match\s+type_acc\s+text_acc\s+text_exact\s+click_acc\s+scroll_acc\s+tap_in_box\s+invalid$/);
    expect(lines.find((l) => l.startsWith('general'))).toMatch(/general\s+1\s+100\.00\s+100\.00\s+-\s+-\s+100\.00\s+-\s+-\s+0$/);
    expect(lines.find((l) => l.startsWith('install'))).toMatch(/install\s+1\s+0\.00\s+0\.00\s+-\s+-\s+-\s+0\.00\s+-\s+1$/);
    expect(lines.find((l) => l.startsWith('overall'))).toMatch(/overall\s+2\s+50\.00\s+50\.00\s+-\s+-\s+100\.00\s+0\.00\s+-\s+1$/);
    expect(text).toContain('mean over subsets');
  });
});

describe('tap_in_box', () => {
  // A button inside a list row: a tap on the button presses the button, the smaller box.
  const ROW: Box = [0.4, 0.0, 0.2, 1.0];
  const BUTTON: Box = [0.45, 0.7, 0.1, 0.2];
  const on = (pred: AitwAction | null, gold: AitwAction): ScoredItem => ({ id: `b${nextId++}`, pred, gold, annotations: [ROW, BUTTON] });

  it('boxUnder picks the smallest box holding the point, edges included, or null', () => {
    expect(boxUnder([0.5, 0.8], [ROW, BUTTON])).toEqual(BUTTON);
    expect(boxUnder([0.5, 0.2], [ROW, BUTTON])).toEqual(ROW);
    expect(boxUnder([0.45, 0.7], [BUTTON])).toEqual(BUTTON);
    expect(boxUnder([0.1, 0.1], [ROW, BUTTON])).toBeNull();
  });

  it('counts gold taps on a box; a predicted tap scores inside that box only', () => {
    const gold = dp([0.5, 0.8]); // on the button
    const report = scoreItems([
      on(dp([0.52, 0.75]), gold), // in the button
      on(dp([0.5, 0.6]), gold), // in the row, beside the button: action matching accepts it, the finger misses
      on(dp([0.52, 0.75], [0.1, 0.75]), gold), // a swipe from the button is no tap
      on(null, gold),
      on(dp([0.5, 0.8]), dp([0.05, 0.05])), // gold off every box: not counted
      on(dp([0.5, 0.8]), dp([0.8, 0.5], [0.2, 0.5])), // gold scroll: not counted
    ]).report;
    expect(report.click_acc).toBeCloseTo(200 / 5, 10);
    expect(report.tap_in_box).toBeCloseTo(100 / 4, 10);
  });

  it('a tap on the caption under an app icon presses the icon; a caption beside it does not', () => {
    const ICON: Box = [0.3, 0.1, 0.05, 0.1];
    const CAPTION: Box = [0.36, 0.1, 0.02, 0.1]; // under the icon, centred
    const OTHER: Box = [0.36, 0.3, 0.02, 0.1]; // the next icon's caption
    const gold = dp([0.32, 0.15]);
    const at = (p: YX): ScoredItem => ({ id: `c${nextId++}`, pred: dp(p), gold, annotations: [ICON, CAPTION, OTHER] });
    expect(scoreItems([at([0.37, 0.15])]).report.tap_in_box).toBe(100);
    expect(scoreItems([at([0.37, 0.35])]).report.tap_in_box).toBe(0);
  });
});
