import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeAction } from '../src/data/normalize.js';
import { ACTION_TYPE_IDS, ActionType, type ActionTypeId, type AitwAction, type Box, type YX } from '../src/data/types.js';
import { isTap } from '../src/data/geometry.js';
import { checkActionsMatch } from '../src/eval/action_matching.js';
import { ActionCodec, type CodecJSON } from '../src/model/codec.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';
import { InputError } from '../src/util/errors.js';

const GOALS = [
  "search for 'lg ultragear' on ebay",
  'What is the price of a 12 inch pizza on walmart?',
  'Open a new Chrome private window',
  'search for flights from NYC to London on google',
  "what's on the menu at chipotle?",
  'add a samsung galaxy s10 to the cart on ebay',
  'turn off wifi',
];
const tok = buildWordTokenizer([...GOALS, 'lg ultragear', 'logitech g903'], { minCount: 1 });
const codec = new ActionCodec(tok);

const NONE: YX = [-1, -1];
const act = (action_type: ActionTypeId, extra: Partial<AitwAction> = {}): AitwAction => ({
  action_type,
  touch_yx: [...NONE],
  lift_yx: [...NONE],
  typed_text: '',
  ...extra,
});
const tap = (y: number, x: number): AitwAction => act(ActionType.DUAL_POINT, { touch_yx: [y, x], lift_yx: [y, x] });
const swipe = (touch: YX, lift: YX): AitwAction => act(ActionType.DUAL_POINT, { touch_yx: touch, lift_yx: lift });
const typed = (text: string): AitwAction => act(ActionType.TYPE, { typed_text: text });

// ---- arbitraries: raw (un-normalised) gold actions as AITW records them ----
const unit = fc.double({ min: 0, max: 1, noNaN: true });
const point = fc.tuple(unit, unit) as fc.Arbitrary<YX>;
const goldTap = fc
  .tuple(point, fc.double({ min: -0.028, max: 0.028, noNaN: true }), fc.double({ min: -0.028, max: 0.028, noNaN: true }))
  .map(([t, dy, dx]) => swipe(t, [Math.min(1, Math.max(0, t[0] + dy)), Math.min(1, Math.max(0, t[1] + dx))]));
const goldDual = fc.oneof(goldTap, fc.tuple(point, point).map(([t, l]) => swipe(t, l)));
const goldOther = fc.constantFrom(...ACTION_TYPE_IDS.filter((t) => t !== ActionType.DUAL_POINT && t !== ActionType.TYPE)).map((t) => act(t));
const goldTyped = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('lg ultragear', 'Logitech G903', '')).map(typed);
const goldAction: fc.Arbitrary<AitwAction> = fc.oneof(goldDual, goldDual, goldOther, goldTyped);
const planArb = fc.array(fc.constantFrom(...ACTION_TYPE_IDS), { minLength: 1, maxLength: 7 });
const boxes = fc.array(fc.tuple(unit, unit, unit, unit) as fc.Arbitrary<Box>, { minLength: 1, maxLength: 4 });

describe('ActionCodec layout', () => {
  it('appends its special tokens after the text vocabulary', () => {
    const t = tok.vocabSize;
    expect(codec.specialBase).toBe(t);
    expect(codec.vocabSize).toBe(t + 10 + 2 * 101);
    expect(codec.render([t, t + 1, t + 6, t + 7, t + 8, t + 9, t + 10, t + 110, t + 111, t + 211])).toBe(
      '<TYPE> <DUAL_POINT> <IMPOSSIBLE> <plan> <act> <hist> <y_0> <y_100> <x_0> <x_100>',
    );
    expect(new ActionCodec(tok, { coordBins: 10 }).vocabSize).toBe(t + 10 + 22);
  });
});

describe('encodeTarget', () => {
  it('writes plan, then type, touch y/x, lift y/x, eos for a tap', () => {
    const ids = codec.encodeTarget([ActionType.DUAL_POINT, ActionType.TYPE, ActionType.PRESS_ENTER], tap(0.2349, 0.4651));
    expect(codec.render(ids)).toBe(
      '<plan> <DUAL_POINT> <TYPE> <PRESS_ENTER> <act> <DUAL_POINT> <y_23> <x_47> <y_23> <x_47> <eos>',
    );
  });

  it('normalises before quantising: a raw swipe becomes the paper fixed points, a near-tap becomes a tap', () => {
    const up = codec.encodeTarget([ActionType.DUAL_POINT], swipe([0.7, 0.31], [0.33, 0.4]));
    expect(codec.render(up)).toBe('<plan> <DUAL_POINT> <act> <DUAL_POINT> <y_80> <x_50> <y_20> <x_50> <eos>');
    const right = codec.encodeTarget([ActionType.DUAL_POINT], swipe([0.5, 0.1], [0.55, 0.9]));
    expect(codec.render(right)).toBe('<plan> <DUAL_POINT> <act> <DUAL_POINT> <y_50> <x_20> <y_50> <x_80> <eos>');
    const nearTap = codec.encodeTarget([ActionType.DUAL_POINT], swipe([0.5, 0.5], [0.52, 0.51]));
    expect(codec.render(nearTap)).toBe('<plan> <DUAL_POINT> <act> <DUAL_POINT> <y_50> <x_50> <y_50> <x_50> <eos>');
  });

  it('writes typed text after TYPE and nothing after other types; keeps only maxPlan plan entries', () => {
    const ids = codec.encodeTarget([ActionType.TYPE, ActionType.PRESS_ENTER], typed('lg ultragear'));
    expect(codec.render(ids)).toBe('<plan> <TYPE> <PRESS_ENTER> <act> <TYPE> "lg" " ultragear" <eos>');
    const plan = [4, 4, 4, 3, 7, 10] as ActionTypeId[];
    const back = codec.encodeTarget(plan, act(ActionType.PRESS_BACK, { typed_text: 'ignored' }));
    expect(codec.render(back)).toBe('<plan> <DUAL_POINT> <DUAL_POINT> <DUAL_POINT> <TYPE> <act> <PRESS_BACK> <eos>');
  });

  it('rejects bad input with the field at fault', () => {
    expect(() => codec.encodeTarget([], tap(0.1, 0.1))).toThrow(/plan: plan is empty/);
    expect(() => codec.encodeTarget([4, 9 as ActionTypeId], tap(0.1, 0.1))).toThrow(/plan\[1\]/);
    expect(() => codec.encodeTarget([4], tap(1.5, 0.1))).toThrow(/action\.touch_yx\[0\]/);
    expect(() => codec.encodeTarget([4], tap(0.2, Number.NaN))).toThrow(InputError);
    expect(() => codec.encodeTarget([3], typed('bad \ud800'))).toThrow(/^action\.typed_text: text is not well-formed Unicode/);
    expect(() => codec.encodeInput('bad \udfff', [])).toThrow(/^goal: text is not well-formed/);
    const small = new ActionCodec(tok, { maxTargetTokens: 12 });
    expect(() => small.encodeTarget([3], typed('a b c d e f g h'))).toThrow(/action\.typed_text: target is 19 tokens, more than maxTargetTokens 12/);
  });
});

describe('decodeTarget', () => {
  it('inverts encodeTarget and ignores anything after eos', () => {
    const ids = codec.encodeTarget([ActionType.TYPE, ActionType.PRESS_ENTER], typed('Logitech G903'));
    expect(codec.decodeTarget([...ids, 0, 0, 5])).toEqual({
      ok: true,
      plan: [ActionType.TYPE, ActionType.PRESS_ENTER],
      action: typed('Logitech G903'),
    });
    for (const text of [' ', '  a', ' lg']) {
      // decoding drops a copied word's leading space; free text keeps its own
      expect(codec.decodeTarget(codec.encodeTarget([3], typed(text))), JSON.stringify(text)).toMatchObject({ ok: true, action: typed(text) });
    }
    const res = codec.decodeTarget(codec.encodeTarget([4], tap(0.2349, 0.4651)));
    expect(res).toEqual({ ok: true, plan: [4], action: tap(0.23, 0.47) });
  });

  it('reports malformed output precisely and never repairs it', () => {
    const c = codec;
    const [P, A, H, E] = [c.planId, c.actId, c.histId, c.eosId];
    const T = (t: ActionTypeId): number => c.typeId(t);
    const y = (b: number): number => c.yBase + b;
    const x = (b: number): number => c.xBase + b;
    const DP = T(ActionType.DUAL_POINT);
    const word = tok.encodeText('ebay')[0]!;
    const cases: [number[], RegExp][] = [
      [[P, DP, A, DP, y(1), x(1), y(1), x(1)], /no <eos>/],
      [[0, P, DP, A, DP, y(1), x(1), y(1), x(1), E], /token 0: expected <plan>, got <pad> \(strip the decoder start token\)/],
      [[P, A, T(5), E], /token 1: expected an action type, got <act>/],
      [[P, DP, DP, DP, DP, DP, A, DP, y(1), x(1), y(1), x(1), E], /more than maxPlan 4/],
      [[P, DP, DP, E], /token 3: expected an action type or <act>, got <eos>/],
      [[P, DP, A, E], /token 3: expected an action type/],
      [[P, DP, A, DP, x(1), y(1), y(1), x(1), E], /token 4: expected <y_\*> \(touch y\), got <x_1>/],
      [[P, DP, A, DP, y(1), x(1), y(1), E], /token 7: expected <x_\*> \(lift x\), got <eos>/],
      [[P, DP, A, DP, y(1), x(1), y(1), x(1), y(1), E], /token 8: expected <eos>, got <y_1>/],
      [[P, T(5), A, T(5), word, E], /token 4: expected <eos>, got "ebay"/],
      [[P, T(3), A, T(3), word, H, E], /token 5: expected a text token or <eos>, got <hist>/],
      [[P, T(3), A, T(3), tok.unkId, E], /expected a text token or <eos>, got <unk>/],
      [[P, DP, A, DP, c.vocabSize, E], /outside the vocabulary/],
    ];
    for (const [ids, msg] of cases) {
      const res = c.decodeTarget(ids);
      expect(res.ok, c.render(ids)).toBe(false);
      if (!res.ok) expect(res.error).toMatch(msg);
    }
  });

  it('round-trips every gold action to one that action matching accepts (property)', () => {
    fc.assert(
      fc.property(goldAction, planArb, boxes, fc.constantFrom(100, 10, 20, 50, 7), (gold, plan, screenBoxes, q) => {
        const c = new ActionCodec(tok, { coordBins: q, maxTargetTokens: 1024 });
        const res = c.decodeTarget(c.encodeTarget(plan, gold));
        expect(res.ok).toBe(true);
        if (!res.ok) return;
        expect(res.plan).toEqual(plan.slice(0, 4));
        expect(checkActionsMatch(res.action, gold, screenBoxes)).toBe(true);
        const norm = normalizeAction(gold);
        expect(res.action.action_type).toBe(gold.action_type);
        expect(res.action.typed_text).toBe(norm.typed_text);
        for (const k of ['touch_yx', 'lift_yx'] as const) {
          for (const axis of [0, 1]) {
            // Half a grid step, plus float slack for the division.
            expect(Math.abs(res.action[k][axis]! - norm[k][axis]!)).toBeLessThanOrEqual(0.5 / q + 1e-12);
          }
        }
        if (gold.action_type === ActionType.DUAL_POINT && !isTap(norm.touch_yx, norm.lift_yx) && q % 10 === 0) {
          expect(res.action).toEqual(norm); // fixed scroll points lie on the grid
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('keeps the action-matching result at the tap/swipe and axis-tie boundaries', () => {
    const box: Box[] = [[0, 0, 0.01, 0.01]];
    const f = Math.fround;
    const golds = [
      swipe([0.5, 0.5], [0.54, 0.5]), // distance exactly 0.04 in float64
      swipe([f(0.3), f(0.3)], [f(0.3 + 0.04), f(0.3)]),
      swipe([0.5, 0.5], [0.5, 0.5400001]),
      swipe([0.2, 0.2], [0.6, 0.6]), // |dy| == |dx|: the axis tie goes to y
      swipe([0.1, 0.9], [0.9, 0.1]),
      swipe([1, 1], [0, 0]),
      tap(0, 0),
      tap(1, 1),
      tap(0.99999, 0.00001),
    ];
    for (const gold of golds) {
      const res = codec.decodeTarget(codec.encodeTarget([4], gold));
      expect(res.ok && checkActionsMatch(res.action, gold, box), JSON.stringify(gold)).toBe(true);
    }
  });
});

describe('tapStep and writesPointNext', () => {
  it('name the step whose input is a tap\'s type token, for every gold tap, and no step for anything else', () => {
    fc.assert(
      fc.property(planArb, goldAction, (plan, gold) => {
        // Room for any typed text the arbitrary draws (a dozen graphemes can spell to more than 48 byte tokens).
        const c = new ActionCodec(tok, { maxTargetTokens: 1024 });
        const target = c.encodeTarget(plan, gold, GOALS[0]);
        const step = c.tapStep(target);
        const normal = normalizeAction(gold);
        if (normal.action_type !== ActionType.DUAL_POINT || !isTap(normal.touch_yx, normal.lift_yx)) {
          expect(step).toBe(-1);
          return;
        }
        expect(target[step - 1]).toBe(c.typeId(ActionType.DUAL_POINT));
        expect(c.writesPointNext(target.slice(0, step))).toBe(true);
        expect(target.slice(0, step + 1).some((_, k) => k !== step && c.writesPointNext(target.slice(0, k)))).toBe(false);
      }),
    );
    expect(codec.tapStep(codec.encodeTarget([ActionType.DUAL_POINT], swipe([0.8, 0.5], [0.2, 0.5])))).toBe(-1);
  });
});

describe('encodeInput', () => {
  it('writes goal, <hist>, the compact previous actions oldest first, then eos', () => {
    const history = [tap(0.2349, 0.4651), typed('lg ultragear'), act(ActionType.PRESS_ENTER), swipe([0.9, 0.5], [0.1, 0.52])];
    const ids = codec.encodeInput("search for 'lg ultragear' on ebay", history);
    expect(codec.render(ids)).toBe(
      `"search" " for" " '" "lg" " ultragear" <0x27> " on" " ebay" <hist> ` +
        '<DUAL_POINT> <y_23> <x_47> <y_23> <x_47> <TYPE> "lg" " ultragear" <PRESS_ENTER> ' +
        '<DUAL_POINT> <y_80> <x_50> <y_20> <x_50> <eos>',
    );
    expect(codec.render(codec.encodeInput('turn off wifi', []))).toBe('"turn" " off" " wifi" <hist> <eos>');
  });

  it('keeps only the last maxHistory actions', () => {
    const history = ACTION_TYPE_IDS.concat(ACTION_TYPE_IDS).map((t) => (t === ActionType.DUAL_POINT ? tap(0.5, 0.5) : act(t)));
    const ids = codec.encodeInput('turn off wifi', history);
    const types = ids.map((id) => codec.typeOf(id)).filter((t) => t !== undefined);
    expect(types).toEqual(history.slice(-8).map((a) => a.action_type));
    const none = new ActionCodec(tok, { maxHistory: 0 });
    expect(none.render(none.encodeInput('turn off wifi', history))).toBe('"turn" " off" " wifi" <hist> <eos>');
  });

  it('drops whole actions from the oldest end to fit maxInputTokens, and refuses a goal that cannot fit', () => {
    const c = new ActionCodec(tok, { maxInputTokens: 12 });
    const history = [typed('one two three four'), act(ActionType.PRESS_BACK), tap(0.5, 0.5)];
    // goal 3 + <hist> + eos = 5; budget 7: tap (5) + back (1) fit, the TYPE (1 + 7 tokens) does not.
    const ids = c.encodeInput('turn off wifi', history);
    expect(c.render(ids)).toBe('"turn" " off" " wifi" <hist> <PRESS_BACK> <DUAL_POINT> <y_50> <x_50> <y_50> <x_50> <eos>');
    expect(ids.length).toBeLessThanOrEqual(12);
    expect(() => c.encodeInput('what is the price of a 12 inch pizza on walmart', [])).toThrow(/goal: goal is \d+ tokens/);
  });

  it('names the history entry at fault', () => {
    expect(() => codec.encodeInput('turn off wifi', [tap(0.1, 0.1), tap(0.1, -3)])).toThrow(/history\[1\]\.touch_yx\[1\]/);
  });
});

describe('codec JSON', () => {
  it('restores an identical codec and validates config fields', () => {
    const c = new ActionCodec(tok, { coordBins: 50, maxHistory: 4 });
    const j = JSON.parse(JSON.stringify(c.toJSON())) as CodecJSON;
    const back = ActionCodec.fromJSON(j);
    expect(back.vocabSize).toBe(c.vocabSize);
    expect(back.config).toEqual(c.config);
    const history = [tap(0.3, 0.7), typed('logitech g903')];
    expect(back.encodeInput(GOALS[0]!, history)).toEqual(c.encodeInput(GOALS[0]!, history));
    expect(() => ActionCodec.fromJSON({ ...j, config: { ...j.config, coordBins: 1 } })).toThrow(/codec\.config\.coordBins/);
    const { maxPlan: _drop, ...partial } = j.config;
    expect(() => ActionCodec.fromJSON({ ...j, config: partial } as CodecJSON)).toThrow(/codec\.config\.maxPlan/);
    expect(() => ActionCodec.fromJSON({ ...j, kind: 'x' } as unknown as CodecJSON)).toThrow(/codec\.kind/);
    expect(() => new ActionCodec(tok, { maxPlan: 4, maxTargetTokens: 11 })).toThrow(/maxTargetTokens/);
  });
});
