import sharp from 'sharp';
import type { RawImage } from '../types.js';
import { InputError } from '../../util/errors.js';
import type { EncoderInfo, VisionEncoder } from './encoder.js';

/**
 * The built-in frozen encoder: no weights, deterministic, fast, and spatial. Auto-UI attends
 * from the goal's words to screen patches and must name the tapped point, so the features
 * must say WHAT is in a patch (colour, glyph shape, text-like texture) and WHERE the patch is
 * (a fixed position code), one vector per patch of a fixed grid.
 *
 * Pipeline: resize any screen to 64×128 (W×H) RGB with libvips (sharp), split it into 8×8-pixel
 * patches (8 cols × 16 rows = 128 patches, row-major, top-left first) and describe each patch
 * with 364 numbers of roughly unit scale; a second, 128×256 grey copy feeds the one group that
 * needs finer detail (glyph shape). Every number but the row context depends only on the pixels
 * of its own patch (the colour pairs and local binary patterns: of a window reaching half a patch
 * further; plus the resize kernel's footprint), so a change on screen changes only the patches at
 * or next to it, and the row context of its row. No random projection: the model's trainable
 * projection W is linear anyway, so a fixed linear mix would add nothing it cannot learn.
 */

/** Resize target: phone screens are ~1:2 (W:H); AITW's 1080×2400 is stretched a little. */
export const BUILTIN_WIDTH = 64;
export const BUILTIN_HEIGHT = 128;
export const BUILTIN_PATCH = 8;
const COLS = BUILTIN_WIDTH / BUILTIN_PATCH;
const ROWS = BUILTIN_HEIGHT / BUILTIN_PATCH;
const PIXELS = BUILTIN_WIDTH * BUILTIN_HEIGHT;

/** Offsets of each feature group inside one patch vector. */
export const BUILTIN_LAYOUT = {
  /** Luminance at 4×4 sub-cells (2×2 px each): the glyph's shape (circle vs triangle vs bar). */
  luma: [0, 16],
  /** Opponent chroma (R−G, then (R+G)/2−B) at 2×2 sub-cells: the icon's identifying colour, at
   *  half the luma resolution as the eye (and JPEG) does — colour varies slowly. */
  chroma: [16, 24],
  /** Edge energy along 4 orientations (0°, 90°, 45°, 135°) in each 2×2 quadrant: separates text
   *  (dense strokes), borders (one orientation) and flat backgrounds (none). */
  edges: [24, 40],
  /** Whole-patch contrast: luma std, chroma std, chroma edge energy (colour-on-colour borders
   *  of equal brightness), luma range. */
  stats: [40, 44],
  /** Fixed position code of the patch centre: linear y, x in [-1, 1] (lets a linear head read
   *  coordinates off directly) and sin/cos at octave frequencies (sharpens attention to nearby
   *  patches): 5 octaves for y (16 rows), 4 for x (8 cols). */
  position: [44, 64],
  /** Soft histogram over 16 named UI colours: makes "which colour is this icon" linearly
   *  separable (opponent chroma alone mixes e.g. teal with green), so a single attention query
   *  can pick an icon by its colour. */
  palette: [64, 80],
  /** Colour pairs: how often palette colour a sits next to colour b, over a 16×16-pixel window
   *  centred on the patch (the patch and half of each neighbour), as the 136 unordered pairs
   *  (a ≤ b). An app icon is a glyph of one colour on a disc of another; a linear score over these
   *  fires on that pair wherever the icon sits relative to the patch grid, where per-patch colour
   *  sums split it across up to four patches. scripts/attention_probe.py (one linear attention,
   *  6,511 demo-set taps): held-out tap matching 74.3 % without them (builtin-v2), 78.9 % with. */
  pairs: [80, 216],
  /** Row context, the one group that looks beyond its window (as a ViT's patch tokens do through
   *  self-attention): the palette histogram of the patch's whole row, then of the row's last two
   *  patches, where list rows keep their switches and checkboxes. The attention that finds a
   *  settings row by its icon then also carries whether that row's switch shows the accent
   *  colour (on) or grey (off), 6 patches away. */
  row: [216, 248],
  /** Glyph shape: histograms of local binary patterns (Ojala et al. 2002) over the same window as
   *  the colour pairs, computed on a 128×256 grey copy, where a launcher glyph is ~10 px instead
   *  of ~5. Each pixel's 8 neighbours are marked brighter (first 58 numbers) or darker (last 58)
   *  than it by a margin; the uniform patterns (one arc of marked neighbours: an edge, a corner or
   *  a line end at one of 8 orientations) get a bin each, the rest share one. Histograms of such
   *  micro-shapes tell a star from a disc of the same two colours wherever the icon sits, where the
   *  4×4 luma grid above only sees a blob. scripts/attention_probe.py (same 6,476 taps): held-out
   *  tap matching 88.4 % without them (builtin-v4), 91.2 % with (launcher misses 88 → 72). */
  lbp: [248, 364],
} as const;

export const BUILTIN_INFO: EncoderInfo = Object.freeze({
  id: 'builtin-v5',
  patches: ROWS * COLS,
  dim: BUILTIN_LAYOUT.lbp[1],
  grid: [ROWS, COLS] as [number, number],
  pooled: false,
});

const DIM = BUILTIN_INFO.dim;
const Y_OCTAVES = 5;
const X_OCTAVES = 4;
/** Gains put typical values near unit scale (measured on synthetic screens and text). */
const EDGE_GAIN = 1.5;
const STD_GAIN = 4;
/** Opponent chroma of saturated UI colours is ~±0.5; doubled so icon colour weighs like luma. */
const CHROMA_GAIN = 2;

/** Position codes depend only on the patch index: computed once. */
const POSITION_TABLE: Float32Array = (() => {
  const [start, end] = BUILTIN_LAYOUT.position;
  const width = end - start;
  const table = new Float32Array(ROWS * COLS * width);
  for (let r = 0; r < ROWS; r++) {
    for (let c = 0; c < COLS; c++) {
      const y = (r + 0.5) / ROWS;
      const x = (c + 0.5) / COLS;
      const o = (r * COLS + c) * width;
      let k = 0;
      table[o + k++] = 2 * y - 1;
      table[o + k++] = 2 * x - 1;
      for (let f = 0; f < Y_OCTAVES; f++) {
        table[o + k++] = Math.sin(Math.PI * 2 ** f * y);
        table[o + k++] = Math.cos(Math.PI * 2 ** f * y);
      }
      for (let f = 0; f < X_OCTAVES; f++) {
        table[o + k++] = Math.sin(Math.PI * 2 ** f * x);
        table[o + k++] = Math.cos(Math.PI * 2 ** f * x);
      }
      if (k !== width) throw new Error(`position code width ${k} ≠ ${width}`);
    }
  }
  return table;
})();

/** The palette (sRGB in [0, 1]): greys plus the hues UI icons and buttons use most. */
const PALETTE: readonly (readonly [number, number, number])[] = [
  [0, 0, 0], [0.25, 0.25, 0.25], [0.5, 0.5, 0.5], [0.75, 0.75, 0.75], [1, 1, 1],
  [0.9, 0.2, 0.2], [1, 0.55, 0], [1, 0.85, 0.2], [0.25, 0.65, 0.25], [0, 0.55, 0.5],
  [0, 0.75, 0.85], [0.12, 0.53, 0.9], [0.22, 0.29, 0.67], [0.56, 0.14, 0.67], [0.85, 0.1, 0.38], [0.43, 0.3, 0.25],
];
/** Width of the soft assignment: neighbouring palette colours share a pixel they both resemble. */
const PALETTE_SIGMA = 0.15;
const PALETTE_GAIN = 2;
const K = PALETTE.length;
/** Pixel distance of a colour pair (right and below), in 64×128 pixels: neighbours (in the probe 1 px beat 2 px: 79 % vs 78 %). */
const PAIR_STEP = 1;
/** Pair statistics are summed over 4×4-pixel blocks first, so each window is 16 block sums. */
const BLOCK = 4;
const BLOCK_ROWS = BUILTIN_HEIGHT / BLOCK;
const BLOCK_COLS = BUILTIN_WIDTH / BLOCK;
/** Memberships below this are dropped from the pair counts (they would only add noise and time). */
const PAIR_MIN_WEIGHT = 0.02;
const PAIRS_PER_PIXEL = 4;
const PAIR_GAIN = 2;

/**
 * Per-block vectors (`width` numbers each, row-major blocks) with the indices of their non-zero
 * entries: most blocks hold a handful of colour pairs or patterns out of hundreds, and every entry
 * is ≥ 0, so summing only the non-zero ones gives the very same sums (adding +0 changes nothing).
 */
class SparseBlocks {
  private readonly values: Float64Array;
  private readonly nonzero: Uint16Array;
  private readonly counts: Uint16Array;

  constructor(
    readonly blockRows: number,
    readonly blockCols: number,
    readonly width: number,
  ) {
    this.values = new Float64Array(blockRows * blockCols * width);
    this.nonzero = new Uint16Array(this.values.length);
    this.counts = new Uint16Array(blockRows * blockCols);
  }

  /** Empties every block. */
  clear(): void {
    this.values.fill(0);
    this.counts.fill(0);
  }

  /** Adds `v` > 0 to entry k of block `blk`, noting the entry the first time it becomes non-zero. */
  add(blk: number, k: number, v: number): void {
    const i = blk * this.width + k;
    if (this.values[i] === 0) this.nonzero[blk * this.width + this.counts[blk]++] = k;
    this.values[i] += v;
  }

  /**
   * Sums the vectors of the window centred on patch (pr, pc): the patch's own `per`×`per` blocks and
   * half a patch around them, clipped at the screen edge, block by block in row-major order.
   * Returns how many blocks it summed.
   */
  sumWindow(per: number, pr: number, pc: number, into: Float64Array): number {
    const w = this.width;
    into.fill(0);
    let n = 0;
    for (let br = Math.max(0, pr * per - per / 2); br < Math.min(this.blockRows, (pr + 1) * per + per / 2); br++) {
      for (let bc = Math.max(0, pc * per - per / 2); bc < Math.min(this.blockCols, (pc + 1) * per + per / 2); bc++) {
        n++;
        const blk = br * this.blockCols + bc;
        const base = blk * w;
        for (let j = 0; j < this.counts[blk]!; j++) {
          const k = this.nonzero[base + j]!;
          into[k] += this.values[base + k]!;
        }
      }
    }
    return n;
  }
}

// Scratch planes reused across calls: the feature pass is synchronous, so no call can interleave.
const lumaPlane = new Float32Array(PIXELS);
const o1Plane = new Float32Array(PIXELS);
const o2Plane = new Float32Array(PIXELS);
/** Soft palette membership of every pixel, [pixel * 16 + colour]. */
const palettePlane = new Float32Array(PIXELS * PALETTE.length);
const lumaSum = new Float64Array(16);
const o1Sum = new Float64Array(4);
const o2Sum = new Float64Array(4);
const edgeSum = new Float64Array(16); // [quadrant * 4 + orientation]
const edgeCount = new Float64Array(16);
/** Each pixel's strongest palette memberships (≤ PAIRS_PER_PIXEL): colour index and weight. */
const sparseColour = new Uint8Array(PIXELS * PAIRS_PER_PIXEL);
const sparseWeight = new Float32Array(PIXELS * PAIRS_PER_PIXEL);
const sparseCount = new Uint8Array(PIXELS);
/** Ordered colour-pair sums per 4×4 block, [block * K² + a * K + b]. */
const blockPairs = new SparseBlocks(BLOCK_ROWS, BLOCK_COLS, K * K);
const windowPairs = new Float64Array(K * K);

/**
 * Features of one already-resized 64×128 image (uint8, `channels` interleaved; 1–2 channels are
 * grey, 3–4 are RGB, alpha ignored) and its 128×256 grey copy `fine`. Pure; exported for tests
 * and benchmarks.
 */
export function builtinFeatures(pixels: Uint8Array, channels: number, fine: Uint8Array): Float32Array {
  if (pixels.length !== PIXELS * channels) {
    throw new Error(`builtinFeatures: expected ${PIXELS}×${channels} bytes, got ${pixels.length}`);
  }
  if (fine.length !== FINE_PIXELS) throw new Error(`builtinFeatures: expected ${FINE_PIXELS} fine grey bytes, got ${fine.length}`);
  accumulateLbp(fine);
  toOpponent(pixels, channels);
  sparsifyPalette();
  accumulateBlockPairs();
  const out = new Float32Array(ROWS * COLS * DIM);
  for (let pr = 0; pr < ROWS; pr++) {
    for (let pc = 0; pc < COLS; pc++) {
      const p = pr * COLS + pc;
      patchFeatures(pr * BUILTIN_PATCH, pc * BUILTIN_PATCH, out, p * DIM);
      windowPairFeatures(pr, pc, out, p * DIM + BUILTIN_LAYOUT.pairs[0]);
      windowLbpFeatures(pr, pc, out, p * DIM + BUILTIN_LAYOUT.lbp[0]);
      const [ps, pe] = BUILTIN_LAYOUT.position;
      out.set(POSITION_TABLE.subarray(p * (pe - ps), (p + 1) * (pe - ps)), p * DIM + ps);
    }
    rowPaletteFeatures(pr, out);
  }
  return out;
}

/*
 * Local binary patterns, written by hand: they are ~50 lines over a raw grey buffer, and the npm
 * packages that offer them work on canvas/ImageData objects or whole-image histograms, not the
 * per-window sums needed here.
 */
/** The grey copy is this many times the coarse input per side. */
const FINE_SCALE = 2;
const FINE_W = FINE_SCALE * BUILTIN_WIDTH;
const FINE_H = FINE_SCALE * BUILTIN_HEIGHT;
const FINE_PIXELS = FINE_W * FINE_H;
/** 57 uniform non-empty patterns (8 orientations × 7 arc lengths, plus all 8) and one "other" bin. */
const LBP_BINS = 58;
/** Histograms are summed over 8×8-pixel blocks of the fine image first, as the pairs are. */
const LBP_BLOCK = 8;
const LBP_BLOCK_ROWS = FINE_H / LBP_BLOCK;
const LBP_BLOCK_COLS = FINE_W / LBP_BLOCK;
/** A neighbour counts as brighter/darker only beyond 4 % of full scale, so flat areas and resize ripple give no pattern. */
const LBP_THRESHOLD = 0.04 * 255;
const LBP_GAIN = 4;
/** Pattern → bin: uniform patterns (≤ 2 bit changes around the circle) get their own; 0 (no marked neighbour) is dropped (-1). */
const LBP_BIN: Int8Array = (() => {
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
const lbpBlocks = new SparseBlocks(LBP_BLOCK_ROWS, LBP_BLOCK_COLS, 2 * LBP_BINS);
const lbpWindow = new Float64Array(2 * LBP_BINS);
/** Index offsets of the 8 neighbours in the fine image, clockwise from the top-left: bit k of a pattern. */
const NEIGHBOURS = [-FINE_W - 1, -FINE_W, -FINE_W + 1, 1, FINE_W + 1, FINE_W, FINE_W - 1, -1];

/** Counts each fine pixel's brighter and darker patterns into its block. */
function accumulateLbp(fine: Uint8Array): void {
  lbpBlocks.clear();
  for (let y = 1; y < FINE_H - 1; y++) {
    for (let x = 1; x < FINE_W - 1; x++) {
      const i = y * FINE_W + x;
      const c = fine[i]!;
      let up = 0;
      let down = 0;
      for (let k = 0; k < 8; k++) {
        const n = fine[i + NEIGHBOURS[k]!]!;
        if (n >= c + LBP_THRESHOLD) up |= 1 << k;
        else if (n <= c - LBP_THRESHOLD) down |= 1 << k;
      }
      const blk = ((y / LBP_BLOCK) | 0) * LBP_BLOCK_COLS + ((x / LBP_BLOCK) | 0);
      const bu = LBP_BIN[up]!;
      if (bu >= 0) lbpBlocks.add(blk, bu, 1);
      const bd = LBP_BIN[down]!;
      if (bd >= 0) lbpBlocks.add(blk, LBP_BINS + bd, 1);
    }
  }
}

/** The pattern histograms of the window centred on patch (pr, pc) (16×16 coarse pixels), per pixel, sqrt-compressed as the pairs. */
function windowLbpFeatures(pr: number, pc: number, out: Float32Array, o: number): void {
  const blocks = lbpBlocks.sumWindow((FINE_SCALE * BUILTIN_PATCH) / LBP_BLOCK, pr, pc, lbpWindow);
  const inv = 1 / (blocks * LBP_BLOCK * LBP_BLOCK);
  for (let k = 0; k < 2 * LBP_BINS; k++) out[o + k] = LBP_GAIN * Math.sqrt(lbpWindow[k]! * inv);
}

/** Patches at the end of a row that make up its "row end" context. */
const ROW_END = 2;

/** Writes the row context of patch row `pr` (its mean palette, then its end's) into each of its patches. */
function rowPaletteFeatures(pr: number, out: Float32Array): void {
  const [pal] = BUILTIN_LAYOUT.palette;
  const [row] = BUILTIN_LAYOUT.row;
  const first = pr * COLS * DIM;
  for (let k = 0; k < K; k++) {
    let sum = 0;
    let end = 0;
    for (let pc = 0; pc < COLS; pc++) {
      const v = out[first + pc * DIM + pal + k]!;
      sum += v;
      if (pc >= COLS - ROW_END) end += v;
    }
    for (let pc = 0; pc < COLS; pc++) {
      out[first + pc * DIM + row + k] = sum / COLS;
      out[first + pc * DIM + row + K + k] = end / ROW_END;
    }
  }
}

/** Decorrelated colour space: luminance plus two opponent axes, so colour and shape separate. */
function toOpponent(px: Uint8Array, channels: number): void {
  const inv = 1 / 255;
  if (channels >= 3) {
    for (let i = 0, j = 0; i < PIXELS; i++, j += channels) {
      const r = px[j] * inv;
      const g = px[j + 1] * inv;
      const b = px[j + 2] * inv;
      lumaPlane[i] = (r + g + b) / 3;
      o1Plane[i] = r - g;
      o2Plane[i] = (r + g) / 2 - b;
      paletteOf((px[j]! << 16) | (px[j + 1]! << 8) | px[j + 2]!, r, g, b, i);
    }
  } else {
    for (let i = 0, j = 0; i < PIXELS; i++, j += channels) {
      lumaPlane[i] = px[j] * inv;
      o1Plane[i] = 0;
      o2Plane[i] = 0;
      paletteOf(px[j]! * 0x010101, lumaPlane[i]!, lumaPlane[i]!, lumaPlane[i]!, i);
    }
  }
}

/*
 * Palette memberships by colour: UI screens reuse a few hundred colours, and the 16 exp() per pixel
 * were the encoder's largest cost. Entries are the exact float32 values computed below, so cached
 * and fresh features are bit-identical. Cleared when full (photos have many colours).
 */
const CACHED_COLOURS = 1 << 15;
const colourSlot = new Map<number, number>();
const colourMemberships = new Float32Array(CACHED_COLOURS * K);

/** Soft palette membership of pixel `i`, whose 8-bit colour is `rgb` (= r, g, b in [0, 1]). */
function paletteOf(rgb: number, r: number, g: number, b: number, i: number): void {
  let slot = colourSlot.get(rgb);
  if (slot === undefined) {
    if (colourSlot.size === CACHED_COLOURS) colourSlot.clear();
    slot = colourSlot.size;
    colourSlot.set(rgb, slot);
    paletteMembership(r, g, b, colourMemberships, slot * K);
  }
  const from = slot * K;
  const to = i * K;
  for (let k = 0; k < K; k++) palettePlane[to + k] = colourMemberships[from + k]!;
}

function paletteMembership(r: number, g: number, b: number, out: Float32Array, o: number): void {
  let total = 0;
  for (let k = 0; k < K; k++) {
    const c = PALETTE[k]!;
    const d2 = (r - c[0]) ** 2 + (g - c[1]) ** 2 + (b - c[2]) ** 2;
    const w = Math.exp(-d2 / (2 * PALETTE_SIGMA * PALETTE_SIGMA));
    out[o + k] = w;
    total += w;
  }
  // A colour far from every entry still counts as one pixel, spread over its nearest ones.
  const inv = total > 1e-12 ? 1 / total : 0;
  for (let k = 0; k < K; k++) out[o + k]! *= inv;
}

/** Keeps each pixel's few strongest palette memberships, for the pair counts. */
function sparsifyPalette(): void {
  for (let i = 0; i < PIXELS; i++) {
    let n = 0;
    const o = i * PAIRS_PER_PIXEL;
    for (let k = 0; k < K; k++) {
      const w = palettePlane[i * K + k]!;
      if (w < PAIR_MIN_WEIGHT) continue;
      // Insertion into a short list sorted by weight, dropping the weakest when full.
      let j = Math.min(n, PAIRS_PER_PIXEL - 1);
      if (n === PAIRS_PER_PIXEL && w <= sparseWeight[o + j]!) continue;
      while (j > 0 && sparseWeight[o + j - 1]! < w) {
        sparseWeight[o + j] = sparseWeight[o + j - 1]!;
        sparseColour[o + j] = sparseColour[o + j - 1]!;
        j--;
      }
      sparseWeight[o + j] = w;
      sparseColour[o + j] = k;
      if (n < PAIRS_PER_PIXEL) n++;
    }
    sparseCount[i] = n;
  }
}

/** Sums w_a(p)·w_b(q) over each block's pixels p, for q = PAIR_STEP pixels right of p and below p. */
function accumulateBlockPairs(): void {
  blockPairs.clear();
  const W = BUILTIN_WIDTH;
  for (let y = 0; y < BUILTIN_HEIGHT; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const blk = ((y / BLOCK) | 0) * BLOCK_COLS + ((x / BLOCK) | 0);
      if (x + PAIR_STEP < W) addPairs(i, i + PAIR_STEP, blk);
      if (y + PAIR_STEP < BUILTIN_HEIGHT) addPairs(i, i + PAIR_STEP * W, blk);
    }
  }
}

function addPairs(p: number, q: number, blk: number): void {
  const po = p * PAIRS_PER_PIXEL;
  const qo = q * PAIRS_PER_PIXEL;
  for (let s = 0; s < sparseCount[p]!; s++) {
    const row = sparseColour[po + s]! * K;
    const wp = sparseWeight[po + s]!;
    for (let t = 0; t < sparseCount[q]!; t++) blockPairs.add(blk, row + sparseColour[qo + t]!, wp * sparseWeight[qo + t]!);
  }
}

/** The unordered colour-pair features of the 16×16-pixel window centred on patch (pr, pc), clipped at the screen edge. */
function windowPairFeatures(pr: number, pc: number, out: Float32Array, o: number): void {
  const blocks = blockPairs.sumWindow(BUILTIN_PATCH / BLOCK, pr, pc, windowPairs);
  const inv = 1 / (blocks * BLOCK * BLOCK); // per pixel of the window
  let k = 0;
  for (let a = 0; a < K; a++) {
    for (let b = a; b < K; b++) {
      // sqrt, as for edges: rare pairs (a glyph's rim) register next to the background's own pair.
      const count = a === b ? windowPairs[a * K + a]! : windowPairs[a * K + b]! + windowPairs[b * K + a]!;
      out[o + k++] = PAIR_GAIN * Math.sqrt(count * inv);
    }
  }
}

/** Writes the appearance features (everything but position) of the patch at (y0, x0). */
function patchFeatures(y0: number, x0: number, out: Float32Array, o: number): void {
  const P = BUILTIN_PATCH;
  const W = BUILTIN_WIDTH;
  const sub = P / 4; // luma sub-cell side
  const half = P / 2; // chroma sub-cell and edge quadrant side

  lumaSum.fill(0);
  o1Sum.fill(0);
  o2Sum.fill(0);
  edgeSum.fill(0);
  edgeCount.fill(0);
  let lSum = 0, lSq = 0, cSq = 0, c1Sum = 0, c2Sum = 0, chromaEdge = 0, chromaEdgeN = 0;
  let lMin = Infinity, lMax = -Infinity;

  // Differences only pair pixels inside this patch, so neighbours never leak into it.
  for (let dy = 0; dy < P; dy++) {
    const row = (y0 + dy) * W + x0;
    const q0 = (dy < half ? 0 : 2);
    for (let dx = 0; dx < P; dx++) {
      const i = row + dx;
      const l = lumaPlane[i];
      const c1 = o1Plane[i];
      const c2 = o2Plane[i];
      lumaSum[((dy / sub) | 0) * 4 + ((dx / sub) | 0)] += l;
      const q = q0 + (dx < half ? 0 : 1);
      o1Sum[q] += c1;
      o2Sum[q] += c2;
      lSum += l;
      lSq += l * l;
      c1Sum += c1;
      c2Sum += c2;
      cSq += c1 * c1 + c2 * c2;
      if (l < lMin) lMin = l;
      if (l > lMax) lMax = l;
      const e = q * 4;
      if (dx + 1 < P) {
        edgeSum[e] += Math.abs(lumaPlane[i + 1] - l); // horizontal change: vertical strokes
        edgeCount[e]++;
        chromaEdge += Math.abs(o1Plane[i + 1] - c1) + Math.abs(o2Plane[i + 1] - c2);
        chromaEdgeN++;
      }
      if (dy + 1 < P) {
        edgeSum[e + 1] += Math.abs(lumaPlane[i + W] - l); // vertical change: horizontal strokes
        edgeCount[e + 1]++;
        chromaEdge += Math.abs(o1Plane[i + W] - c1) + Math.abs(o2Plane[i + W] - c2);
        chromaEdgeN++;
        if (dx + 1 < P) {
          edgeSum[e + 2] += Math.abs(lumaPlane[i + W + 1] - l) * Math.SQRT1_2;
          edgeCount[e + 2]++;
        }
        if (dx > 0) {
          edgeSum[e + 3] += Math.abs(lumaPlane[i + W - 1] - l) * Math.SQRT1_2;
          edgeCount[e + 3]++;
        }
      }
    }
  }

  const n = P * P;
  const lumaN = sub * sub;
  const chromaN = half * half;
  for (let k = 0; k < 16; k++) out[o + BUILTIN_LAYOUT.luma[0] + k] = (2 * lumaSum[k]) / lumaN - 1;
  for (let q = 0; q < 4; q++) {
    out[o + BUILTIN_LAYOUT.chroma[0] + q] = (CHROMA_GAIN * o1Sum[q]) / chromaN;
    out[o + BUILTIN_LAYOUT.chroma[0] + 4 + q] = (CHROMA_GAIN * o2Sum[q]) / chromaN;
  }
  // sqrt compresses the range so faint text strokes register next to hard borders.
  for (let k = 0; k < 16; k++) out[o + BUILTIN_LAYOUT.edges[0] + k] = EDGE_GAIN * Math.sqrt(edgeSum[k] / edgeCount[k]);
  const lMean = lSum / n;
  const cVar = cSq / n - (c1Sum / n) ** 2 - (c2Sum / n) ** 2;
  const s = BUILTIN_LAYOUT.stats[0];
  out[o + s] = STD_GAIN * Math.sqrt(Math.max(0, lSq / n - lMean * lMean));
  out[o + s + 1] = STD_GAIN * Math.sqrt(Math.max(0, cVar));
  out[o + s + 2] = EDGE_GAIN * Math.sqrt(chromaEdge / chromaEdgeN);
  out[o + s + 3] = 2 * (lMax - lMin);
  const pal = BUILTIN_LAYOUT.palette[0];
  for (let k = 0; k < K; k++) out[o + pal + k] = 0;
  for (let dy = 0; dy < P; dy++) {
    for (let dx = 0; dx < P; dx++) {
      const src = ((y0 + dy) * W + x0 + dx) * K;
      for (let k = 0; k < K; k++) out[o + pal + k] += palettePlane[src + k]!;
    }
  }
  for (let k = 0; k < K; k++) out[o + pal + k] *= PALETTE_GAIN / n;
}

/** Checks a decoded image before it reaches libvips, whose own errors would not say which image. */
export function checkRawImage(img: RawImage, what: string): void {
  const { width, height, channels, data } = img;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new InputError(`image size must be positive integers, got ${width}×${height}`, what);
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 4) {
    throw new InputError(`image channels must be 1–4, got ${channels}`, what);
  }
  if (!(data instanceof Uint8Array) || data.length !== width * height * channels) {
    throw new InputError(
      `image data has ${data?.length ?? 0} bytes, expected ${height}×${width}×${channels} = ${width * height * channels}`,
      what,
    );
  }
}

/** Resizes any screen to the encoder's 64×128 input and its 128×256 grey copy (libvips: box shrink, then a linear kernel). */
export async function resizeForBuiltin(img: RawImage): Promise<{ data: Uint8Array; channels: number; fine: Uint8Array }> {
  const src = () => sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels as 1 | 2 | 3 | 4 } });
  const [{ data, info }, fine] = await Promise.all([
    // A local kernel (not lanczos) keeps a pixel's influence within ~2 output pixels.
    src().resize(BUILTIN_WIDTH, BUILTIN_HEIGHT, { fit: 'fill', kernel: 'linear' }).raw().toBuffer({ resolveWithObject: true }),
    src().removeAlpha().greyscale().resize(FINE_W, FINE_H, { fit: 'fill', kernel: 'linear' }).raw().toBuffer(),
  ]);
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), channels: info.channels, fine: new Uint8Array(fine.buffer, fine.byteOffset, fine.length) };
}

export class BuiltinEncoder implements VisionEncoder {
  readonly info: EncoderInfo = BUILTIN_INFO;

  async encode(images: RawImage[]): Promise<Float32Array[]> {
    images.forEach((img, i) => checkRawImage(img, `image ${i} of the batch`));
    // Resizes run concurrently on libuv's pool; each feature pass is synchronous on this thread.
    return Promise.all(
      images.map(async (img) => {
        const small = await resizeForBuiltin(img);
        return builtinFeatures(small.data, small.channels, small.fine);
      }),
    );
  }
}
