/** Hindsight HOME (train/home_first.ts): what a site's rows say of it, and the first steps taught to press HOME. */
import { describe, expect, it } from 'vitest';
import type { ShardTable } from '../src/data/shards.js';
import type { AitwAction, Box } from '../src/data/types.js';
import { navigateGoal } from '../src/data/web/goals.js';
import { ActionCodec } from '../src/model/codec.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';
import { homeFirstSwap, siteMaps, siteOf } from '../src/train/home_first.js';
import type { Example } from '../src/train/relabel.js';
import { Rng } from '../src/util/rng.js';

const codec = new ActionCodec(buildWordTokenizer(['go to the page', 'show me'], { maxWords: 8 }), { coordBins: 20, copyText: true });
const act = (action_type: number, yx: [number, number] = [-1, -1]): AitwAction => ({ action_type, touch_yx: yx, lift_yx: [...yx], typed_text: '' }) as AitwAction;
const HOME = act(6);
const DONE = act(10);
const tap = (y: number) => act(4, [y, 0.3]);
const item = (text: string, y: number): { text: string; box: Box; score: number } => ({ text, box: [y, 0.1, 0.03, 0.5], score: 1 });

const entry = [item('Index', 0.05), item('Beta page', 0.3), item('Gamma page', 0.4)];
const gamma = [item('Gamma page', 0.05), item('Dark mode', 0.3), item('Font size', 0.5)];
// Each row: episode, subset, step, the episode's actions, the screen's texts.
const rows: [string, string, number, AitwAction[], ReturnType<typeof item>[]][] = [
  // A navigation through HOME: a deep page, HOME, the entry page's "Beta page" tapped, Beta's page titled so.
  ['docs-00000', 'web', 0, [HOME, tap(0.31), DONE], [item('Alpha guide', 0.05), item('Some words', 0.3)]],
  ['docs-00000', 'web', 1, [HOME, tap(0.31), DONE], entry],
  ['docs-00000', 'web', 2, [HOME, tap(0.31), DONE], [item('Beta page', 0.05), item('Contents', 0.3)]],
  // A switch tapped on Gamma's page: its name stays under the finger, so it names no page.
  ['docs-00001', 'web', 0, [tap(0.31), DONE], gamma],
  ['docs-00001', 'web', 1, [tap(0.31), DONE], gamma],
  // A task that starts on the entry page.
  ['docs-00002', 'web', 0, [tap(0.41), DONE], entry],
  // A page that shows Beta's name, and a search whose first tap focuses a field.
  ['docs-00003', 'web', 0, [tap(0.31), DONE], [item('Delta', 0.05), item('See Beta page', 0.3)]],
  ['docs-00004', 'web', 0, [tap(0.31), act(3), DONE], gamma],
  // A site with no HOME in the set, and a synthetic row.
  ['app-x-00000', 'web', 0, [tap(0.31), DONE], gamma],
  ['12345', 'general', 0, [tap(0.31), DONE], gamma],
];
const table = {
  rows: rows.length,
  episodeId: rows.map((r) => r[0]),
  subset: rows.map((r) => r[1]),
  stepId: Int32Array.from(rows.map((r) => r[2])),
  episodeActions: rows.map((r) => r[3]),
  texts: rows.map((r) => r[4]),
} as unknown as ShardTable;

const example = (row: number): Example => ({ row, input: [], target: [], action: rows[row]![3][rows[row]![2]]!, texts: null });
const step = (row: number, history: AitwAction[] = []) => ({ goal: 'x', history, plan: rows[row]![3].slice(rows[row]![2]).map((a) => a.action_type) as (4 | 6 | 10)[] });

describe('siteOf', () => {
  it("is a web episode's name without its number", () => {
    expect(siteOf('debian-reference-00012')).toBe('debian-reference');
    expect(siteOf('app-aurora-00000')).toBe('app-aurora');
  });
});

describe('siteMaps', () => {
  it("keeps the entry page's texts and the names of links that opened a page, for sites with a HOME", () => {
    const maps = siteMaps(table);
    expect([...maps.keys()]).toEqual(['docs']);
    expect([...maps.get('docs')!.entry].sort()).toEqual(['beta page', 'gamma page', 'index']);
    expect(maps.get('docs')!.pages).toEqual(['Beta page']);
  });
});

describe('homeFirstSwap', () => {
  const swap = homeFirstSwap(table, siteMaps(table));
  it('answers a first step on another page PRESS_HOME for a page it does not show, planned HOME, tap, done', () => {
    for (let seed = 0; seed < 20; seed++) {
      const ex = swap(example(3), step(3), codec, Rng.from(seed))!;
      expect(ex.action.action_type).toBe(6);
      expect(ex.row).toBe(3);
      const d = codec.decodeTarget(ex.target);
      expect(d.ok && d.plan).toEqual([6, 4, 10]);
      const goal = codec.tokenizer.decodeText(codec.goalIds(ex.input));
      expect(goal.toLowerCase()).toContain('beta page');
      expect(goal).not.toMatch(/docs/);
    }
  });

  it('leaves the entry page, later steps, pages showing the name, searches, unmapped sites and other subsets alone', () => {
    expect(swap(example(5), step(5), codec, Rng.from(1))).toBeNull();
    expect(swap(example(4), step(4, [tap(0.31)]), codec, Rng.from(1))).toBeNull();
    expect(swap(example(6), step(6), codec, Rng.from(1))).toBeNull();
    expect(swap(example(7), step(7), codec, Rng.from(1))).toBeNull();
    expect(swap(example(8), step(8), codec, Rng.from(1))).toBeNull();
    expect(swap(example(9), step(9), codec, Rng.from(1))).toBeNull();
  });
});

describe('navigateGoal', () => {
  it('without a site, uses only the templates that name none', () => {
    const goals = new Set(Array.from({ length: 100 }, (_, k) => navigateGoal(Rng.from(k), 'Beta')));
    expect([...goals].some((g) => g.includes(' in the '))).toBe(false);
    expect(goals.size).toBeGreaterThan(3);
    expect([...goals].every((g) => g.toLowerCase().includes('beta'))).toBe(true);
  });
});
