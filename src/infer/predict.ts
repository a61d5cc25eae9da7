/**
 * Next-action prediction from raw inputs: screenshot bytes (PNG/JPEG/WebP, any size) + goal +
 * previous actions → AITW action + plan, in normalised form and in pixels of the given image.
 *
 * Steps per request: decode the image (sharp) → frozen vision features (the checkpoint's encoder)
 * → codec.encodeInput(goal, history) → batched, grammar-constrained greedy decoding with cached
 * keys/values (generate.ts). Everything user-supplied is validated first, so a bad request fails
 * alone with an InputError and never poisons a batch.
 */
import * as tf from '@tensorflow/tfjs-core';
import sharp from 'sharp';
import { initBackend, type BackendInfo } from '../backend.js';
import { toPixel, type PixelPoint } from '../data/adb_input.js';
import { sniffImage } from '../data/image.js';
import { scrollDirection, type ScrollDirection } from '../data/normalize.js';
import { ACTION_TYPE_NAMES, ActionType, isActionTypeId, type ActionTypeId, type ActionTypeName, type AitwAction, type RawImage, type YX } from '../data/types.js';
import { isTap } from '../data/geometry.js';
import type { ActionCodec, CodecConfig } from '../model/codec.js';
import type { ModelConfig } from '../model/config.js';
import { TargetConstraint } from '../model/constrained.js';
import type { TapSource } from '../model/pointer.js';
import { loadEncoder, sameEncoder, type EncoderInfo, type VisionEncoder } from '../screen/vision/index.js';
import { inputBatch } from '../model/batch.js';
import { InputError } from '../util/errors.js';
import { greedyDecode } from './generate.js';
import { loadCheckpoint, type LoadedCheckpoint } from './load.js';

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

export type { PixelPoint } from '../data/adb_input.js';

/** The action as Auto-UI names it, plus how it reads as a gesture. */
export interface ActionOut {
  action_type: ActionTypeName;
  action_type_id: ActionTypeId;
  /** [y, x] in [0, 1]; [-1, -1] when unused. */
  touch_point: YX;
  lift_point: YX;
  typed_text: string;
  /** tap / scroll for DUAL_POINT; otherwise the kind of action. */
  gesture: 'tap' | 'scroll' | 'type' | 'key' | 'status';
  /** Finger direction of a scroll (the gesture, not the content motion). */
  scroll_direction?: ScrollDirection;
}

/** The same action in pixels of the request's image (x right, y down; integers). */
export interface PixelAction {
  width: number;
  height: number;
  touch: PixelPoint | null;
  lift: PixelPoint | null;
}

export interface Timings {
  decode_ms: number;
  features_ms: number;
  model_ms: number;
  /** Rows decoded together with this one. */
  batch_size: number;
}

export type PredictionResult =
  | { ok: true; action: ActionOut; plan: ActionTypeName[]; plan_ids: ActionTypeId[]; pixels: PixelAction; aitw: AitwAction }
  | { ok: false; error: string };

/** A request that passed validation: decoded pixels and input token ids. */
export interface PreparedRequest {
  image: RawImage;
  inputIds: number[];
  decodeMs: number;
}

export interface PredictInput {
  image: Uint8Array;
  goal: string;
  history?: unknown;
}

export interface ModelInfo {
  checkpoint: string;
  model: ModelConfig;
  parameters: number;
  codec: CodecConfig;
  encoder: EncoderInfo;
  backend: BackendInfo;
  /** Where decoded taps land (model/pointer.ts), as resolved for this checkpoint. */
  tapFrom: TapSource;
  limits: { maxHistorySteps: number; historyUsed: number; maxPixels: number };
}

// ---------------------------------------------------------------------------------------------
// Input validation

const NAME_TO_ID: ReadonlyMap<string, ActionTypeId> = new Map(Object.entries(ActionType).map(([name, id]) => [name, id]));

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
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
  throw new InputError(`must be an action type id (3,4,5,6,7,10,11) or name (${Object.keys(ActionType).join(', ')}), got ${describe(v)}`, where);
}

function parsePoint(v: unknown, where: string): YX {
  if (!Array.isArray(v) || v.length !== 2 || !v.every((c) => typeof c === 'number' && Number.isFinite(c) && c >= 0 && c <= 1)) {
    throw new InputError(`must be [y, x] with two numbers in [0, 1], got ${describe(v)}`, where);
  }
  return [v[0] as number, v[1] as number];
}

/** One history action: {action_type: id|name, touch_yx|touch_point, lift_yx|lift_point, typed_text}. */
export function parseHistoryAction(v: unknown, where: string): AitwAction {
  if (!isObject(v)) throw new InputError(`must be an action object, got ${describe(v)}`, where);
  const type = parseActionType(v.action_type, `${where}.action_type`);
  const point = (a: 'touch_yx' | 'lift_yx', b: 'touch_point' | 'lift_point'): YX => {
    if (v[a] !== undefined && v[b] !== undefined) throw new InputError(`give ${a} or ${b}, not both`, where);
    const key = v[a] !== undefined ? a : b;
    if (v[key] === undefined) {
      if (type === ActionType.DUAL_POINT) throw new InputError(`a DUAL_POINT action needs ${a} (or ${b})`, where);
      return [-1, -1];
    }
    // Unused points may be [-1, -1] (how AITW stores them); only DUAL_POINT points must be on screen.
    if (type !== ActionType.DUAL_POINT) return [-1, -1];
    return parsePoint(v[key], `${where}.${key}`);
  };
  const text = v.typed_text ?? '';
  if (typeof text !== 'string') throw new InputError(`must be a string, got ${describe(text)}`, `${where}.typed_text`);
  return { action_type: type, touch_yx: point('touch_yx', 'touch_point'), lift_yx: point('lift_yx', 'lift_point'), typed_text: type === ActionType.TYPE ? text : '' };
}

/** The previous actions of the episode, oldest first; undefined/null = none. */
export function parseHistory(v: unknown, where = 'history'): AitwAction[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new InputError(`must be a list of actions, got ${describe(v)}`, where);
  if (v.length > MAX_HISTORY_STEPS) {
    throw new InputError(`too many history steps: ${v.length} > ${MAX_HISTORY_STEPS} (only the last few are used; send at most ${MAX_HISTORY_STEPS})`, where);
  }
  return v.map((a, i) => parseHistoryAction(a, `${where}[${i}]`));
}

export function parseGoal(v: unknown, where = 'goal'): string {
  if (typeof v !== 'string') throw new InputError(v === undefined ? 'is missing' : `must be a string, got ${describe(v)}`, where);
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

// ---------------------------------------------------------------------------------------------
// Output forms

export { toPixel };

export function describeAction(a: AitwAction): ActionOut {
  const base = { action_type: ACTION_TYPE_NAMES[a.action_type], action_type_id: a.action_type, touch_point: [...a.touch_yx] as YX, lift_point: [...a.lift_yx] as YX, typed_text: a.typed_text };
  switch (a.action_type) {
    case ActionType.DUAL_POINT:
      return isTap(a.touch_yx, a.lift_yx) ? { ...base, gesture: 'tap' } : { ...base, gesture: 'scroll', scroll_direction: scrollDirection(a.touch_yx, a.lift_yx) };
    case ActionType.TYPE:
      return { ...base, gesture: 'type' };
    case ActionType.STATUS_TASK_COMPLETE:
    case ActionType.STATUS_TASK_IMPOSSIBLE:
      return { ...base, gesture: 'status' };
    default:
      return { ...base, gesture: 'key' };
  }
}

export function pixelAction(a: AitwAction, width: number, height: number): PixelAction {
  const dual = a.action_type === ActionType.DUAL_POINT;
  return {
    width,
    height,
    touch: dual ? toPixel(a.touch_yx, width, height) : null,
    lift: dual ? toPixel(a.lift_yx, width, height) : null,
  };
}

// ---------------------------------------------------------------------------------------------
// The predictor

export interface PredictorOptions {
  /** Vision encoder spec (see loadEncoder); default: the one the checkpoint names, when built in. */
  encoder?: string;
  maxPixels?: number;
  /** Where decoded taps land (model/pointer.ts); default auto. */
  tapFrom?: TapSource | 'auto';
}

/** Encoder spec for a checkpoint's encoder id, when it can be found without help. */
function defaultEncoderSpec(info: EncoderInfo, dir: string): string {
  if (info.id.startsWith('builtin')) return 'builtin';
  throw new InputError(`the checkpoint was trained with encoder '${info.id}'; pass --encoder <spec> to load it`, dir);
}

/** One loaded checkpoint + encoder; predictions for one or many requests at once. */
export class Predictor {
  readonly maxPixels: number;
  private readonly constraint: TargetConstraint;

  private constructor(
    readonly checkpoint: LoadedCheckpoint,
    readonly encoder: VisionEncoder,
    readonly backend: BackendInfo,
    maxPixels: number,
  ) {
    this.constraint = new TargetConstraint(checkpoint.codec);
    this.maxPixels = maxPixels;
  }

  static async load(dir: string, opts: PredictorOptions = {}): Promise<Predictor> {
    const backend = await initBackend();
    const checkpoint = await loadCheckpoint(dir, { tapFrom: opts.tapFrom });
    const trained = checkpoint.meta.encoder;
    const encoder = await loadEncoder(opts.encoder ?? defaultEncoderSpec(trained, checkpoint.dir));
    if (!sameEncoder(encoder.info, trained)) {
      throw new InputError(`encoder '${encoder.info.id}' (${encoder.info.patches}×${encoder.info.dim}) differs from the one the checkpoint was trained with ('${trained.id}', ${trained.patches}×${trained.dim})`, checkpoint.dir);
    }
    if (trained.dim !== checkpoint.model.config.screenDim) {
      throw new InputError(`encoder dim ${trained.dim} differs from the model's screenDim ${checkpoint.model.config.screenDim}`, checkpoint.dir);
    }
    return new Predictor(checkpoint, encoder, backend, opts.maxPixels ?? DEFAULT_MAX_PIXELS);
  }

  get codec(): ActionCodec {
    return this.checkpoint.codec;
  }

  info(): ModelInfo {
    return {
      checkpoint: this.checkpoint.dir,
      model: this.checkpoint.meta.model,
      parameters: this.checkpoint.model.parameterCount(),
      codec: { ...this.codec.config },
      encoder: this.encoder.info,
      backend: this.backend,
      tapFrom: this.checkpoint.pointerGrid ? 'attention' : 'tokens',
      limits: { maxHistorySteps: MAX_HISTORY_STEPS, historyUsed: this.codec.config.maxHistory, maxPixels: this.maxPixels },
    };
  }

  /** Validates and decodes one request; throws InputError naming the field at fault. */
  async prepare(input: { image: Uint8Array; goal: unknown; history?: unknown }, where = ''): Promise<PreparedRequest> {
    const inputIds = this.encodeInput(input.goal, input.history, where);
    const t0 = performance.now();
    const image = await decodeImageBytes(input.image, where ? `${where} image` : 'image', this.maxPixels);
    return { image, inputIds, decodeMs: performance.now() - t0 };
  }

  /** As prepare, for pixels already decoded (e.g. AITW records). */
  prepareRaw(input: { image: RawImage; goal: unknown; history?: unknown }, where = ''): PreparedRequest {
    return { image: input.image, inputIds: this.encodeInput(input.goal, input.history, where), decodeMs: 0 };
  }

  private encodeInput(goalIn: unknown, historyIn: unknown, where: string): number[] {
    const at = (f: string): string => (where ? `${where} ${f}` : f);
    const goal = parseGoal(goalIn, at('goal'));
    const history = parseHistory(historyIn, at('history'));
    try {
      return this.codec.encodeInput(goal, history);
    } catch (e) {
      if (e instanceof InputError && where) throw new InputError(e.message, where);
      throw e;
    }
  }

  /** Features + one batched constrained decode for all rows; results in input order. */
  async predictBatch(rows: readonly PreparedRequest[]): Promise<Array<{ result: PredictionResult; timings: Timings }>> {
    if (rows.length === 0) return [];
    const t0 = performance.now();
    const feats = await this.encoder.encode(rows.map((r) => r.image));
    const t1 = performance.now();
    const { patches, dim } = this.encoder.info;
    const screenData = new Float32Array(rows.length * patches * dim);
    feats.forEach((f, b) => screenData.set(f, b * patches * dim));
    const batch = { ...inputBatch(rows.map((r) => r.inputIds), this.codec.tokenizer.padId), screen: tf.tensor3d(screenData, [rows.length, patches, dim]) };
    let gens;
    try {
      gens = greedyDecode(this.checkpoint.model, this.codec, this.constraint, batch, { pointerGrid: this.checkpoint.pointerGrid });
    } finally {
      tf.dispose([batch.inputIds, batch.inputMask, batch.screen]);
    }
    const t2 = performance.now();
    return gens.map((g, b) => {
      const row = rows[b]!;
      const timings: Timings = { decode_ms: row.decodeMs, features_ms: t1 - t0, model_ms: t2 - t1, batch_size: rows.length };
      if (!g.result.ok) return { result: { ok: false as const, error: g.result.error }, timings };
      const { action, plan } = g.result;
      return {
        timings,
        result: {
          ok: true as const,
          action: describeAction(action),
          plan: plan.map((t) => ACTION_TYPE_NAMES[t]),
          plan_ids: plan,
          pixels: pixelAction(action, row.image.width, row.image.height),
          aitw: action,
        },
      };
    });
  }

  /** One request end to end (no batching). */
  async predict(input: PredictInput): Promise<{ result: PredictionResult; timings: Timings }> {
    const prepared = await this.prepare(input);
    return (await this.predictBatch([prepared]))[0]!;
  }

  dispose(): void {
    this.checkpoint.model.dispose();
    this.encoder.dispose?.();
  }
}
