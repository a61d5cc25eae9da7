/**
 * Glyph shape: histograms of local binary patterns (Ojala, Pietikäinen & Mäenpää 2002) over each
 * patch's window, on a grey copy at FINE_PATCH_PX pixels a patch side, so the pattern radius (one
 * pixel) is 1/16 of a patch whatever the screen's resolution. Each pixel's 8 neighbours are marked
 * brighter (first LBP_BINS numbers) or darker (last LBP_BINS) than it by a margin; the uniform
 * patterns (one arc of marked neighbours: an edge, a corner or a line end at one of 8 orientations)
 * get a bin each, the rest share one. Histograms of such micro-shapes tell a star from a disc of the
 * same two colours wherever the icon sits, and a letter's strokes from an icon's outline.
 *
 * Written by hand: it is ~40 lines over a raw grey buffer, and the npm packages that offer LBP
 * work on canvas/ImageData objects or whole-image histograms, not the per-window sums needed here.
 */
import { FINE_PATCH_PX, MAX_FINE_PIXELS } from './geometry.js';
import { SparseBlocks } from './sparse_blocks.js';

/** 57 uniform non-empty patterns (8 orientations × 7 arc lengths, plus all 8) and one "other" bin. */
export const LBP_BINS = 58;
export const LBP_FEATURES = 2 * LBP_BINS;
/**
 * A neighbour counts only beyond 4 % of full scale: about twice the Weber contrast threshold of
 * vision (~2 %), so flat areas, JPEG ringing and resize ripple give no pattern.
 */
const THRESHOLD = Math.ceil(0.04 * 255); // grey levels are integers: 10.2 → 11
/** Histograms are kept per half-patch block, as the colour pairs are. */
const BLOCK = FINE_PATCH_PX / 2;
/** Pattern → bin: uniform patterns (≤ 2 bit changes around the circle) get their own; 0 (no marked neighbour) is dropped (-1). */
export const BIN_OF: Int8Array = (() => {
  const t = new Int8Array(256).fill(LBP_BINS - 1);
  let next = 0;
  for (let c = 1; c < 256; c++) {
    let transitions = 0;
    for (let i = 0; i < 8; i++) if (((c >> i) & 1) !== ((c >> ((i + 1) % 8)) & 1)) transitions++;
    if (transitions <= 2) t[c] = next++;
  }
  t[0] = -1;
  if (next !== LBP_BINS - 1) throw new Error(`uniform LBP count ${next}`);
  return t;
})();
const blocks = new SparseBlocks(Math.ceil(MAX_FINE_PIXELS / (BLOCK * BLOCK)) + 64, LBP_FEATURES, BLOCK);
const window = new Float64Array(LBP_FEATURES);

/** Counts each interior pixel's brighter and darker patterns into its block (`grey`: width × height bytes). */
export function accumulateLbp(grey: Uint8Array, width: number, height: number): void {
  blocks.reset(width, height);
  for (let by = 0; by < height; by += BLOCK) {
    for (let bx = 0; bx < width; bx += BLOCK) {
      const y0 = Math.max(1, by), y1 = Math.min(height - 1, by + BLOCK);
      const x0 = Math.max(1, bx), x1 = Math.min(width - 1, bx + BLOCK);
      if (y0 < y1 && x0 < x1 && !flat(grey, width, x0 - 1, x1 + 1, y0 - 1, y1 + 1)) blockPatterns(grey, width, x0, x1, y0, y1);
    }
  }
}

/** True when [x0, x1) × [y0, y1) spans less than the threshold: then no pixel inside it has a pattern. */
function flat(grey: Uint8Array, width: number, x0: number, x1: number, y0: number, y1: number): boolean {
  let lo = 255;
  let hi = 0;
  for (let y = y0; y < y1; y++) {
    for (let i = y * width + x0, end = y * width + x1; i < end; i++) {
      const v = grey[i]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return hi - lo < THRESHOLD;
}

/** The patterns of the pixels [x0, x1) × [y0, y1), all interior and in one block. */
function blockPatterns(grey: Uint8Array, w: number, x0: number, x1: number, y0: number, y1: number): void {
  const blk = blocks.blockOf(x0, y0);
  for (let y = y0; y < y1; y++) {
    for (let i = y * w + x0, end = y * w + x1; i < end; i++) {
      const c = grey[i]!;
      // Branch-free marks, neighbours clockwise from the top-left (bit k): for integers,
      // n ≥ hi ⇔ (hi − 1 − n) < 0 and n ≤ lo ⇔ (n − lo − 1) < 0, read off the sign bit.
      const hi = c + THRESHOLD - 1;
      const lo = c - THRESHOLD + 1;
      const n0 = grey[i - w - 1]!, n1 = grey[i - w]!, n2 = grey[i - w + 1]!, n3 = grey[i + 1]!;
      const n4 = grey[i + w + 1]!, n5 = grey[i + w]!, n6 = grey[i + w - 1]!, n7 = grey[i - 1]!;
      const up =
        ((hi - n0) >>> 31) | (((hi - n1) >>> 31) << 1) | (((hi - n2) >>> 31) << 2) | (((hi - n3) >>> 31) << 3) |
        (((hi - n4) >>> 31) << 4) | (((hi - n5) >>> 31) << 5) | (((hi - n6) >>> 31) << 6) | (((hi - n7) >>> 31) << 7);
      const down =
        ((n0 - lo) >>> 31) | (((n1 - lo) >>> 31) << 1) | (((n2 - lo) >>> 31) << 2) | (((n3 - lo) >>> 31) << 3) |
        (((n4 - lo) >>> 31) << 4) | (((n5 - lo) >>> 31) << 5) | (((n6 - lo) >>> 31) << 6) | (((n7 - lo) >>> 31) << 7);
      const bu = BIN_OF[up]!;
      if (bu >= 0) blocks.add(blk, bu, 1);
      const bd = BIN_OF[down]!;
      if (bd >= 0) blocks.add(blk, LBP_BINS + bd, 1);
    }
  }
}

/** The pattern histograms of patch (pr, pc)'s window, per pixel, sqrt-compressed as the pairs. */
export function lbpFeatures(pr: number, pc: number, out: Float32Array, o: number): void {
  const inv = 1 / blocks.sumWindow(FINE_PATCH_PX / BLOCK, pr, pc, window);
  for (let k = 0; k < LBP_FEATURES; k++) out[o + k] = Math.sqrt(window[k]! * inv);
}
