import * as tf from '@tensorflow/tfjs-core';
import type { Box, UiAnnotations, YX } from '../data/types.js';
import type { ReferringRows } from '../model/autoui.js';
import { queryMatchBatch, tableScreen, type EncodedSplit, type EncodedTexts } from '../model/batch.js';
import { groundingPatches, groundingTexts } from '../model/grounding.js';
import { labels } from '../data/geometry.js';
import { patchTokens, type ScreenLayout } from '../model/pointer.js';
import { patchLayout } from '../screen/vision/encoder.js';
import type { Rng } from '../util/rng.js';

/*
 * Referring phrases: the screen's own text annotations as extra grounding supervision (our
 * addition, training only). AITW annotates every screen with OCR'd text boxes
 * (`image/ui_annotations_text`), so each training screen says where ~10–20 words are — "Walmart"
 * under its icon, "Bluetooth" on its settings row — where the gold action marks one place at
 * most. The referring loss asks the language encoder's tokens for a phrase alone, attending
 * through the same single-head screen attention, to look at that phrase's box: the loss of
 * grounding.ts with the phrase's patches as S. The decoder never sees these rows, and inference
 * reads only the screenshot, as the paper's model does.
 */

export interface ReferringPhrase {
  /** The text, trimmed and lower-cased: phrases with one key name the same thing. */
  key: string;
  /** Token ids of the annotation text (no eos). */
  ids: number[];
  /** Screen tokens (patches, then text items) around every box that carries this text and the icon it labels (a label repeated on screen counts at each place). */
  targets: number[];
}

export interface ReferringOptions {
  /** Phrases longer than this many tokens are skipped (titles and sentences say little about one place). */
  maxTokens: number;
}

export const DEFAULT_REFERRING: Readonly<ReferringOptions> = { maxTokens: 16 };

/** Texts that name something: at least two letters in a row (not clocks, percentages or glyph-only labels). */
const NAMING = /\p{L}\p{L}/u;

/**
 * The untexted box (an icon) that the text box `label` names: one directly above it, horizontally
 * centred on it, as app grids (launchers, drawers, share sheets) lay labels out. Taps land on the
 * icon, and the label's own patches see only its lower edge.
 */
export function labelledIcon(ann: UiAnnotations, label: number): Box | undefined {
  return ann.positions.find((icon, i) => ann.text[i]!.trim() === '' && labels(ann.positions[label]!, icon));
}

/**
 * The referring phrases of one screen: each distinct annotation text (case-insensitive) that names
 * something, with the screen tokens around the centres of all its boxes and of the icons they label:
 * the patches nearby and the text items under those centres. Pure.
 */
export function referringPhrases(ann: UiAnnotations, encode: (text: string) => number[], layout: ScreenLayout, opts: ReferringOptions = DEFAULT_REFERRING): ReferringPhrase[] {
  const P = patchTokens(layout);
  const byKey = new Map<string, { text: string; targets: Set<number> }>();
  const centre = ([y, x, h, w]: Box): YX => [y + h / 2, x + w / 2];
  ann.text.forEach((raw, i) => {
    const text = raw.trim();
    if (!NAMING.test(text)) return;
    const key = text.toLowerCase();
    const entry = byKey.get(key) ?? { text, targets: new Set<number>() };
    const icon = labelledIcon(ann, i);
    for (const box of icon ? [ann.positions[i]!, icon] : [ann.positions[i]!]) {
      for (const p of groundingPatches(centre(box), layout.patches)) entry.targets.add(p);
      for (const t of groundingTexts(centre(box), layout.texts)) entry.targets.add(P + t);
    }
    byKey.set(key, entry);
  });
  const out: ReferringPhrase[] = [];
  for (const [key, { text, targets }] of byKey) {
    const ids = encode(text);
    if (ids.length === 0 || ids.length > opts.maxTokens || targets.size === 0) continue;
    out.push({ key, ids, targets: [...targets].sort((a, b) => a - b) });
  }
  return out;
}

/** The referring phrases of every row of a split loaded with its annotations (none without a patch grid). */
export function tablePhrases(split: EncodedSplit, encode: (text: string) => number[], opts: ReferringOptions = DEFAULT_REFERRING): ReferringPhrase[][] {
  const { table } = split;
  if (!table.annotations) throw new Error('tablePhrases needs a table loaded with its annotations');
  if (!table.encoder.grid) return table.annotations.map(() => []);
  return table.annotations.map((ann, r) => {
    const s = tableScreen(split, r);
    return referringPhrases(ann, encode, { patches: patchLayout(table.encoder, s)!, texts: s.texts?.boxes ?? [] }, opts);
  });
}

/**
 * Referring rows for a batch of screens: up to `perRow` distinct phrases of each, drawn by `rng`;
 * phrase k of screen b at row b·perRow + k (as the referring loss reads them). Screens with fewer
 * phrases leave rows empty (no token, no target), which the loss skips. With `texts` (the screens'
 * text items, padded to `items` in the batch), each phrase's lexical match with its screen's items too.
 */
export function referringBatch(
  phrases: readonly (readonly ReferringPhrase[])[],
  perRow: number,
  screenTokens: number,
  padId: number,
  rng: Rng,
  texts?: { screens: readonly EncodedTexts[]; items: number },
): ReferringRows {
  const drawn = Array.from({ length: perRow * phrases.length }, (): ReferringPhrase | undefined => undefined);
  phrases.forEach((list, b) => rng.sample(list, perRow).forEach((ph, k) => (drawn[b * perRow + k] = ph)));
  const len = Math.max(1, ...drawn.map((ph) => ph?.ids.length ?? 0));
  const ids = new Int32Array(drawn.length * len).fill(padId);
  const mask = new Int32Array(drawn.length * len);
  const targets = new Float32Array(drawn.length * screenTokens);
  drawn.forEach((ph, i) => {
    if (!ph) return;
    ids.set(ph.ids, i * len);
    mask.fill(1, i * len, i * len + ph.ids.length);
    for (const k of ph.targets) targets[i * screenTokens + k] = 1;
  });
  const screenOf = drawn.map((_, i) => Math.floor(i / perRow));
  return {
    inputIds: tf.tensor2d(ids, [drawn.length, len], 'int32'),
    inputMask: tf.tensor2d(mask, [drawn.length, len], 'int32'),
    targets: tf.tensor2d(targets, [drawn.length, screenTokens]),
    ...(texts ? { match: queryMatchBatch(drawn.map((ph) => ph?.key ?? ''), screenOf, texts.screens, texts.items) } : {}),
  };
}
