/**
 * Text-line recognition helpers for PP-OCR's CTC recogniser (SVTR-LCNet): the input is a crop
 * resized to height 48 with its aspect kept, normalised to [−1, 1] and padded on the right with 0;
 * the output is [N, T, C] per-step class probabilities, decoded greedily (best class per step,
 * repeats merged, blanks dropped).
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
}

/**
 * Greedy CTC decoding of one item of a [N, T, C] probability tensor: argmax per step, repeated
 * classes merged, class 0 (blank) dropped. `chars[k]` is class k's text.
 */
export function ctcGreedy(probs: Float32Array, n: number, steps: number, classes: number, chars: readonly string[]): Decoded {
  let text = '';
  let sum = 0;
  let kept = 0;
  let prev = -1;
  const base = n * steps * classes;
  for (let t = 0; t < steps; t++) {
    const row = base + t * classes;
    let best = 0;
    let bestP = probs[row]!;
    for (let c = 1; c < classes; c++) {
      const p = probs[row + c]!;
      if (p > bestP) {
        bestP = p;
        best = c;
      }
    }
    if (best !== 0 && best !== prev) {
      text += chars[best] ?? '';
      sum += bestP;
      kept++;
    }
    prev = best;
  }
  return { text, score: kept > 0 ? sum / kept : 0 };
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
