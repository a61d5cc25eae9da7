/**
 * Auto-UI / AITW accuracy metrics, per subset and overall.
 *
 * What Auto-UI's main.py computes (per evaluated subset, every denominator = all steps):
 *   accuracy  = check_actions_match(pred, gold, gold screen boxes)            (AITW action matching)
 *   type_acc  = pred action type == gold action type
 *   text_acc  = match AND (pred text in gold text OR gold text in pred text), pred text lower-cased
 *               and stripped, gold text lower-cased; non-TYPE steps carry "" on both sides, so this
 *               is nearly the action-matching score again.
 * The paper's per-action breakdown (click region / scroll direction / typed text accuracy) has no
 * code in the repository, so those are defined here by what they name:
 *   action_match  % of steps whose prediction matches (checkActionsMatch), over all steps.
 *   type_acc      % of steps with the gold action type, over all steps.
 *   click_acc     % matched, over steps whose gold is a tap (DUAL_POINT within 0.04).
 *   scroll_acc    % matched, over steps whose gold is a scroll (DUAL_POINT beyond 0.04); since both
 *                 must be swipes on the same main axis, this is scroll-axis accuracy.
 *   text_acc      % with typed texts contained one in the other (Auto-UI's comparison above), over
 *                 steps whose gold AND prediction are TYPE — the text is judged only once the type is
 *                 right, as the paper's table does; an empty predicted text counts (as in Auto-UI).
 *   text_exact    % with the predicted text equal to the gold text character for character, same
 *                 denominator: what a search box needs, where containment accepts "" or a prefix.
 *   tap_in_box    % of gold taps that fall in a UI annotation box whose prediction is a tap inside the
 *                 smallest such box, or inside the caption under it (an app icon's label, as
 *                 data/geometry.ts's `labels`): whether a finger would press the element itself,
 *                 where action matching also accepts any point within 14 % of the screen.
 * An invalid generation (pred = null) is a miss in every accuracy whose denominator holds it (all
 * but text_acc, whose denominator needs a predicted TYPE) and is counted in `invalid`. Auto-UI itself
 * re-scores the previous step's parsed prediction in that case (a bug we do not copy).
 *
 * Overall: with subsets, each accuracy is the mean of the subsets' values (macro, as the paper's
 * "overall" column: 74.27 = mean of the five subsets), skipping subsets where it is null; `n` and
 * `invalid` are totals. Without any subset, overall is computed over all items directly.
 */
import { ActionType, SUBSETS, type AitwAction, type Box, type YX } from '../data/types.js';
import { boxHolds, isTap, isTapAction, labels } from '../data/geometry.js';
import { checkActionsMatch } from './action_matching.js';

export interface ScoredItem {
  id: string;
  /** null = the model's output could not be parsed into an action. */
  pred: AitwAction | null;
  gold: AitwAction;
  /** The gold screen's UI annotation boxes [y, x, h, w]. */
  annotations: Box[];
  subset?: string;
}

/** A percentage 0–100, or null when no item falls in its denominator (never NaN). */
export type Percent = number | null;

export interface Metrics {
  /** Items scored. */
  n: number;
  action_match: Percent;
  type_acc: Percent;
  text_acc: Percent;
  text_exact: Percent;
  click_acc: Percent;
  scroll_acc: Percent;
  tap_in_box: Percent;
  /** Count (not percent) of invalid predictions. */
  invalid: number;
}

export interface Report extends Metrics {
  /** Per subset, known AITW subsets first in their usual order; empty when items carry no subset. */
  subsets: Record<string, Metrics>;
}

/** Name of the group for items without a subset when other items have one. */
export const UNSPECIFIED_SUBSET = 'unspecified';

const ACCURACY_KEYS = ['action_match', 'type_acc', 'text_acc', 'text_exact', 'click_acc', 'scroll_acc', 'tap_in_box'] as const;

/** The smallest of `boxes` holding point `p` (the element a tap there presses), or null. */
export function boxUnder(p: YX, boxes: readonly Box[]): Box | null {
  let best: Box | null = null;
  for (const b of boxes) if (boxHolds(b, p) && (!best || b[2] * b[3] < best[2] * best[3])) best = b;
  return best;
}

/** Auto-UI's typed-text comparison: containment either way after lower-casing (pred also trimmed). */
export function typedTextMatches(pred: string, gold: string): boolean {
  const p = pred.toLowerCase().trim();
  const g = gold.toLowerCase();
  return g.includes(p) || p.includes(g);
}

class Tally {
  n = 0;
  invalid = 0;
  match = 0;
  typeOk = 0;
  text = [0, 0];
  textExact = 0;
  click = [0, 0];
  scroll = [0, 0];
  inBox = [0, 0];

  add(item: ScoredItem, match: boolean): void {
    const { pred, gold } = item;
    this.n++;
    if (pred === null) this.invalid++;
    if (match) this.match++;
    if (pred !== null && pred.action_type === gold.action_type) this.typeOk++;
    if (gold.action_type === ActionType.DUAL_POINT) {
      const bucket = isTap(gold.touch_yx, gold.lift_yx) ? this.click : this.scroll;
      bucket[1]++;
      if (match) bucket[0]++;
      const box = bucket === this.click ? boxUnder(gold.touch_yx, item.annotations) : null;
      if (box) {
        this.inBox[1]++;
        const pressed = pred !== null && isTapAction(pred) && item.annotations.some((b) => (b === box || labels(b, box)) && boxHolds(b, pred.touch_yx));
        if (pressed) this.inBox[0]++;
      }
    }
    if (gold.action_type === ActionType.TYPE && pred?.action_type === ActionType.TYPE) {
      this.text[1]++;
      if (typedTextMatches(pred.typed_text, gold.typed_text)) this.text[0]++;
      if (pred.typed_text === gold.typed_text) this.textExact++;
    }
  }

  metrics(): Metrics {
    return {
      n: this.n,
      action_match: percent(this.match, this.n),
      type_acc: percent(this.typeOk, this.n),
      text_acc: percent(this.text[0]!, this.text[1]!),
      text_exact: percent(this.textExact, this.text[1]!),
      click_acc: percent(this.click[0]!, this.click[1]!),
      scroll_acc: percent(this.scroll[0]!, this.scroll[1]!),
      tap_in_box: percent(this.inBox[0]!, this.inBox[1]!),
      invalid: this.invalid,
    };
  }
}

function percent(k: number, n: number): Percent {
  return n === 0 ? null : (100 * k) / n;
}

function mean(values: Percent[]): Percent {
  const present = values.filter((v): v is number => v !== null);
  return present.length === 0 ? null : present.reduce((a, b) => a + b, 0) / present.length;
}

function subsetOrder(a: string, b: string): number {
  const known: readonly string[] = SUBSETS;
  const ia = known.indexOf(a);
  const ib = known.indexOf(b);
  if (ia >= 0 || ib >= 0) return (ia < 0 ? Infinity : ia) - (ib < 0 ? Infinity : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Scores every item (in order) and aggregates per subset and overall. */
export function scoreItems(items: Iterable<ScoredItem>): { report: Report; details: { id: string; match: boolean }[] } {
  const all = new Tally();
  const bySubset = new Map<string, Tally>();
  let hasSubsets = false;
  const details: { id: string; match: boolean }[] = [];
  for (const item of items) {
    const match = item.pred !== null && checkActionsMatch(item.pred, item.gold, item.annotations);
    details.push({ id: item.id, match });
    all.add(item, match);
    if (item.subset !== undefined) hasSubsets = true;
    const name = item.subset ?? UNSPECIFIED_SUBSET;
    let t = bySubset.get(name);
    if (!t) bySubset.set(name, (t = new Tally()));
    t.add(item, match);
  }
  if (!hasSubsets) return { report: { ...all.metrics(), subsets: {} }, details };

  const subsets: Record<string, Metrics> = {};
  for (const name of [...bySubset.keys()].sort(subsetOrder)) subsets[name] = bySubset.get(name)!.metrics();
  const per = Object.values(subsets);
  const overall = all.metrics();
  for (const k of ACCURACY_KEYS) overall[k] = mean(per.map((m) => m[k]));
  return { report: { ...overall, subsets }, details };
}
