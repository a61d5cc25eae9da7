/**
 * What a prediction request may contain, validated before it reaches the model: the goal, the
 * history of actions (data/action_json.ts), and the screenshot as bytes (raw body part, base64 or a
 * data: URL) decoded to pixels under a size limit. Every error names the field at fault, so a bad
 * request fails alone and never poisons a batch.
 */
import type { FastifyRequest } from 'fastify';
import sharp from 'sharp';
import { describeValue, isJsonObject, parseAction } from '../data/action_json.js';
import { sniffImage } from '../data/image.js';
import type { AitwAction, RawImage } from '../data/types.js';
import { InputError } from '../util/errors.js';

/**
 * History steps accepted per request. The model reads only the last `codec.config.maxHistory` (8 in
 * the paper); longer lists are allowed so clients can send a whole episode, but capped so a request
 * cannot make us validate an unbounded list.
 */
export const MAX_HISTORY_STEPS = 64;
/** Decoded image size limit: 24 MP covers phone screenshots (≤ 5 MP) and 6K desktops; a 50 MP bomb is refused before decoding. */
export const DEFAULT_MAX_PIXELS = 24_000_000;
/** Goal length limit in characters (the codec also limits tokens). */
export const MAX_GOAL_CHARS = 4000;

/** An InputError that an HTTP server should answer with a specific status (e.g. 413). */
export class LimitError extends InputError {
  override name = 'LimitError';
  readonly status = 413;
}

/** The previous actions of the episode, oldest first; undefined/null = none. */
export function parseHistory(v: unknown, where = 'history'): AitwAction[] {
  return parseActions(v, where, 'history steps', ` (only the last few are used; send at most ${MAX_HISTORY_STEPS})`);
}

/** The actions a request asks the answer not to repeat (infer/avoid.ts); at most MAX_HISTORY_STEPS. */
export function parseAvoid(v: unknown, where = 'avoid'): AitwAction[] {
  return parseActions(v, where, 'actions to avoid', '');
}

function parseActions(v: unknown, where: string, what: string, hint: string): AitwAction[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new InputError(`must be a list of actions, got ${describeValue(v)}`, where);
  if (v.length > MAX_HISTORY_STEPS) throw new InputError(`too many ${what}: ${v.length} > ${MAX_HISTORY_STEPS}${hint}`, where);
  return v.map((a, i) => parseAction(a, `${where}[${i}]`));
}

export function parseGoal(v: unknown, where = 'goal'): string {
  if (typeof v !== 'string') throw new InputError(v === undefined ? 'is missing' : `must be a string, got ${describeValue(v)}`, where);
  if (v.trim() === '') throw new InputError('is empty', where);
  if (v.length > MAX_GOAL_CHARS) throw new InputError(`is ${v.length} characters, more than ${MAX_GOAL_CHARS}`, where);
  return v;
}

/**
 * Decodes PNG/JPEG/WebP bytes to RGB pixels (the same colour handling as the training data:
 * sRGB, alpha dropped). The size is read from the header and checked before any pixel is decoded.
 */
export async function decodeImageBytes(bytes: Uint8Array, where = 'image', maxPixels = DEFAULT_MAX_PIXELS): Promise<RawImage> {
  if (bytes.length === 0) throw new InputError('is empty', where);
  const kind = sniffImage(bytes);
  if (!kind) throw new InputError(`is not a PNG, JPEG or WebP image (${bytes.length} bytes, starting ${Buffer.from(bytes.subarray(0, 8)).toString('hex')})`, where);
  const label = kind.toUpperCase();
  const meta = await sharp(bytes)
    .metadata()
    .catch((err: Error) => {
      throw new InputError(`cannot read the ${label} header (${err.message})`, where);
    });
  const w = meta.width ?? 0;
  const h = meta.height ?? 0;
  if (!(w > 0 && h > 0)) throw new InputError(`${label} has no pixels (${w}×${h})`, where);
  if (w * h > maxPixels) throw new LimitError(`${label} is ${w}×${h} = ${((w * h) / 1e6).toFixed(1)} MP, more than the limit of ${(maxPixels / 1e6).toFixed(1)} MP`, where);
  const out = await sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error' })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch((err: Error) => {
      throw new InputError(`cannot decode the ${label} (${err.message})`, where);
    });
  const { info, data } = out;
  if (info.channels !== 3) throw new InputError(`${label} decoded to ${info.channels} channels, expected RGB`, where);
  return { height: info.height, width: info.width, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]*={0,2}$/;

/** Strict base64 (standard or URL-safe alphabet, whitespace ignored); Buffer.from alone skips bad characters silently. */
export function decodeBase64(s: string, where: string): Uint8Array {
  const clean = s.replace(/\s+/g, '');
  if (clean.length === 0) throw new InputError('is empty', where);
  const url = !BASE64_RE.test(clean);
  if (url && !BASE64URL_RE.test(clean)) throw new InputError('is not valid base64', where);
  if (clean.replace(/=+$/, '').length % 4 === 1) throw new InputError('is not valid base64 (bad length)', where);
  return Buffer.from(clean, url ? 'base64url' : 'base64');
}

/** `data:[<type>];base64,<data>` only: the server never fetches URLs. */
export function decodeDataUrl(s: string, where: string): Uint8Array {
  const m = /^data:([^,]*?),/i.exec(s.slice(0, 256));
  if (!m) throw new InputError(`only data: URLs are accepted (the server fetches nothing), got ${JSON.stringify(s.slice(0, 40))}`, where);
  if (!/;base64$/i.test(m[1]!)) throw new InputError('the data: URL must be base64-encoded (data:image/png;base64,...)', where);
  return decodeBase64(s.slice(m[0].length), where);
}

export interface RawPredictInput {
  image: Uint8Array;
  goal: unknown;
  history: unknown;
  /** The screen's texts, when the caller has them: a list of {text, box}. */
  texts?: unknown;
  /** An Android `uiautomator dump` of the screen (XML), read for its texts. */
  ui_tree?: unknown;
  /** Actions the caller saw do nothing on this screen, which the answer must not repeat (infer/avoid.ts). */
  avoid?: unknown;
}

/** The JSON form: {goal, image (base64) | image_url (data: URL), history?, texts? | ui_tree?, avoid?}. */
export function parseJsonRequest(body: unknown): RawPredictInput {
  if (!isJsonObject(body)) throw new InputError(`the body must be a JSON object, got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}`, 'body');
  const { image, image_url: imageUrl } = body;
  if (image !== undefined && imageUrl !== undefined) throw new InputError("give 'image' or 'image_url', not both", 'body');
  let bytes: Uint8Array;
  if (image !== undefined) {
    if (typeof image !== 'string') throw new InputError(`must be a base64 string, got ${typeof image}`, 'image');
    bytes = image.startsWith('data:') ? decodeDataUrl(image, 'image') : decodeBase64(image, 'image');
  } else if (imageUrl !== undefined) {
    if (typeof imageUrl !== 'string') throw new InputError(`must be a data: URL string, got ${typeof imageUrl}`, 'image_url');
    bytes = decodeDataUrl(imageUrl, 'image_url');
  } else {
    throw new InputError("is missing: send 'image' (base64) or 'image_url' (data: URL)", 'image');
  }
  return { image: bytes, goal: body.goal, history: body.history, texts: body.texts, ui_tree: body.ui_tree, avoid: body.avoid };
}

/** The multipart form: file field `image`, text fields `goal`, `history` (JSON), `texts` (JSON), `ui_tree` (XML) and `avoid` (JSON). */
export async function readMultipart(request: FastifyRequest, fileLimit: number): Promise<RawPredictInput> {
  let image: Uint8Array | undefined;
  const fields: Record<string, string> = {};
  for await (const part of request.parts({ limits: { files: 1, fields: 8, fieldSize: 256 * 1024, fileSize: fileLimit } })) {
    if (part.type === 'file') {
      const buf = await part.toBuffer();
      if (part.fieldname !== 'image') throw new InputError(`unexpected file field '${part.fieldname}' (send the screenshot as 'image')`, 'multipart');
      image = buf;
    } else {
      if (typeof part.value !== 'string') throw new InputError('must be a text field', `multipart field '${part.fieldname}'`);
      fields[part.fieldname] = part.value;
    }
  }
  const rest = { goal: fields.goal, history: jsonField(fields, 'history'), texts: jsonField(fields, 'texts'), ui_tree: fields.ui_tree, avoid: jsonField(fields, 'avoid') };
  if (image) return { image, ...rest };
  if (fields.image !== undefined) return { ...parseJsonRequest({ image: fields.image }), ...rest };
  throw new InputError("is missing: attach the screenshot as file field 'image'", 'image');
}

function jsonField(fields: Record<string, string>, name: string): unknown {
  const v = fields[name];
  if (v === undefined || v.trim() === '') return undefined;
  try {
    return JSON.parse(v);
  } catch (err) {
    throw new InputError(`is not valid JSON (${(err as Error).message})`, name);
  }
}

