/**
 * Typed text is copied from the goal: targets use the goal's own tokens for the span, and decoding
 * may only emit spans of the goal, so unseen words come out character for character.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ActionType, type AitwAction } from '../src/data/types.js';
import { ActionCodec } from '../src/model/codec.js';
import { TargetConstraint } from '../src/model/constrained.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';

const tok = buildWordTokenizer(['search for hotels in paris on google', 'search for hotels'], { minCount: 1 });
const codec = new ActionCodec(tok);
const typed = (text: string): AitwAction => ({ action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text });

/** Emits `ids` through the constraint from the start, returning false at the first token it forbids. */
function allowed(constraint: TargetConstraint, goal: number[], ids: number[]): boolean {
  let s = constraint.initial(goal);
  for (const id of ids) {
    if (constraint.mask(s)[id] !== 0) return false;
    s = constraint.advance(s, id);
  }
  return constraint.isDone(s);
}

describe('copying typed text from the goal', () => {
  it('encodes a span of the goal as the goal\'s tokens and decodes it exactly, unseen words included', () => {
    for (const [goal, text] of [
      ['search for hotels in paris on google', 'hotels in paris'],
      ['Search for "Zyxqvöl Straße" on google', 'Zyxqvöl Straße'],
      ['look up 12 inch pizza', '12 inch pizza'],
      ['type hello', 'hello'],
    ] as const) {
      const goalIds = codec.goalIds(codec.encodeInput(goal, []));
      const target = codec.encodeTarget([ActionType.TYPE], typed(text), goal);
      const textIds = target.slice(target.indexOf(codec.actId) + 2, -1);
      expect(goalIds.join(',')).toContain(textIds.join(','));
      const back = codec.decodeTarget(target);
      expect(back.ok && back.action.typed_text).toBe(text);
    }
  });

  it('falls back to plain tokens when the text is not a span on word boundaries', () => {
    expect(codec.goalSpan('search for hotels', 'otels')).toBeNull();
    expect(codec.goalSpan('search for hotels', 'motels')).toBeNull();
    const t = codec.encodeTarget([ActionType.TYPE], typed('motels'), 'search for hotels');
    const back = codec.decodeTarget(t);
    expect(back.ok && back.action.typed_text).toBe('motels');
  });

  it('the constraint allows exactly the goal\'s spans (and eos once something was typed)', () => {
    const constraint = new TargetConstraint(codec);
    const goal = 'search for hotels in paris';
    const goalIds = codec.goalIds(codec.encodeInput(goal, []));
    const prefix = [codec.planId, codec.typeId(ActionType.TYPE), codec.actId, codec.typeId(ActionType.TYPE)];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: goalIds.length - 1 }), fc.integer({ min: 1, max: goalIds.length }), (a, n) => {
        const span = goalIds.slice(a, Math.min(goalIds.length, a + n));
        expect(allowed(constraint, goalIds, [...prefix, ...span, codec.eosId])).toBe(true);
      }),
    );
    const spaceless = tok.encodeText('paris hotels');
    expect(allowed(constraint, goalIds, [...prefix, ...spaceless, codec.eosId])).toBe(false);
    expect(allowed(constraint, goalIds, [...prefix, codec.eosId])).toBe(false);
    // Without a goal (or for codecs that do not copy) any text is allowed.
    const free = new TargetConstraint(new ActionCodec(tok, { copyText: false }));
    expect(allowed(free, goalIds, [...prefix, ...spaceless, codec.eosId])).toBe(true);
  });

  it('old checkpoints (no copyText in their codec) keep generating freely', () => {
    const json = codec.toJSON();
    const { copyText: _, ...old } = json.config;
    expect(ActionCodec.fromJSON({ ...json, config: old as typeof json.config }).config.copyText).toBe(false);
  });
});
