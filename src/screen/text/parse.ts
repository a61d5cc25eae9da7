import { z } from 'zod';
import { InputError } from '../../util/errors.js';
import type { ScreenText } from './types.js';

/** More items than any screen shows: a bound on what one request makes us validate. */
export const MAX_SCREEN_TEXTS = 1000;

const unit = z.number().min(0).max(1);
const Item = z.strictObject({
  text: z.string().max(1000),
  box: z.tuple([unit, unit, unit, unit]),
  score: unit.optional(),
});
const Items = z.array(Item).max(MAX_SCREEN_TEXTS);

/** Screen texts sent by a caller ([{text, box: [y, x, h, w] normalised, score?}]); empty texts are dropped. */
export function parseScreenTexts(value: unknown, where: string): ScreenText[] {
  const r = Items.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const [item, ...field] = issue.path.map(String);
    const at = item === undefined ? '' : `[${item}]${field.map((f) => `.${f}`).join('')}: `;
    throw new InputError(`${at}${issue.message}`, where);
  }
  return r.data.filter((t) => t.text.trim() !== '').map((t) => ({ text: t.text, box: t.box, score: t.score ?? 1 }));
}
