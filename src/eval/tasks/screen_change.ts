/**
 * Whether an action changed the screen: the share of pixels that differ between the screens before
 * and after it. In the browser a no-op leaves the screenshot bit-identical (Playwright hides the text
 * caret in screenshots, and pages do not animate), while the smallest real change measured in live
 * runs, three letters typed in a small font, moves ~0.02 % of a 1080×2400 screen (one narrow letter
 * ~0.003 %). The threshold sits below one letter. A phone's status bar (its clock) changes on its
 * own; the adb environment has not been measured.
 */
import type { RawImage } from '../../data/types.js';

/** Screens whose changed share is at most this (~26 pixels of 1080×2400) are the same screen. */
export const UNCHANGED_SHARE = 1e-5;

/**
 * A PRESS_BACK that leaves at most this share changed from the screen a tap was taken on came back to
 * it. Not UNCHANGED_SHARE: a page the browser restores recolours the link just visited. In live runs
 * the 36 BACKs that came back changed 0 or 0.3 % of the screen, the 8 that did not 5.5 % and more.
 */
export const RETURNED_SHARE = 0.02;

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
