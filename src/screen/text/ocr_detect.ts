/**
 * Text detection post-processing of DB (Differentiable Binarization, Liao et al. 2020) as PP-OCR
 * runs it: threshold the probability map, take each connected region, score it by the mean
 * probability inside its box, and grow ("unclip") the box by D = A·r / L (A area, L perimeter,
 * r the unclip ratio) because DB is trained to predict text regions shrunk by that distance.
 *
 * Screens carry horizontal text, so every box is axis-aligned: the bounding box of a region stands
 * in for PP-OCR's minimum-area rotated rectangle, and unclipping a rectangle by D grows each side by
 * D (the bounding box of the rounded offset polygon). No direction classifier is run for the same
 * reason.
 *
 * Connected components are labelled here by a flood fill: the map is small (at most a few hundred
 * thousand pixels) and the only library that does it (OpenCV's findContours) would mean shipping an
 * OpenCV build for one call.
 */
import type { PixelBox } from './ocr_image.js';

export interface DbParams {
  /** Probability above which a map pixel is text. */
  threshold: number;
  /** Minimum mean probability inside a region's box. */
  boxThreshold: number;
  /** Growth of the shrunk region back to the text's extent (see header). */
  unclipRatio: number;
  /** Regions whose shorter side is below this many map pixels are noise. */
  minSize: number;
}

/** PP-OCR's defaults for its v4 detector. */
export const DB_DEFAULTS: DbParams = { threshold: 0.3, boxThreshold: 0.6, unclipRatio: 1.5, minSize: 3 };

/** A region's box in map pixels (pixel centres, inclusive), with its score. */
export interface MapBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  score: number;
}

/**
 * The detector's input size: the longer side capped at `limitSide` (never enlarged), each side
 * rounded to a multiple of 32 as the network's strides need.
 */
export function detectionSize(height: number, width: number, limitSide: number): { height: number; width: number } {
  const ratio = Math.max(height, width) > limitSide ? limitSide / Math.max(height, width) : 1;
  const round32 = (v: number) => Math.max(32, Math.round((v * ratio) / 32) * 32);
  return { height: round32(height), width: round32(width) };
}

/** Bounding boxes (inclusive pixel indices) of the 8-connected regions of `mask` (h×w, nonzero = set). */
export function componentBoxes(mask: Uint8Array, width: number, height: number): Array<Omit<MapBox, 'score'>> {
  const seen = new Uint8Array(mask.length);
  const stack = new Int32Array(mask.length);
  const boxes: Array<Omit<MapBox, 'score'>> = [];
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || seen[start]) continue;
    let top = 0;
    stack[top++] = start;
    seen[start] = 1;
    let x0 = width, y0 = height, x1 = -1, y1 = -1;
    while (top > 0) {
      const p = stack[--top]!;
      const px = p % width, py = (p - px) / width;
      if (px < x0) x0 = px;
      if (px > x1) x1 = px;
      if (py < y0) y0 = py;
      if (py > y1) y1 = py;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = py + dy;
        if (ny < 0 || ny >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = px + dx;
          if (nx < 0 || nx >= width) continue;
          const q = ny * width + nx;
          if (mask[q] && !seen[q]) {
            seen[q] = 1;
            stack[top++] = q;
          }
        }
      }
    }
    boxes.push({ x0, y0, x1, y1 });
  }
  return boxes;
}

/** Mean of `prob` over the box's pixels (PP-OCR's "fast" box score). */
export function boxScore(prob: Float32Array, width: number, b: Omit<MapBox, 'score'>): number {
  let sum = 0;
  for (let y = b.y0; y <= b.y1; y++) {
    const row = y * width;
    for (let x = b.x0; x <= b.x1; x++) sum += prob[row + x]!;
  }
  return sum / ((b.x1 - b.x0 + 1) * (b.y1 - b.y0 + 1));
}

/**
 * Grows a box measured between pixel centres (w = x1 − x0, h = y1 − y0) by D = w·h·r / (2(w + h))
 * on each side.
 */
export function unclip(b: MapBox, ratio: number): MapBox {
  const w = b.x1 - b.x0, h = b.y1 - b.y0;
  const d = w + h > 0 ? (w * h * ratio) / (2 * (w + h)) : 0;
  return { x0: b.x0 - d, y0: b.y0 - d, x1: b.x1 + d, y1: b.y1 + d, score: b.score };
}

/** DB boxes of a probability map (h×w), in map coordinates, after thresholding, scoring and unclipping. */
export function dbBoxes(prob: Float32Array, width: number, height: number, p: DbParams): MapBox[] {
  const mask = new Uint8Array(prob.length);
  for (let i = 0; i < prob.length; i++) mask[i] = prob[i]! > p.threshold ? 1 : 0;
  const out: MapBox[] = [];
  for (const c of componentBoxes(mask, width, height)) {
    if (Math.min(c.x1 - c.x0, c.y1 - c.y0) < p.minSize) continue;
    const score = boxScore(prob, width, c);
    if (score < p.boxThreshold) continue;
    const big = unclip({ ...c, score }, p.unclipRatio);
    if (Math.min(big.x1 - big.x0, big.y1 - big.y0) < p.minSize + 2) continue;
    out.push(big);
  }
  return out;
}

/** A map box in the source image's pixels: scaled by the size ratio, rounded outwards, clipped. */
export function toSourceBox(b: MapBox, mapW: number, mapH: number, srcW: number, srcH: number): PixelBox {
  const sx = srcW / mapW, sy = srcH / mapH;
  const clamp = (v: number, hi: number) => Math.min(Math.max(v, 0), hi);
  return {
    x0: clamp(Math.round(b.x0 * sx), srcW),
    y0: clamp(Math.round(b.y0 * sy), srcH),
    x1: clamp(Math.round(b.x1 * sx), srcW),
    y1: clamp(Math.round(b.y1 * sy), srcH),
  };
}

/**
 * The detector sees text best when lines are 15–40 map pixels tall; a screen whose lines came out
 * smaller at the first size (small print, desktop layouts shrunk to a phone) is detected again
 * larger. Returns that second limit, so that the median line becomes `targetHeight` tall (at most
 * the image's own size), or undefined when the first pass is good or cannot be improved.
 */
export function secondPassLimit(heights: readonly number[], limit: number, longSide: number, minHeight: number, targetHeight: number): number | undefined {
  if (heights.length === 0 || longSide <= limit) return undefined;
  const sorted = [...heights].sort((a, b) => a - b);
  const median = sorted[sorted.length >> 1]!;
  if (median >= minHeight) return undefined;
  const next = Math.min(longSide, Math.round((limit * targetHeight) / Math.max(median, 1)));
  return next > limit ? next : undefined;
}
