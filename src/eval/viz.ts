/**
 * `autoui viz`: AITW episodes as PNG frames, one per step, with the gold action (green) and the
 * predicted one (red) drawn over the screenshot: a tap as a ring, a scroll as an arrow, typed text
 * as a caption, other actions as a label. Predictions come from an eval predictions JSONL (lines
 * {id: "<episode_id>/<step_id>", pred, gold, annotations, plan?}) or are made on the fly from a
 * checkpoint. The overlay is SVG composited by sharp (libvips + librsvg), so no canvas library.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { readAitwEpisodes, expandInputs } from '../data/aitw.js';
import { historyOf } from '../data/normalize.js';
import { ACTION_TYPE_NAMES, ActionType, type ActionTypeId, type AitwAction, type AitwEpisode, type Box, type RawImage } from '../data/types.js';
import { isTap } from '../data/geometry.js';
import { checkActionsMatch } from './action_matching.js';
import { parseScoredItem } from './score_input.js';
import { writeFileAtomic } from '../util/atomic.js';
import { parseJsonLines } from '../util/json.js';
import { InputError } from '../util/errors.js';
import { progress } from '../util/progress.js';
import { parseActionType } from '../data/action_json.js';
import { Predictor } from '../infer/predict.js';

export const GOLD_COLOUR = '#12a150';
export const PRED_COLOUR = '#e62828';

export interface FramePrediction {
  pred: AitwAction | null;
  plan?: ActionTypeId[] | null;
  /** Why pred is null (invalid generation). */
  error?: string;
}

export interface FrameSpec {
  goal: string;
  /** e.g. "episode 123 · step 2/5". */
  title: string;
  gold?: AitwAction;
  prediction?: FramePrediction;
  annotations?: readonly Box[];
}

const xml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** At most n characters, with an ellipsis when cut. */
const clip = (s: string, n: number): string => ([...s].length > n ? [...s].slice(0, n - 1).join('') + '…' : s);

/** SVG drawing of one action on a width×height frame; `slot` offsets labels so gold and prediction do not overlap. */
export function actionSvg(a: AitwAction, width: number, height: number, colour: string, slot: 0 | 1): string {
  const u = Math.min(width, height);
  const fs = Math.max(11, Math.round(u * 0.045));
  const labelY = height * (slot === 0 ? 0.8 : 0.88);
  const text = (t: string, y: number): string =>
    `<text x="${width / 2}" y="${y.toFixed(1)}" text-anchor="middle" font-family="sans-serif" font-weight="bold" font-size="${fs}" fill="${colour}" stroke="#ffffff" stroke-width="${(fs / 5).toFixed(1)}" paint-order="stroke">${xml(t)}</text>`;
  if (a.action_type === ActionType.DUAL_POINT) {
    const [ty, tx] = a.touch_yx;
    const [ly, lx] = a.lift_yx;
    const p = (y: number, x: number): [number, number] => [x * width, y * height];
    const [x1, y1] = p(ty, tx);
    if (isTap(a.touch_yx, a.lift_yx)) {
      const r = u * (slot === 0 ? 0.05 : 0.035);
      return `<circle cx="${x1.toFixed(1)}" cy="${y1.toFixed(1)}" r="${r.toFixed(1)}" fill="${colour}" fill-opacity="0.25" stroke="${colour}" stroke-width="${(u * 0.01).toFixed(1)}"/>` +
        `<circle cx="${x1.toFixed(1)}" cy="${y1.toFixed(1)}" r="${(u * 0.008).toFixed(1)}" fill="${colour}"/>`;
    }
    const [x2, y2] = p(ly, lx);
    const ang = Math.atan2(y2 - y1, x2 - x1);
    const hl = u * 0.06;
    const head = [ang - 0.45, ang + 0.45].map((t) => `${(x2 - hl * Math.cos(t)).toFixed(1)},${(y2 - hl * Math.sin(t)).toFixed(1)}`);
    return `<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" stroke="${colour}" stroke-width="${(u * 0.02).toFixed(1)}" stroke-linecap="round"/>` +
      `<polygon points="${x2.toFixed(1)},${y2.toFixed(1)} ${head.join(' ')}" fill="${colour}"/>`;
  }
  if (a.action_type === ActionType.TYPE) return text(`type “${clip(a.typed_text, 40)}”`, labelY);
  return text(ACTION_TYPE_NAMES[a.action_type], labelY);
}

/** The whole overlay: header (title, goal, legend, match), gold, prediction. Pure. */
export function overlaySvg(spec: FrameSpec, width: number, height: number): string {
  const fs = Math.max(10, Math.round(width * 0.032));
  const lines: Array<[string, string]> = [
    [spec.title, '#ffffff'],
    [`goal: ${clip(spec.goal, Math.floor((width / fs) * 1.7))}`, '#ffffff'],
  ];
  const parts: string[] = [];
  if (spec.gold) parts.push(`<tspan fill="${GOLD_COLOUR}">■ gold ${ACTION_TYPE_NAMES[spec.gold.action_type]}</tspan>`);
  const pred = spec.prediction;
  if (pred) {
    parts.push(pred.pred ? `<tspan fill="${PRED_COLOUR}">■ predicted ${ACTION_TYPE_NAMES[pred.pred.action_type]}</tspan>` : `<tspan fill="${PRED_COLOUR}">■ invalid prediction</tspan>`);
    if (pred.pred && spec.gold) parts.push(checkActionsMatch(pred.pred, spec.gold, spec.annotations ?? []) ? '<tspan fill="#7ee2a8">match</tspan>' : '<tspan fill="#ff9b9b">miss</tspan>');
  }
  const planText = pred?.plan?.length ? `plan: ${pred.plan.map((t) => ACTION_TYPE_NAMES[t]).join(' → ')}` : '';
  const rows = lines.length + (parts.length ? 1 : 0) + (planText ? 1 : 0);
  const band = Math.round(fs * 1.35 * rows + fs * 0.6);
  const out: string[] = [`<rect x="0" y="0" width="${width}" height="${band}" fill="#000000" fill-opacity="0.62"/>`];
  let y = fs * 1.2;
  const row = (content: string, fill = '#ffffff'): void => {
    out.push(`<text x="${(fs * 0.5).toFixed(1)}" y="${y.toFixed(1)}" font-family="sans-serif" font-size="${fs}" fill="${fill}">${content}</text>`);
    y += fs * 1.35;
  };
  for (const [t, fill] of lines) row(xml(t), fill);
  if (parts.length) row(parts.join('  '));
  if (planText) row(xml(clip(planText, Math.floor((width / fs) * 1.8))), '#dddddd');
  if (spec.gold) out.push(actionSvg(spec.gold, width, height, GOLD_COLOUR, 0));
  if (pred?.pred) out.push(actionSvg(pred.pred, width, height, PRED_COLOUR, 1));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${out.join('')}</svg>`;
}

/** The screenshot scaled to `width` (aspect kept) with the overlay drawn; PNG bytes. */
export async function renderFrame(image: RawImage, spec: FrameSpec, width = 540): Promise<Buffer> {
  const w = Math.max(64, Math.min(width, 4096));
  const h = Math.max(1, Math.round((image.height / image.width) * w));
  const base = sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels as 1 | 2 | 3 | 4 } }).resize(w, h, { fit: 'fill' });
  const resized = await base.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return sharp(resized.data, { raw: { width: resized.info.width, height: resized.info.height, channels: resized.info.channels } })
    .composite([{ input: Buffer.from(overlaySvg(spec, w, h)), top: 0, left: 0 }])
    .png()
    .toBuffer();
}

interface FileRecord {
  item: ReturnType<typeof parseScoredItem>;
  plan: ActionTypeId[] | null;
  error?: string;
}

/** Predictions JSONL keyed by id (`<episode_id>/<step_id>`); every bad line is named `file:line`. */
export async function readPredictions(file: string): Promise<Map<string, FileRecord>> {
  const text = await readFile(file, 'utf8').catch((e: Error) => {
    throw new InputError(`cannot read (${e.message})`, file);
  });
  const out = new Map<string, FileRecord>();
  for (const { value: v, where } of parseJsonLines(text, file)) {
    const item = parseScoredItem(v, where);
    const rawPlan = (v as { plan?: unknown }).plan;
    const plan = Array.isArray(rawPlan) ? rawPlan.map((t, k) => parseActionType(t, `${where} plan[${k}]`)) : null;
    const error = typeof (v as { error?: unknown }).error === 'string' ? ((v as { error: string }).error) : undefined;
    out.set(item.id, { item, plan, error });
  }
  return out;
}

export interface VizOptions {
  /** TFRecord files, directories or globs. */
  inputs: string[];
  out: string;
  predictions?: string;
  checkpoint?: string;
  /** Vision encoder spec for --checkpoint (default: the checkpoint's). */
  encoder?: string;
  /** Only these episodes. */
  episodes?: string[];
  /** Episodes rendered at most (default 1). */
  maxEpisodes?: number;
  /** Frame width in pixels (default 540). */
  width?: number;
  quiet?: boolean;
}

export interface VizFrame {
  file: string;
  episodeId: string;
  stepId: number;
  gold: AitwAction;
  pred: AitwAction | null | undefined;
  match: boolean | null;
}

/** Episode ids become directory names: keep them readable but safe. */
export function safeName(id: string): string {
  const s = id.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_').slice(0, 120);
  return s || '_';
}

/** Renders the chosen episodes; returns one entry per frame written. */
export async function renderEpisodes(opts: VizOptions): Promise<{ frames: VizFrame[]; episodes: string[] }> {
  if (opts.predictions && opts.checkpoint) throw new InputError('give --predictions or --checkpoint, not both', 'viz');
  const files = await expandInputs(opts.inputs);
  const preds = opts.predictions ? await readPredictions(opts.predictions) : undefined;
  const predictor = opts.checkpoint ? await Predictor.load(opts.checkpoint, { encoder: opts.encoder }) : undefined;
  const wanted = opts.episodes?.length ? new Set(opts.episodes) : undefined;
  const predictedEpisodes = preds ? new Set([...preds.keys()].map((k) => k.slice(0, k.lastIndexOf('/')))) : undefined;
  const max = opts.maxEpisodes ?? (wanted ? wanted.size : 1);
  const frames: VizFrame[] = [];
  const done: string[] = [];
  const bar = progress({ label: 'viz', total: max, unit: 'episodes', quiet: opts.quiet });
  try {
    for await (const ep of readAitwEpisodes(files)) {
      if (done.length >= max) break;
      if (wanted && !wanted.has(ep.episodeId)) continue;
      // With a predictions file and no explicit choice, show episodes that were predicted.
      if (!wanted && predictedEpisodes && !predictedEpisodes.has(ep.episodeId)) continue;
      frames.push(...(await renderEpisode(ep, opts, preds, predictor)));
      done.push(ep.episodeId);
      bar.tick(1);
    }
  } finally {
    bar.stop();
    predictor?.dispose();
  }
  if (wanted) {
    const missing = [...wanted].filter((id) => !done.includes(id));
    if (missing.length) throw new InputError(`episode(s) not found in the inputs: ${missing.slice(0, 5).join(', ')}`, '--episode');
  }
  if (done.length === 0) throw new InputError(preds ? 'no episode of the inputs appears in the predictions file' : 'the inputs hold no episode', opts.inputs.join(' '));
  return { frames, episodes: done };
}

async function renderEpisode(ep: AitwEpisode, opts: VizOptions, preds: Map<string, FileRecord> | undefined, predictor: Predictor | undefined): Promise<VizFrame[]> {
  const dir = join(opts.out, safeName(ep.episodeId));
  await mkdir(dir, { recursive: true });
  const golds = ep.steps.map((s) => s.action);
  const out: VizFrame[] = [];
  for (const [i, step] of ep.steps.entries()) {
    const id = `${ep.episodeId}/${step.stepId}`;
    let prediction: FramePrediction | undefined;
    let annotations: readonly Box[] = step.annotations.positions;
    if (preds) {
      const rec = preds.get(id);
      if (rec) {
        prediction = { pred: rec.item.pred, plan: rec.plan, error: rec.error };
        if (rec.item.annotations.length) annotations = rec.item.annotations;
      }
    } else if (predictor) {
      const history = historyOf(golds, i, predictor.codec.config.maxHistory);
      const { result } = await predictor.predictRaw({ image: step.image, goal: ep.goal, history }, id);
      prediction = result.ok ? { pred: result.aitw, plan: result.plan_ids } : { pred: null, error: result.error };
    }
    const spec: FrameSpec = { goal: ep.goal, title: `${clip(ep.episodeId, 40)} · step ${step.stepId + 1}/${ep.steps.length}`, gold: step.action, prediction, annotations };
    const file = join(dir, `step_${String(step.stepId).padStart(3, '0')}.png`);
    await writeFileAtomic(file, await renderFrame(step.image, spec, opts.width));
    out.push({
      file,
      episodeId: ep.episodeId,
      stepId: step.stepId,
      gold: step.action,
      pred: prediction?.pred,
      match: prediction?.pred ? checkActionsMatch(prediction.pred, step.action, annotations) : prediction ? false : null,
    });
  }
  return out;
}
