/**
 * Several checkpoints answering as one (`--ensemble`): each decodes the same batch on its own
 * (generate.ts), and their answers are fused row by row. Why late fusion, not averaged logits:
 * every decision a member makes (the plan, where a tap lands through its pointer, which run of the
 * goal it copies and where it stops) stays one model's whole, grammar-valid answer, and the fusion
 * only picks among them; it needs nothing from a member but its answer and the probabilities it
 * reports. Why ensembles at all: seeds of one recipe fail on different held-out screens (README
 * Results), so where two of three agree the odd one out is outvoted.
 *
 *   the action type: of the types the members answered, the one their mean probability favours;
 *   a tap or scroll: the medoid of the members that answered it (nearest, summed, to the others);
 *   a typed text: the one most of those members typed; between texts typed as often, the one their
 *     beams weigh most, summed over members (each text's exp mean log-probability per token in each
 *     member's choices);
 *   any other action: the answer of the member most sure of it.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { ACTION_TYPE_NAMES, ActionType, type AitwAction, type TypeProbs } from '../data/types.js';
import type { ActionCodec } from '../model/codec.js';
import type { TargetConstraint } from '../model/constrained.js';
import type { ScreenBatch } from '../model/batch.js';
import { greedyDecode, type DecodeOptions, type Generated, type IncrementalDecoder } from './generate.js';

/** greedyDecode by each model on the same batch, fused row by row (one model: its own answers). */
export function ensembleDecode<S>(
  models: readonly IncrementalDecoder<S>[],
  codec: ActionCodec,
  constraint: TargetConstraint,
  batch: { inputIds: tf.Tensor2D; inputMask: tf.Tensor2D } & ScreenBatch,
  opts: DecodeOptions = {},
): Generated[] {
  const answers = models.map((m) => greedyDecode(m, codec, constraint, batch, opts));
  if (answers.length === 1) return answers[0]!;
  return answers[0]!.map((_, b) => fuseAnswers(answers.map((a) => a[b]!)));
}

/** One row's fused answer from its members' answers (at least one). */
export function fuseAnswers(members: readonly Generated[]): Generated {
  if (members.length === 0) throw new RangeError('fuseAnswers: no members');
  const typeProbs = meanTypeProbs(members.map((m) => m.typeProbs));
  const valid: Candidate[] = members.flatMap((m) => (m.result.ok ? [{ m, action: m.result.action }] : []));
  if (valid.length === 0) return { ...members[0]!, typeProbs };
  const prob = (a: AitwAction): number => typeProbs[ACTION_TYPE_NAMES[a.action_type]] ?? 0;
  // The answered type the mean favours; ties to the earlier member.
  const type = valid.reduce((best, v) => (prob(v.action) > prob(best.action) ? v : best)).action.action_type;
  const same = valid.filter((v) => v.action.action_type === type);
  let chosen = same[0]!;
  if (type === ActionType.DUAL_POINT) {
    const spread = (v: Candidate): number => same.reduce((s, o) => s + pointDistance(v.action, o.action), 0);
    chosen = same.reduce((best, v) => (spread(v) < spread(best) ? v : best));
  } else if (type === ActionType.TYPE) {
    const weigh = (m: Generated, text: string): number => {
      if (m.textChoices.length > 0) return Math.exp(m.textChoices.find((c) => c.text === text)?.score ?? -Infinity);
      // Decoded greedily (no choices): its own text weighs 1.
      return m.result.ok && m.result.action.action_type === ActionType.TYPE && m.result.action.typed_text === text ? 1 : 0;
    };
    const weight = (text: string): number => members.reduce((s, m) => s + weigh(m, text), 0);
    const votes = (text: string): number => same.filter((v) => v.action.typed_text === text).length;
    const better = (v: Candidate, best: Candidate): boolean => {
      const [a, b] = [v.action.typed_text, best.action.typed_text];
      return votes(a) > votes(b) || (votes(a) === votes(b) && weight(a) > weight(b));
    };
    chosen = same.reduce((best, v) => (better(v, best) ? v : best));
  } else {
    const own = (v: Candidate): number => v.m.typeProbs[ACTION_TYPE_NAMES[type]] ?? 0;
    chosen = same.reduce((best, v) => (own(v) > own(best) ? v : best));
  }
  return { ...chosen.m, typeProbs };
}

/** A member's valid answer. */
interface Candidate {
  m: Generated;
  action: AitwAction;
}

/** Each action type's probability averaged over the members (a type a member does not report counts 0). */
export function meanTypeProbs(all: readonly TypeProbs[]): TypeProbs {
  const out: TypeProbs = {};
  for (const probs of all) {
    for (const [name, p] of Object.entries(probs) as [keyof TypeProbs, number][]) out[name] = (out[name] ?? 0) + p / all.length;
  }
  return out;
}

/** Distance of two gestures: their touch points' plus their lift points' (normalised screen units). */
function pointDistance(a: AitwAction, b: AitwAction): number {
  const d = (p: readonly number[], q: readonly number[]): number => Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!);
  return d(a.touch_yx, b.touch_yx) + d(a.lift_yx, b.lift_yx);
}
