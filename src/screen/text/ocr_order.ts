/**
 * Reading order of detected lines: top to bottom, and left to right among boxes that share a row.
 * Two boxes share a row when their vertical extents overlap by at least half the shorter one, so a
 * label and its value on one line stay together even when their tops differ by a few pixels.
 */
import type { PixelBox } from './ocr_image.js';

function sameRow(a: PixelBox, b: PixelBox): boolean {
  const overlap = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  return overlap >= 0.5 * Math.min(a.y1 - a.y0, b.y1 - b.y0);
}

/** Indices of `boxes` in reading order. */
export function readingOrder(boxes: readonly PixelBox[]): number[] {
  const byTop = boxes.map((_, i) => i).sort((a, b) => boxes[a]!.y0 - boxes[b]!.y0 || boxes[a]!.x0 - boxes[b]!.x0);
  const out: number[] = [];
  let row: number[] = [];
  const flush = () => {
    row.sort((a, b) => boxes[a]!.x0 - boxes[b]!.x0 || a - b);
    out.push(...row);
    row = [];
  };
  for (const i of byTop) {
    if (row.length > 0 && !sameRow(boxes[row[0]!]!, boxes[i]!)) flush();
    row.push(i);
  }
  flush();
  return out;
}
