/**
 * Whether an action changed the screen: the share of pixels that differ between the screens before
 * and after it. A no-op leaves a phone's screen as it was, bar a text caret's blink (a few hundred
 * pixels of a 1080×2400 screen, ~0.01 %); the smallest real change a task makes, a switch's knob or
 * one typed letter, moves thousands (~0.1 %). The threshold sits between the two.
 */
import type { RawImage } from '../../data/types.js';

/** Screens whose changed share is at most this are the same screen. */
export const UNCHANGED_SHARE = 3e-4;

/** A channel difference above this counts a pixel as changed (PNG round trips are exact; this ignores dithering). */
const CHANNEL_TOLERANCE = 24;

/** The share of pixels that differ between two screens (1 when their sizes or channel counts differ). */
export function changedShare(a: RawImage, b: RawImage): number {
  if (a.width !== b.width || a.height !== b.height || a.channels !== b.channels) return 1;
  const c = a.channels;
  const pixels = a.width * a.height;
  let changed = 0;
  for (let p = 0; p < pixels; p++) {
    for (let k = 0; k < c; k++) {
      if (Math.abs(a.data[p * c + k]! - b.data[p * c + k]!) > CHANNEL_TOLERANCE) {
        changed++;
        break;
      }
    }
  }
  return pixels ? changed / pixels : 0;
}
