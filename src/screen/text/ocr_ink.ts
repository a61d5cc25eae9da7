/**
 * Where a read line changes ink colour. A link inside a sentence is drawn in another colour than
 * the words around it (every browser's default and every documentation theme we render), and it
 * is a tap target of its own, yet the detector draws one box around the whole row of text. This
 * module finds where along a decoded line the ink changes colour, so the line can be cut there
 * into items (ocr_recognize.ts: splitLine). No library does this: it is a few loops over the
 * line's pixels, with the recogniser's own character spans saying where each character lies.
 */
import type { RawImage } from '../types.js';
import type { PixelBox } from './ocr_image.js';
import type { LineSpan } from './ocr_recognize.js';

export type Rgb = readonly [number, number, number];

/**
 * An ink as its direction from the background in RGB (a unit vector). Anti-aliased edges and thin
 * strokes blend the ink with the background, which shortens the vector but keeps its direction,
 * so one colour measured on a thin "l" and a bold "W" agrees where the RGB values do not.
 */
export type Ink = Rgb;

/**
 * Inks further apart than this angle (degrees) are different colours. Why 6: from the CSS colours of
 * the manuals we render, Sphinx alabaster's text #3E4349 and its links #004B6B are 11.7° apart (the
 * closest link colour to its text), black and that grey 1.4°. A theme that links in grey on grey
 * text (0°) is not cut.
 */
export const INK_ANGLE = 6;

/** Below this contrast with the background (the region's farthest pixel, 0–441), a region holds no ink to measure. */
const MIN_CONTRAST = 64;

/** Pixels at least this share of the farthest pixel's distance from the background are the ink's core (the faintest edges left out). */
const CORE = 0.5;

const norm = (a: Rgb): number => Math.hypot(a[0], a[1], a[2]);

/** The angle between two inks, in degrees. */
export function inkAngle(a: Ink, b: Ink): number {
  const cos = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / Math.max(norm(a) * norm(b), 1e-12);
  return (Math.acos(Math.min(1, Math.max(-1, cos))) * 180) / Math.PI;
}

/** A histogram of 5-bit-a-channel colours, reused between calls (only the bins a call touched are cleared). */
const bins = new Int32Array(1 << 15);

/**
 * The ink of the text in columns [x0, x1) and rows [y0, y1) of an RGB image: the background is the
 * region's most common colour (text covers a small share of its box), the ink the direction of the
 * core pixels from it. Undefined when the region is empty or has no contrast.
 */
export function inkOf(img: RawImage, box: PixelBox): Ink | undefined {
  const x0 = Math.max(0, Math.floor(box.x0)), x1 = Math.min(img.width, Math.ceil(box.x1));
  const y0 = Math.max(0, Math.floor(box.y0)), y1 = Math.min(img.height, Math.ceil(box.y1));
  if (x1 <= x0 || y1 <= y0) return undefined;
  const { data, width, channels } = img;
  const touched: number[] = [];
  let bgKey = 0, bgCount = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0, i = (y * width + x0) * channels; x < x1; x++, i += channels) {
      // 5 bits a channel: noise falls in the same bin as its colour.
      const key = ((data[i]! >> 3) << 10) | ((data[i + 1]! >> 3) << 5) | (data[i + 2]! >> 3);
      if (bins[key] === 0) touched.push(key);
      const c = ++bins[key]!;
      if (c > bgCount) [bgKey, bgCount] = [key, c];
    }
  }
  for (const k of touched) bins[k] = 0;
  const br = ((bgKey >> 10) << 3) + 4, bgG = (((bgKey >> 5) & 31) << 3) + 4, bb = ((bgKey & 31) << 3) + 4;
  let far2 = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0, i = (y * width + x0) * channels; x < x1; x++, i += channels) {
      const dr = data[i]! - br, dg = data[i + 1]! - bgG, db = data[i + 2]! - bb;
      far2 = Math.max(far2, dr * dr + dg * dg + db * db);
    }
  }
  if (far2 < MIN_CONTRAST * MIN_CONTRAST) return undefined;
  const core2 = CORE * CORE * far2;
  let sr = 0, sg = 0, sb = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0, i = (y * width + x0) * channels; x < x1; x++, i += channels) {
      const dr = data[i]! - br, dg = data[i + 1]! - bgG, db = data[i + 2]! - bb;
      if (dr * dr + dg * dg + db * db < core2) continue;
      sr += dr;
      sg += dg;
      sb += db;
    }
  }
  const n = Math.hypot(sr, sg, sb);
  return [sr / n, sg / n, sb / n];
}

const isSpace = (c: LineSpan): boolean => c.text.trim() === '';
const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, k) => a + k);

/** Runs of non-space characters: [first, last] indices into `chars`. */
function words(chars: readonly LineSpan[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = -1;
  chars.forEach((c, i) => {
    if (!isSpace(c) && start < 0) start = i;
    if (isSpace(c) && start >= 0) {
      out.push([start, i - 1]);
      start = -1;
    }
  });
  if (start >= 0) out.push([start, chars.length - 1]);
  return out;
}

/**
 * Where a new item starts along a decoded line because the ink changed: indices of the characters
 * that begin a run of another colour. Each character's ink is measured from the middle of the
 * blank before it to the middle of the blank after it (`inkAt(from, to)`, shares of the line's
 * width; the line's first and last characters half their own width beyond their ends). A character
 * alone in its colour inside a word is taken as noise, unless it is a mark at the word's edge (the
 * full stop after a link). Characters whose ink cannot be measured, and spaces, go with the run
 * they sit in.
 */
export function inkBreaks(chars: readonly LineSpan[], inkAt: (from: number, to: number) => Ink | undefined, maxAngle = INK_ANGLE): Set<number> {
  const n = chars.length;
  const inks = chars.map((c, i) => {
    if (isSpace(c)) return undefined;
    const half = (c.to - c.from) / 2;
    return inkAt(i === 0 ? Math.max(0, c.from - half) : (chars[i - 1]!.to + c.from) / 2, i === n - 1 ? Math.min(1, c.to + half) : (c.to + chars[i + 1]!.from) / 2);
  });
  // Colours seen along the line: each character joins the nearest within maxAngle, or starts one
  // (a colour's ink is the sum of its members' directions).
  const colours: Rgb[] = [];
  const label = inks.map((ink) => {
    if (!ink) return -1;
    let best = -1, bestAngle = Infinity;
    colours.forEach((c, j) => {
      const angle = inkAngle(c, ink);
      if (angle <= maxAngle && angle < bestAngle) [best, bestAngle] = [j, angle];
    });
    if (best < 0) return colours.push(ink) - 1;
    colours[best] = [colours[best]![0] + ink[0], colours[best]![1] + ink[1], colours[best]![2] + ink[2]];
    return best;
  });
  // Inside a word, a lone character of another colour than its neighbours is noise (a thin glyph, or
  // a window reaching a table's border), except a mark at the word's end or start (the full stop
  // after a link, the bracket before one).
  for (const [a, b] of words(chars)) {
    const idx = range(a, b + 1).filter((i) => label[i]! >= 0);
    idx.forEach((i, m) => {
      const prev = label[idx[m - 1] ?? -1], next = label[idx[m + 1] ?? -1];
      const lone = label[i] !== prev && label[i] !== next && (prev !== undefined || next !== undefined);
      const edgeMark = (m === 0 || m === idx.length - 1) && !/[\p{L}\p{N}]/u.test(chars[i]!.text);
      if (lone && !edgeMark) label[i] = prev ?? next!;
    });
  }
  const measured = label.map((l, i) => (l >= 0 ? i : -1)).filter((i) => i >= 0);
  const breaks = new Set<number>();
  for (let m = 1; m < measured.length; m++) {
    const [a, i] = [measured[m - 1]!, measured[m]!];
    if (label[i] !== label[a]) breaks.add(i);
  }
  return breaks;
}

/** `inkAt` for a line read from `box` of `img`: a share [from, to] of the box's width, all its rows. */
export function lineInk(img: RawImage, box: PixelBox): (from: number, to: number) => Ink | undefined {
  const w = box.x1 - box.x0;
  return (from, to) => inkOf(img, { x0: box.x0 + from * w, x1: box.x0 + to * w, y0: box.y0, y1: box.y1 });
}
