import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCROLL_POINTS } from '../src/data/normalize.js';
import { ACTION_TYPE_IDS, ActionType, type ActionTypeId, type AitwAction, type YX } from '../src/data/types.js';
import { ActionCodec } from '../src/model/codec.js';
import { TargetConstraint, type ConstraintState } from '../src/model/constrained.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';

const tok = buildWordTokenizer(["search for 'lg ultragear' on ebay", 'turn off wifi', 'Open a new Chrome window'], { minCount: 1 });

/** Walks the constraint choosing allowed ids by the given choices; returns the ids up to and including eos. */
function walk(con: TargetConstraint, choices: number[], maxSteps = 1000): number[] {
  let s = con.initial();
  const ids: number[] = [];
  for (let step = 0; !con.isDone(s); step++) {
    if (step >= maxSteps) throw new Error('walk did not end');
    const allowed = con.allowedIds(s);
    const id = allowed[choices[step % choices.length]! % allowed.length]!;
    ids.push(id);
    s = con.advance(s, id);
  }
  return ids;
}

const isPoint = (p: YX, q: readonly number[]): boolean => p[0] === q[0] && p[1] === q[1];

describe('TargetConstraint', () => {
  it('only lets through targets that decodeTarget accepts, within maxTargetTokens (random walks)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { minLength: 1, maxLength: 64 }),
        fc.constantFrom(4, 1, 2),
        fc.constantFrom(12, 16, 48),
        fc.constantFrom(100, 10, 7),
        fc.boolean(),
        (choices, maxPlan, extra, coordBins, normalisedDualPoints) => {
          const codec = new ActionCodec(tok, { maxPlan, maxTargetTokens: maxPlan + extra - 4, coordBins });
          const con = new TargetConstraint(codec, { normalisedDualPoints });
          const ids = walk(con, choices);
          expect(ids.at(-1)).toBe(codec.eosId);
          expect(ids.length).toBeLessThanOrEqual(codec.config.maxTargetTokens);
          const res = codec.decodeTarget(ids);
          expect(res.ok, res.ok ? '' : `${res.error}: ${codec.render(ids)}`).toBe(true);
          if (res.ok && normalisedDualPoints && res.action.action_type === ActionType.DUAL_POINT) {
            const { touch_yx: t, lift_yx: l } = res.action;
            const scroll = Object.values(SCROLL_POINTS).some(
              ([st, en]) => isPoint(t, st.map((v) => codec.dequantize(codec.quantize(v)))) && isPoint(l, en.map((v) => codec.dequantize(codec.quantize(v)))),
            );
            expect(isPoint(t, l) || scroll, codec.render(ids)).toBe(true);
          }
        },
      ),
      { numRuns: 600 },
    );
  });

  it('accepts every target encodeTarget produces', () => {
    const codec = new ActionCodec(tok, { maxTargetTokens: 1024 });
    const con = new TargetConstraint(codec);
    const unit = fc.double({ min: 0, max: 1, noNaN: true });
    const mk = (action_type: ActionTypeId, touch_yx: YX, lift_yx: YX, typed_text = ''): AitwAction => ({ action_type, touch_yx, lift_yx, typed_text });
    const action: fc.Arbitrary<AitwAction> = fc.oneof(
      fc.tuple(unit, unit, unit, unit).map(([a, b, c, d]) => mk(ActionType.DUAL_POINT, [a, b], [c, d])),
      fc.tuple(unit, unit).map(([a, b]) => mk(ActionType.DUAL_POINT, [a, b], [a, b])),
      fc.string({ unit: 'grapheme', maxLength: 8 }).map((t) => mk(ActionType.TYPE, [-1, -1], [-1, -1], t)),
      fc.constantFrom(...ACTION_TYPE_IDS.filter((t) => t !== ActionType.DUAL_POINT)).map((t) => mk(t, [-1, -1], [-1, -1])),
    );
    const plan = fc.array(fc.constantFrom(...ACTION_TYPE_IDS), { minLength: 1, maxLength: 6 }) as fc.Arbitrary<ActionTypeId[]>;
    fc.assert(
      fc.property(action, plan, (a, p) => {
        const ids = codec.encodeTarget(p, a);
        let s = con.initial();
        for (const id of ids) s = con.advance(s, id);
        expect(con.isDone(s)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('gives each state a cached 0/-inf mask that agrees with allowedIds', () => {
    const codec = new ActionCodec(tok);
    const con = new TargetConstraint(codec);
    let s = con.initial();
    const visited: ConstraintState[] = [];
    for (const id of codec.encodeTarget([4, 3], { action_type: 4, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' })) {
      visited.push(s);
      s = con.advance(s, id);
    }
    visited.push(s);
    for (const st of visited) {
      const mask = con.mask(st);
      const allowed = new Set(con.allowedIds(st));
      expect(mask).toHaveLength(codec.vocabSize);
      for (let id = 0; id < codec.vocabSize; id++) expect(mask[id]).toBe(allowed.has(id) ? 0 : -Infinity);
      expect(con.mask({ ...st })).toBe(mask); // same state, same cached array
    }
    const names = visited.map((st) => Array.from(con.allowedIds(st), (id) => codec.tokenName(id)));
    expect(names[0]).toEqual(['<plan>']);
    expect(names[1]).toHaveLength(7); // first plan entry: a type, not yet <act>
    expect(names[2]).toContain('<act>');
    expect(names[5]).toHaveLength(101); // touch y: any
    // Touch (0.8, 0.5) is the scroll-up start: lift is the tap itself or the scroll end.
    expect(names[7]).toEqual(['<y_20>', '<y_80>']);
    expect(names[8]).toEqual(['<x_50>']);
    expect(names[9]).toEqual(['<eos>']);
    expect(names[10]).toEqual(['<pad>']);
    expect(con.advance(s, tok.padId)).toBe(s);
  });

  it('forces lift = touch for a tap that is not a scroll start', () => {
    const codec = new ActionCodec(tok);
    const con = new TargetConstraint(codec);
    let s = con.initial();
    for (const id of [codec.planId, codec.typeId(4), codec.actId, codec.typeId(4), codec.yBase + 31, codec.xBase + 64]) s = con.advance(s, id);
    expect(Array.from(con.allowedIds(s))).toEqual([codec.yBase + 31]);
    expect(() => con.advance(s, codec.yBase + 30)).toThrow(/<y_30> is not allowed after LiftY/);
    // Masks are shared by allowed set, not per touch point, so the cache stays small.
    let other = con.initial();
    for (const id of [codec.planId, codec.typeId(4), codec.actId, codec.typeId(4), codec.yBase + 31, codec.xBase + 9]) other = con.advance(other, id);
    expect(con.mask(other)).toBe(con.mask(s));
    const free = new TargetConstraint(codec, { normalisedDualPoints: false });
    let f = free.initial();
    for (const id of [codec.planId, codec.typeId(4), codec.actId, codec.typeId(4), codec.yBase + 31, codec.xBase + 64]) f = free.advance(f, id);
    expect(free.allowedIds(f)).toHaveLength(101);
  });

  it('stops text with eos when the target budget runs out, and excludes pad/eos/unk/specials from text', () => {
    const codec = new ActionCodec(tok, { maxPlan: 4, maxTargetTokens: 12 });
    const con = new TargetConstraint(codec);
    let s = con.initial();
    for (const id of [codec.planId, codec.typeId(3), codec.actId, codec.typeId(3)]) s = con.advance(s, id);
    const text = Array.from(con.allowedIds(s));
    expect(text).toContain(codec.eosId);
    expect(text).not.toContain(tok.padId);
    expect(text).not.toContain(tok.unkId);
    expect(text.filter((id) => id >= codec.specialBase)).toEqual([]);
    expect(text).toHaveLength(tok.vocabSize - 3 + 1);
    const word = tok.encodeText('ebay')[0]!;
    for (let n = 4; n < 11; n++) s = con.advance(s, word); // length 11: one slot left, for eos
    expect(Array.from(con.allowedIds(s))).toEqual([codec.eosId]);
    s = con.advance(s, codec.eosId);
    expect(s.length).toBe(12);
  });

  it('fills a batch of masks row by row', () => {
    const codec = new ActionCodec(tok);
    const con = new TargetConstraint(codec);
    const a = con.initial();
    const b = con.advance(a, codec.planId);
    const out = new Float32Array(2 * codec.vocabSize);
    con.fillMasks([a, b], out);
    expect(out.subarray(0, codec.vocabSize)).toEqual(con.mask(a));
    expect(out.subarray(codec.vocabSize)).toEqual(con.mask(b));
    expect(() => con.fillMasks([a, b], new Float32Array(codec.vocabSize))).toThrow(RangeError);
  });
});
