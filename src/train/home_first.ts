/*
 * Hindsight HOME (our addition, training only). A rendered site's recorded episodes say two things
 * about the site beyond their own goals: which screen is its entry page (the screen after a HOME)
 * and which of its links open a page (a tapped name that the opened page shows again, as its
 * heading). A first step on any other page of the site, under "go to the N page" for such a name N
 * that the screen does not show, is answered PRESS_HOME, planned [PRESS_HOME, DUAL_POINT,
 * STATUS_TASK_COMPLETE]: what the recorded navigations through HOME do, on every page and for every
 * page name the set holds instead of a few dozen of each. Why: on a held-out site's deep pages the
 * agent chose between HOME and a swipe page by page and seed by seed, with HOME first in a third of
 * the runs, and most of the runs that pressed it succeeded.
 */
import { boxHolds, isTapAction } from '../data/geometry.js';
import { pointlessAction } from '../data/normalize.js';
import type { ShardTable } from '../data/shards.js';
import { ActionType, WEB_SUBSET, type Box, type YX } from '../data/types.js';
import { navigateGoal } from '../data/web/goals.js';
import type { StepContext } from '../model/batch.js';
import type { ScreenText } from '../screen/text/types.js';
import { normalizeText } from '../model/text_match.js';
import { relabelled, type Swap } from './relabel.js';

/** What a site's recorded web rows tell of it: its entry page's texts (normalised) and names of its pages. */
export interface SiteMap {
  entry: ReadonlySet<string>;
  pages: readonly string[];
}

/** The site of a web episode: `data web` names episodes `<site>-<number>`. */
export function siteOf(episodeId: string): string {
  return episodeId.replace(/-\d+$/, '');
}

/** A screen whose texts are at least this share of the entry page's is the entry page (the two groups measured sit below 0.42 and at 0.5 or more). */
const ENTRY_SHARE = 0.5;
/** A page name: a short line with three letters or more (not "do", not a paragraph). */
const isPageName = (norm: string, height: number): boolean => norm.replace(/[^\p{L}]/gu, '').length >= 3 && norm.length <= 48 && height <= 0.08;

/** The set kept under `key`, made on first use. */
const setAt = (m: Map<string, Set<string>>, key: string): Set<string> => m.get(key) ?? m.set(key, new Set()).get(key)!;

/** The smallest text item under a point, if any. */
function itemAt(texts: readonly ScreenText[], p: YX): ScreenText | undefined {
  const area = (b: Box) => b[2] * b[3];
  return texts.filter((t) => boxHolds(t.box, p)).sort((a, b) => area(a.box) - area(b.box))[0];
}

/**
 * Each web site's map, from the training split's web rows: the texts of every screen a HOME opened,
 * and the names under recorded taps whose next screen shows the name again away from the finger (a
 * link that opened its page; a switch shows its name where it was). Sites with no HOME in the set
 * are left out: their entry page is unknown.
 */
export function siteMaps(table: ShardTable): Map<string, SiteMap> {
  const entries = new Map<string, Set<string>>();
  const pages = new Map<string, Set<string>>();
  const texts = table.texts;
  if (!texts) return new Map();
  for (let r = 0; r < table.rows; r++) {
    if (table.subset[r] !== WEB_SUBSET) continue;
    const site = siteOf(table.episodeId[r]!);
    const step = table.stepId[r]!;
    const actions = table.episodeActions[r]!;
    if (step > 0 && actions[step - 1]!.action_type === ActionType.PRESS_HOME) {
      for (const t of texts[r]!) setAt(entries, site).add(normalizeText(t.text));
    }
    const tap = actions[step]!;
    const next = r + 1 < table.rows && table.episodeId[r + 1] === table.episodeId[r] && table.stepId[r + 1] === step + 1 ? r + 1 : -1;
    // A tap followed by typing focused a field: nothing was opened.
    if (!isTapAction(tap) || next < 0 || actions[step + 1]?.action_type === ActionType.TYPE) continue;
    const under = itemAt(texts[r]!, tap.touch_yx);
    const name = under && normalizeText(under.text);
    if (!under || !name || !isPageName(name, under.box[2])) continue;
    if (texts[next]!.some((t) => normalizeText(t.text).includes(name) && !boxHolds(t.box, tap.touch_yx))) setAt(pages, site).add(under.text);
  }
  const out = new Map<string, SiteMap>();
  for (const [site, entry] of entries) {
    const names = [...(pages.get(site) ?? [])].sort();
    if (names.length > 0) out.set(site, { entry, pages: names });
  }
  return out;
}

const HOME = pointlessAction(ActionType.PRESS_HOME);

/**
 * The swap: a web row's first step (no history) on a page of a mapped site other than its entry
 * page, taught "go to the N page" (the navigation templates that need no site name) for a page name
 * N the screen does not show, answered PRESS_HOME; null for any other row, and for a search's first
 * tap. `table` is the split the examples' rows index.
 */
export function homeFirstSwap(table: ShardTable, maps: ReadonlyMap<string, SiteMap>): Swap<StepContext> {
  return (ex, step, codec, rng) => {
    const texts = table.texts?.[ex.row];
    const map = table.subset[ex.row] === WEB_SUBSET ? maps.get(siteOf(table.episodeId[ex.row]!)) : undefined;
    // A search's first tap (its field, typed into next) stays as recorded: the searches have few of them.
    if (!map || !texts || step.history.length > 0 || step.plan[1] === ActionType.TYPE) return null;
    const shown = texts.map((t) => normalizeText(t.text));
    if (shown.filter((s) => map.entry.has(s)).length >= ENTRY_SHARE * Math.max(1, shown.length)) return null;
    const hidden = map.pages.filter((p) => {
      const n = normalizeText(p);
      return !shown.some((s) => s.includes(n));
    });
    if (hidden.length === 0) return null;
    const goal = navigateGoal(rng, rng.pick(hidden));
    return relabelled(ex, goal, [], [ActionType.PRESS_HOME, ActionType.DUAL_POINT, ActionType.STATUS_TASK_COMPLETE], HOME, codec);
  };
}
