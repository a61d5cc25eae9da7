import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ActionType, type AitwAction, type TypedTextChoice, type TypeProbs } from '../src/data/types.js';
import { fuseAnswers, meanTypeProbs } from '../src/infer/ensemble.js';
import type { Generated } from '../src/infer/generate.js';
import { Predictor } from '../src/infer/predict.js';
import { InputError } from '../src/util/errors.js';
import { makeScreenshot } from './helpers/screens.js';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';

const tap = (y: number, x: number): AitwAction => ({ action_type: ActionType.DUAL_POINT, touch_yx: [y, x], lift_yx: [y, x], typed_text: '' });
const typed = (text: string): AitwAction => ({ action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text });
const key = (t: AitwAction['action_type']): AitwAction => ({ action_type: t, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' });

/** A member's answer: its action (ids stand for which member it is), its type probabilities and texts. */
function answer(id: number, action: AitwAction, typeProbs: TypeProbs, textChoices: TypedTextChoice[] = []): Generated {
  return { ids: [id], result: { ok: true, action, plan: [action.action_type] }, typeProbs, textChoices };
}

describe('fuseAnswers', () => {
  test('one member: its own answer', () => {
    const a = answer(0, tap(0.5, 0.5), { DUAL_POINT: 0.9, TYPE: 0.1 });
    expect(fuseAnswers([a])).toEqual(a);
  });

  test('the type the mean favours, among the types answered; two members outvote a sure third', () => {
    const back = answer(0, key(ActionType.PRESS_BACK), { PRESS_BACK: 0.83, TYPE: 0.01, STATUS_TASK_COMPLETE: 0.16 });
    const t1 = answer(1, typed('Tanaka'), { TYPE: 1 }, [{ text: 'Tanaka', score: -0.01 }]);
    const t2 = answer(2, typed('Tanaka'), { TYPE: 0.42, DUAL_POINT: 0.27, STATUS_TASK_COMPLETE: 0.31 }, [{ text: 'Tanaka', score: -0.2 }]);
    const fused = fuseAnswers([back, t1, t2]);
    expect(fused.result.ok && fused.result.action).toEqual(typed('Tanaka'));
    expect(fused.typeProbs.TYPE).toBeCloseTo((0.01 + 1 + 0.42) / 3, 6);
    expect(fused.typeProbs.PRESS_BACK).toBeCloseTo(0.83 / 3, 6);
  });

  test('a tap: the medoid of the members that tapped', () => {
    const members = [tap(0.1, 0.5), tap(0.8, 0.2), tap(0.12, 0.52)].map((a, i) => answer(i, a, { DUAL_POINT: 0.9 }));
    const fused = fuseAnswers(members);
    expect(fused.ids).toEqual([2]); // nearest to both others: 0.12, 0.52
  });

  test('a typed text: the one most members typed, even against a surer one; a tie goes to the one their beams weigh most', () => {
    const sure = answer(0, typed('target,'), { TYPE: 1 }, [{ text: 'target,', score: -0.01 }, { text: 'target.com', score: -0.9 }]);
    const b = answer(1, typed('target.com'), { TYPE: 1 }, [{ text: 'target.com', score: -0.6 }, { text: 'target,', score: -0.7 }]);
    const c = answer(2, typed('target.com'), { TYPE: 1 }, [{ text: 'target.com', score: -0.8 }, { text: 'target,', score: -0.3 }]);
    expect(fuseAnswers([sure, b, c]).result).toMatchObject({ ok: true, action: typed('target.com') });
    // One vote each: "Ada" weighs e^-0.3 + e^-0.05 against "Ada and go"'s e^-0.1 + e^-0.5.
    const x = answer(0, typed('Ada and go'), { TYPE: 1 }, [{ text: 'Ada and go', score: -0.1 }, { text: 'Ada', score: -0.3 }]);
    const y = answer(1, typed('Ada'), { TYPE: 1 }, [{ text: 'Ada', score: -0.05 }, { text: 'Ada and go', score: -0.5 }]);
    expect(fuseAnswers([x, y]).result).toMatchObject({ ok: true, action: typed('Ada') });
    expect(fuseAnswers([y, x]).result).toMatchObject({ ok: true, action: typed('Ada') });
    // Greedy members (no choices) weigh their own text 1.
    const g = (id: number, text: string) => answer(id, typed(text), { TYPE: 1 });
    expect(fuseAnswers([g(0, 'x'), g(1, 'y'), g(2, 'y')]).result).toMatchObject({ ok: true, action: typed('y') });
  });

  test('another action: from the member most sure of it; an invalid member never answers', () => {
    const invalid: Generated = { ids: [9], result: { ok: false, error: 'no end' }, typeProbs: { PRESS_HOME: 1 }, textChoices: [] };
    const h1 = answer(1, key(ActionType.PRESS_HOME), { PRESS_HOME: 0.6, PRESS_BACK: 0.4 });
    const h2 = answer(2, key(ActionType.PRESS_HOME), { PRESS_HOME: 0.9 });
    expect(fuseAnswers([invalid, h1, h2]).ids).toEqual([2]);
    expect(fuseAnswers([invalid, invalid]).result.ok).toBe(false);
  });

  test('property: the fused answer is one a member gave, of a type some member answered, and the mean of probabilities sums as they do', () => {
    const types = [ActionType.DUAL_POINT, ActionType.TYPE, ActionType.PRESS_BACK, ActionType.STATUS_TASK_COMPLETE] as const;
    const names = ['DUAL_POINT', 'TYPE', 'PRESS_BACK', 'STATUS_TASK_COMPLETE'] as const;
    const member = fc.record({
      type: fc.integer({ min: 0, max: 3 }),
      probs: fc.array(fc.double({ min: 0.01, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
      y: fc.double({ min: 0, max: 1, noNaN: true }),
      text: fc.constantFrom('a', 'b', 'c'),
      score: fc.double({ min: -5, max: 0, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(member, { minLength: 1, maxLength: 5 }), (ms) => {
        const gens = ms.map((m, i) => {
          const t = types[m.type]!;
          const total = m.probs.reduce((s, p) => s + p, 0) || 1;
          const probs = Object.fromEntries(names.map((n, k) => [n, m.probs[k]! / total])) as TypeProbs;
          const action = t === ActionType.DUAL_POINT ? tap(m.y, 0.5) : t === ActionType.TYPE ? typed(m.text) : key(t);
          return answer(i, action, probs, t === ActionType.TYPE ? [{ text: m.text, score: m.score }] : []);
        });
        const fused = fuseAnswers(gens);
        const from = gens.find((g) => g.ids[0] === fused.ids[0])!;
        expect(fused.result).toEqual(from.result);
        const sum = Object.values(fused.typeProbs).reduce((s, p) => s + p!, 0);
        expect(sum).toBeCloseTo(1, 6);
      }),
      { numRuns: 200 },
    );
  });

  test('meanTypeProbs: a type a member leaves out counts 0', () => {
    expect(meanTypeProbs([{ TYPE: 1 }, { PRESS_BACK: 0.5, TYPE: 0.5 }])).toEqual({ TYPE: 0.75, PRESS_BACK: 0.25 });
  });
});

describe('Predictor with --ensemble', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'autoui-ensemble-'));
    await makeTinyCheckpoint(join(dir, 'a'), { seed: 1 });
    await makeTinyCheckpoint(join(dir, 'b'), { seed: 2 });
    await makeTinyCheckpoint(join(dir, 'text'), { seed: 3, screenText: true });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('answers with one member\'s whole, well-formed answer, names every member in its info, and leaks no tensors', async () => {
    const p = await Predictor.load([join(dir, 'a'), join(dir, 'b')]);
    const [pa, pb] = await Promise.all([Predictor.load(join(dir, 'a')), Predictor.load(join(dir, 'b'))]);
    try {
      expect(p.info().ensemble).toEqual([join(dir, 'a'), join(dir, 'b')]);
      expect(pa.info().ensemble).toBeUndefined();
      const image = await makeScreenshot(540, 1200);
      const input = { image, goal: 'search for hotels in paris', history: [] };
      const before = (await import('@tensorflow/tfjs-core')).memory().numTensors;
      const r = (await p.predict(input)).result;
      expect((await import('@tensorflow/tfjs-core')).memory().numTensors).toBe(before);
      const alone = [(await pa.predict(input)).result, (await pb.predict(input)).result];
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      expect(alone.some((a) => a.ok && JSON.stringify(a.aitw) === JSON.stringify(r.aitw))).toBe(true);
      for (const [name, prob] of Object.entries(r.type_probs)) {
        const mean = alone.reduce((s, a) => s + ((a.ok && a.type_probs[name as keyof TypeProbs]) || 0), 0) / 2;
        expect(prob).toBeCloseTo(mean, 5);
      }
    } finally {
      for (const x of [p, pa, pb]) x.dispose();
    }
  });

  test('a checkpoint that reads the inputs another way is refused, naming it', async () => {
    const err = await Predictor.load([join(dir, 'a'), join(dir, 'text')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(String(err)).toMatch(/text channel differ/);
  });
});
