/**
 * Constrained decoding for the target grammar of codec.ts:
 *   <plan> type{1..maxPlan} <act> type [ty tx ly lx if DUAL_POINT] [[case] text* if TYPE] <eos> <pad>*
 *
 * One immutable state per sequence (beams can share and fork them freely). `mask(state)` returns a
 * cached additive logits mask (0 allowed, -Infinity not), `allowedIds(state)` the allowed ids; both
 * are computed once per grammar state, so a decode step costs one lookup per sequence.
 *
 * With `normalisedDualPoints` (default) the lift point is limited to what coordinate normalisation
 * can produce: the touch point itself (a tap) or, when the touch is a scroll start, the matching
 * scroll end. With the codec's copyText and a row's goal ids, typed text may only be a run of the
 * goal's whole pieces, each as written, lower-cased or Capitalised (the copy mechanism: what is
 * typed is a piece of the goal, and a word spelled in bytes is copied to its end); with caseModes a
 * case token comes first, and the run that follows a copy case is the goal's pieces as written, or
 * any text after <free> (or without a goal to copy from). Every sequence
 * the constraint allows and that ends in eos decodes with `codec.decodeTarget` to ok, and is at
 * most `maxTargetTokens` long.
 */
import { SCROLL_POINTS } from '../data/normalize.js';
import { ActionType, type ActionTypeId } from '../data/types.js';
import { TEXT_CASES, TYPE_TOKEN_ORDER, type ActionCodec, type CopyPiece } from './codec.js';

export enum GrammarNode {
  Start,
  Plan,
  ActType,
  TouchY,
  TouchX,
  LiftY,
  LiftX,
  End,
  /** A TYPE action's case token (caseModes). */
  Case,
  Text,
  Done,
}

const NODE_COUNT = 11;

/** Whether the next token is the plan's first step: the next action's type, where the model decides what to do. */
export const decidesNext = (s: ConstraintState): boolean => s.node === GrammarNode.Plan && s.planCount === 0;

export interface ConstraintState {
  readonly node: GrammarNode;
  /** Tokens emitted so far (eos included, trailing pads not). */
  readonly length: number;
  /** Action types in the plan so far. */
  readonly planCount: number;
  /** Grid indices of the coordinates emitted so far (-1 before). */
  readonly ty: number;
  readonly tx: number;
  readonly ly: number;
  /** With copyText: the goal's pieces, and where in them the typed text may continue. */
  readonly copy: CopyState | null;
}

/** Where a copy may be: inside piece `piece`'s casing `casing` at id `offset`, or (casing -1) before piece `piece`. */
interface CopyAt {
  readonly piece: number;
  readonly casing: number;
  readonly offset: number;
}

export interface CopyState {
  /** The goal's pieces (codec.copyPieces). */
  readonly pieces: readonly CopyPiece[];
  /** Where the copy may continue; null before the first id (any piece may start it). */
  readonly at: readonly CopyAt[] | null;
  /** The piece a copy must start at (a place chosen before: startedCopy); absent, any piece. */
  readonly from?: number;
}

/** `copy` kept to runs that start at piece `first` (in any of its casings). */
export function startedCopy(copy: CopyState, first: number): CopyState {
  return { ...copy, from: first };
}

/** The pieces a copied text `ids` may start at: those with a casing its ids begin with. */
export function startPieces(pieces: readonly CopyPiece[], ids: readonly number[]): number[] {
  return pieces.flatMap((p, i) => (p.some((casing) => casing.length <= ids.length && casing.every((id, k) => ids[k] === id)) ? [i] : []));
}

export interface ConstraintOptions {
  /** Limit lift points to a tap (lift = touch) or a paper scroll (default true). */
  normalisedDualPoints?: boolean;
}

export class TargetConstraint {
  readonly vocabSize: number;
  private readonly codec: ActionCodec;
  private readonly normalised: boolean;
  private readonly q: number;
  private readonly scrolls: readonly [number, number, number, number][];
  private readonly cache = new Map<number, { mask: Float32Array; ids: Int32Array }>();
  private readonly typeIds: Int32Array;
  private readonly textIds: Int32Array;

  constructor(codec: ActionCodec, opts: ConstraintOptions = {}) {
    this.codec = codec;
    this.vocabSize = codec.vocabSize;
    this.normalised = opts.normalisedDualPoints ?? true;
    this.q = codec.config.coordBins;
    this.scrolls = Object.values(SCROLL_POINTS).map(([t, l]) => [
      codec.quantize(t[0]),
      codec.quantize(t[1]),
      codec.quantize(l[0]),
      codec.quantize(l[1]),
    ]);
    this.typeIds = Int32Array.from(TYPE_TOKEN_ORDER.map((t) => codec.typeId(t)));
    const text: number[] = [];
    for (let id = 0; id < codec.specialBase; id++) if (codec.tokenizer.isTextId(id)) text.push(id);
    this.textIds = Int32Array.from(text);
  }

  /** The start state; `goal` (the row's goal ids) enables copying when the codec copies typed text. */
  initial(goal?: readonly number[]): ConstraintState {
    const copy = this.codec.config.copyText && goal && goal.length > 0 ? { pieces: this.codec.copyPieces(goal), at: null } : null;
    return { node: GrammarNode.Start, length: 0, planCount: 0, ty: -1, tx: -1, ly: -1, copy };
  }

  isDone(s: ConstraintState): boolean {
    return s.node === GrammarNode.Done;
  }

  /** Additive logits mask, length vocabSize. Shared and cached: do not modify it. */
  mask(s: ConstraintState): Float32Array {
    return this.entry(s).mask;
  }

  /** Allowed ids in increasing order. Shared and cached: do not modify it. */
  allowedIds(s: ConstraintState): Int32Array {
    return this.entry(s).ids;
  }

  private copying(s: ConstraintState): boolean {
    return s.node === GrammarNode.Text && s.copy !== null;
  }

  /** Writes the masks of a batch into rows of `out` ([states.length, vocabSize], row-major). */
  fillMasks(states: readonly ConstraintState[], out: Float32Array): void {
    if (out.length < states.length * this.vocabSize) {
      throw new RangeError(`fillMasks: out has ${out.length} values, need ${states.length} × ${this.vocabSize}`);
    }
    states.forEach((s, b) => out.set(this.entry(s).mask, b * this.vocabSize));
  }

  /** The state after emitting `token`; throws RangeError if the grammar does not allow it (a decode-loop bug). */
  advance(s: ConstraintState, token: number): ConstraintState {
    if (!(token >= 0 && token < this.vocabSize && this.entry(s).mask[token] === 0)) {
      throw new RangeError(`constraint: token ${this.codec.tokenName(token)} is not allowed after ${this.describe(s)}`);
    }
    const c = this.codec;
    const next = (node: GrammarNode, patch: Partial<ConstraintState> = {}): ConstraintState => ({
      ...s,
      node,
      length: s.length + 1,
      ...patch,
    });
    switch (s.node) {
      case GrammarNode.Start:
        return next(GrammarNode.Plan);
      case GrammarNode.Plan:
        return token === c.actId ? next(GrammarNode.ActType) : next(GrammarNode.Plan, { planCount: s.planCount + 1 });
      case GrammarNode.ActType: {
        const type = c.typeOf(token) as ActionTypeId;
        if (type === ActionType.DUAL_POINT) return next(GrammarNode.TouchY);
        if (type === ActionType.TYPE) return next(c.casesText ? GrammarNode.Case : GrammarNode.Text);
        return next(GrammarNode.End);
      }
      case GrammarNode.TouchY:
        return next(GrammarNode.TouchX, { ty: token - c.yBase });
      case GrammarNode.TouchX:
        return next(GrammarNode.LiftY, { tx: token - c.xBase });
      case GrammarNode.LiftY:
        return next(GrammarNode.LiftX, { ly: token - c.yBase });
      case GrammarNode.LiftX:
        return next(GrammarNode.End);
      case GrammarNode.Case:
        return next(GrammarNode.Text, c.caseOf(token) === 'free' ? { copy: null } : {});
      case GrammarNode.Text:
        if (token === c.eosId) return next(GrammarNode.Done);
        return next(GrammarNode.Text, s.copy ? { copy: { ...s.copy, at: copyNext(s.copy, token) } } : {});
      case GrammarNode.End:
        return next(GrammarNode.Done);
      case GrammarNode.Done:
        return s; // padding after eos
    }
  }

  private describe(s: ConstraintState): string {
    return `${GrammarNode[s.node]} (length ${s.length})`;
  }

  private entry(s: ConstraintState): { mask: Float32Array; ids: Int32Array } {
    // Copy states depend on the row's goal: built per state, never cached.
    if (this.copying(s)) return this.build(this.copyAllowed(s));
    const key = this.key(s);
    let e = this.cache.get(key);
    if (!e) {
      e = this.build(this.allowedFor(s));
      this.cache.set(key, e);
    }
    return e;
  }

  private build(allowed: Iterable<number>): { mask: Float32Array; ids: Int32Array } {
    const ids = Int32Array.from(new Set(allowed)).sort();
    const mask = new Float32Array(this.vocabSize).fill(-Infinity);
    for (const id of ids) mask[id] = 0;
    return { mask, ids };
  }

  /** The ids that continue the copy (at the start, the first id of any piece), and eos once it ends on a piece boundary. */
  private copyAllowed(s: ConstraintState): number[] {
    if (!this.textRoom(s)) return [this.codec.eosId];
    const { pieces, at } = s.copy!;
    const ids = copyOptions(s.copy!).map((p) => pieces[p.piece]![p.casing]![p.offset]!);
    if (at !== null && at.some((p) => p.casing < 0)) ids.push(this.codec.eosId);
    return ids;
  }

  /**
   * A number built from only what the allowed set depends on. Lift states are keyed by their 1–2
   * allowed bins, not by the touch point, so at most ~2·(Q+5) lift masks are ever cached.
   */
  private key(s: ConstraintState): number {
    let sub = 0;
    switch (s.node) {
      case GrammarNode.Plan:
        sub = s.planCount;
        break;
      case GrammarNode.LiftY:
      case GrammarNode.LiftX:
        if (this.normalised) {
          const [a, b = -1] = this.liftBins(s);
          sub = 1 + a + (this.q + 2) * (b + 1);
        }
        break;
      case GrammarNode.Text:
        sub = this.textRoom(s) ? 0 : 1;
        break;
      case GrammarNode.Case:
        sub = s.copy ? 0 : 1;
        break;
    }
    return sub * NODE_COUNT + s.node;
  }

  /** Whether a text token still leaves room for eos within maxTargetTokens. */
  textRoom(s: ConstraintState): boolean {
    return s.length + 2 <= this.codec.config.maxTargetTokens;
  }

  private allowedFor(s: ConstraintState): Iterable<number> {
    const c = this.codec;
    const range = (base: number): number[] => Array.from({ length: this.q + 1 }, (_, b) => base + b);
    switch (s.node) {
      case GrammarNode.Start:
        return [c.planId];
      case GrammarNode.Plan: {
        const ids: number[] = [];
        if (s.planCount < c.config.maxPlan) ids.push(...this.typeIds);
        if (s.planCount > 0) ids.push(c.actId);
        return ids;
      }
      case GrammarNode.ActType:
        return this.typeIds;
      case GrammarNode.TouchY:
        return range(c.yBase);
      case GrammarNode.TouchX:
        return range(c.xBase);
      case GrammarNode.LiftY:
        return this.normalised ? this.liftBins(s).map((b) => c.yBase + b) : range(c.yBase);
      case GrammarNode.LiftX:
        return this.normalised ? this.liftBins(s).map((b) => c.xBase + b) : range(c.xBase);
      case GrammarNode.End:
        return [c.eosId];
      case GrammarNode.Case:
        return s.copy ? TEXT_CASES.map((m) => c.caseId(m)) : [c.caseId('free')];
      case GrammarNode.Text:
        return this.textRoom(s) ? [...this.textIds, c.eosId] : [c.eosId];
      case GrammarNode.Done:
        return [c.tokenizer.padId];
    }
  }

  /**
   * Lift bins normalisation allows after this touch (y bins in LiftY, x bins in LiftX, sorted): the
   * touch itself (a tap) and, when the touch is a scroll start, that scroll's end.
   */
  private liftBins(s: ConstraintState): number[] {
    const bins = [s.node === GrammarNode.LiftY ? s.ty : s.tx];
    for (const [sy, sx, ey, ex] of this.scrolls) {
      if (sy !== s.ty || sx !== s.tx) continue;
      if (s.node === GrammarNode.LiftY) bins.push(ey);
      else if (ey === s.ly) bins.push(ex);
    }
    // In LiftX a tap's x is only allowed if the lift y chosen was the tap's own y.
    if (s.node === GrammarNode.LiftX && s.ly !== s.ty) bins.shift();
    return [...new Set(bins)].sort((a, b) => a - b);
  }
}

/** The places a copy's next id may come from: every casing of a piece the copy stands before. */
function copyOptions(copy: CopyState): CopyAt[] {
  const before = copy.at ?? (copy.from !== undefined ? [copy.from] : copy.pieces.map((_, piece) => piece)).map((piece) => ({ piece, casing: -1, offset: 0 }));
  return before.flatMap((p) => (p.casing >= 0 ? [p] : (copy.pieces[p.piece] ?? []).map((_, casing) => ({ piece: p.piece, casing, offset: 0 }))));
}

/** Where the copy stands after emitting `token`: past it in every casing that has it there. */
function copyNext(copy: CopyState, token: number): CopyAt[] {
  return copyOptions(copy)
    .filter((p) => copy.pieces[p.piece]![p.casing]![p.offset] === token)
    .map((p) => (p.offset + 1 === copy.pieces[p.piece]![p.casing]!.length ? { piece: p.piece + 1, casing: -1, offset: 0 } : { ...p, offset: p.offset + 1 }));
}
