/**
 * Recognised lines remembered by their pixels: a line box whose source pixels (and size) were read
 * before gets the text read then, without running the recogniser. The crop the recogniser sees is a
 * function of those pixels alone, so the answer is the one it would give again. Why: the pages of a
 * site and the screens of a scrolled page repeat lines (a header, a navigation bar, a paragraph one
 * swipe further up; about a ninth of the recognition's input on the demo's training sites), and
 * recognition is most of OCR's time.
 */
import { createHash } from 'node:crypto';
import type { RawImage } from '../types.js';
import type { PixelBox } from './ocr_image.js';

/** Lines an OcrReader remembers; the oldest is forgotten first. */
export const REMEMBERED_LINES = 20_000;

/** A key for the RGB pixels of `box` in `rgb` (row by row) and the box's size. */
export function lineKey(rgb: RawImage, box: PixelBox): string {
  const h = createHash('sha1').update(`${box.x1 - box.x0}x${box.y1 - box.y0}:`);
  const stride = rgb.width * rgb.channels;
  for (let y = box.y0; y < box.y1; y++) h.update(rgb.data.subarray(y * stride + box.x0 * rgb.channels, y * stride + box.x1 * rgb.channels));
  return h.digest('base64');
}
