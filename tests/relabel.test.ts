/** Hindsight grounding rows (train/relabel.ts): which items a task may name, and the task made of one. */
import { describe, expect, it } from 'vitest';
import type { Box } from '../src/data/types.js';
import { withGoal, type EncodedSplit, type EncodedTexts } from '../src/model/batch.js';
import { ActionCodec } from '../src/model/codec.js';
import { MATCH_DIM } from '../src/model/text_match.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';
import { previousTexts } from '../src/train/examples.js';
import { backOutExample, groundingExample, nameableItems, relabelBatch, renamedSearch, requeriedExample, resultsOpenExample, retypeBatch, retypedExample, scrambled, searchableNames, searchedQuery, searchOpenExample, swapBatch, type Example } from '../src/train/relabel.js';
import { Rng } from '../src/util/rng.js';

const codec = new ActionCodec(buildWordTokenizer(['open the app', 'click on'], { maxWords: 8 }), { coordBins: 20, copyText: true });
const texts = (items: [string, Box][]): EncodedTexts => withGoal({ ids: items.map(([s]) => codec.tokenizer.encodeText(s).slice(0, 8)), boxes: items.map(([, b]) => b), strings: items.map(([s]) => s) }, 'open the app');
const screen = texts([
  ['Bluetooth', [0.2, 0.1, 0.03, 0.3]],
  ['bluetooth', [0.5, 0.1, 0.03, 0.3]], // the same name twice: "tap bluetooth" would not say which
  ['12:30', [0.01, 0.05, 0.02, 0.1]], // no word, and in the status bar
  ['Data saver', [0.4, 0.1, 0.03, 0.3]],
  ['A paragraph that runs over many lines of the page', [0.6, 0.1, 0.2, 0.8]],
  ['Nearby share', [0.985, 0.1, 0.01, 0.3]], // below the band
]);
const recorded: Example = { row: 7, input: [5, 6], target: [7, 8], action: { action_type: 10, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' }, texts: screen };

describe('nameableItems', () => {
  it('keeps short names shown once, on one line, inside the band', () => {
    expect(nameableItems(screen)).toEqual([3]);
  });
});

describe('groundingExample', () => {
  it('names an item in a goal, taps its centre, plans the tap then completion, and matches the items with the new goal', () => {
    const ex = groundingExample(recorded, codec, Rng.from(1))!;
    const goal = codec.tokenizer.decodeText(ex.input.filter((id) => codec.tokenizer.isTextId(id)));
    expect(goal.toLowerCase()).toContain('data saver');
    expect(ex.row).toBe(7);
    expect(ex.action).toEqual({ action_type: 4, touch_yx: [0.415, 0.25], lift_yx: [0.415, 0.25], typed_text: '' });
    const decoded = codec.decodeTarget(ex.target);
    expect([[4, 10], [4, 5, 10]]).toContainEqual(decoded.ok && decoded.plan);
    expect(ex.texts!.match![3 * MATCH_DIM + 2]).toBe(1); // "data saver" is a whole-word run of the new goal
    expect(ex.texts!.match![0 * MATCH_DIM + 2]).toBe(0);
  });

  it('a quarter or so are the first step of "open X, then go back", planned tap → back → complete, worded so', () => {
    const plans = Array.from({ length: 200 }, (_, k) => {
      const ex = groundingExample(recorded, codec, Rng.from(k))!;
      const d = codec.decodeTarget(ex.target);
      const goal = codec.tokenizer.decodeText(ex.input.filter((id) => codec.tokenizer.isTextId(id)));
      const back = d.ok && d.plan.length === 3;
      expect(/back|return|previous/.test(goal)).toBe(back);
      return back;
    });
    const backs = plans.filter(Boolean).length;
    expect(backs).toBeGreaterThan(25);
    expect(backs).toBeLessThan(75);
  });

  it('leaves a screen with nothing to name, or no text channel, alone', () => {
    expect(groundingExample({ ...recorded, texts: texts([['12:30', [0.01, 0, 0.02, 0.1]]]) }, codec, Rng.from(1))).toBeNull();
    expect(groundingExample({ ...recorded, texts: null }, codec, Rng.from(1))).toBeNull();
  });
});

describe('relabelBatch', () => {
  it('rate 0 keeps every row, rate 1 swaps every row it can, and one seed swaps the same rows', () => {
    const batch = [recorded, { ...recorded, row: 8, texts: null }, recorded];
    expect(relabelBatch(batch, 0, codec, Rng.from(2))).toEqual(batch);
    const all = relabelBatch(batch, 1, codec, Rng.from(2));
    expect(all[1]).toBe(batch[1]);
    expect(all[0]!.action.action_type).toBe(4);
    expect(all[2]!.action.action_type).toBe(4);
    const half = relabelBatch(Array(40).fill(recorded), 0.5, codec, Rng.from(3));
    const swapped = half.filter((e) => e !== recorded).length;
    expect(swapped).toBeGreaterThan(8);
    expect(swapped).toBeLessThan(32);
    expect(relabelBatch(Array(40).fill(recorded), 0.5, codec, Rng.from(3))).toEqual(half);
  });
});

describe('retypedExample (hindsight typing)', () => {
  const type = (text: string): Example['action'] => ({ action_type: 3, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text });
  const step = (goal: string) => ({ goal, history: [{ action_type: 4, touch_yx: [0.1, 0.5], lift_yx: [0.1, 0.5], typed_text: '' }] as Example['action'][], plan: [3, 7] as (3 | 7)[] });
  const goalOf = (ex: Example) => codec.tokenizer.decodeText(codec.goalIds(ex.input));

  it('scrambles letters and digits in their case, and keeps every other character', () => {
    const s = scrambled('Samsung galaxy-S23, 4K', Rng.from(5));
    expect(s).toMatch(/^[A-Z][a-z]{6} [a-z]{6}-[A-Z]\d\d, \d[A-Z]$/);
    expect(s).not.toBe('Samsung galaxy-S23, 4K');
  });

  it('puts the typed words, scrambled, where they stood, in the goal and in the text, and keeps the rest of the step', () => {
    for (let k = 0; k < 50; k++) {
      const ex = retypedExample({ ...recorded, action: type('lofi music') }, step('open the app and search for lofi music now'), codec, Rng.from(k))!;
      const d = codec.decodeTarget(ex.target);
      if (!d.ok) throw new Error(d.error);
      const phrase = d.action.typed_text;
      expect(phrase).toMatch(/^[a-z]{4} [a-z]{5}$/);
      expect(goalOf(ex)).toBe(`open the app and search for ${phrase} now`);
      expect(d.plan).toEqual([3, 7]);
      expect(ex.action.typed_text).toBe(phrase);
      expect(ex.input.length).toBeGreaterThan(codec.goalIds(ex.input).length + 2); // the history is still there
    }
  });

  it('finds the words case aside, keeps each side\'s capital, and leaves a text the goal does not hold, or a part of a word, alone', () => {
    const ex = retypedExample({ ...recorded, action: type('Netflix') }, step('install netflix app'), codec, Rng.from(3))!;
    const typed = ex.action.typed_text;
    expect(typed[0]).toBe(typed[0]!.toUpperCase());
    expect(goalOf(ex)).toBe(`install ${typed.toLowerCase()} app`);
    expect(retypedExample({ ...recorded, action: type('costco.com') }, step('search on costco'), codec, Rng.from(1))).toBeNull();
    expect(retypedExample({ ...recorded, action: type('cat') }, step('search for catalogs'), codec, Rng.from(1))).toBeNull();
  });

  it('retypeBatch touches TYPE rows only, at about its rate', () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({ ...recorded, row: i, action: i % 2 ? type('lofi music') : recorded.action }));
    const out = retypeBatch(rows, () => step('search for lofi music'), 0.5, codec, Rng.from(9));
    out.filter((_, i) => i % 2 === 0).forEach((ex, k) => expect(ex).toBe(rows[2 * k]));
    const swapped = out.filter((ex, i) => ex !== rows[i]).length;
    expect(swapped).toBeGreaterThan(70);
    expect(swapped).toBeLessThan(130);
    expect(retypeBatch(rows, () => step('x'), 0, codec, Rng.from(9))).toEqual(rows);
  });
});

/** A TYPE action, the goal an example was given, and its decoded target (re-querying and renamed searches). */
const type = (text: string): Example['action'] => ({ action_type: 3, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text });
const goalOf = (ex: Example) => codec.tokenizer.decodeText(codec.goalIds(ex.input));
function typedAndPlan(ex: Example) {
  const d = codec.decodeTarget(ex.target);
  if (!d.ok) throw new Error(d.error);
  return { typed: d.action.typed_text, plan: d.plan };
}

describe('requeriedExample (re-querying)', () => {
  const step = (goal: string) => ({ goal, history: [] as Example['action'][], plan: [3, 7, 4, 10] as (3 | 7 | 4 | 10)[] });

  it('puts another later word of the goal in the query\'s place, in the query\'s casing, and types it', () => {
    const seen = new Set<string>();
    for (let k = 0; k < 60; k++) {
      const ex = requeriedExample({ ...recorded, action: type('evans') }, step('look up evans and go to Tara Evans'), codec, Rng.from(k))!;
      const { typed: q, plan } = typedAndPlan(ex);
      seen.add(q);
      expect(['and', 'tara']).toContain(q); // a later word, lower-cased like the query; not the query itself
      expect(goalOf(ex)).toBe(`look up ${q} and go to Tara Evans`);
      expect(ex.action.typed_text).toBe(q);
      expect(plan).toEqual([3, 7, 4, 10]);
    }
    expect(seen).toEqual(new Set(['and', 'tara']));
  });

  it('keeps a capitalised query\'s word as the goal writes it', () => {
    const ex = requeriedExample({ ...recorded, action: type('Ben') }, step('search for Ben and open Ben Tanaka'), codec, Rng.from(4))!;
    expect(['and', 'open', 'Tanaka']).toContain(ex.action.typed_text);
    expect(goalOf(ex)).toBe(`search for ${ex.action.typed_text} and open Ben Tanaka`);
  });

  it('leaves alone a typed run the goal holds once, a non-TYPE step, and a goal with no later word', () => {
    expect(requeriedExample({ ...recorded, action: type('lofi music') }, step('search for lofi music'), codec, Rng.from(1))).toBeNull();
    expect(requeriedExample(recorded, step('look up evans and go to Tara Evans'), codec, Rng.from(1))).toBeNull();
    expect(requeriedExample({ ...recorded, action: type('evans') }, step('evans, evans'), codec, Rng.from(1))).toBeNull();
  });

  it('retypeBatch swaps with it only the rows it applies to', () => {
    const rows = [{ ...recorded, action: type('evans') }, { ...recorded, action: type('lofi') }];
    const goals = ['look up evans and go to Tara Evans', 'search for lofi'];
    const out = retypeBatch(rows, (ex) => step(goals[rows.indexOf(ex)]!), 1, codec, Rng.from(2), requeriedExample);
    expect(out[0]).not.toBe(rows[0]);
    expect(out[1]).toBe(rows[1]);
  });
});

describe('renamedSearch (renamed searches)', () => {
  const tap: Example['action'] = { action_type: 4, touch_yx: [0.2, 0.5], lift_yx: [0.2, 0.5], typed_text: '' };
  const step = (goal: string) => ({ goal, history: [tap], plan: [3, 7, 4, 10] as (3 | 7 | 4 | 10)[] });
  const rename = renamedSearch(['Keyword Arguments', 'Flask Extension Development']);

  it('types a word of another name as the new search goal writes it, with the step\'s history and plan', () => {
    const typed = new Set<string>();
    for (let k = 0; k < 80; k++) {
      const ex = rename({ ...recorded, action: type('evans') }, step('look up evans and go to Tara Evans'), codec, Rng.from(k))!;
      const { typed: q, plan } = typedAndPlan(ex);
      typed.add(q);
      expect(['keyword', 'Keyword', 'arguments', 'Arguments', 'flask', 'Flask', 'extension', 'Extension', 'development', 'Development']).toContain(q);
      expect(ex.action.typed_text).toBe(q);
      const goal = goalOf(ex);
      expect(goal).not.toMatch(/evans/i);
      // The query stands first in the goal, the name (in some casing) after it.
      expect(goal.indexOf(q)).toBeGreaterThanOrEqual(0);
      expect(goal.toLowerCase().indexOf(q.toLowerCase())).toBeLessThan(goal.toLowerCase().lastIndexOf(q.toLowerCase()));
      expect(ex.input).toEqual(codec.encodeInput(goal, [tap]));
      expect(plan).toEqual([3, 7, 4, 10]);
    }
    expect(typed.size).toBeGreaterThan(5);
  });

  it('leaves alone a typed run the goal holds once, a non-TYPE step, and an empty pool', () => {
    expect(rename({ ...recorded, action: type('lofi music') }, step('search for lofi music'), codec, Rng.from(1))).toBeNull();
    expect(rename(recorded, step('look up evans and go to Tara Evans'), codec, Rng.from(1))).toBeNull();
    expect(renamedSearch([])({ ...recorded, action: type('evans') }, step('look up evans and go to Tara Evans'), codec, Rng.from(1))).toBeNull();
  });

  it('searchableNames keeps the web rows\' short texts that hold a word to search for, once each', () => {
    const t = (...s: string[]) => s.map((text) => ({ text }));
    const names = searchableNames(['web', 'general', 'web'], [t('Keyword Arguments', 'OK', 'with the'), t('Settings'), t('Keyword Arguments', 'A paragraph that runs over many lines of the page and on')]);
    expect(names).toEqual(['Keyword Arguments']);
  });
});

describe('searchOpenExample (hindsight opening)', () => {
  const act = (action_type: 3 | 4 | 7 | 10, typed_text = '', at: [number, number] = [0.1, 0.5]): Example['action'] => ({ action_type, touch_yx: action_type === 4 ? at : [-1, -1], lift_yx: action_type === 4 ? at : [-1, -1], typed_text });
  const results = texts([
    ['linker', [0.1, 0.1, 0.03, 0.5]], // the search field, holding the query
    ['Search Results', [0.2, 0.1, 0.03, 0.5]],
    ['Clang Linker Wrapper', [0.4, 0.1, 0.03, 0.5]],
    ['ThinLTO', [0.5, 0.1, 0.03, 0.5]],
  ]);
  const searched = [act(4), act(3, 'linker'), act(7)];
  const onResults = { goal: 'buy the linker', history: searched, plan: [4, 4] as (3 | 4 | 10)[], previousTexts: null };
  const tapOn = (y: number) => act(4, '', [y, 0.3]);
  const resultsTap: Example = { ...recorded, action: tapOn(0.41), texts: results };
  const opened = { goal: 'buy the linker', history: [...searched, tapOn(0.41)], plan: [4] as (3 | 4 | 10)[], previousTexts: results };
  const goalOf = (ex: Example) => codec.tokenizer.decodeText(codec.goalIds(ex.input));
  const plan = (ex: Example) => {
    const d = codec.decodeTarget(ex.target);
    return d.ok && d.plan;
  };

  it('reads the query a history typed when it ends with the TYPE, or the TYPE then Enter', () => {
    expect(searchedQuery(searched)).toBe('linker');
    expect(searchedQuery([act(3, 'Evans')])).toBe('Evans');
    expect(searchedQuery([act(3, 'linker'), act(7), act(4)])).toBeNull();
    expect(searchedQuery([act(7)])).toBeNull();
    expect(searchedQuery([])).toBeNull();
  });

  it('makes the recorded tap on a result the step of "search for Q and open R", planned tap then completion, history kept', () => {
    for (let k = 0; k < 20; k++) {
      const ex = searchOpenExample({ ...recorded, action: tapOn(0.41), texts: results }, onResults, codec, Rng.from(k))!;
      expect(ex.action).toEqual(tapOn(0.41));
      expect(goalOf(ex)).toMatch(/linker.*Clang Linker Wrapper/i);
      expect(plan(ex)).toEqual([4, 10]);
      expect(ex.input.length).toBeGreaterThan(codec.goalIds(ex.input).length + 3); // the three actions of the history
    }
  });

  it('makes the step after it, on what R opened, the completion of the same goal', () => {
    const ex = searchOpenExample({ ...recorded, action: tapOn(0.6), texts: screen }, opened, codec, Rng.from(3))!;
    expect(ex.action.action_type).toBe(10);
    expect(plan(ex)).toEqual([10]);
    expect(goalOf(ex)).toMatch(/linker.*Clang Linker Wrapper/i);
  });

  it('leaves alone taps on no nameable item or on the query itself, taps that focus a field, and steps not after a search', () => {
    expect(searchOpenExample({ ...resultsTap, action: tapOn(0.9) }, onResults, codec, Rng.from(1))).toBeNull(); // nothing under the tap
    expect(searchOpenExample({ ...resultsTap, action: tapOn(0.11) }, onResults, codec, Rng.from(1))).toBeNull(); // the field holding the query
    expect(searchOpenExample(resultsTap, { ...onResults, plan: [4, 3] }, codec, Rng.from(1))).toBeNull(); // typing follows: a field
    expect(searchOpenExample({ ...recorded, action: act(3, 'x') }, opened, codec, Rng.from(1))).toBeNull(); // what it opened is typed into
    expect(searchOpenExample(recorded, { ...opened, previousTexts: null }, codec, Rng.from(1))).toBeNull();
    expect(searchOpenExample(resultsTap, { ...onResults, history: [act(4)] }, codec, Rng.from(1))).toBeNull(); // nothing typed
    expect(searchOpenExample({ ...resultsTap, texts: null }, onResults, codec, Rng.from(1))).toBeNull();
  });

  it('makes a search that ended on its results the first step of "search for Q and open R": a tap at the centre of another item, planned tap then completion', () => {
    const ended = { ...recorded, action: act(10), texts: results };
    const centres: Record<string, number> = { 'Search Results': 0.215, 'Clang Linker Wrapper': 0.415, ThinLTO: 0.515 };
    const opened = new Set<string>();
    for (let k = 0; k < 20; k++) {
      const ex = resultsOpenExample(ended, onResults, codec, Rng.from(k))!;
      const name = Object.keys(centres).find((n) => goalOf(ex).toLowerCase().includes(n.toLowerCase()))!;
      expect(name).toBeDefined();
      opened.add(name);
      expect(goalOf(ex)).toMatch(/linker/);
      expect(ex.action).toEqual(act(4, '', [centres[name]!, 0.35]));
      expect(plan(ex)).toEqual([4, 10]);
      expect(ex.input.length).toBeGreaterThan(codec.goalIds(ex.input).length + 3); // the three actions of the history
    }
    expect(opened.size).toBe(3); // never the field holding the query
    expect(resultsOpenExample(ended, { ...onResults, history: [act(4), act(3, 'linker')] }, codec, Rng.from(1))!.action.action_type).toBe(4); // right after the TYPE too
  });

  it('leaves alone steps other than a completion right after a search, and results with nothing else to open', () => {
    const ended = { ...recorded, action: act(10), texts: results };
    expect(resultsOpenExample({ ...ended, action: tapOn(0.41) }, onResults, codec, Rng.from(1))).toBeNull(); // a tap: hindsight opening's
    expect(resultsOpenExample(ended, { ...onResults, history: [act(4)] }, codec, Rng.from(1))).toBeNull(); // nothing typed
    expect(resultsOpenExample(ended, { ...onResults, history: [...searched, tapOn(0.41)] }, codec, Rng.from(1))).toBeNull(); // a result was opened
    expect(resultsOpenExample({ ...ended, texts: null }, onResults, codec, Rng.from(1))).toBeNull();
    expect(resultsOpenExample({ ...ended, texts: texts([['linker', [0.1, 0.1, 0.03, 0.5]]]) }, onResults, codec, Rng.from(1))).toBeNull();
  });

  it('swapBatch swaps only the rows it applies to, and nothing at rate 0', () => {
    const rows = [resultsTap, { ...resultsTap, row: 8 }];
    const steps = [onResults, { ...onResults, history: [act(4)] }];
    const out = swapBatch(rows, (ex) => steps[rows.indexOf(ex)]!, 1, codec, Rng.from(2), searchOpenExample);
    expect(out[0]).not.toBe(rows[0]);
    expect(out[1]).toBe(rows[1]);
    expect(swapBatch(rows, (ex) => steps[rows.indexOf(ex)]!, 0, codec, Rng.from(2), searchOpenExample)).toEqual(rows);
  });
});

describe('backOutExample (backing out)', () => {
  const tapOn = (y: number): Example['action'] => ({ action_type: 4, touch_yx: [y, 0.3], lift_yx: [y, 0.3], typed_text: '' });
  const home = { action_type: 6 as const, touch_yx: [-1, -1] as [number, number], lift_yx: [-1, -1] as [number, number], typed_text: '' };
  const index = texts([
    ['Settings', [0.2, 0.1, 0.03, 0.5]],
    ['Phonebook', [0.3, 0.1, 0.03, 0.5]],
    ['Camera', [0.4, 0.1, 0.03, 0.5]],
  ]);
  // What the tap on Camera (at 0.41) opened, titled otherwise; it links back to Settings.
  const camera = texts([
    ['Photos', [0.05, 0.1, 0.03, 0.5]],
    ['Open settings', [0.5, 0.1, 0.03, 0.5]],
  ]);
  const onCamera: Example = { ...recorded, action: { ...home, action_type: 10 }, texts: camera };
  const step = { goal: 'open camera', history: [home, tapOn(0.41)], plan: [10] as (4 | 10)[], previousTexts: index };
  const goalOf = (ex: Example) => codec.tokenizer.decodeText(codec.goalIds(ex.input));

  it('asks for another item of the screen before the tap, one the opened screen does not show, and answers PRESS_BACK planned back, tap, done, history kept', () => {
    for (let k = 0; k < 20; k++) {
      const ex = backOutExample(onCamera, step, codec, Rng.from(k))!;
      expect(goalOf(ex).toLowerCase()).toContain('phonebook'); // not Camera (tapped), not Settings (shown on the page)
      expect(ex.action.action_type).toBe(5);
      const d = codec.decodeTarget(ex.target);
      expect(d.ok && d.plan).toEqual([5, 4, 10]);
      expect(ex.input).toEqual(codec.encodeInput(goalOf(ex), step.history));
    }
  });

  it('leaves alone steps whose history does not end with a tap, that type, without the screen before, or with nothing else to name', () => {
    expect(backOutExample(onCamera, { ...step, history: [tapOn(0.41), home] }, codec, Rng.from(1))).toBeNull();
    expect(backOutExample(onCamera, { ...step, history: [] }, codec, Rng.from(1))).toBeNull();
    expect(backOutExample(onCamera, { ...step, previousTexts: null }, codec, Rng.from(1))).toBeNull();
    expect(backOutExample({ ...onCamera, texts: null }, step, codec, Rng.from(1))).toBeNull();
    expect(backOutExample({ ...onCamera, action: { ...home, action_type: 3, typed_text: 'x' } }, step, codec, Rng.from(1))).toBeNull(); // the tap focused a field
    const alsoPhonebook = texts([...camera.strings.map((s, i): [string, Box] => [s, camera.boxes[i] as Box]), ['Phonebook contacts', [0.6, 0.1, 0.03, 0.5]]]);
    expect(backOutExample({ ...onCamera, texts: alsoPhonebook }, step, codec, Rng.from(1))).toBeNull();
  });
});

describe('previousTexts', () => {
  it("gives the texts of the step before in the same episode, and null at an episode's start or past a missing step", () => {
    const a = texts([['A', [0.1, 0.1, 0.03, 0.3]]]);
    const b = texts([['B', [0.1, 0.1, 0.03, 0.3]]]);
    const table = { episodeId: ['e1', 'e1', 'e2', 'e2'], stepId: Int32Array.from([0, 1, 0, 2]) };
    const split = { table, inputs: [], targets: [], texts: [a, b, a, b] } as unknown as EncodedSplit;
    expect([0, 1, 2, 3].map((r) => previousTexts(split, r))).toEqual([null, a, null, null]);
    expect(previousTexts({ ...split, texts: null }, 1)).toBeNull();
  });
});
