/**
 * Colour pairs: how often colour bin a sits next to colour bin b (one pixel right or below) over
 * the window of each patch, as the K(K+1)/2 unordered pairs a ≤ b. An icon is a glyph of one colour
 * on a disc of another, a button a label on a fill: a linear score over the pairs fires on that
 * combination wherever the object sits against the patch grid, where per-patch colour sums split
 * it over up to four patches and lose which colour touches which.
 */
import { COLOUR_BINS as K, MAX_MEMBERSHIPS, lutBins, lutCounts, lutWeights, type ColourPlanes } from './colour.js';
import { MAX_COARSE_PIXELS, PATCH_PX } from './geometry.js';
import { SparseBlocks } from './sparse_blocks.js';

export const PAIR_FEATURES = (K * (K + 1)) / 2;
/** Pair sums are kept per half-patch block, so each window is a 4×4 block sum. */
const BLOCK = PATCH_PX / 2;
const blocks = new SparseBlocks(Math.ceil(MAX_COARSE_PIXELS / (BLOCK * BLOCK)) + 64, K * K, BLOCK);
const window = new Float64Array(K * K);

/** Distinct (colour code, neighbour code) keys of one block and their counts. */
const keys = new Int32Array(2 * BLOCK * BLOCK);
const keyCounts = new Int32Array(2 * BLOCK * BLOCK);

/** Counts each ordered pair of neighbouring memberships (right and below), weighted by both weights, into the block of the first pixel. */
export function accumulatePairs(planes: ColourPlanes, width: number, height: number): void {
  blocks.reset(width, height);
  for (let by = 0; by < height; by += BLOCK) {
    for (let bx = 0; bx < width; bx += BLOCK) blockPairs(planes.code, width, height, bx, by);
  }
}

/**
 * One block's pairs, each distinct pair of colour codes counted first and expanded into colour
 * bins once: a block of a UI screen holds one to a few distinct pairs (flat fills, one border), so
 * this adds a handful of products where pixel by pixel would add hundreds. The sums are the same
 * up to (deterministic) float rounding.
 */
function blockPairs(code: Uint16Array, width: number, height: number, bx: number, by: number): void {
  if (uniformPairs(code, width, height, bx, by)) return;
  let m = 0;
  const note = (key: number) => {
    let j = m - 1;
    while (j >= 0 && keys[j] !== key) j--;
    if (j >= 0) keyCounts[j]++;
    else (keys[m] = key), (keyCounts[m++] = 1);
  };
  const x1 = Math.min(width, bx + BLOCK);
  const y1 = Math.min(height, by + BLOCK);
  const xRight = Math.min(x1, width - 1); // pixels with a right neighbour
  for (let y = by; y < y1; y++) {
    const row = y * width;
    for (let x = bx; x < xRight; x++) note((code[row + x]! << 15) | code[row + x + 1]!);
    if (y + 1 < height) for (let x = bx; x < x1; x++) note((code[row + x]! << 15) | code[row + width + x]!);
  }
  const blk = blocks.blockOf(bx, by);
  for (let j = 0; j < m; j++) addPairs(keys[j]! >>> 15, keys[j]! & 0x7fff, blk, keyCounts[j]!);
}

/**
 * The common case of a block whose pixels and right/lower neighbours share one colour code: all its
 * pairs are that code with itself, added at once. Returns false (adding nothing) otherwise.
 */
function uniformPairs(code: Uint16Array, width: number, height: number, bx: number, by: number): boolean {
  const x1 = Math.min(width, bx + BLOCK);
  const y1 = Math.min(height, by + BLOCK);
  const c = code[by * width + bx]!;
  for (let y = by; y < Math.min(height, y1 + 1); y++) {
    for (let i = y * width + bx, end = y * width + Math.min(width, x1 + 1); i < end; i++) if (code[i] !== c) return false;
  }
  const across = (y1 - by) * (Math.min(x1, width - 1) - bx);
  const down = (Math.min(y1, height - 1) - by) * (x1 - bx);
  if (across + down > 0) addPairs(c, c, blocks.blockOf(bx, by), across + down);
  return true;
}

function addPairs(p: number, q: number, blk: number, n: number): void {
  const po = p * MAX_MEMBERSHIPS;
  const qo = q * MAX_MEMBERSHIPS;
  for (let s = 0; s < lutCounts[p]!; s++) {
    const row = lutBins[po + s]! * K;
    const wp = n * lutWeights[po + s]!;
    for (let t = 0; t < lutCounts[q]!; t++) blocks.add(blk, row + lutBins[qo + t]!, wp * lutWeights[qo + t]!);
  }
}

/**
 * The unordered pair features of patch (pr, pc)'s window, per pixel of the window (a window of one
 * flat colour gives ~2 on its own pair: a right and a lower neighbour per pixel), sqrt-compressed so
 * that a glyph's rim registers next to the background's own pair.
 */
export function pairFeatures(pr: number, pc: number, out: Float32Array, o: number): void {
  const pixels = blocks.sumWindow(PATCH_PX / BLOCK, pr, pc, window);
  const inv = 1 / pixels;
  let k = 0;
  for (let a = 0; a < K; a++) {
    for (let b = a; b < K; b++) {
      const count = a === b ? window[a * K + a]! : window[a * K + b]! + window[b * K + a]!;
      out[o + k++] = Math.sqrt(count * inv);
    }
  }
}
