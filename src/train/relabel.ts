/*
 * Hindsight grounding (our addition, training only). A recorded step teaches one goal on its screen,
 * but a screen that shows twenty named things is a one-step task for each of them: "tap X" is
 * answered by a tap on X, then STATUS_TASK_COMPLETE. While training, a share of each batch's rows
 * (`relabelRate`) is swapped, for that step only, for such a task on the same screen: an item of the
 * screen's own text is named in a goal worded as the web tasks word theirs, and the target is a tap
 * at the item's centre with the plan [DUAL_POINT, STATUS_TASK_COMPLETE] and no history — or, for a
 * quarter of them, the first step of "open X, then go back", planned [DUAL_POINT, PRESS_BACK,
 * STATUS_TASK_COMPLETE], so the plan follows the whole goal and not its first words.
 * Why: the recorded episodes name a few hundred things, so a model can learn which name sits where
 * instead of learning to find a name it has never seen; drawing the name from whatever the screen
 * says, afresh at every step, asks for the second. Hindsight typing (retypedExample) does the same for
 * typed text, renamed searches (renamedSearch) for a web search's query, and hindsight opening
 * (searchOpenExample, resultsOpenExample) for searches that open a result. Nothing here reaches evaluation or inference.
 */
import { backGoal, groundGoal, searchGoal, searchWords } from '../data/web/goals.js';
import { boxHolds, isTapAction } from '../data/geometry.js';
import { pointlessAction } from '../data/normalize.js';
import { ActionType, WEB_SUBSET, type ActionTypeId, type AitwAction, type YX } from '../data/types.js';
import { withGoal, type EncodedTexts, type StepContext } from '../model/batch.js';
import type { ActionCodec } from '../model/codec.js';
import { normalizeText } from '../model/text_match.js';
import { InputError } from '../util/errors.js';
import type { Rng } from '../util/rng.js';

/** One training example: a row's screen, with the input, target and gold action to learn on it. */
export interface Example {
  /** The table row whose screen (features, texts) it reads. */
  row: number;
  input: number[];
  target: number[];
  /** The gold action (its tap is where the grounding loss looks). */
  action: AitwAction;
  /** The screen's text items, matched with this example's goal; null for a model that reads no text. */
  texts: EncodedTexts | null;
}

/** Names that make a task: at least two letters in a row, a few words, not a paragraph. */
const NAMING = /\p{L}\p{L}/u;
const MAX_WORDS = 6;
const MAX_CHARS = 48;
const isShortName = (text: string, words: number): boolean => NAMING.test(text) && text.length <= MAX_CHARS && words <= MAX_WORDS;
/** Item boxes taller than this (screen fractions) are blocks of text, not one thing to tap. */
const MAX_HEIGHT = 0.08;
/** A tap target's centre must sit inside this band (status and navigation bars are outside). */
const BAND: readonly [number, number] = [0.03, 0.97];

/** Indices of the items a one-step task can name: a short name, on one line, inside the band, shown once on the screen. */
export function nameableItems(texts: EncodedTexts): number[] {
  const counts = new Map<string, number>();
  const norms = texts.strings.map(normalizeText);
  for (const n of norms) counts.set(n, (counts.get(n) ?? 0) + 1);
  return texts.strings.flatMap((s, i) => {
    const [y, , h] = texts.boxes[i]!;
    const cy = y + h / 2;
    const ok = isShortName(s, norms[i]!.split(' ').length) && counts.get(norms[i]!) === 1 && h <= MAX_HEIGHT && cy >= BAND[0] && cy <= BAND[1];
    return ok ? [i] : [];
  });
}

/** The tap at the centre of a (y, x, h, w) box, at AITW's four decimals. */
function tapAtCentre([y, x, h, w]: readonly number[]): AitwAction {
  const yx: [number, number] = [Math.round((y! + h! / 2) * 1e4) / 1e4, Math.round((x! + w! / 2) * 1e4) / 1e4];
  return { action_type: ActionType.DUAL_POINT, touch_yx: yx, lift_yx: [...yx], typed_text: '' };
}

/**
 * Row `ex`'s screen taught `goal` with `history`, `plan` and `action` instead of what it recorded; null
 * when that no longer fits the codec (a name too long for its input: the row stays as recorded).
 */
export function relabelled(ex: Example, goal: string, history: readonly AitwAction[], plan: readonly ActionTypeId[], action: AitwAction, codec: ActionCodec): Example | null {
  try {
    return { row: ex.row, input: codec.encodeInput(goal, history), target: codec.encodeTarget(plan, action, goal), action, texts: ex.texts && withGoal(ex.texts, goal) };
  } catch (e) {
    if (e instanceof InputError) return null;
    throw e;
  }
}

/** Share of grounding examples that are the first step of "open X, then go back". */
const BACK_SHARE = 0.25;

/** "tap X" (or "open X, then go back") on the example's own screen, X one of its nameable items drawn by `rng`; null when it names nothing. */
export function groundingExample(ex: Example, codec: ActionCodec, rng: Rng): Example | null {
  if (!ex.texts) return null;
  const items = nameableItems(ex.texts);
  if (items.length === 0) return null;
  const i = rng.pick(items);
  const back = rng.chance(BACK_SHARE);
  const goal = (back ? backGoal : groundGoal)(rng, ex.texts.strings[i]!);
  const plan = back ? [ActionType.DUAL_POINT, ActionType.PRESS_BACK, ActionType.STATUS_TASK_COMPLETE] : [ActionType.DUAL_POINT, ActionType.STATUS_TASK_COMPLETE];
  return relabelled(ex, goal, [], plan, tapAtCentre(ex.texts.boxes[i]!), codec);
}

/** The text a history's search typed when the screen it leads to shows the results: it ends with the TYPE, or the TYPE then Enter. */
export function searchedQuery(history: readonly AitwAction[]): string | null {
  const n = history.length;
  const typed = history[n - 1]?.action_type === ActionType.PRESS_ENTER ? history[n - 2] : history[n - 1];
  return typed?.action_type === ActionType.TYPE && typed.typed_text.trim() !== '' ? typed.typed_text : null;
}

/** A step with the screen texts of the step before it, which hindsight opening reads. */
export interface StepWithPrevious extends StepContext {
  /** The texts of the same episode's previous screen; null when the split does not hold it or the model reads no text. */
  previousTexts: EncodedTexts | null;
}

/** The nameable item under a tap (the smallest box holding the point), other than the text `query`; −1 when none. */
function itemUnder(texts: EncodedTexts, tap: YX, query: string): number {
  const q = normalizeText(query);
  const area = (i: number) => texts.boxes[i]![2] * texts.boxes[i]![3];
  let best = -1;
  for (const i of nameableItems(texts))
    if (boxHolds(texts.boxes[i]!, tap) && normalizeText(texts.strings[i]!) !== q && (best < 0 || area(i) < area(best))) best = i;
  return best;
}

const COMPLETE = pointlessAction(ActionType.STATUS_TASK_COMPLETE);
const BACK = pointlessAction(ActionType.PRESS_BACK);

/**
 * Hindsight opening: a recorded search that typed Q and then tapped R among its results is also the
 * episode of "search for Q and open R", whatever its own goal was (buy R, install it). Two of its
 * steps are swapped for that goal, each with its own history kept: the tap on R, planned [DUAL_POINT,
 * STATUS_TASK_COMPLETE], and the step after it, on what R opened, answered STATUS_TASK_COMPLETE; null
 * for any other step, where no nameable item (other than Q) lies under the tap, or where the tap
 * focused a field to type in (a site's search box after its address was typed). Why: the recorded
 * searches worded "search for X" or "look up X" (the synthetic set's general and Google-app ones, like
 * AITW's) end on their results page, so a model learns to stop once Enter is pressed, and held-out
 * searches that had to open a result stopped there; the recordings that do tap a result say both what
 * opening looks like and where it ends.
 */
export function searchOpenExample(ex: Example, step: StepWithPrevious, codec: ActionCodec, rng: Rng): Example | null {
  const relabel = (query: string, name: string, plan: readonly ActionTypeId[], action: AitwAction) => relabelled(ex, searchGoal(rng, query, name), step.history, plan, action, codec);
  const query = searchedQuery(step.history);
  // A tap followed by typing focused a field: nothing was opened.
  if (query !== null && isTapAction(ex.action) && ex.texts && step.plan[1] !== ActionType.TYPE) {
    const r = itemUnder(ex.texts, ex.action.touch_yx, query);
    return r < 0 ? null : relabel(query, ex.texts.strings[r]!, [ActionType.DUAL_POINT, ActionType.STATUS_TASK_COMPLETE], ex.action);
  }
  const tap = step.history.at(-1);
  const searched = searchedQuery(step.history.slice(0, -1));
  if (searched !== null && tap && isTapAction(tap) && step.previousTexts && ex.action.action_type !== ActionType.TYPE) {
    const r = itemUnder(step.previousTexts, tap.touch_yx, searched);
    return r < 0 ? null : relabel(searched, step.previousTexts.strings[r]!, [ActionType.STATUS_TASK_COMPLETE], COMPLETE);
  }
  return null;
}

/**
 * Opening a result of a search that ended on them: a recorded search that typed Q and then answered
 * STATUS_TASK_COMPLETE on its results page (right after the TYPE or its Enter) is also the first step
 * of "search for Q and open R" there, for R any other nameable item of that page: a tap at R's
 * centre, planned [DUAL_POINT, STATUS_TASK_COMPLETE], with the step's own history kept; null for any
 * other step. Why: hindsight opening (above) draws on the few searches that tapped a result, while
 * the many worded "search for X" answer this very screen STATUS_TASK_COMPLETE, and held-out searches
 * that had to open a result declared the task complete on their results page; the same screen
 * answered both ways says it is the goal's "and open R" that asks for the tap.
 */
export function resultsOpenExample(ex: Example, step: StepContext, codec: ActionCodec, rng: Rng): Example | null {
  const query = searchedQuery(step.history);
  const texts = ex.texts;
  if (query === null || ex.action.action_type !== ActionType.STATUS_TASK_COMPLETE || !texts) return null;
  const q = normalizeText(query);
  const results = nameableItems(texts).filter((i) => normalizeText(texts.strings[i]!) !== q);
  if (results.length === 0) return null;
  const r = rng.pick(results);
  return relabelled(ex, searchGoal(rng, query, texts.strings[r]!), step.history, [ActionType.DUAL_POINT, ActionType.STATUS_TASK_COMPLETE], tapAtCentre(texts.boxes[r]!), codec);
}

/**
 * Backing out: a step on a screen that a tap opened is also the second step of "open R", for R any
 * other nameable item of the screen before the tap that the opened screen does not show: the tap
 * was the wrong one, and the answer is PRESS_BACK, planned [PRESS_BACK, DUAL_POINT,
 * STATUS_TASK_COMPLETE], with the step's own history kept; null when the history does not end with a
 * tap, the step types (the tap focused a field), the split does not hold the screen before it, or no
 * item qualifies. Why: recorded episodes never tap a wrong link, so a model has never seen a page it
 * should leave, and held-out navigations that tapped a wrong link declared the task complete there
 * (64 of 101 failures in three seeds' runs); the closed loop pairs it with avoiding a tap that was
 * backed out of (run_tasks.ts).
 */
export function backOutExample(ex: Example, step: StepWithPrevious, codec: ActionCodec, rng: Rng): Example | null {
  const tap = step.history.at(-1);
  const before = step.previousTexts;
  // A tap followed by typing focused a field: nothing was opened.
  if (!tap || !isTapAction(tap) || !before || !ex.texts || ex.action.action_type === ActionType.TYPE) return null;
  // What the opened screen shows, normalised once: a name any of its items holds is not "another" item.
  const shown = ex.texts.strings.map(normalizeText);
  const others = nameableItems(before).filter((i) => {
    const name = normalizeText(before.strings[i]!);
    return !boxHolds(before.boxes[i]!, tap.touch_yx) && !shown.some((s) => s.includes(name));
  });
  if (others.length === 0) return null;
  const goal = groundGoal(rng, before.strings[rng.pick(others)]!);
  return relabelled(ex, goal, step.history, [ActionType.PRESS_BACK, ActionType.DUAL_POINT, ActionType.STATUS_TASK_COMPLETE], BACK, codec);
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';

/**
 * `run` with every ASCII letter and digit drawn afresh (a letter for a letter, in its case; a digit
 * for a digit) and everything else kept: a name nobody typed before, of the same shape — as many
 * words, as long, numbers and hyphens where they were ("samsung galaxy s23" → "qwfnrta bexmlo k58").
 */
export function scrambled(run: string, rng: Rng): string {
  return run.split('').map((c) => {
    const lower = c.toLowerCase();
    if (LETTERS.includes(lower) && lower.length === 1) {
      const l = LETTERS[rng.int(0, LETTERS.length - 1)]!;
      return c === lower ? l : l.toUpperCase();
    }
    return DIGITS.includes(c) ? DIGITS[rng.int(0, 9)]! : c;
  }).join('');
}

/**
 * Hindsight typing: a TYPE step whose text is a run of whole words of its goal, with that run
 * scrambled (scrambled: the same shape, new letters and digits) in the goal and in the text alike,
 * each side keeping its own casing ("install yelp app" typed "Yelp" becomes "install qmfr app" typed
 * "Qmfr"); null for any other step. Why: the recorded goals type a few hundred queries, so a model
 * can learn which words are queries instead of where a query stands in a goal ("for …", in quotes);
 * a query nobody typed before can only be found by where it stands.
 */
export function retypedExample(ex: Example, step: StepContext, codec: ActionCodec, rng: Rng): Example | null {
  const text = ex.action.typed_text;
  if (ex.action.action_type !== ActionType.TYPE || text.trim() === '') return null;
  const at = wholeWordsAt(step.goal, text);
  if (at < 0) return null;
  const fresh = scrambled(text.toLowerCase(), rng);
  const cased = (like: string) => fresh.split('').map((c, i) => (like[i] !== like[i]!.toLowerCase() ? c.toUpperCase() : c)).join('');
  return retyped(ex, step, at, cased(step.goal.slice(at, at + text.length)), cased(text), codec);
}

/**
 * The step `ex` of `step` with the goal's copy of its typed run, at `at`, replaced by `inGoal` and its
 * typed text by `typed`; null when that no longer fits the codec (the row stays as recorded).
 */
function retyped(ex: Example, step: StepContext, at: number, inGoal: string, typed: string, codec: ActionCodec): Example | null {
  const goal = step.goal.slice(0, at) + inGoal + step.goal.slice(at + ex.action.typed_text.length);
  return relabelled(ex, goal, step.history, step.plan, { ...ex.action, typed_text: typed }, codec);
}

/** Where `text` occurs in `goal` as whole words, case aside, first to last; none when lower-casing moves the indices. */
function wholeWordRuns(goal: string, text: string): number[] {
  const g = goal.toLowerCase(), t = text.toLowerCase();
  if (g.length !== goal.length || t.length !== text.length) return []; // lower-casing moved the indices
  const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);
  const at: number[] = [];
  for (let i = g.indexOf(t); i >= 0; i = g.indexOf(t, i + 1)) if (!isWordChar(goal[i - 1]) && !isWordChar(goal[i + t.length])) at.push(i);
  return at;
}

/** Where `text` first occurs in `goal` as whole words, case aside; −1 when it does not. */
function wholeWordsAt(goal: string, text: string): number {
  return wholeWordRuns(goal, text)[0] ?? -1;
}

/**
 * Where a TYPE step's typed run stands in its goal as whole words (case aside), when it stands there
 * twice or more: a search for a word of the name it then opens, which re-querying and renamed searches
 * take; null for any other step.
 */
function typedTwice(ex: Example, step: StepContext): number[] | null {
  const text = ex.action.typed_text;
  if (ex.action.action_type !== ActionType.TYPE || text.trim() === '') return null;
  const runs = wholeWordRuns(step.goal, text);
  return runs.length >= 2 ? runs : null;
}

/** Words a re-query may put in the query's place: runs of three or more letters. */
const QUERY_WORD = /\p{L}{3,}/gu;

/**
 * Re-querying: a TYPE step whose typed run stands twice in its goal (case aside, as whole words) — a
 * search for a word of the very name it then opens, "look up evans and go to Tara Evans" — with the
 * first of them, the query, swapped for another word that follows it in the goal, in the query's
 * casing, in the goal and the text alike ("look up tara and go to Tara Evans" typed "tara"); null
 * for any other step. Why: such a goal names the typed word twice and other words beside it, and the
 * recorded searches (a few dozen) leave a model free to copy any word of the name; held-out searches
 * typed "design" for "use search to find "internals", then open the Offloading Design & Internals
 * page". Drawing the query afresh from the goal's own later words says that only the query's place
 * tells which word to type. Unlike retypedExample the words stay real and still stand twice.
 */
export function requeriedExample(ex: Example, step: StepContext, codec: ActionCodec, rng: Rng): Example | null {
  const runs = typedTwice(ex, step);
  if (!runs) return null;
  const text = ex.action.typed_text;
  const at = runs[0]!;
  const own = new Set(text.toLowerCase().match(QUERY_WORD) ?? []);
  const words = [...new Set((step.goal.slice(at + text.length).match(QUERY_WORD) ?? []).filter((w) => !own.has(w.toLowerCase())))];
  if (words.length === 0) return null;
  const slot = step.goal.slice(at, at + text.length);
  const word = rng.pick(words);
  const query = slot === slot.toLowerCase() ? word.toLowerCase() : word;
  return retyped(ex, step, at, query, text === text.toLowerCase() ? query.toLowerCase() : query, codec);
}

/**
 * Renamed searches: a TYPE step whose typed run stands twice in its goal (a search for a word of the
 * name it opens, as requeriedExample takes) taught under a search goal for another name, drawn from
 * `names`, with a word of that name as the query, in lower case or as the name shows it (a coin
 * flip), typed as the goal writes it ("look up tara and go to Tara Evans" becomes "search for
 * keyword and open Keyword Arguments" typed "keyword"); null for any other step. Why: the recorded
 * searches are a few dozen, each naming its own page, so a model can learn which word each of them
 * types instead of where a search goal keeps its query; held-out searches type a word of the
 * target's name, the way synthetic installs type the app a goal names last. A name drawn afresh at
 * every step leaves only the query's place to learn.
 */
export function renamedSearch(names: readonly string[]): Swap<StepContext> {
  return (ex, step, codec, rng) => {
    if (names.length === 0 || !typedTwice(ex, step)) return null;
    const name = rng.pick(names);
    const words = searchWords(name);
    if (words.length === 0) return null;
    const shown = rng.pick(words);
    const query = rng.chance(0.5) ? shown.toLowerCase() : shown;
    return relabelled(ex, searchGoal(rng, query, name), step.history, step.plan, { ...ex.action, typed_text: query }, codec);
  };
}

/** Texts of the `web` rows' screens that a search could open: a few words, short, holding a word to search for. */
export function searchableNames(subsets: readonly string[], texts: readonly (readonly { text: string }[])[]): string[] {
  const out = new Set<string>();
  subsets.forEach((s, r) => {
    if (s !== WEB_SUBSET) return;
    for (const { text } of texts[r] ?? []) if (isShortName(text, text.split(/\s+/).length) && searchWords(text).length > 0) out.add(text);
  });
  return [...out].sort();
}

/** The batch's examples with each swapped, with probability `rate`, for a grounding task on its screen. */
export function relabelBatch(examples: readonly Example[], rate: number, codec: ActionCodec, rng: Rng): Example[] {
  if (rate <= 0) return [...examples];
  return examples.map((ex) => (rng.float() < rate ? groundingExample(ex, codec, rng) ?? ex : ex));
}

export type Swap<S extends StepContext> = (ex: Example, step: S, codec: ActionCodec, rng: Rng) => Example | null;

/**
 * The batch's examples that `eligible` admits, each swapped with probability `rate` for `swap` of the
 * same step (retypedExample, requeriedExample, searchOpenExample), kept where the swap gives null.
 */
export function swapBatch<S extends StepContext>(examples: readonly Example[], step: (ex: Example) => S, rate: number, codec: ActionCodec, rng: Rng, swap: Swap<S>, eligible: (ex: Example) => boolean = () => true): Example[] {
  if (rate <= 0) return [...examples];
  return examples.map((ex) => (eligible(ex) && rng.float() < rate ? swap(ex, step(ex), codec, rng) ?? ex : ex));
}

/** swapBatch over the batch's TYPE examples (retypedExample by default). */
export function retypeBatch(examples: readonly Example[], step: (ex: Example) => StepContext, rate: number, codec: ActionCodec, rng: Rng, swap: Swap<StepContext> = retypedExample): Example[] {
  return swapBatch(examples, step, rate, codec, rng, swap, (ex) => ex.action.action_type === ActionType.TYPE);
}
