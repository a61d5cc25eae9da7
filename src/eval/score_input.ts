/**
 * Validation of `autoui score` input records (one JSON object per line) into ScoredItems.
 * Every error names the record (`where`, e.g. `preds.jsonl:12`) and the field at fault.
 */
import { isJsonObject as isObject, parseAction } from '../data/action_json.js';
import type { Box } from '../data/types.js';
import { parseJsonLines } from '../util/json.js';
import { InputError } from '../util/errors.js';
import type { ScoredItem } from './metrics.js';

function finiteTuple(v: unknown, len: number): number[] | null {
  if (!Array.isArray(v) || v.length !== len) return null;
  return v.every((x) => typeof x === 'number' && Number.isFinite(x)) ? (v as number[]) : null;
}

/** One input line already parsed from JSON. */
export function parseScoredItem(v: unknown, where: string): ScoredItem {
  if (!isObject(v)) throw new InputError('a record must be a JSON object', where);
  if (typeof v.id !== 'string' || v.id === '') throw new InputError(`'id' must be a non-empty string`, where);
  if (!('pred' in v)) throw new InputError(`'pred' is missing (use null for an invalid generation)`, where);
  const pred = v.pred === null ? null : parseAction(v.pred, `${where} pred`);
  const gold = parseAction(v.gold, `${where} gold`);
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
