/**
 * Validation of `autoui score` input records (one JSON object per line) into ScoredItems.
 * Every error names the record (`where`, e.g. `preds.jsonl:12`) and the field at fault.
 */
import { ActionType, isActionTypeId, type AitwAction, type Box, type YX } from '../data/types.js';
import { parseJsonLines } from '../util/json.js';
import { InputError } from '../util/errors.js';
import type { ScoredItem } from './metrics.js';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function finiteTuple(v: unknown, len: number): number[] | null {
  if (!Array.isArray(v) || v.length !== len) return null;
  return v.every((x) => typeof x === 'number' && Number.isFinite(x)) ? (v as number[]) : null;
}

/**
 * An action object {action_type, touch_yx, lift_yx, typed_text}. Points are required for
 * DUAL_POINT and default to [-1,-1] otherwise; typed_text defaults to "".
 */
export function parseAitwAction(v: unknown, field: string, where: string): AitwAction {
  if (!isObject(v)) throw new InputError(`'${field}' must be an action object`, where);
  const type = v.action_type;
  if (!isActionTypeId(type)) {
    throw new InputError(`'${field}.action_type' must be one of 3,4,5,6,7,10,11, got ${JSON.stringify(type)}`, where);
  }
  const point = (name: 'touch_yx' | 'lift_yx'): YX => {
    const raw = v[name];
    if (raw === undefined && type !== ActionType.DUAL_POINT) return [-1, -1];
    const p = finiteTuple(raw, 2);
    if (!p) throw new InputError(`'${field}.${name}' must be [y, x] with two finite numbers, got ${JSON.stringify(raw)}`, where);
    return [p[0]!, p[1]!];
  };
  const text = v.typed_text ?? '';
  if (typeof text !== 'string') throw new InputError(`'${field}.typed_text' must be a string`, where);
  return { action_type: type, touch_yx: point('touch_yx'), lift_yx: point('lift_yx'), typed_text: text };
}

/** One input line already parsed from JSON. */
export function parseScoredItem(v: unknown, where: string): ScoredItem {
  if (!isObject(v)) throw new InputError('a record must be a JSON object', where);
  if (typeof v.id !== 'string' || v.id === '') throw new InputError(`'id' must be a non-empty string`, where);
  if (!('pred' in v)) throw new InputError(`'pred' is missing (use null for an invalid generation)`, where);
  const pred = v.pred === null ? null : parseAitwAction(v.pred, 'pred', where);
  const gold = parseAitwAction(v.gold, 'gold', where);
  if (!Array.isArray(v.annotations)) throw new InputError(`'annotations' must be an array of [y, x, h, w] boxes`, where);
  const annotations: Box[] = v.annotations.map((b, i) => {
    const box = finiteTuple(b, 4);
    if (!box) throw new InputError(`'annotations[${i}]' must be [y, x, h, w] with four finite numbers, got ${JSON.stringify(b)}`, where);
    return [box[0]!, box[1]!, box[2]!, box[3]!];
  });
  const item: ScoredItem = { id: v.id, pred, gold, annotations };
  if (v.subset !== undefined) {
    if (typeof v.subset !== 'string' || v.subset === '') throw new InputError(`'subset' must be a non-empty string`, where);
    item.subset = v.subset;
  }
  return item;
}

/** Parses a JSONL text (blank lines skipped); `file` names the source in errors as `file:line`. */
export function parseScoreFile(text: string, file: string): ScoredItem[] {
  return parseJsonLines(text, file).map(({ value, where }) => parseScoredItem(value, where));
}
