/** Typed text by beam (infer/text_beam.ts): the run with the best mean log-probability, not greedy's first step. */
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { ActionType } from '../src/data/types.js';
import { ActionCodec } from '../src/model/codec.js';
import { TargetConstraint } from '../src/model/constrained.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';
import type { IncrementalDecoder } from '../src/infer/generate.js';
import { beamTypedText, TEXT_CHOICES } from '../src/infer/text_beam.js';

beforeAll(async () => {
  await initBackend('wasm');
});

const goal = 'install amazon shopping app';
// " prime" is a vocabulary word the goal does not hold.
const tokenizer = buildWordTokenizer([goal, goal, 'buy prime', 'buy prime'], { minCount: 1 });
// Without case tokens (the default): the text starts right after TYPE.
const codec = new ActionCodec(tokenizer, { copyText: true });
const constraint = new TargetConstraint(codec);
const id = (text: string): number => {
  const ids = codec.tokenizer.encodeText(text);
  if (ids.length !== 1) throw new Error(`'${text}' is not one token here: ${ids.join(',')}`);
  return ids[0]!;
};
/** A target up to its typed text: <plan> TYPE <act> TYPE. */
const prefixOf = (c: ActionCodec): number[] => [c.planId, c.typeId(ActionType.TYPE), c.actId, c.typeId(ActionType.TYPE)];
const prefix = prefixOf(codec);

/**
 * A scripted decoder: the next token's probabilities depend on the text emitted after the prefix.
 * First " shopping" 0.5, " amazon" 0.4; after " amazon", " shopping" 0.99; after " shopping", eos 0.9.
 * Greedy types "shopping" (mean log-prob −0.40); "amazon shopping" has the better mean (−0.34).
 */
function scripted(): IncrementalDecoder<number[][]> {
  return scriptedBy((last) => {
    if (last === undefined) return new Map([[id(' shopping'), 0.5], [id(' amazon'), 0.4], [id(' app'), 0.1]]);
    if (last === id(' amazon')) return new Map([[id(' shopping'), 0.99], [codec.eosId, 0.01]]);
    return new Map([[codec.eosId, 0.9], [id(' app'), 0.1]]);
  });
}

/**
 * A decoder sure of a text the goal lacks: " amazon" 0.95, then " prime" 0.97 (" shopping" 0.02), then
 * eos. The copy can only type "amazon shopping" (mean log-prob over its own ids −0.17); free of it,
 * "amazon prime" has −0.03.
 */
function outsideTheGoal(): IncrementalDecoder<number[][]> {
  return scriptedBy((last) => {
    if (last === undefined) return new Map([[id(' amazon'), 0.95], [id(' shopping'), 0.05]]);
    if (last === id(' amazon')) return new Map([[id(' prime'), 0.97], [id(' shopping'), 0.02], [codec.eosId, 0.01]]);
    if (last === id(' prime')) return new Map([[codec.eosId, 0.99], [id(' app'), 0.01]]);
    return new Map([[codec.eosId, 0.9], [id(' app'), 0.1]]);
  });
}

/** A decoder whose next-token probabilities depend only on the last text token emitted (undefined before the first). */
function scriptedBy(byLast: (last: number | undefined) => Map<number, number>, c: ActionCodec = codec): IncrementalDecoder<number[][]> {
  const V = c.vocabSize;
  const pre = prefixOf(c);
  const next = (seen: readonly number[]): Map<number, number> => {
    if (seen.length <= pre.length) return new Map([[[c.eosId, ...pre][seen.length] ?? c.eosId, 1]]);
    const text = seen.slice(pre.length + 1);
    return byLast(text[text.length - 1]);
  };
  return {
    config: { decoderStartTokenId: 0, padTokenId: 0, vocabSize: V },
    encodeFull: () => {
      throw new Error('not used');
    },
    startDecoding: (h) => Array.from({ length: h.shape[0] }, () => []),
    decodeStep: (state, tokens) => {
      const t = Array.from(tokens.dataSync());
      const seen = state.map((s, b) => [...s, t[b]!]);
      const logits = seen.flatMap((s) => {
        const row = new Array<number>(V).fill(-30);
        for (const [k, p] of next(s)) row[k] = Math.log(p);
        return row;
      });
      return { hidden: tf.zeros([t.length, 1]), logits: tf.tensor2d(logits, [t.length, V]), state: seen };
    },
    selectDecodingRows: (state, rows) => rows.map((r) => [...state[r]!]),
    disposeDecoding: () => {},
  };
}

/** The texts the beam finished for the goal, best first, each with its mean log-probability per token. */
const choicesBy = (width: number, model = scripted(), c = codec): { text: string; score: number }[] => {
  const goalIds = c.tokenizer.encodeText(goal);
  const encoded = { hFuse: tf.zeros([1, 3, 1]) as tf.Tensor3D, inputMask: tf.ones([1, 3]) as tf.Tensor2D, copy: null };
  const [choices] = beamTypedText(model, new TargetConstraint(c), c, encoded, [{ batchRow: 0, goal: goalIds, prefix: prefixOf(c) }], width);
  return choices!.map(({ ids, score }) => {
    const d = c.decodeTarget(ids);
    if (!d.ok) throw new Error(d.error);
    return { text: d.action.typed_text, score };
  });
};
const typedBy = (width: number, model = scripted(), c = codec): string => choicesBy(width, model, c)[0]!.text;

describe('beamTypedText', () => {
  it('width 1 is greedy: the likelier first word, then the end', () => {
    expect(typedBy(1)).toBe('shopping');
  });

  it('a wider beam types the run with the better mean log-probability per token', () => {
    expect(typedBy(2)).toBe('amazon shopping');
    expect(typedBy(4)).toBe('amazon shopping');
  });

  it('lists the texts it finished, best first by their mean log-probability per token, at most TEXT_CHOICES', () => {
    const choices = choicesBy(4);
    expect(choices[0]!.text).toBe('amazon shopping');
    expect(choices.map((c) => c.text)).toContain('shopping');
    expect(choices.length).toBeLessThanOrEqual(TEXT_CHOICES);
    for (let i = 1; i < choices.length; i++) expect(choices[i]!.score).toBeLessThanOrEqual(choices[i - 1]!.score);
    expect(choices.every((c) => c.score <= 0)).toBe(true);
    expect(choicesBy(1).length).toBe(1); // greedy finishes one text
  });

  it('a wider beam also weighs texts the goal does not hold; width 1 only copies', () => {
    expect(typedBy(1, outsideTheGoal())).toBe('amazon shopping');
    expect(typedBy(4, outsideTheGoal())).toBe('amazon prime');
  });

  it('a text the length limit cut off does not count as typed: a free beam repeating a word loses to the copy', () => {
    // Free of the copy, " prime" then " prime" again at 0.999 never ends: cut at the limit, its mean (≈ −0.02) would beat
    // the copy's "amazon shopping".
    const repeating = scriptedBy((last) => {
      if (last === undefined) return new Map([[id(' amazon'), 0.5], [id(' prime'), 0.45], [id(' shopping'), 0.05]]);
      if (last === id(' amazon')) return new Map([[id(' shopping'), 0.9], [codec.eosId, 0.1]]);
      if (last === id(' prime')) return new Map([[id(' prime'), 0.999], [codec.eosId, 0.001]]);
      return new Map([[codec.eosId, 0.9], [id(' app'), 0.1]]);
    });
    expect(typedBy(4, repeating)).toBe('amazon shopping');
  });

  describe('with case tokens', () => {
    const cased = new ActionCodec(tokenizer, { copyText: true, caseModes: true });
    const caseOf = (m: 'as-written' | 'capitalised' | 'free'): number => cased.caseId(m);

    it('the case comes first and cases the whole run: "Amazon Shopping" for "install amazon shopping app"', () => {
      const model = scriptedBy((last) => {
        if (last === undefined) return new Map([[caseOf('capitalised'), 0.6], [caseOf('as-written'), 0.3], [caseOf('free'), 0.1]]);
        if (last === id(' amazon')) return new Map([[id(' shopping'), 0.95], [cased.eosId, 0.05]]);
        if (last === id(' shopping')) return new Map([[cased.eosId, 0.9], [id(' app'), 0.1]]);
        return new Map([[id(' amazon'), 0.9], [id(' shopping'), 0.1]]);
      }, cased);
      expect(typedBy(1, model, cased)).toBe('Amazon Shopping');
      expect(typedBy(4, model, cased)).toBe('Amazon Shopping');
    });

    it('<free> writes what the goal does not hold when the model says so, without a second beam', () => {
      const model = scriptedBy((last) => {
        if (last === undefined) return new Map([[caseOf('free'), 0.7], [caseOf('as-written'), 0.3]]);
        if (last === id('buy')) return new Map([[id(' prime'), 0.9], [cased.eosId, 0.1]]);
        if (last === id(' prime')) return new Map([[cased.eosId, 0.95]]);
        if (last === id(' amazon')) return new Map([[id(' shopping'), 0.9], [cased.eosId, 0.1]]);
        if (last === id(' shopping')) return new Map([[cased.eosId, 0.9]]);
        return new Map([[id('buy'), 0.6], [id(' amazon'), 0.4]]);
      }, cased);
      expect(typedBy(1, model, cased)).toBe('buy prime');
      expect(typedBy(4, model, cased)).toBe('buy prime');
    });
  });

  describe('held to the start the pointer picks (textStart)', () => {
    const runOnGoal = 'look up ada and go to ada ito';
    const tk = buildWordTokenizer([runOnGoal, runOnGoal], { minCount: 1 });
    const c = new ActionCodec(tk, { copyText: true });
    const wid = (text: string): number => tk.encodeText(text)[0]!;
    const goalIds = tk.encodeText(runOnGoal); // one id per word, " ada" at places 2 and 6
    const L = goalIds.length + 1;
    /**
     * The mixture: " ada" first (0.9), then by id " ito" 0.6, eos 0.3 and " and" 0.1, so per token "ada ito" scores
     * better than "ada"; the pointer starts at the first " ada" (0.8), after which " ito" cannot come.
     */
    const model = (): IncrementalDecoder<number[][]> => ({
      ...scriptedBy((last) => {
        if (last === undefined) return new Map([[wid(' ada'), 0.9], [wid('look'), 0.1]]);
        if (last === wid(' ada')) return new Map([[wid(' ito'), 0.6], [c.eosId, 0.3], [wid(' and'), 0.1]]);
        return new Map([[c.eosId, 0.99], [wid(' and'), 0.01]]);
      }, c),
      copyLogProbs: (_hidden, logits) => tf.logSoftmax(logits) as tf.Tensor3D,
      copyPointing: (hidden) => {
        const rows = hidden.shape[0];
        const a = Array.from({ length: L }, (_, i) => (i === 2 ? 0.8 : i === 6 ? 0.2 : 0));
        return { a: tf.tensor3d(Array(rows).fill([a])), stop: tf.zeros([rows, L, 1]) as tf.Tensor3D };
      },
    });
    const typed = (width: number, started: boolean): string => {
      const ids = tf.tensor2d([[...goalIds, 0]], [1, L], 'int32');
      const keys = tf.zeros([1, L, 1]) as tf.Tensor3D;
      const copy = { keys, pointerKeys: keys, ids, goal: tf.tensor2d([[...goalIds.map(() => 1), 0]], [1, L], 'int32') };
      const encoded = { hFuse: tf.zeros([1, L, 1]) as tf.Tensor3D, inputMask: tf.ones([1, L]) as tf.Tensor2D, copy };
      const [choices] = beamTypedText(model(), new TargetConstraint(c), c, encoded, [{ batchRow: 0, goal: goalIds, prefix: prefixOf(c) }], width, started);
      const d = c.decodeTarget(choices![0]!.ids);
      if (!d.ok) throw new Error(d.error);
      return d.action.typed_text;
    };

    it('types the query where the per-token beam runs on into the name after it', () => {
      expect(typed(4, false)).toBe('ada ito');
      expect(typed(4, true)).toBe('ada');
      expect(typed(1, true)).toBe('ada');
    });
  });

  it('refuses a prefix that does not end at a TYPE action', () => {
    const encoded = { hFuse: tf.zeros([1, 3, 1]) as tf.Tensor3D, inputMask: tf.ones([1, 3]) as tf.Tensor2D, copy: null };
    expect(() => beamTypedText(scripted(), constraint, codec, encoded, [{ batchRow: 0, goal: [], prefix: prefix.slice(0, 3) }], 2)).toThrow(/TYPE/);
  });
});
