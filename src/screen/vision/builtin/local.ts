/**
 * The groups that read only the patch's own pixels of the colour image: a luma thumbnail, opponent
 * chroma, oriented edge energy, contrast statistics and the soft colour histogram. A patch cut by
 * the screen's edge (the last row or column of a screen whose aspect is not a whole number of
 * patches) is described by the pixels it has: means and histograms are over its real pixels, and a
 * thumbnail cell with none repeats the nearest real cell, as image filters extend borders.
 */
import { COLOUR_BINS, MAX_MEMBERSHIPS, lutBins, lutCounts, lutWeights, type ColourPlanes } from './colour.js';
import { PATCH_PX } from './geometry.js';

/** The patch's pixel rectangle [x0, x1) × [y0, y1) in an image `stride` pixels wide. */
export interface PatchPixels {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  stride: number;
}

/** Luma on a 4×4 grid of cells (a thumbnail: bar vs disc vs text line). */
export const LUMA_FEATURES = 16;
/** O1, O2 on a 2×2 grid: colour varies more slowly than brightness, so at half the luma resolution (as JPEG's chroma subsampling). */
export const CHROMA_FEATURES = 8;
/** Edge energy along 4 orientations (0°, 90°, 45°, 135°) in each 2×2 quadrant: text (dense strokes), borders (one orientation), flat (none). */
export const EDGE_FEATURES = 16;
/** Luma std, chroma std, chroma edge energy (colour-on-colour borders of equal brightness), luma range. */
export const STATS_FEATURES = 4;
export const HISTOGRAM_FEATURES = COLOUR_BINS;

const cellSums = new Float64Array(16);
const cellCounts = new Float64Array(16);

/** Per-cell means of `plane` on an n×n grid over the patch's real pixels, into `means`; empty cells take the nearest real one. */
function cellMeans(px: PatchPixels, n: number, plane: Float32Array, means: Float64Array): void {
  const sums = cellSums;
  const counts = cellCounts;
  const side = PATCH_PX / n;
  sums.fill(0, 0, n * n);
  counts.fill(0, 0, n * n);
  for (let y = px.y0; y < px.y1; y++) {
    const row = (((y - px.y0) / side) | 0) * n;
    for (let x = px.x0; x < px.x1; x++) {
      const c = row + (((x - px.x0) / side) | 0);
      sums[c] += plane[y * px.stride + x]!;
      counts[c]++;
    }
  }
  const lastRow = Math.ceil((px.y1 - px.y0) / side) - 1;
  const lastCol = Math.ceil((px.x1 - px.x0) / side) - 1;
  for (let cy = 0; cy < n; cy++) {
    for (let cx = 0; cx < n; cx++) {
      const src = Math.min(cy, lastRow) * n + Math.min(cx, lastCol);
      means[cy * n + cx] = sums[src]! / counts[src]!;
    }
  }
}

const cellMean = new Float64Array(16);

/** Luma thumbnail in [-1, 1], then O1 and O2 at 2×2. */
export function lumaChromaFeatures(planes: ColourPlanes, px: PatchPixels, out: Float32Array, o: number): void {
  cellMeans(px, 4, planes.luma, cellMean);
  for (let k = 0; k < 16; k++) out[o + k] = 2 * cellMean[k]! - 1;
  cellMeans(px, 2, planes.o1, cellMean);
  for (let k = 0; k < 4; k++) out[o + LUMA_FEATURES + k] = cellMean[k]!;
  cellMeans(px, 2, planes.o2, cellMean);
  for (let k = 0; k < 4; k++) out[o + LUMA_FEATURES + 4 + k] = cellMean[k]!;
}

const edgeSum = new Float64Array(16); // [quadrant * 4 + orientation]
const edgeCount = new Float64Array(16);

/**
 * sqrt of the mean absolute luma difference along each orientation, per quadrant; differences pair
 * pixels inside the patch only, so neighbours never leak in. sqrt lifts faint text strokes next to
 * hard borders. Also returns the chroma edge energy for the statistics.
 */
export function edgeFeatures(planes: ColourPlanes, px: PatchPixels, out: Float32Array, o: number): number {
  const { luma, o1, o2 } = planes;
  const W = px.stride;
  const half = PATCH_PX / 2;
  edgeSum.fill(0);
  edgeCount.fill(0);
  let chroma = 0;
  let chromaN = 0;
  for (let y = px.y0; y < px.y1; y++) {
    for (let x = px.x0; x < px.x1; x++) {
      const i = y * W + x;
      const l = luma[i]!;
      const e = (((y - px.y0) / half) | 0) * 8 + (((x - px.x0) / half) | 0) * 4;
      const right = x + 1 < px.x1;
      const down = y + 1 < px.y1;
      if (right) {
        edgeSum[e] += Math.abs(luma[i + 1]! - l); // horizontal change: vertical strokes
        edgeCount[e]++;
        chroma += Math.abs(o1[i + 1]! - o1[i]!) + Math.abs(o2[i + 1]! - o2[i]!);
        chromaN++;
      }
      if (down) {
        edgeSum[e + 1] += Math.abs(luma[i + W]! - l); // vertical change: horizontal strokes
        edgeCount[e + 1]++;
        chroma += Math.abs(o1[i + W]! - o1[i]!) + Math.abs(o2[i + W]! - o2[i]!);
        chromaN++;
        if (right) (edgeSum[e + 2] += Math.abs(luma[i + W + 1]! - l) * Math.SQRT1_2), edgeCount[e + 2]++;
        if (x > px.x0) (edgeSum[e + 3] += Math.abs(luma[i + W - 1]! - l) * Math.SQRT1_2), edgeCount[e + 3]++;
      }
    }
  }
  for (let k = 0; k < 16; k++) out[o + k] = edgeCount[k]! > 0 ? Math.sqrt(edgeSum[k]! / edgeCount[k]!) : 0;
  return chromaN > 0 ? Math.sqrt(chroma / chromaN) : 0;
}

/** Luma std and chroma std (×2, so a black/white or saturated two-colour patch reaches ~1), chroma edge energy, luma range. */
export function statsFeatures(planes: ColourPlanes, px: PatchPixels, chromaEdge: number, out: Float32Array, o: number): void {
  const { luma, o1, o2 } = planes;
  let n = 0, lSum = 0, lSq = 0, c1 = 0, c2 = 0, cSq = 0;
  let lMin = Infinity, lMax = -Infinity;
  for (let y = px.y0; y < px.y1; y++) {
    for (let x = px.x0; x < px.x1; x++) {
      const i = y * px.stride + x;
      const l = luma[i]!;
      n++;
      lSum += l;
      lSq += l * l;
      c1 += o1[i]!;
      c2 += o2[i]!;
      cSq += o1[i]! ** 2 + o2[i]! ** 2;
      if (l < lMin) lMin = l;
      if (l > lMax) lMax = l;
    }
  }
  const lMean = lSum / n;
  out[o] = 2 * Math.sqrt(Math.max(0, lSq / n - lMean * lMean));
  out[o + 1] = 2 * Math.sqrt(Math.max(0, cSq / n - (c1 / n) ** 2 - (c2 / n) ** 2));
  out[o + 2] = chromaEdge;
  out[o + 3] = lMax - lMin;
}

/** The share of the patch's pixels in each colour bin (sums to 1): makes "which colour is this" linearly separable. */
export function histogramFeatures(planes: ColourPlanes, px: PatchPixels, out: Float32Array, o: number): void {
  out.fill(0, o, o + COLOUR_BINS);
  let n = 0;
  for (let y = px.y0; y < px.y1; y++) {
    for (let x = px.x0; x < px.x1; x++) {
      const code = planes.code[y * px.stride + x]!;
      const m = code * MAX_MEMBERSHIPS;
      for (let s = 0; s < lutCounts[code]!; s++) out[o + lutBins[m + s]!] += lutWeights[m + s]!;
      n++;
    }
  }
  for (let k = 0; k < COLOUR_BINS; k++) out[o + k] /= n;
}
