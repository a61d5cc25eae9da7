/**
 * The one validator for actions given as JSON — request histories, `autoui score` records, replayed
 * runs: {action_type, touch_yx | touch_point, lift_yx | lift_point, typed_text}.
 * - action_type: an AITW id (4) or name ('DUAL_POINT', any case);
 * - DUAL_POINT needs both points, each [y, x] with numbers in [0, 1] (AITW normalises to the screen);
 *   other types keep [-1, -1] whatever was sent (AITW stores unused points that way);
 * - typed_text: a string when present, kept for TYPE only.
 * Every error names the field, under the caller's `where` (a request field or `file:line pred`).
 */
import { InputError } from '../util/errors.js';
import { ActionType, isActionTypeId, type ActionTypeId, type AitwAction, type YX } from './types.js';

const NAME_TO_ID: ReadonlyMap<string, ActionTypeId> = new Map(Object.entries(ActionType).map(([name, id]) => [name, id]));

export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A short rendering of a bad value for error messages. */
export function describeValue(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** An action type given as its AITW id (4) or name ('DUAL_POINT', any case). */
export function parseActionType(v: unknown, where: string): ActionTypeId {
  if (isActionTypeId(v)) return v;
  if (typeof v === 'string') {
    const id = NAME_TO_ID.get(v.trim().toUpperCase());
    if (id !== undefined) return id;
  }
  throw new InputError(`must be an action type id (3,4,5,6,7,10,11) or name (${Object.keys(ActionType).join(', ')}), got ${describeValue(v)}`, where);
}

function parsePoint(v: unknown, where: string): YX {
  if (!Array.isArray(v) || v.length !== 2 || !v.every((c) => typeof c === 'number' && Number.isFinite(c) && c >= 0 && c <= 1)) {
    throw new InputError(`must be [y, x] with two numbers in [0, 1], got ${describeValue(v)}`, where);
  }
  return [v[0] as number, v[1] as number];
}

export function parseAction(v: unknown, where: string): AitwAction {
  if (!isJsonObject(v)) throw new InputError(`must be an action object, got ${describeValue(v)}`, where);
  const type = parseActionType(v.action_type, `${where}.action_type`);
  const point = (a: 'touch_yx' | 'lift_yx', b: 'touch_point' | 'lift_point'): YX => {
    if (v[a] !== undefined && v[b] !== undefined) throw new InputError(`give ${a} or ${b}, not both`, where);
    if (type !== ActionType.DUAL_POINT) return [-1, -1];
    const key = v[a] !== undefined ? a : b;
    if (v[key] === undefined) throw new InputError(`a DUAL_POINT action needs ${a} (or ${b})`, where);
    return parsePoint(v[key], `${where}.${key}`);
  };
  const text = v.typed_text ?? '';
  if (typeof text !== 'string') throw new InputError(`must be a string, got ${describeValue(text)}`, `${where}.typed_text`);
  return { action_type: type, touch_yx: point('touch_yx', 'touch_point'), lift_yx: point('lift_yx', 'lift_point'), typed_text: type === ActionType.TYPE ? text : '' };
}
