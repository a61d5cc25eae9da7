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
 * says, afresh at every step, asks for the second. Nothing here reaches evaluation or inference.
 */
import { backGoal, groundGoal } from '../data/web/goals.js';
import { ActionType, type AitwAction } from '../data/types.js';
import { withGoal, type EncodedTexts } from '../model/batch.js';
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
    const ok = NAMING.test(s) && s.length <= MAX_CHARS && norms[i]!.split(' ').length <= MAX_WORDS && counts.get(norms[i]!) === 1 && h <= MAX_HEIGHT && cy >= BAND[0] && cy <= BAND[1];
    return ok ? [i] : [];
  });
}

/** The tap at the centre of a (y, x, h, w) box, at AITW's four decimals. */
function tapAtCentre([y, x, h, w]: readonly number[]): AitwAction {
  const yx: [number, number] = [Math.round((y! + h! / 2) * 1e4) / 1e4, Math.round((x! + w! / 2) * 1e4) / 1e4];
  return { action_type: ActionType.DUAL_POINT, touch_yx: yx, lift_yx: [...yx], typed_text: '' };
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
  const action = tapAtCentre(ex.texts.boxes[i]!);
  try {
    return { row: ex.row, input: codec.encodeInput(goal, []), target: codec.encodeTarget(plan, action, goal), action, texts: withGoal(ex.texts, goal) };
  } catch (e) {
    if (e instanceof InputError) return null; // a name too long for the codec's input: the row stays as recorded
    throw e;
  }
}

/** The batch's examples with each swapped, with probability `rate`, for a grounding task on its screen. */
export function relabelBatch(examples: readonly Example[], rate: number, codec: ActionCodec, rng: Rng): Example[] {
  if (rate <= 0) return [...examples];
  return examples.map((ex) => (rng.float() < rate ? groundingExample(ex, codec, rng) ?? ex : ex));
}
