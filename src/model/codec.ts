/**
 * Chain-of-action codec: turns Auto-UI's inputs (goal + previous actions) and targets (action plan +
 * current action) into token ids and back.
 *
 * Id layout: text ids [0, T) belong to the tokenizer (T = tokenizer.vocabSize); the codec's special
 * tokens follow, so any text tokenizer works and the model's vocabulary is `codec.vocabSize`:
 *   T+0..T+6   action types <TYPE> <DUAL_POINT> <PRESS_BACK> <PRESS_HOME> <PRESS_ENTER> <COMPLETE> <IMPOSSIBLE>
 *   T+7 <plan> · T+8 <act> · T+9 <hist>
 *   T+10 ..    <y_0> .. <y_Q>      (Q = coordBins; <y_b> stands for y = b / Q)
 *   then       <x_0> .. <x_Q>
 *   then       <as-written> <lower> <capitalised> <free>   (with caseModes: how a TYPE action's text is cased)
 *
 * Input:  goal-text <hist> { type [ty tx ly lx if DUAL_POINT] [text if TYPE] }* <eos>
 * Target: <plan> type{1..maxPlan} <act> type [ty tx ly lx if DUAL_POINT] [[case] text if TYPE] <eos>
 * Text needs no closing token: text ids are all < T and every following token is special (≥ T) or eos.
 *
 * Coordinates are quantised to the grid b / Q (round to nearest), so the error is at most half a
 * step per axis; the scroll fixed points 0.2 / 0.5 / 0.8 lie on the grid when Q is a multiple of 10.
 */
import { normalizeAction } from '../data/normalize.js';
import { ActionType, isActionTypeId, type ActionTypeId, type AitwAction, type YX } from '../data/types.js';
import { InputError } from '../util/errors.js';
import { capitalise, splitPieces, tokenString, tokenizerFromJSON, type TextTokenizer, type TokenizerJSON } from './tokenizer.js';

export interface CodecConfig {
  /** Grid steps per axis: coordinates become b / coordBins, b = 0..coordBins (coordBins + 1 tokens per axis). */
  coordBins: number;
  /** Previous actions kept in the input, newest kept first when truncating. */
  maxHistory: number;
  /** Action types in the target plan (current action first). */
  maxPlan: number;
  /** Input length including eos. */
  maxInputTokens: number;
  /** Target length including eos. */
  maxTargetTokens: number;
  /**
   * Typed text is copied from the goal: a TYPE target that appears in the goal is encoded as the
   * goal's own tokens for that span, and decoding may only emit spans of the goal (constrained.ts),
   * so the text comes out character for character, unseen words included.
   */
  copyText: boolean;
  /**
   * With copyText, a TYPE target's text starts with one case token: the text is a run of the goal's
   * pieces, as written, lower-cased or Capitalised word by word (the run's own ids follow, as the goal
   * spells them), or <free>, text the goal does not hold, written from the vocabulary. Why: how a user
   * cases a name ("Hulu" for "install hulu app", "weather in seoul" for "… in Seoul?") is one decision
   * for the whole text, taught by every TYPE example, where a casing per word left it to whichever
   * word-level variant the copy favoured ("amazon Shopping"), and a run of the goal was typed where the
   * goal holds no run at all ("costco, open the …" for "costco.com"). Off by default (`train
   * --case-tokens` turns it on): on three seeds it moved the measures it was judged on both ways.
   */
  caseModes: boolean;
}

export const DEFAULT_CODEC_CONFIG: Readonly<CodecConfig> = {
  coordBins: 100,
  maxHistory: 8,
  maxPlan: 4,
  maxInputTokens: 128,
  maxTargetTokens: 48,
  copyText: true,
  caseModes: false,
};

export const CODEC_KIND = 'autoui-codec-v1';

export interface CodecJSON {
  kind: typeof CODEC_KIND;
  config: CodecConfig;
  tokenizer: TokenizerJSON;
}

export type DecodedTarget = { ok: true; action: AitwAction; plan: ActionTypeId[] } | { ok: false; error: string };

/** Order of the action-type tokens (ids T+0..T+6). */
export const TYPE_TOKEN_ORDER: readonly ActionTypeId[] = [
  ActionType.TYPE,
  ActionType.DUAL_POINT,
  ActionType.PRESS_BACK,
  ActionType.PRESS_HOME,
  ActionType.PRESS_ENTER,
  ActionType.STATUS_TASK_COMPLETE,
  ActionType.STATUS_TASK_IMPOSSIBLE,
];
const TYPE_TOKEN_NAMES: Readonly<Record<ActionTypeId, string>> = {
  [ActionType.TYPE]: '<TYPE>',
  [ActionType.DUAL_POINT]: '<DUAL_POINT>',
  [ActionType.PRESS_BACK]: '<PRESS_BACK>',
  [ActionType.PRESS_HOME]: '<PRESS_HOME>',
  [ActionType.PRESS_ENTER]: '<PRESS_ENTER>',
  [ActionType.STATUS_TASK_COMPLETE]: '<COMPLETE>',
  [ActionType.STATUS_TASK_IMPOSSIBLE]: '<IMPOSSIBLE>',
};

const UNUSED: YX = [-1, -1];
/** Coordinates a hair outside [0, 1] (float noise in recorded data) are clamped; anything further is an error. */
const COORD_TOLERANCE = 1e-6;

function validateConfig(cfg: CodecConfig, where: string): void {
  const int = (name: keyof CodecConfig, min: number): void => {
    const v = cfg[name];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
      throw new InputError(`must be an integer ≥ ${min}, got ${JSON.stringify(v)}`, `${where}.${name}`);
    }
  };
  int('coordBins', 2);
  int('maxHistory', 0);
  int('maxPlan', 1);
  int('maxInputTokens', 3);
  // The longest non-text target: <plan> + maxPlan types + <act> + type + 4 coordinates + eos.
  int('maxTargetTokens', cfg.maxPlan + 8);
  for (const flag of ['copyText', 'caseModes'] as const) {
    if (typeof cfg[flag] !== 'boolean') throw new InputError(`must be a boolean, got ${JSON.stringify(cfg[flag])}`, `${where}.${flag}`);
  }
}

function checkCoordinate(p: YX, axis: 0 | 1, where: string): number {
  const v: unknown = Array.isArray(p) ? p[axis] : undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < -COORD_TOLERANCE || v > 1 + COORD_TOLERANCE) {
    throw new InputError(`coordinate must be a number in [0, 1], got ${JSON.stringify(v)}`, `${where}[${axis}]`);
  }
  return v;
}

export class ActionCodec {
  readonly tokenizer: TextTokenizer;
  readonly config: Readonly<CodecConfig>;
  readonly vocabSize: number;
  /** First codec id (= tokenizer.vocabSize). */
  readonly specialBase: number;
  readonly planId: number;
  readonly actId: number;
  readonly histId: number;
  /** Id of <y_0>; <y_b> = yBase + b. */
  readonly yBase: number;
  /** Id of <x_0>; <x_b> = xBase + b. */
  readonly xBase: number;
  /** Id of the first case token (TEXT_CASES order); only meaningful with caseModes. */
  readonly caseBase: number;
  private readonly typeIds: Readonly<Record<ActionTypeId, number>>;

  constructor(tokenizer: TextTokenizer, cfg: Partial<CodecConfig> = {}) {
    const config: CodecConfig = { ...DEFAULT_CODEC_CONFIG, ...cfg };
    validateConfig(config, 'codec.config');
    this.tokenizer = tokenizer;
    this.config = Object.freeze(config);
    const t = tokenizer.vocabSize;
    this.specialBase = t;
    this.typeIds = Object.fromEntries(TYPE_TOKEN_ORDER.map((type, i) => [type, t + i])) as Record<ActionTypeId, number>;
    this.planId = t + 7;
    this.actId = t + 8;
    this.histId = t + 9;
    this.yBase = t + 10;
    this.xBase = this.yBase + config.coordBins + 1;
    this.caseBase = this.xBase + config.coordBins + 1;
    this.vocabSize = this.caseBase + (config.caseModes ? TEXT_CASES.length : 0);
  }

  /** Whether TYPE targets start their text with a case token. */
  get casesText(): boolean {
    return this.config.copyText && this.config.caseModes;
  }

  caseId(mode: TextCase): number {
    return this.caseBase + TEXT_CASES.indexOf(mode);
  }

  /** The case a token stands for, if it is a case token of a codec with caseModes. */
  caseOf(id: number): TextCase | undefined {
    return this.casesText && id >= this.caseBase && id < this.vocabSize ? TEXT_CASES[id - this.caseBase] : undefined;
  }

  get eosId(): number {
    return this.tokenizer.eosId;
  }

  typeId(type: ActionTypeId): number {
    return this.typeIds[type];
  }

  /** The action type a token stands for, if it is a type token. */
  typeOf(id: number): ActionTypeId | undefined {
    const k = id - this.specialBase;
    return k >= 0 && k < TYPE_TOKEN_ORDER.length ? TYPE_TOKEN_ORDER[k] : undefined;
  }

  /**
   * The position of a target whose decoder state writes a tap's first coordinate (its input is the
   * tap's type token): where the tap pointer reads the decoder (model/pointer.ts). −1 when the target's
   * action is not a tap.
   */
  tapStep(target: readonly number[]): number {
    const a = target.indexOf(this.actId);
    if (a < 0 || target[a + 1] !== this.typeIds[ActionType.DUAL_POINT]) return -1;
    const [ty, tx, ly, lx] = target.slice(a + 2, a + 6);
    return ty === ly && tx === lx ? a + 2 : -1;
  }

  /**
   * The positions of a target whose labels are a TYPE action's text or the eos that ends it: the
   * steps where the copy pointer writes (model/copy.ts). Empty when the action is not TYPE.
   */
  textSteps(target: readonly number[]): number[] {
    const a = target.indexOf(this.actId);
    if (a < 0 || target[a + 1] !== this.typeIds[ActionType.TYPE]) return [];
    const first = a + (this.casesText ? 3 : 2); // the case token is the vocabulary's to write
    const end = target.indexOf(this.eosId, first);
    return Array.from({ length: Math.max(0, (end < 0 ? target.length : end + 1) - first) }, (_, k) => first + k);
  }

  /** Whether the next token after `generated` is the first coordinate of a DUAL_POINT action (the step tapStep names). */
  writesPointNext(generated: readonly number[]): boolean {
    const n = generated.length;
    return n >= 2 && generated[n - 2] === this.actId && generated[n - 1] === this.typeIds[ActionType.DUAL_POINT];
  }

  /** Grid index of a normalised coordinate. */
  quantize(v: number): number {
    return Math.round(v * this.config.coordBins);
  }

  dequantize(bin: number): number {
    return bin / this.config.coordBins;
  }

  /** Goal + previous actions (oldest first; only the last maxHistory are used), ending with eos. */
  encodeInput(goal: string, history: readonly AitwAction[]): number[] {
    const goalIds = this.encodeText(goal, 'goal');
    const fixed = goalIds.length + 2; // + <hist> + eos
    if (fixed > this.config.maxInputTokens) {
      throw new InputError(
        `goal is ${goalIds.length} tokens; with <hist> and <eos> that exceeds maxInputTokens ${this.config.maxInputTokens}`,
        'goal',
      );
    }
    const recent = this.config.maxHistory === 0 ? [] : history.slice(-this.config.maxHistory);
    const offset = history.length - recent.length;
    const encoded = recent.map((a, i) => this.encodeRaw(a, `history[${offset + i}]`));
    // Drop whole actions from the oldest end until the input fits.
    let budget = this.config.maxInputTokens - fixed;
    let keepFrom = encoded.length;
    while (keepFrom > 0 && encoded[keepFrom - 1]!.length <= budget) {
      budget -= encoded[keepFrom - 1]!.length;
      keepFrom--;
    }
    return [...goalIds, this.histId, ...encoded.slice(keepFrom).flat(), this.eosId];
  }

  /**
   * Plan (current action's type first; only the first maxPlan are used) then the current action,
   * normalised per the paper before quantisation. With copyText and the episode's goal, typed text
   * that is a span of the goal is encoded as the goal's tokens of that span (goalSpan). Throws
   * InputError when the target exceeds maxTargetTokens.
   */
  encodeTarget(plan: readonly ActionTypeId[], action: AitwAction, goal?: string): number[] {
    if (plan.length === 0) throw new InputError('plan is empty: it must hold at least the current action type', 'plan');
    plan.forEach((t, i) => {
      if (!isActionTypeId(t)) throw new InputError(`not an action type: ${JSON.stringify(t)}`, `plan[${i}]`);
    });
    const ids = [
      this.planId,
      ...plan.slice(0, this.config.maxPlan).map((t) => this.typeIds[t]),
      this.actId,
      ...this.encodeRaw(action, 'action', { goal }),
      this.eosId,
    ];
    if (ids.length > this.config.maxTargetTokens) {
      throw new InputError(
        `target is ${ids.length} tokens, more than maxTargetTokens ${this.config.maxTargetTokens} (typed text too long?)`,
        'action.typed_text',
      );
    }
    return ids;
  }

  /**
   * Validates the raw action (normalisation would silently turn a NaN or off-screen point into a
   * scroll), normalises it per the paper, then encodes it.
   */
  private encodeRaw(a: AitwAction, where: string, target?: { goal?: string }): number[] {
    if (!isActionTypeId(a.action_type)) {
      throw new InputError(`unknown action type ${JSON.stringify(a.action_type)}`, `${where}.action_type`);
    }
    if (a.action_type === ActionType.DUAL_POINT) {
      for (const field of ['touch_yx', 'lift_yx'] as const) {
        for (const axis of [0, 1] as const) checkCoordinate(a[field], axis, `${where}.${field}`);
      }
    }
    return this.encodeAction(normalizeAction(a), where, target);
  }

  /** type [ty tx ly lx] [text]; fields the type does not use are ignored. `target`: the action is a target (of an episode with this goal), not history. */
  private encodeAction(a: AitwAction, where: string, target?: { goal?: string }): number[] {
    const ids = [this.typeIds[a.action_type]];
    if (a.action_type === ActionType.DUAL_POINT) {
      ids.push(
        this.yBase + this.quantizeField(a.touch_yx, 0, `${where}.touch_yx`),
        this.xBase + this.quantizeField(a.touch_yx, 1, `${where}.touch_yx`),
        this.yBase + this.quantizeField(a.lift_yx, 0, `${where}.lift_yx`),
        this.xBase + this.quantizeField(a.lift_yx, 1, `${where}.lift_yx`),
      );
    } else if (a.action_type === ActionType.TYPE && target && this.casesText) {
      const cased = target.goal === undefined ? null : this.casedSpan(target.goal, a.typed_text);
      ids.push(...(cased ? [this.caseId(cased.mode), ...cased.ids] : [this.caseId('free'), ...this.encodeText(a.typed_text, `${where}.typed_text`)]));
    } else if (a.action_type === ActionType.TYPE) {
      const goal = target?.goal;
      const span = this.config.copyText && goal !== undefined ? this.goalSpan(goal, a.typed_text) : null;
      // With copyText, decoding drops one leading space (a copied word's); free text that starts
      // with a space gets one more so it round-trips.
      const free = this.config.copyText && a.typed_text.startsWith(' ') ? ` ${a.typed_text}` : a.typed_text;
      ids.push(...(span ?? this.encodeText(free, `${where}.typed_text`)));
    }
    return ids;
  }

  /**
   * The goal's tokens covering `text` where it occurs in the goal on piece boundaries, each piece
   * in the casing `text` gives it (as written, lower case or Capitalised: copyPieces' variants); a
   * word's attached leading space may come along (decoding drops it). Null when there is no such span.
   */
  goalSpan(goal: string, text: string): number[] | null {
    if (text === '') return null;
    const pieces = this.goalPieces(goal);
    if (!pieces) return null;
    const starts: number[] = [0];
    for (const p of pieces) starts.push(starts[starts.length - 1]! + p.text.length);
    // Case-blind search where lower-casing keeps lengths (it does not for e.g. 'İ'); exact otherwise.
    const blind = goal.toLowerCase().length === goal.length && text.toLowerCase().length === text.length;
    const [hay, needle] = blind ? [goal.toLowerCase(), text.toLowerCase()] : [goal, text];
    for (let idx = hay.indexOf(needle); idx >= 0; idx = hay.indexOf(needle, idx + 1)) {
      const first = starts.includes(idx) ? starts.indexOf(idx) : goal[idx - 1] === ' ' ? starts.indexOf(idx - 1) : -1;
      const last = starts.indexOf(idx + text.length);
      if (first < 0 || last <= first) continue;
      // The goal with the span as typed; each of its pieces must be a casing of the goal's piece.
      const typed = goal.slice(0, idx) + text + goal.slice(idx + text.length);
      const span = pieces.slice(first, last).map((p, k) => ({ p, want: typed.slice(starts[first + k], starts[first + k + 1]) }));
      if (span.every(({ p, want }) => casings(p.text).includes(want))) return span.flatMap(({ want }) => this.tokenizer.encodeText(want));
    }
    return null;
  }

  /**
   * With caseModes: the first run of the goal's whole pieces that spells `text` in a copy case (as
   * written before lower-cased before Capitalised), with the run's ids as the goal spells them; a
   * word's attached leading space may come along (decoding drops it). Null when there is none.
   */
  private casedSpan(goal: string, text: string): { mode: TextCase; ids: number[] } | null {
    const pieces = text === '' ? null : this.goalPieces(goal);
    if (!pieces) return null;
    for (const mode of COPY_CASES) {
      for (let i = 0; i < pieces.length; i++) {
        let run = '';
        for (let j = i; j < pieces.length && run.length <= 2 * text.length; j++) {
          run += pieces[j]!.text;
          if (caseText(mode, run.startsWith(' ') ? run.slice(1) : run) === text) return { mode, ids: pieces.slice(i, j + 1).flatMap((p) => p.ids) };
        }
      }
    }
    return null;
  }

  /**
   * The goal as the copy mechanism reads it: one entry per piece (a word with its leading space, a
   * number, a symbol), holding the piece's ids in each casing a user may type it (as written, lower
   * case, Capitalised; with caseModes only as written, the case token casing the whole text). A name
   * the vocabulary spells in bytes is one piece of many ids, so a copy cannot stop inside it. Where
   * the ids are not the goal's piece-by-piece encoding (possible for tokenizers other than
   * words-v1), every id is a piece of its own, with one casing.
   */
  copyPieces(goalIds: readonly number[]): CopyPiece[] {
    const pieces = this.goalPieces(this.tokenizer.decodeText([...goalIds]));
    if (!pieces || pieces.flatMap((p) => p.ids).join(',') !== goalIds.join(',')) return goalIds.map((id) => [[id]]);
    if (this.config.caseModes) return pieces.map((p) => [p.ids]);
    return pieces.map((p) => casings(p.text).map((t) => (t === p.text ? p.ids : this.tokenizer.encodeText(t))));
  }

  /**
   * Where a typed text's ids come from in the goal, for the copy pointer's position loss: the goal
   * position of each id (−1 for an id a re-cased piece spells differently from the goal) and `end`, the
   * position just after the run (the goal's length when the run ends the goal). The first run of whole
   * pieces (copyPieces' casings) that spells `textIds`; null when none does (the text is not a run of
   * the goal: it is written from the vocabulary).
   */
  copyPositions(goalIds: readonly number[], textIds: readonly number[]): { at: number[]; end: number } | null {
    if (textIds.length === 0) return null;
    const pieces = this.copyPieces(goalIds);
    const offsets = [0];
    for (const p of pieces) offsets.push(offsets[offsets.length - 1]! + p[0]!.length);
    // Depth-first over the casings of pieces j, j + 1, … that spell textIds from k on.
    const walk = (j: number, k: number): number[] | null => {
      if (k === textIds.length) return [j];
      for (const ids of pieces[j] ?? []) {
        if (!ids.every((id, o) => textIds[k + o] === id)) continue;
        const rest = walk(j + 1, k + ids.length);
        if (rest) return [...ids.map((id, o) => (ids.length === pieces[j]![0]!.length && goalIds[offsets[j]! + o] === id ? offsets[j]! + o : -1)), ...rest];
      }
      return null;
    };
    for (let start = 0; start < pieces.length; start++) {
      const found = walk(start, 0);
      if (found) return { at: found.slice(0, -1), end: offsets[found[found.length - 1]!]! };
    }
    return null;
  }

  /**
   * The goal's pieces, each with its ids, encoded one by one exactly as encodeInput encodes the
   * goal (so a run of pieces is a run of the input's own ids), or null where piece-wise encoding
   * differs from the goal's encoding (never for words-v1; possible for other tokenizers).
   */
  private goalPieces(goal: string): Array<{ text: string; ids: number[] }> | null {
    const pieces = splitPieces(goal).map((text) => ({ text, ids: this.tokenizer.encodeText(text) }));
    return pieces.flatMap((p) => p.ids).join(',') === this.tokenizer.encodeText(goal).join(',') ? pieces : null;
  }

  /** The goal's token ids inside an encoded input (everything before <hist>). */
  goalIds(input: ArrayLike<number>): number[] {
    const out: number[] = [];
    for (let i = 0; i < input.length && input[i] !== this.histId && input[i] !== this.eosId; i++) out.push(input[i]!);
    return out;
  }

  /** Tokenizer errors name no field; this names the one at fault. */
  private encodeText(text: string, where: string): number[] {
    if (typeof text !== 'string') throw new InputError(`expected a string, got ${typeof text}`, where);
    try {
      return this.tokenizer.encodeText(text);
    } catch (e) {
      if (e instanceof InputError) throw new InputError(e.message, where);
      throw e;
    }
  }

  private quantizeField(p: YX, axis: 0 | 1, where: string): number {
    return this.quantize(Math.min(1, Math.max(0, checkCoordinate(p, axis, where))));
  }

  /**
   * Strict parse of generated ids up to the first eos (the decoder start token must not be included).
   * Anything off the target grammar is an error; nothing is guessed or repaired.
   */
  decodeTarget(ids: number[]): DecodedTarget {
    const end = ids.indexOf(this.eosId);
    if (end < 0) return { ok: false, error: `no <eos> in ${ids.length} tokens (output truncated?)` };
    for (let i = 0; i < end; i++) {
      const id = ids[i]!;
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        return { ok: false, error: `token ${i}: id ${id} outside the vocabulary [0, ${this.vocabSize})` };
      }
    }
    const bad = (i: number, expected: string): DecodedTarget => ({
      ok: false,
      error: `token ${i}: expected ${expected}, got ${i < end ? this.tokenName(ids[i]!) : '<eos>'}${ids[i] === this.tokenizer.padId ? ' (strip the decoder start token)' : ''}`,
    });
    let i = 0;
    if (ids[i] !== this.planId) return bad(i, '<plan>');
    i++;
    const plan: ActionTypeId[] = [];
    while (i < end && this.typeOf(ids[i]!) !== undefined) plan.push(this.typeOf(ids[i++]!)!);
    if (plan.length === 0) return bad(i, 'an action type');
    if (plan.length > this.config.maxPlan) return { ok: false, error: `plan has ${plan.length} action types, more than maxPlan ${this.config.maxPlan}` };
    if (i >= end || ids[i] !== this.actId) return bad(i, 'an action type or <act>');
    i++;
    const type = i < end ? this.typeOf(ids[i]!) : undefined;
    if (type === undefined) return bad(i, 'an action type');
    i++;
    let touch: YX = [...UNUSED];
    let lift: YX = [...UNUSED];
    let text = '';
    if (type === ActionType.DUAL_POINT) {
      const coords: number[] = [];
      for (const [k, base] of [this.yBase, this.xBase, this.yBase, this.xBase].entries()) {
        const id = ids[i]!;
        if (i >= end || id < base || id > base + this.config.coordBins) {
          return bad(i, `${base === this.yBase ? '<y_*>' : '<x_*>'} (${['touch y', 'touch x', 'lift y', 'lift x'][k]})`);
        }
        coords.push(this.dequantize(id - base));
        i++;
      }
      touch = [coords[0]!, coords[1]!];
      lift = [coords[2]!, coords[3]!];
    } else if (type === ActionType.TYPE) {
      const mode = this.casesText ? this.caseOf(ids[i]!) : undefined;
      if (this.casesText && (i >= end || mode === undefined)) return bad(i, 'a case token');
      if (mode !== undefined) i++;
      const textIds = ids.slice(i, end);
      const j = textIds.findIndex((id) => !this.tokenizer.isTextId(id));
      if (j >= 0) return bad(i + j, 'a text token or <eos>');
      text = this.tokenizer.decodeText(textIds);
      // A copied span may start with the space its first word carries in the goal.
      if (this.config.copyText && mode !== 'free' && text.startsWith(' ')) text = text.slice(1);
      if (mode !== undefined) text = caseText(mode, text);
      i = end;
    }
    if (i < end) return bad(i, '<eos>');
    return { ok: true, plan, action: { action_type: type, touch_yx: touch, lift_yx: lift, typed_text: text } };
  }

  /** Readable name of any id, for logs and tests. */
  tokenName(id: number): string {
    if (id < this.specialBase) return tokenString(this.tokenizer, id);
    const type = this.typeOf(id);
    if (type !== undefined) return TYPE_TOKEN_NAMES[type];
    if (id === this.planId) return '<plan>';
    if (id === this.actId) return '<act>';
    if (id === this.histId) return '<hist>';
    if (id >= this.yBase && id < this.xBase) return `<y_${id - this.yBase}>`;
    if (id >= this.xBase && id < this.caseBase) return `<x_${id - this.xBase}>`;
    const mode = this.caseOf(id);
    if (mode !== undefined) return `<${mode}>`;
    return `<invalid ${id}>`;
  }

  render(ids: number[]): string {
    return ids.map((id) => this.tokenName(id)).join(' ');
  }

  toJSON(): CodecJSON {
    return { kind: CODEC_KIND, config: { ...this.config }, tokenizer: this.tokenizer.toJSON() };
  }

  static fromJSON(j: CodecJSON): ActionCodec {
    if (typeof j !== 'object' || j === null || j.kind !== CODEC_KIND) {
      throw new InputError(`expected kind ${JSON.stringify(CODEC_KIND)}`, 'codec.kind');
    }
    if (typeof j.config !== 'object' || j.config === null) throw new InputError('missing config object', 'codec.config');
    const { coordBins, maxHistory, maxPlan, maxInputTokens, maxTargetTokens } = j.config;
    // Checkpoints written before copyText existed generated typed text freely; before caseModes, cased word by word.
    const config: CodecConfig = { coordBins, maxHistory, maxPlan, maxInputTokens, maxTargetTokens, copyText: j.config.copyText ?? false, caseModes: j.config.caseModes ?? false };
    validateConfig(config, 'codec.config'); // before defaults could mask a missing field
    return new ActionCodec(tokenizerFromJSON(j.tokenizer), config);
  }
}

/** How a TYPE action's text is cased (caseModes): the case tokens' order. */
export const TEXT_CASES = ['as-written', 'lower', 'capitalised', 'free'] as const;
export type TextCase = (typeof TEXT_CASES)[number];
const COPY_CASES: readonly TextCase[] = ['as-written', 'lower', 'capitalised'];

/** `text` in case `mode`: lower-cased, Capitalised word by word (each piece lower-cased, then its first letter upper), or as it is. */
export function caseText(mode: TextCase, text: string): string {
  if (mode === 'lower') return text.toLowerCase();
  if (mode === 'capitalised') return splitPieces(text).map((p) => capitalise(p.toLowerCase())).join('');
  return text;
}

/** A goal piece's ids in each casing the copy mechanism accepts; the first is the piece as written. */
export type CopyPiece = ReadonlyArray<readonly number[]>;

/** A piece as written, lower-cased and Capitalised: the casings typed text may give a goal's word. */
function casings(piece: string): string[] {
  const lower = piece.toLowerCase();
  return [...new Set([piece, lower, capitalise(lower)])].filter((c) => c.length === piece.length);
}
