/**
 * Actions to keep out of an answer: what the caller saw do nothing on this very screen (a closed
 * loop compares the screens before and after each action). A model trained on gold episodes has
 * never seen an action fail, so on a screen it reads wrongly it answers the same no-op again and
 * again; taking the no-op out of its choices makes it answer with its next best instead. The model
 * still makes every choice: this only removes options, as the grammar does.
 *
 * - a key, TYPE or status action: its action type is not allowed (at the action, and as the plan's
 *   first step);
 * - a tap: the screen tokens under it (the patch and any text item that holds the point) are not
 *   pointed at, when taps are read off the pointer or the attention; with taps from the coordinate
 *   tokens, its touch bins are not written, as for a scroll;
 * - a scroll: its start bins are not written (scrolls are the paper's fixed gestures, so the start
 *   names the direction).
 */
import { isTapAction } from '../data/geometry.js';
import { pointlessAction } from '../data/normalize.js';
import { ActionType, type AitwAction } from '../data/types.js';
import { tapTargets } from '../model/batch.js';
import type { ActionCodec } from '../model/codec.js';
import { decidesNext, GrammarNode, type ConstraintState } from '../model/constrained.js';
import type { ScreenLayout } from '../model/pointer.js';

/** One row's avoided actions, as the decoder applies them. */
export interface Avoided {
  /** Action type token ids not allowed at the action's type. */
  typeIds: number[];
  /** [ty, tx] bin pairs not written as a touch point. */
  touches: Array<[number, number]>;
  /** Taps whose screen tokens the pointer may not pick. */
  taps: AitwAction[];
}

export const NOTHING_AVOIDED: Avoided = { typeIds: [], touches: [], taps: [] };

const TYPE_AGAIN = pointlessAction(ActionType.TYPE);

/**
 * What a request's answer must not be: the actions its caller saw do nothing on this screen, and
 * typing again right after a TYPE. Why the latter: no recorded episode types twice in a row (the
 * text is typed whole, then Enter, a tap or the end follows), while a model unsure what follows its
 * typing answers with the same text again and again, each time appending it to the field.
 */
export function requestAvoid(history: readonly AitwAction[], avoid: readonly AitwAction[]): AitwAction[] {
  return history.at(-1)?.action_type === ActionType.TYPE ? [...avoid, TYPE_AGAIN] : [...avoid];
}

/** What avoiding `actions` means for decoding; `pointerTaps`: taps are read off the pointer or the attention. */
export function avoidedOf(codec: ActionCodec, actions: readonly AitwAction[], pointerTaps: boolean): Avoided {
  if (actions.length === 0) return NOTHING_AVOIDED;
  const out: Avoided = { typeIds: [], touches: [], taps: [] };
  for (const a of actions) {
    if (a.action_type !== ActionType.DUAL_POINT) out.typeIds.push(codec.typeId(a.action_type));
    else if (isTapAction(a) && pointerTaps) out.taps.push(a);
    else out.touches.push([codec.quantize(a.touch_yx[0]), codec.quantize(a.touch_yx[1])]);
  }
  return out;
}

/**
 * Takes the avoided choices out of a batch of additive logit masks [B, V] (constrained.ts fills
 * them): types at the action's type and as the plan's first step (where the model decides what to
 * do next; the plan it writes then agrees with the action), touch x bins after an avoided touch y.
 * Each leaves other choices open (there are more types than can be avoided, and more x bins than one).
 */
export function maskAvoided(codec: ActionCodec, states: readonly ConstraintState[], avoided: readonly Avoided[], masks: Float32Array, vocabSize: number): void {
  states.forEach((s, b) => {
    const a = avoided[b];
    if (!a) return;
    if (s.node === GrammarNode.ActType || decidesNext(s)) for (const id of a.typeIds) masks[b * vocabSize + id] = -Infinity;
    if (s.node === GrammarNode.TouchX) for (const [ty, tx] of a.touches) if (ty === s.ty) masks[b * vocabSize + codec.xBase + tx] = -Infinity;
  });
}

/** The screen tokens the pointer may not pick on this screen: those under each avoided tap. */
export function avoidedTokens(a: Avoided, layout: ScreenLayout): number[] {
  return [...new Set(a.taps.flatMap((t) => tapTargets(t, layout, [], 0)))];
}
