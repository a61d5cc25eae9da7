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
import { initBackend, type BackendInfo } from '../backend.js';
import { toPixel, type PixelPoint } from '../data/adb_input.js';
import { scrollDirection, type ScrollDirection } from '../data/normalize.js';
import { ACTION_TYPE_NAMES, ActionType, isActionTypeId, type ActionTypeId, type ActionTypeName, type AitwAction, type RawImage, type TypedTextChoice, type TypeProbs, type YX } from '../data/types.js';
import { isTap } from '../data/geometry.js';
import type { ActionCodec, CodecConfig } from '../model/codec.js';
import type { ModelConfig } from '../model/config.js';
import { TargetConstraint } from '../model/constrained.js';
import type { TapSource } from '../model/pointer.js';
import { loadEncoder, sameEncoder, type EncoderInfo, type VisionEncoder } from '../screen/vision/index.js';
import { disposeScreenBatch, encodeTexts, inputBatch, screenBatch, type EncodedTexts } from '../model/batch.js';
import type { ScreenTextMeta } from '../model/checkpoint.js';
import { loadTextReader, parseScreenTexts } from '../screen/text/index.js';
import { parseUiTree } from '../screen/text/ui_tree.js';
import type { ScreenText, TextReader } from '../screen/text/types.js';
import { InputError } from '../util/errors.js';
import { ensembleDecode } from './ensemble.js';
import { requestAvoid } from './avoid.js';
import { DEFAULT_TEXT_BEAMS, DEFAULT_TEXT_START } from './text_beam.js';
import { DEFAULT_MAX_PIXELS, MAX_HISTORY_STEPS, decodeImageBytes, parseAvoid, parseGoal, parseHistory } from './request.js';
import { loadCheckpoints, type LoadedCheckpoint } from './load.js';

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
  | {
      ok: true;
      action: ActionOut;
      plan: ActionTypeName[];
      plan_ids: ActionTypeId[];
      pixels: PixelAction;
      aitw: AitwAction;
      /** The model's probability of each action type as its next action (generate.ts). */
      type_probs: TypeProbs;
      /** A TYPE action's texts the text beam finished, best first with their mean log-probability per token (the first is typed; empty otherwise). */
      typed_text_choices: TypedTextChoice[];
    }
  | { ok: false; error: string };

/** A request that passed validation: decoded pixels and input token ids. */
export interface PreparedRequest {
  image: RawImage;
  /** The goal, and the model's input: the goal and the previous actions as ids. */
  goal: string;
  inputIds: number[];
  /** The screen's texts when the request brought them (annotations, a UI tree); else read from the pixels when the model needs them. */
  texts: ScreenText[] | null;
  /** Actions the answer must not repeat (infer/avoid.ts). */
  avoid: AitwAction[];
  decodeMs: number;
}

export interface PredictInput {
  image: Uint8Array;
  goal: string;
  history?: unknown;
  /** The screen's texts, if the caller has them: [{text, box: [y, x, h, w]}] normalised. */
  texts?: unknown;
  /** Actions the caller saw do nothing on this screen (history form): the answer is none of them. */
  avoid?: unknown;
}

export interface ModelInfo {
  checkpoint: string;
  /** Every checkpoint that answers (the first is `checkpoint`), when more than one does (infer/ensemble.ts). */
  ensemble?: string[];
  model: ModelConfig;
  /** Over every checkpoint that answers. */
  parameters: number;
  codec: CodecConfig;
  encoder: EncoderInfo;
  backend: BackendInfo;
  /** Where decoded taps land (model/pointer.ts), as resolved for this checkpoint. */
  tapFrom: TapSource;
  /** Beam width for a typed text (infer/text_beam.ts; 1 = greedy). */
  textBeams: number;
  /** A copied typed text held to the start the copy pointer picks (infer/text_beam.ts). */
  textStart: boolean;
  /** The text channel (source it was trained with, limits), or null for a pixels-only model. */
  screenText: ScreenTextMeta | null;
  /** How it was trained: the recipe (train/recipes.ts; null for checkpoints that predate recipes), preset or init folder, seed. */
  training: { recipe: string | null; preset: string | null; init: string | null; seed: number | null };
  limits: { maxHistorySteps: number; historyUsed: number; maxPixels: number };
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
  /** Reads screen texts from pixels for checkpoints with a text channel (default: the built-in OCR, loaded on first use). */
  textReader?: TextReader;
  /** Beam width for a typed text (infer/text_beam.ts); default DEFAULT_TEXT_BEAMS, 1 = greedy. */
  textBeams?: number;
  /** A copied typed text held to the start the copy pointer picks (infer/text_beam.ts); default DEFAULT_TEXT_START. */
  textStart?: boolean;
}

function trainingSummary(t: Record<string, unknown>): ModelInfo['training'] {
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return { recipe: str(t.recipe), preset: str(t.preset), init: str(t.init), seed: typeof t.seed === 'number' ? t.seed : null };
}

/** Encoder spec for a checkpoint's encoder id, when it can be found without help. */
function defaultEncoderSpec(info: EncoderInfo, dir: string): string {
  if (info.id.startsWith('builtin')) return 'builtin';
  throw new InputError(`the checkpoint was trained with encoder '${info.id}'; pass --encoder <spec> to load it`, dir);
}

/** One loaded checkpoint (or several answering as one: infer/ensemble.ts) + encoder; predictions for one or many requests at once. */
export class Predictor {
  readonly maxPixels: number;
  private readonly constraint: TargetConstraint;

  private reader: Promise<TextReader> | null;

  private constructor(
    /** The checkpoints that answer; the first is `checkpoint`. */
    readonly members: readonly LoadedCheckpoint[],
    readonly encoder: VisionEncoder,
    readonly backend: BackendInfo,
    maxPixels: number,
    textReader: TextReader | undefined,
    readonly textBeams: number,
    readonly textStart: boolean,
  ) {
    this.constraint = new TargetConstraint(members[0]!.codec);
    this.maxPixels = maxPixels;
    this.reader = textReader ? Promise.resolve(textReader) : null;
  }

  /** The first checkpoint: what the members share (codec, encoder, text channel) is read off it. */
  get checkpoint(): LoadedCheckpoint {
    return this.members[0]!;
  }

  /** The text channel this checkpoint reads (null: pixels only). */
  get screenText(): ScreenTextMeta | null {
    return this.checkpoint.meta.screenText ?? null;
  }

  /** Several directories: checkpoints that answer as one (infer/ensemble.ts; load.ts loadCheckpoints says what they must share). */
  static async load(dirs: string | readonly string[], opts: PredictorOptions = {}): Promise<Predictor> {
    const backend = await initBackend();
    const members = await loadCheckpoints(dirs, { tapFrom: opts.tapFrom });
    const checkpoint = members[0]!;
    const trained = checkpoint.meta.encoder;
    const encoder = await loadEncoder(opts.encoder ?? defaultEncoderSpec(trained, checkpoint.dir));
    if (!sameEncoder(encoder.info, trained)) {
      throw new InputError(`encoder '${encoder.info.id}' (${encoder.info.patches}×${encoder.info.dim}) differs from the one the checkpoint was trained with ('${trained.id}', ${trained.patches}×${trained.dim})`, checkpoint.dir);
    }
    if (trained.dim !== checkpoint.model.config.screenDim) {
      throw new InputError(`encoder dim ${trained.dim} differs from the model's screenDim ${checkpoint.model.config.screenDim}`, checkpoint.dir);
    }
    return new Predictor(members, encoder, backend, opts.maxPixels ?? DEFAULT_MAX_PIXELS, opts.textReader, opts.textBeams ?? DEFAULT_TEXT_BEAMS, opts.textStart ?? DEFAULT_TEXT_START);
  }

  get codec(): ActionCodec {
    return this.checkpoint.codec;
  }

  info(): ModelInfo {
    return {
      checkpoint: this.checkpoint.dir,
      ...(this.members.length > 1 ? { ensemble: this.members.map((m) => m.dir) } : {}),
      model: this.checkpoint.meta.model,
      parameters: this.members.reduce((n, m) => n + m.model.parameterCount(), 0),
      codec: { ...this.codec.config },
      encoder: this.encoder.info,
      backend: this.backend,
      tapFrom: this.checkpoint.taps,
      textBeams: this.textBeams,
      textStart: this.textStart,
      screenText: this.screenText,
      training: trainingSummary(this.checkpoint.meta.training),
      limits: { maxHistorySteps: MAX_HISTORY_STEPS, historyUsed: this.codec.config.maxHistory, maxPixels: this.maxPixels },
    };
  }

  /**
   * Validates and decodes one request; throws InputError naming the field at fault. Screen texts
   * come from `texts` or from `ui_tree` (a uiautomator dump) when the caller has them.
   */
  async prepare(input: { image: Uint8Array; goal: unknown; history?: unknown; texts?: unknown; ui_tree?: unknown; avoid?: unknown }, where = ''): Promise<PreparedRequest> {
    const at = (f: string): string => (where ? `${where} ${f}` : f);
    const { goal, inputIds, avoid } = this.parseActions(input, where);
    if (input.texts != null && input.ui_tree != null) throw new InputError("give 'texts' or 'ui_tree', not both", where || 'request');
    if (input.ui_tree != null && typeof input.ui_tree !== 'string') throw new InputError('must be the XML of a uiautomator dump', at('ui_tree'));
    const given = input.texts != null ? parseScreenTexts(input.texts, at('texts')) : null;
    const t0 = performance.now();
    const image = await decodeImageBytes(input.image, at('image'), this.maxPixels);
    const tree = typeof input.ui_tree === 'string' ? parseUiTree(input.ui_tree, image, at('ui_tree')) : null;
    return { image, goal, inputIds, texts: given ?? tree, avoid, decodeMs: performance.now() - t0 };
  }

  /** As prepare, for pixels already decoded (e.g. AITW records, a live environment's screenshot). */
  prepareRaw(input: { image: RawImage; goal: unknown; history?: unknown; texts?: readonly ScreenText[] | null; avoid?: unknown }, where = ''): PreparedRequest {
    return { image: input.image, ...this.parseActions(input, where), texts: input.texts ? [...input.texts] : null, decodeMs: 0 };
  }

  /** A request's goal and history as the model's input ids, and the actions its answer must avoid. */
  private parseActions(input: { goal: unknown; history?: unknown; avoid?: unknown }, where: string): { goal: string; inputIds: number[]; avoid: AitwAction[] } {
    const at = (f: string): string => (where ? `${where} ${f}` : f);
    const goal = parseGoal(input.goal, at('goal'));
    const history = parseHistory(input.history, at('history'));
    let inputIds: number[];
    try {
      inputIds = this.codec.encodeInput(goal, history);
    } catch (e) {
      if (e instanceof InputError && where) throw new InputError(e.message, where);
      throw e;
    }
    return { goal, inputIds, avoid: requestAvoid(history, parseAvoid(input.avoid, at('avoid'))) };
  }

  /** Features (and screen texts) + one batched constrained decode for all rows; results in input order. */
  async predictBatch(rows: readonly PreparedRequest[]): Promise<Array<{ result: PredictionResult; timings: Timings }>> {
    if (rows.length === 0) return [];
    const t0 = performance.now();
    const [feats, texts] = await Promise.all([this.encoder.encode(rows.map((r) => r.image)), this.screenTexts(rows)]);
    const t1 = performance.now();
    const screens = screenBatch(
      rows.map((r, b) => ({ features: feats[b]!, width: r.image.width, height: r.image.height, texts: texts[b]! })),
      this.encoder.info,
      this.codec.tokenizer.padId,
    );
    const inputs = inputBatch(rows.map((r) => r.inputIds), this.codec.tokenizer.padId);
    let gens;
    try {
      gens = ensembleDecode(this.members.map((m) => m.model), this.codec, this.constraint, { ...inputs, ...screens }, {
        taps: this.checkpoint.taps,
        textBeams: this.textBeams,
        textStart: this.textStart,
        avoid: rows.map((r) => r.avoid),
      });
    } finally {
      tf.dispose([inputs.inputIds, inputs.inputMask]);
      disposeScreenBatch(screens);
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
          type_probs: g.typeProbs,
          typed_text_choices: g.textChoices,
        },
      };
    });
  }

  /** One request end to end (no batching). */
  async predict(input: PredictInput): Promise<{ result: PredictionResult; timings: Timings }> {
    const prepared = await this.prepare(input);
    return (await this.predictBatch([prepared]))[0]!;
  }

  /** As predict, for pixels already decoded (prepareRaw). */
  async predictRaw(input: Parameters<Predictor['prepareRaw']>[0], where = ''): Promise<{ result: PredictionResult; timings: Timings }> {
    return (await this.predictBatch([this.prepareRaw(input, where)]))[0]!;
  }

  /** Each row's text items for a text model: the request's own, else read from its pixels; null for pixel-only models. */
  private async screenTexts(rows: readonly PreparedRequest[]): Promise<(EncodedTexts | null)[]> {
    const meta = this.screenText;
    if (!meta) return rows.map(() => null);
    const unread = rows.filter((r) => r.texts === null);
    const read = unread.length > 0 ? await (await this.textReader()).read(unread.map((r) => r.image)) : [];
    const encode = (text: string) => this.codec.tokenizer.encodeText(text);
    const goal = (r: PreparedRequest) => (this.checkpoint.model.config.textMatch ? r.goal : null);
    return rows.map((r) => encodeTexts(r.texts ?? read[unread.indexOf(r)]!, encode, meta, goal(r)));
  }

  private textReader(): Promise<TextReader> {
    return (this.reader ??= loadTextReader());
  }

  dispose(): void {
    for (const m of this.members) m.model.dispose();
    this.encoder.dispose?.();
    void this.reader?.then((r) => r.dispose?.());
  }
}
