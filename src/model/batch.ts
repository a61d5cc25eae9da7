/**
 * Rows of a shard table (or a live screenshot) as model inputs: the chain-of-action token sequences
 * (paper §3.2), the screen tokens — patches and, for models that read screen text, the text items —
 * with where each lies on the screen, and the padded tensors the model reads. Shared by training,
 * evaluation and serving, so all three see a screen the same way.
 */
import * as tf from '@tensorflow/tfjs-core';
import { isTapAction } from '../data/geometry.js';
import { historyOf, normalizeAction, planOf } from '../data/normalize.js';
import { actionAt, type ShardTable } from '../data/shards.js';
import type { ActionTypeId, AitwAction, Box } from '../data/types.js';
import type { ScreenText } from '../screen/text/types.js';
import { patchIsReal, patchLayout, type EncoderInfo } from '../screen/vision/encoder.js';
import type { ActionCodec } from './codec.js';
import { groundingLabels, groundingPatches, groundingTexts } from './grounding.js';
import { patchTokens, type ScreenLayout } from './pointer.js';
import { BOX_CODE_DIM, boxCode, type TextItemsBatch } from './screen_text.js';
import { MATCH_DIM, MatchQuery, matchFeatures } from './text_match.js';

/** How much screen text a model reads: items per screen (in reading order) and tokens per item. */
export interface TextLimits {
  maxItems: number;
  maxTokens: number;
}

/**
 * Link texts fit in 8 tokens. With lines cut into items where the ink changes, a text-dense manual
 * page at a phone viewport holds up to ~120 items: 64 keeps all but 2 % of the training sites'
 * screens whole (48 cut 13 %), and on two seeds scored the seen sites' web test higher at the same
 * validation score (README Results: "How many text items a screen gives the model").
 */
export const DEFAULT_TEXT_LIMITS: Readonly<TextLimits> = { maxItems: 64, maxTokens: 8 };

/** One screen's text items as token ids, with their boxes and strings, and their lexical match with the goal. */
export interface EncodedTexts {
  ids: number[][];
  boxes: Box[];
  /** The items' whole strings (the ids may be truncated). */
  strings: string[];
  /** [items, MATCH_DIM] row-major: each item's match with the goal (text_match.ts); absent when no goal was given. */
  match?: Float32Array;
}

/**
 * The text items in reading order (top to bottom, then left to right), capped, each tokenised and
 * truncated, with their match with `goal` when one is given (a MatchQuery lets rows of one goal share it).
 */
export function encodeTexts(items: readonly ScreenText[], encode: (text: string) => number[], limits: TextLimits, goal: string | MatchQuery | null = null): EncodedTexts {
  const sorted = [...items].filter((t) => t.text.trim() !== '').sort((a, b) => a.box[0] - b.box[0] || a.box[1] - b.box[1]);
  const kept = sorted.slice(0, limits.maxItems);
  const strings = kept.map((t) => t.text.trim());
  return {
    ids: strings.map((t) => encode(t).slice(0, limits.maxTokens)),
    boxes: kept.map((t) => t.box),
    strings,
    ...(goal !== null ? { match: matchFeatures(goal, strings) } : {}),
  };
}

/** The same items matched with another goal. */
export function withGoal(texts: EncodedTexts, goal: string): EncodedTexts {
  return { ...texts, match: matchFeatures(goal, texts.strings) };
}

/** One split, tokenised: inputs, chain-of-action targets and (for text models) text items per row. */
export interface EncodedSplit {
  table: ShardTable;
  inputs: number[][];
  targets: number[][];
  /** Per row, for models that read screen text; null otherwise. */
  texts: EncodedTexts[] | null;
}

/** What a row's step is, before tokens: its goal, the previous actions (≤ maxHistory) and the plan (≤ maxPlan types), normalised. */
export interface StepContext {
  goal: string;
  history: AitwAction[];
  plan: ActionTypeId[];
}

export function stepContext(table: ShardTable, row: number, codec: ActionCodec): StepContext {
  const actions = table.episodeActions[row]!.map(normalizeAction);
  const step = table.stepId[row]!;
  return { goal: table.goal[row]!, history: historyOf(actions, step, codec.config.maxHistory), plan: planOf(actions, step, codec.config.maxPlan) };
}

/** Paper §3.2: input = goal + previous actions (≤ 8); target = future plan (≤ 4 types) + the current action. */
export function encodeSplit(table: ShardTable, codec: ActionCodec, textLimits: TextLimits | null = null): EncodedSplit {
  const inputs: number[][] = new Array(table.rows);
  const targets: number[][] = new Array(table.rows);
  for (let i = 0; i < table.rows; i++) {
    const step = stepContext(table, i, codec);
    inputs[i] = codec.encodeInput(step.goal, step.history);
    targets[i] = codec.encodeTarget(step.plan, normalizeAction(actionAt(table, i)), step.goal);
  }
  const encode = (text: string) => codec.tokenizer.encodeText(text);
  const queries = new Map<string, MatchQuery>();
  const query = (goal: string) => queries.get(goal) ?? queries.set(goal, new MatchQuery(goal)).get(goal)!;
  const texts = textLimits && table.texts ? table.texts.map((items, i) => encodeTexts(items, encode, textLimits, query(table.goal[i]!))) : null;
  return { table, inputs, targets, texts };
}

/** Pads a list of id sequences to one length; `fill` marks padding. */
export function padIds(seqs: readonly number[][], fill: number): { ids: Int32Array; len: number } {
  const len = Math.max(1, ...seqs.map((s) => s.length));
  const ids = new Int32Array(seqs.length * len).fill(fill);
  seqs.forEach((s, b) => ids.set(s, b * len));
  return { ids, len };
}

export function inputBatch(inputs: readonly number[][], padId: number): { inputIds: tf.Tensor2D; inputMask: tf.Tensor2D } {
  const { ids, len } = padIds(inputs, padId);
  const mask = new Int32Array(ids.length);
  inputs.forEach((s, b) => mask.fill(1, b * len, b * len + s.length));
  return { inputIds: tf.tensor2d(ids, [inputs.length, len], 'int32'), inputMask: tf.tensor2d(mask, [inputs.length, len], 'int32') };
}

/** [B, L] 1 on each input's goal tokens (codec.goalIds: what a typed text may copy), padded like inputBatch. */
export function goalMaskBatch(inputs: readonly number[][], codec: ActionCodec): tf.Tensor2D {
  const len = Math.max(1, ...inputs.map((s) => s.length));
  const mask = new Int32Array(inputs.length * len);
  inputs.forEach((s, b) => mask.fill(1, b * len, b * len + codec.goalIds(s).length));
  return tf.tensor2d(mask, [inputs.length, len], 'int32');
}

/** What the model reads of one screen: the encoder's features, the screen's size, and its text items (text models). */
export interface ScreenRow {
  features: Float32Array;
  width: number;
  height: number;
  texts: EncodedTexts | null;
}

/** Row r of an encoded split as a ScreenRow (features are a view, not a copy). */
export function tableScreen(split: EncodedSplit, r: number): ScreenRow {
  const t = split.table;
  const size = t.encoder.patches * t.encoder.dim;
  return { features: t.screens.subarray(r * size, (r + 1) * size), width: t.imageWidth[r]!, height: t.imageHeight[r]!, texts: split.texts?.[r] ?? null };
}

/** The screen tensors of a batch, and where each screen token lies (null for grid-less encoders). */
export interface ScreenBatch {
  /** [B, P, D] features; zero for the blind ablation. */
  screen: tf.Tensor3D;
  /** [B, P] 1 on real patches; only for layouts with padding. */
  screenMask?: tf.Tensor2D;
  texts?: TextItemsBatch;
  layouts: ScreenLayout[] | null;
}

/**
 * What the blind ablation takes away: `screen` everything read off the screen (the pixels' features and the text
 * items), `pixels` the features alone (the text items stay).
 */
export type BlindMode = 'screen' | 'pixels';

/** Screens as tensors, with what `blind` names taken away (the ablation). */
export function screenBatch(rows: readonly ScreenRow[], encoder: EncoderInfo, padId: number, blind?: BlindMode): ScreenBatch {
  const { patches, dim } = encoder;
  const data = new Float32Array(rows.length * patches * dim);
  if (!blind) rows.forEach((r, b) => data.set(r.features, b * patches * dim));
  const read = blind === 'screen' ? rows.map((r) => ({ ...r, texts: r.texts && EMPTY_TEXTS })) : rows;
  const layouts = encoder.grid ? read.map((r) => ({ patches: patchLayout(encoder, r)!, texts: r.texts?.boxes ?? [] })) : null;
  const padded = layouts !== null && (encoder.layout ?? 'stretch') !== 'stretch';
  const texts = read.some((r) => r.texts !== null) ? textItemsBatch(read.map((r) => r.texts ?? EMPTY_TEXTS), padId) : undefined;
  return {
    screen: tf.tensor3d(data, [rows.length, patches, dim]),
    ...(padded ? { screenMask: patchMaskBatch(layouts!.map((l) => l.patches), patches) } : {}),
    ...(texts ? { texts } : {}),
    layouts,
  };
}

function patchMaskBatch(layouts: readonly ScreenLayout['patches'][], patches: number): tf.Tensor2D {
  const mask = new Float32Array(layouts.length * patches);
  layouts.forEach((l, b) => {
    for (let p = 0; p < patches; p++) mask[b * patches + p] = patchIsReal(l, p) ? 1 : 0;
  });
  return tf.tensor2d(mask, [layouts.length, patches]);
}

/** A screen with no text items. */
export const EMPTY_TEXTS: EncodedTexts = { ids: [], boxes: [], strings: [], match: new Float32Array(0) };

/** Text items of B screens padded to the batch's most items (at least 1) and longest item; match features when every screen has them. */
export function textItemsBatch(list: readonly EncodedTexts[], padId: number): TextItemsBatch {
  const B = list.length;
  const N = Math.max(1, ...list.map((t) => t.ids.length));
  const T = Math.max(1, ...list.flatMap((t) => t.ids.map((ids) => ids.length)));
  const ids = new Int32Array(B * N * T).fill(padId);
  const tokenMask = new Float32Array(B * N * T);
  const mask = new Float32Array(B * N);
  const boxes = new Float32Array(B * N * BOX_CODE_DIM);
  const match = list.every((t) => t.match) ? new Float32Array(B * N * MATCH_DIM) : null;
  list.forEach((t, b) => {
    match?.set(t.match!, b * N * MATCH_DIM);
    t.ids.forEach((item, n) => {
      const at = (b * N + n) * T;
      ids.set(item, at);
      tokenMask.fill(1, at, at + item.length);
      mask[b * N + n] = 1;
      boxCode(t.boxes[n]!, boxes, (b * N + n) * BOX_CODE_DIM);
    });
  });
  return {
    ids: tf.tensor3d(ids, [B, N, T], 'int32'),
    tokenMask: tf.tensor3d(tokenMask, [B, N, T]),
    mask: tf.tensor2d(mask, [B, N]),
    boxes: tf.tensor3d(boxes, [B, N, BOX_CODE_DIM]),
    ...(match ? { match: tf.tensor3d(match, [B, N, MATCH_DIM]) } : {}),
  };
}

/** [Q, N, MATCH_DIM]: query q's match with the text items of screen `screenOf[q]`, padded to the batch's N items. */
export function queryMatchBatch(queries: readonly string[], screenOf: readonly number[], texts: readonly EncodedTexts[], n: number): tf.Tensor3D {
  const data = new Float32Array(queries.length * n * MATCH_DIM);
  queries.forEach((q, i) => data.set(matchFeatures(q, texts[screenOf[i]!]!.strings), i * n * MATCH_DIM));
  return tf.tensor3d(data, [queries.length, n, MATCH_DIM]);
}

/** Screen tokens of the batch: P patches, then as many text slots as the batch's text tensor has. */
export function screenTokenCount(s: Pick<ScreenBatch, 'screen' | 'texts'>): number {
  return s.screen.shape[1] + (s.texts?.mask.shape[1] ?? 0);
}

/**
 * The screen tokens a tap names, as indices into [patches ; texts]: patches within `radius` patches
 * of it (groundingPatches), text items under it, and the label of an icon under it (`icons`: the
 * screen's untexted boxes).
 */
export function tapTargets(tap: AitwAction, layout: ScreenLayout, icons: readonly Box[] = [], radius = 1): number[] {
  if (!isTapAction(tap)) return [];
  const P = patchTokens(layout);
  const texts = new Set([...groundingTexts(tap.touch_yx, layout.texts), ...groundingLabels(tap.touch_yx, icons, layout.texts)]);
  return [...groundingPatches(tap.touch_yx, layout.patches, radius), ...[...texts].map((i) => P + i)];
}

/** [B, S] grounding targets: 1 on the screen tokens around each gold tap (tapTargets), rows of other actions all 0; `icons[b]`: screen b's untexted boxes. */
export function groundTargetBatch(actions: readonly AitwAction[], screens: ScreenBatch, icons: readonly (readonly Box[])[] = [], radius = 1): tf.Tensor2D {
  const S = screenTokenCount(screens);
  const data = new Float32Array(actions.length * S);
  actions.forEach((a, b) => {
    for (const k of tapTargets(a, screens.layouts![b]!, icons[b], radius)) data[b * S + k] = 1;
  });
  return tf.tensor2d(data, [actions.length, S]);
}

export function disposeScreenBatch(s: ScreenBatch): void {
  tf.dispose([s.screen, ...(s.screenMask ? [s.screenMask] : []), ...(s.texts ? Object.values(s.texts) : [])]);
}
