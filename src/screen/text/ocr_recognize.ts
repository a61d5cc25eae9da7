/**
 * Text-line recognition helpers for PP-OCR's CTC recogniser (SVTR-LCNet): the input is a crop
 * resized to height 48 with its aspect kept, normalised to [−1, 1] and padded on the right with 0;
 * the output is each step's best class and its probability, decoded greedily (repeats merged,
 * blanks dropped).
 *
 * Crops can be batched by width (a batch is as wide as its widest crop, the rest padded), but the
 * reader runs them one by one by default: on onnxruntime's CPU kernels a run costs about the same
 * per input column whatever the batch (plus a small cost per run), larger batches get slower per column
 * as their activations leave the cache, and padding changes what a crop reads as, since the
 * recogniser's attention layers see the whole padded width.
 */

/** The recogniser's input height. */
export const REC_HEIGHT = 48;

/** Width of a crop of w×h once resized to REC_HEIGHT high, aspect kept: at least 1 column, at most maxWidth. */
export function recWidth(w: number, h: number, maxWidth: number): number {
  return Math.max(1, Math.min(maxWidth, Math.ceil((REC_HEIGHT * w) / Math.max(h, 1))));
}

export interface BatchPlan {
  /** Indices of the crops in this batch. */
  items: number[];
  /** The batch's padded width: the widest crop's, at least the plan's minimum width. */
  width: number;
}

export interface BatchLimits {
  /** Most crops in one batch. */
  maxBatch: number;
  /** Most input columns (crops × padded width) in one batch; a wider crop runs alone. */
  maxColumns: number;
  /** A batch is closed when the next crop is wider than this times the batch's narrowest. */
  maxSpread: number;
  /** Narrowest padded width (the model was trained on 320-wide inputs; narrower still works). */
  minWidth: number;
}

/** Groups crops (given by their resized widths) into batches of similar width, narrowest first. */
export function planBatches(widths: readonly number[], lim: BatchLimits): BatchPlan[] {
  const order = widths.map((_, i) => i).sort((a, b) => widths[a]! - widths[b]! || a - b);
  const plans: BatchPlan[] = [];
  let cur: number[] = [];
  let lo = 0;
  const close = () => {
    if (cur.length === 0) return;
    const w = Math.max(lim.minWidth, ...cur.map((i) => widths[i]!));
    plans.push({ items: cur, width: w });
    cur = [];
  };
  for (const i of order) {
    const w = Math.max(widths[i]!, lim.minWidth);
    const full = cur.length >= lim.maxBatch || (cur.length + 1) * w > lim.maxColumns;
    if (cur.length > 0 && (full || w > lo * lim.maxSpread)) close();
    if (cur.length === 0) lo = w;
    cur.push(i);
  }
  close();
  return plans;
}

export interface Decoded {
  text: string;
  /** Mean probability of the kept characters (0 when there are none). */
  score: number;
  /** The kept characters in order (they make up `text`), each with the span of steps it was read at. */
  chars: LineSpan[];
}

/** A piece of a line's text (a character, an item) and its extent, as shares [from, to] of the line's width. */
export interface LineSpan {
  text: string;
  from: number;
  to: number;
}

/**
 * Greedy CTC decoding of one line from each step's best class and its probability (the recogniser's
 * outputs, onnx_rewrite.ts: bestPerStep): repeated classes merged, class 0 (blank) dropped. `chars[k]`
 * is class k's text. `width` is the share of the steps the line's crop fills (the rest is padding),
 * so a character read at steps a..b of T spans [a / T, (b + 1) / T] / width of the line.
 */
export function ctcGreedy(classes: ArrayLike<number>, probs: ArrayLike<number>, chars: readonly string[], width = 1): Decoded {
  const kept: LineSpan[] = [];
  const steps = classes.length;
  let sum = 0;
  let prev = -1;
  const share = (t: number) => Math.min(1, t / steps / width);
  for (let t = 0; t < steps; t++) {
    const best = classes[t]!;
    if (best !== 0 && best === prev) kept[kept.length - 1]!.to = share(t + 1);
    else if (best !== 0) {
      kept.push({ text: chars[best] ?? '', from: share(t), to: share(t + 1) });
      sum += probs[t]!;
    }
    prev = best;
  }
  return { text: kept.map((c) => c.text).join(''), score: kept.length > 0 ? sum / kept.length : 0, chars: kept };
}

/** Characters drawn between the items of a navigation bar or breadcrumb, or before a list item (a bullet read as '·', '•' or '。'): never part of an item when they stand alone. */
const SEPARATORS = new Set(['|', '¦', '丨', '»', '›', '》', '〉', '·', '•', '。']);

/**
 * A line cut into the items it shows side by side at each separator standing alone between spaces
 * ("Documentation » Changelog", "next | modules | index"), which is dropped; each part reaches to the
 * middle of the blank on either side (the first and last to the line's ends). Why: the detector draws
 * one box around whatever sits on one row, but a tap target is one of those items, and the model
 * reads each text item with its own box. Blanks alone do not say where to cut: measured on rendered
 * documentation pages, the blank between two links of a navigation table (0.40–0.46 line heights)
 * is as wide as a space between words in running text (0.27–0.42). `breaks` are further places
 * where a new item starts, before the character at each index (where the ink changes: ocr_ink.ts).
 */
export function splitLine(chars: readonly LineSpan[], breaks: ReadonlySet<number> = new Set()): LineSpan[] {
  const isSeparator = (i: number) =>
    SEPARATORS.has(chars[i]!.text) && (i === 0 || chars[i - 1]!.text === ' ') && (i === chars.length - 1 || chars[i + 1]!.text === ' ');
  const parts: LineSpan[] = [];
  let start = 0;
  let from = 0;
  const close = (end: number, to: number) => {
    const text = chars.slice(start, end).map((c) => c.text).join('').trim();
    if (text !== '') parts.push({ text, from, to });
    from = to;
  };
  for (let i = 0; i < chars.length; i++) {
    if (isSeparator(i)) {
      close(i, (chars[i]!.from + chars[i]!.to) / 2);
      start = i + 1;
    } else if (i > start && breaks.has(i)) {
      close(i, (chars[i - 1]!.to + chars[i]!.from) / 2);
      start = i;
    }
  }
  close(chars.length, 1);
  return parts;
}

/** CJK scripts: lines with any of these keep their full-width punctuation, which is correct there. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * A decoded line as shown to the model: spaces collapsed and trimmed, and, in lines without CJK
 * characters, full-width ASCII forms (U+FF01–FF5E, which the Chinese character list holds beside
 * their ASCII twins) mapped to ASCII, since Latin text on screen never uses them.
 */
export function cleanLine(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (CJK.test(t)) return t;
  return t.replace(/[\uff01-\uff5e]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0));
}
