/**
 * Typed text is copied from the goal: targets use the goal's own tokens for the span, and decoding
 * may only emit spans of the goal, so unseen words come out character for character. Codecs with
 * case tokens (the default) case the whole text once; those without (older checkpoints) word by word.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ActionType, type AitwAction } from '../src/data/types.js';
import { ActionCodec, caseText, TEXT_CASES, type TextCase } from '../src/model/codec.js';
import { startedCopy, startPieces, TargetConstraint } from '../src/model/constrained.js';
import { buildWordTokenizer, capitalise, splitPieces } from '../src/model/tokenizer.js';

const tok = buildWordTokenizer(['search for hotels in paris on google', 'search for hotels'], { minCount: 1 });
/** Without case tokens (the default): each copied word in its own casing. */
const codec = new ActionCodec(tok);
/** A target up to its typed text: <plan> TYPE <act> TYPE. */
const prefix = [codec.planId, codec.typeId(ActionType.TYPE), codec.actId, codec.typeId(ActionType.TYPE)];
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

/**
 * A target through the constraint from `start`: the allowed id `picks` chooses at each step, then the
 * shortest way out (eos as soon as it is allowed).
 */
function randomWalk(constraint: TargetConstraint, goal: number[], start: readonly number[], picks: readonly number[]): number[] {
  const ids = [...start];
  let s = start.reduce((st, id) => constraint.advance(st, id), constraint.initial(goal));
  for (let k = 0; !constraint.isDone(s); k++) {
    const ok = constraint.allowedIds(s);
    const id = k < picks.length ? ok[picks[k]! % ok.length]! : ok.includes(tok.eosId) ? tok.eosId : ok[0]!;
    ids.push(id);
    s = constraint.advance(s, id);
  }
  return ids;
}

/** True when `text` is a run of the goal's pieces, each as written, lower-cased or Capitalised (one leading space may be dropped). */
function isCopy(goal: string, text: string): boolean {
  const pieces = splitPieces(goal);
  const casing = (p: string, t: string): boolean => [p, p.toLowerCase(), capitalise(p.toLowerCase())].includes(t);
  for (let i = 0; i < pieces.length; i++) {
    for (let j = i + 1; j <= pieces.length; j++) {
      const run = pieces.slice(i, j);
      for (const typed of [text, ` ${text}`]) {
        let at = 0;
        if (run.join('').length === typed.length && run.every((p) => casing(p, typed.slice(at, (at += p.length))))) return true;
      }
    }
  }
  return false;
}

describe('copying typed text from the goal, word by word cased (no case tokens, the default)', () => {
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

  it('the constraint allows exactly the goal\'s spans of whole pieces (and eos once something was typed)', () => {
    const constraint = new TargetConstraint(codec);
    const goal = 'search for hotels in paris';
    const goalIds = codec.goalIds(codec.encodeInput(goal, []));
    const pieces = codec.copyPieces(goalIds);
    expect(pieces.map((p) => p[0]!.length)).toEqual([1, 1, 1, 1, 1]); // every word here is in the vocabulary: one id each
    const cuts = [0, 1, 2, 3, 4, 5];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: cuts.length - 2 }), fc.integer({ min: 1, max: cuts.length - 1 }), (a, n) => {
        const span = goalIds.slice(cuts[a], cuts[Math.min(cuts.length - 1, a + n)]);
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

  it('a copy held to a start (startedCopy) spells a run of whole pieces from that piece on, and nothing from elsewhere', () => {
    const constraint = new TargetConstraint(codec);
    const goalIds = codec.goalIds(codec.encodeInput('search for hotels in paris', []));
    const held = (ids: number[]): boolean => {
      let s = prefix.reduce((st, id) => constraint.advance(st, id), constraint.initial(goalIds));
      s = { ...s, copy: startedCopy(s.copy!, 2) }; // from " hotels"
      for (const id of ids) {
        if (constraint.mask(s)[id] !== 0) return false;
        s = constraint.advance(s, id);
      }
      return constraint.isDone(s);
    };
    expect(held([goalIds[2]!, codec.eosId])).toBe(true);
    expect(held([...goalIds.slice(2), codec.eosId])).toBe(true);
    expect(held([...tok.encodeText(' Hotels in'), codec.eosId])).toBe(true);
    expect(held([codec.eosId])).toBe(false); // nothing typed
    expect(held([...goalIds.slice(1, 3), codec.eosId])).toBe(false); // from before it
    expect(held([...goalIds.slice(3, 5), codec.eosId])).toBe(false); // from after it
  });

  it('startPieces: the pieces a copied text may start at, any casing, wherever the goal holds its first word', () => {
    const goalIds = codec.goalIds(codec.encodeInput('search hotels for hotels in paris', []));
    const pieces = codec.copyPieces(goalIds);
    expect(startPieces(pieces, tok.encodeText(' hotels in'))).toEqual([1, 3]);
    expect(startPieces(pieces, tok.encodeText(' Hotels'))).toEqual([1, 3]);
    expect(startPieces(pieces, tok.encodeText(' paris'))).toEqual([5]);
    expect(startPieces(pieces, [])).toEqual([]);
  });

  it('a word the vocabulary spells in bytes is copied whole: a span can neither start nor stop inside it', () => {
    const constraint = new TargetConstraint(codec);
    const goal = 'search for zyxq hotels';
    const goalIds = codec.goalIds(codec.encodeInput(goal, []));
    const word = tok.encodeText(' zyxq');
    expect(word.length).toBeGreaterThan(2);
    const at = goalIds.findIndex((_, i) => goalIds.slice(i, i + word.length).join(',') === word.join(','));
    expect(allowed(constraint, goalIds, [...prefix, ...goalIds.slice(at, at + word.length), codec.eosId])).toBe(true);
    expect(allowed(constraint, goalIds, [...prefix, ...goalIds.slice(0, at + word.length), codec.eosId])).toBe(true);
    for (let cut = 1; cut < word.length; cut++) {
      expect(allowed(constraint, goalIds, [...prefix, ...goalIds.slice(at, at + cut), codec.eosId])).toBe(false);
      expect(allowed(constraint, goalIds, [...prefix, ...goalIds.slice(at + cut, at + word.length), codec.eosId])).toBe(false);
    }
  });

  it('copies a goal word in the casing the text gives it, byte-spelled names included', () => {
    const constraint = new TargetConstraint(codec);
    for (const [goal, text] of [
      ['What is the weather in Zyxburg?', 'weather in zyxburg'],
      ['search for hotels', 'Hotels'],
      ['open zyxq', 'Zyxq'],
      ['Open Hotels', 'hotels'],
    ] as const) {
      const goalIds = codec.goalIds(codec.encodeInput(goal, []));
      const target = codec.encodeTarget([ActionType.TYPE], typed(text), goal);
      const back = codec.decodeTarget(target);
      expect(back.ok && back.action.typed_text).toBe(text);
      expect(allowed(constraint, goalIds, [...prefix, ...target.slice(target.indexOf(codec.actId) + 2)])).toBe(true);
    }
    // Other casings (camel case, a mid-word capital) are not copies.
    expect(codec.goalSpan('open zyxq', 'ZyXq')).toBeNull();
  });

  it('every text the constraint lets through is a run of whole goal words, each in some casing (random walks)', () => {
    const words = ['search', 'for', 'Hotels', 'in', 'PARIS', 'zyxq', 'Denver', '12', 'inch', '"pizza"', 'Straße'];
    const constraint = new TargetConstraint(codec);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { minLength: 24, maxLength: 24 }), (goalWords, picks) => {
        const goal = goalWords.join(' ');
        const back = codec.decodeTarget(randomWalk(constraint, codec.goalIds(codec.encodeInput(goal, [])), prefix, picks));
        expect(back.ok).toBe(true);
        const text = back.ok ? back.action.typed_text : '';
        expect(isCopy(goal, text), JSON.stringify({ goal, text })).toBe(true);
      }),
    );
  });

  it('names the goal position each typed id comes from, and the position after the run', () => {
    const goal = 'search for zyxq hotels in paris';
    const goalIds = codec.goalIds(codec.encodeInput(goal, []));
    const textOf = (text: string): number[] => {
      const t = codec.encodeTarget([ActionType.TYPE], typed(text), goal);
      return t.slice(t.indexOf(codec.actId) + 2, -1);
    };
    const zyxq = tok.encodeText(' zyxq').length;
    // " zyxq" starts at goal position 2 (after " search", " for"); "hotels in" follows it.
    const found = codec.copyPositions(goalIds, textOf('zyxq hotels in'));
    expect(found).toEqual({ at: Array.from({ length: zyxq + 2 }, (_, k) => 2 + k), end: 2 + zyxq + 2 });
    // A run ending the goal ends at the goal's length; every id named is the goal's id there.
    const last = codec.copyPositions(goalIds, textOf('in paris'))!;
    expect(last.end).toBe(goalIds.length);
    expect(last.at.map((p) => goalIds[p])).toEqual(textOf('in paris'));
    // A re-cased byte-spelled word: the id of its capital differs from the goal's (−1), the rest are the goal's.
    const cased = textOf('Zyxq');
    expect(codec.copyPositions(goalIds, cased)!.at).toEqual(cased.map((id, k) => (id === goalIds[2 + k] ? 2 + k : -1)));
    expect(cased.filter((id, k) => id !== goalIds[2 + k])).toHaveLength(1);
    // Not a run of whole pieces: nothing to teach.
    expect(codec.copyPositions(goalIds, tok.encodeText('paris hotels'))).toBeNull();
    expect(codec.copyPositions(goalIds, [])).toBeNull();
  });

  it('every run of the goal\'s pieces as written is found at its own positions (random runs)', () => {
    const words = ['search', 'for', 'Hotels', 'in', 'PARIS', 'zyxq', 'Denver', '12', 'inch', 'pizza', 'Straße'];
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), (goalWords, a, n) => {
        const goalIds = codec.goalIds(codec.encodeInput(goalWords.join(' '), []));
        const pieces = codec.copyPieces(goalIds);
        const first = a % pieces.length;
        const stop = first + 1 + (n % (pieces.length - first));
        const offset = (j: number): number => pieces.slice(0, j).reduce((s, p) => s + p[0]!.length, 0);
        const run = goalIds.slice(offset(first), offset(stop));
        const found = codec.copyPositions(goalIds, run)!;
        // Words are unique, so the first run that spells it is this one.
        expect(found.at).toEqual(run.map((_, k) => offset(first) + k));
        expect(found.end).toBe(offset(stop));
      }),
    );
  });

  it('old checkpoints (no copyText in their codec) keep generating freely; none before case tokens has them', () => {
    const json = new ActionCodec(tok, { caseModes: true }).toJSON();
    const { copyText: _, caseModes: __, ...old } = json.config;
    const restored = ActionCodec.fromJSON({ ...json, config: old as typeof json.config });
    expect(restored.config.copyText).toBe(false);
    expect(restored.config.caseModes).toBe(false);
    expect(ActionCodec.fromJSON(json).config.caseModes).toBe(true);
  });
});

describe('case tokens (train --case-tokens): the whole typed text cased once', () => {
  const cased = new ActionCodec(tok, { caseModes: true });
  const constraint = new TargetConstraint(cased);
  const head = [cased.planId, cased.typeId(ActionType.TYPE), cased.actId, cased.typeId(ActionType.TYPE)];
  const textOf = (target: number[]): number[] => target.slice(target.indexOf(cased.actId) + 3, -1);

  it('come after the x bins, one per case, and only in a codec that has them', () => {
    const x100 = cased.xBase + cased.config.coordBins;
    expect(cased.vocabSize).toBe(codec.vocabSize + 4);
    expect(cased.render([x100, x100 + 1, x100 + 2, x100 + 3, x100 + 4])).toBe('<x_100> <as-written> <lower> <capitalised> <free>');
    expect(codec.caseOf(x100 + 1)).toBeUndefined();
  });

  it('a TYPE target must have its case token; nothing is guessed', () => {
    const word = tok.encodeText('hotels')[0]!;
    for (const [ids, msg] of [
      [[...head, word, cased.eosId], /token 4: expected a case token, got "hotels"/],
      [[...head, cased.eosId], /token 4: expected a case token, got <eos>/],
      [[...head, cased.caseId('free'), word, cased.histId, cased.eosId], /token 6: expected a text token or <eos>, got <hist>/],
    ] as const) {
      const res = cased.decodeTarget([...ids]);
      expect(res.ok).toBe(false);
      if (!res.ok) expect(res.error).toMatch(msg);
    }
  });

  it('encodes a run of the goal as its case token and the goal\'s own ids, and decodes it exactly', () => {
    for (const [goal, text, mode] of [
      ['search for hotels in paris on google', 'hotels in paris', 'as-written'],
      ['Search for "Zyxqvöl Straße" on google', 'Zyxqvöl Straße', 'as-written'],
      ['install zyxq hotels app', 'Zyxq Hotels', 'capitalised'],
      ['What is the weather in Zyxburg?', 'weather in zyxburg', 'lower'],
      ['open Paris', 'paris', 'lower'],
    ] as const) {
      const goalIds = cased.goalIds(cased.encodeInput(goal, []));
      const target = cased.encodeTarget([ActionType.TYPE], typed(text), goal);
      expect(cased.caseOf(target[4]!), goal).toBe(mode);
      expect(goalIds.join(',')).toContain(textOf(target).join(','));
      const back = cased.decodeTarget(target);
      expect(back.ok && back.action.typed_text).toBe(text);
      expect(allowed(constraint, goalIds, target)).toBe(true);
    }
  });

  it('writes text the goal holds in no case (or a mixed one) as <free> text, exactly', () => {
    for (const [goal, text] of [
      ['search for usb-c cable on costco', 'costco.com'],
      ['install amazon shopping app', 'amazon Shopping'],
      ['type hello', ''],
      ['type hello', ' hello'],
    ] as const) {
      const target = cased.encodeTarget([ActionType.TYPE], typed(text), goal);
      expect(cased.caseOf(target[4]!), text).toBe('free');
      const back = cased.decodeTarget(target);
      expect(back.ok && back.action.typed_text).toBe(text);
      expect(allowed(constraint, cased.goalIds(cased.encodeInput(goal, [])), target)).toBe(true);
    }
  });

  it('after a copy case only the goal\'s ids as written follow; after <free>, any text; without a goal, only <free>', () => {
    const goalIds = cased.goalIds(cased.encodeInput('open hotels', []));
    const hotels = tok.encodeText(' hotels');
    const capital = tok.encodeText('Hotels');
    expect(capital.join(',')).not.toBe(hotels.join(','));
    for (const mode of ['as-written', 'lower', 'capitalised'] as const) {
      expect(allowed(constraint, goalIds, [...head, cased.caseId(mode), ...hotels, cased.eosId])).toBe(true);
      expect(allowed(constraint, goalIds, [...head, cased.caseId(mode), ...capital, cased.eosId])).toBe(false);
    }
    expect(allowed(constraint, goalIds, [...head, cased.caseId('free'), ...capital, cased.eosId])).toBe(true);
    expect(allowed(constraint, [], [...head, cased.caseId('lower'), ...hotels, cased.eosId])).toBe(false);
    expect(allowed(constraint, [], [...head, cased.caseId('free'), ...hotels, cased.eosId])).toBe(true);
  });

  it('every text a copy case lets through is that case of a run of whole goal pieces (random walks)', () => {
    const words = ['search', 'for', 'Hotels', 'in', 'PARIS', 'zyxq', 'Denver', '12', 'inch', '"pizza"', 'Straße'];
    const runOf = (goal: string, mode: TextCase, text: string): boolean => {
      const pieces = splitPieces(goal);
      for (let i = 0; i < pieces.length; i++)
        for (let j = i + 1; j <= pieces.length; j++) {
          const run = pieces.slice(i, j).join('');
          if (caseText(mode, run.startsWith(' ') ? run.slice(1) : run) === text) return true;
        }
      return false;
    };
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }), fc.constantFrom<TextCase>('as-written', 'lower', 'capitalised'), fc.array(fc.nat(), { minLength: 16, maxLength: 16 }), (goalWords, mode, picks) => {
        const goal = goalWords.join(' ');
        const back = cased.decodeTarget(randomWalk(constraint, cased.goalIds(cased.encodeInput(goal, [])), [...head, cased.caseId(mode)], picks));
        expect(back.ok).toBe(true);
        expect(runOf(goal, mode, back.ok ? back.action.typed_text : ''), JSON.stringify({ goal, mode })).toBe(true);
      }),
    );
  });

  it('any run of the goal, in any case, round-trips through encodeTarget and decodeTarget (random runs)', () => {
    const words = ['search', 'for', 'Hotels', 'in', 'PARIS', 'zyxq', 'Denver', '12', 'inch', 'pizza', 'Straße', 'İzmir'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), fc.constantFrom(...TEXT_CASES), (goalWords, a, n, mode) => {
        const goal = goalWords.join(' ');
        const first = a % goalWords.length;
        const text = caseText(mode, goalWords.slice(first, first + 1 + (n % (goalWords.length - first))).join(' '));
        const target = cased.encodeTarget([ActionType.TYPE], typed(text), goal);
        const back = cased.decodeTarget(target);
        expect(back.ok && back.action.typed_text).toBe(text);
        expect(allowed(constraint, cased.goalIds(cased.encodeInput(goal, [])), target)).toBe(true);
      }),
    );
  });

  it('the copy pointer learns from the text after the case token: the goal positions of the run', () => {
    const goal = 'install zyxq hotels app';
    const goalIds = cased.goalIds(cased.encodeInput(goal, []));
    const target = cased.encodeTarget([ActionType.TYPE], typed('Zyxq Hotels'), goal);
    const steps = cased.textSteps(target);
    expect(steps[0]).toBe(target.indexOf(cased.actId) + 3);
    expect(steps.map((t) => target[t]).at(-1)).toBe(cased.eosId);
    const found = cased.copyPositions(goalIds, textOf(target))!;
    expect(found.at.map((p) => goalIds[p])).toEqual(textOf(target));
  });
});
