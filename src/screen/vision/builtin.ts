import sharp from 'sharp';
import type { RawImage } from '../types.js';
import { InputError } from '../../util/errors.js';
import type { EncoderInfo, VisionEncoder } from './encoder.js';
import { colourPlanes, fillPlanes, lutBins, lutCounts, lutWeights } from './builtin/colour.js';
import { GRID_COLS, GRID_ROWS, MAX_COARSE_PIXELS, MAX_FINE_PIXELS, PATCH_PX, screenGeometry, type ScreenGeometry } from './builtin/geometry.js';
import { accumulateLbp, BIN_OF, lbpFeatures, LBP_FEATURES } from './builtin/lbp.js';
import { pixelKernels } from './builtin/native.js';
import {
  CHROMA_FEATURES,
  EDGE_FEATURES,
  edgeFeatures,
  HISTOGRAM_FEATURES,
  histogramFeatures,
  LUMA_FEATURES,
  lumaChromaFeatures,
  STATS_FEATURES,
  statsFeatures,
  type PatchPixels,
} from './builtin/local.js';
import { accumulatePairs, pairFeatures, PAIR_FEATURES } from './builtin/pairs.js';
import { POSITION_FEATURES, positionTable } from './builtin/position.js';
import { reduceLinear } from './builtin/reduce.js';
import { ROW_FEATURES, rowFeatures } from './builtin/row.js';

/**
 * The built-in frozen encoder: no weights, deterministic, fast, and spatial. Auto-UI attends
 * from the goal's words to screen patches and must name the tapped point, so the features
 * must say WHAT is in a patch (colour, glyph shape, text-like texture) and WHERE the patch is
 * (a fixed position code), one vector per patch of a fixed grid.
 *
 * Nothing here assumes a screen size or a palette. A screen keeps its aspect: it is resized (libvips,
 * through sharp) so that one patch of the 20×8 'square' grid (builtin/geometry.ts: ~48 dp patches on
 * a phone) becomes 16×16 pixels, and fills as many rows and columns as its aspect needs; the rest of
 * the grid is padding, all zero. A 2×2 mean of that image gives the 8-pixel-a-patch colour image most
 * groups read; the glyph-shape group reads its grey copy. Every number but the row context depends
 * only on its patch's pixels (colour pairs and local binary patterns: on a window reaching half a
 * patch further; plus the resize kernel's footprint), so a change on screen changes only the patches
 * at or next to it, and the row context of its row. No random projection: the model's trainable
 * projection is linear anyway, so a fixed linear mix would add nothing it cannot learn.
 */

/** Feature groups in patch-vector order, with their widths (each documented where it is computed). */
const GROUPS = [
  ['luma', LUMA_FEATURES],
  ['chroma', CHROMA_FEATURES],
  ['edges', EDGE_FEATURES],
  ['stats', STATS_FEATURES],
  ['histogram', HISTOGRAM_FEATURES],
  ['position', POSITION_FEATURES],
  ['pairs', PAIR_FEATURES],
  ['row', ROW_FEATURES],
  ['lbp', LBP_FEATURES],
] as const;
type GroupName = (typeof GROUPS)[number][0];

/** Offsets [start, end) of each feature group inside one patch vector. */
export const BUILTIN_LAYOUT: Readonly<Record<GroupName, readonly [number, number]>> = (() => {
  const layout = {} as Record<GroupName, [number, number]>;
  let at = 0;
  for (const [name, width] of GROUPS) layout[name] = [at, (at += width)];
  return Object.freeze(layout);
})();

export const BUILTIN_INFO: EncoderInfo = Object.freeze({
  id: 'builtin-v6',
  patches: GRID_ROWS * GRID_COLS,
  dim: BUILTIN_LAYOUT.lbp[1],
  grid: [GRID_ROWS, GRID_COLS] as [number, number],
  pooled: false,
  layout: 'square' as const,
});

const DIM = BUILTIN_INFO.dim;

/** BUILTIN_LAYOUT as the native pass takes it (native.ts). */
export const NATIVE_LAYOUT = Int32Array.from([
  ...(['luma', 'edges', 'stats', 'histogram', 'position', 'pairs', 'row', 'lbp'] as const).map((g) => BUILTIN_LAYOUT[g][0]),
  DIM,
]);

/** The pixel geometry of a `width × height` screen: which patches are real, and its resized sizes. */
export function builtinGeometry(size: { width: number; height: number }): ScreenGeometry {
  return screenGeometry(BUILTIN_INFO, size);
}

// Scratch buffers reused across calls: the feature pass is synchronous, so no call can interleave.
const coarseRgb = new Uint8Array(MAX_COARSE_PIXELS * 3);
const fineGrey = new Uint8Array(MAX_FINE_PIXELS);
const planes = colourPlanes(MAX_COARSE_PIXELS);

/** The colour image (2×2 mean of the fine RGB) and the fine grey copy (Rec. 709 luma weights, summing to 256). */
function splitFine(fine: Uint8Array, g: ScreenGeometry): void {
  const fw = g.fineWidth;
  for (let i = 0, j = 0; i < g.fineWidth * g.fineHeight; i++, j += 3) {
    fineGrey[i] = (54 * fine[j]! + 183 * fine[j + 1]! + 19 * fine[j + 2]! + 128) >> 8;
  }
  for (let y = 0; y < g.height; y++) {
    for (let x = 0; x < g.width; x++) {
      const a = ((2 * y) * fw + 2 * x) * 3;
      const b = a + fw * 3;
      const o = (y * g.width + x) * 3;
      for (let ch = 0; ch < 3; ch++) coarseRgb[o + ch] = (fine[a + ch]! + fine[a + 3 + ch]! + fine[b + ch]! + fine[b + 3 + ch]! + 2) >> 2;
    }
  }
}

/** Writes every group but the row context for real patch (r, c); `positions` is positionTable(g.layout). */
function patchVector(g: ScreenGeometry, r: number, c: number, positions: Float32Array, out: Float32Array): void {
  const p = r * GRID_COLS + c;
  const o = p * DIM;
  const px: PatchPixels = {
    x0: c * PATCH_PX,
    x1: Math.min(g.width, (c + 1) * PATCH_PX),
    y0: r * PATCH_PX,
    y1: Math.min(g.height, (r + 1) * PATCH_PX),
    stride: g.width,
  };
  const L = BUILTIN_LAYOUT;
  lumaChromaFeatures(planes, px, out, o + L.luma[0]);
  const chromaEdge = edgeFeatures(planes, px, out, o + L.edges[0]);
  statsFeatures(planes, px, chromaEdge, out, o + L.stats[0]);
  histogramFeatures(planes, px, out, o + L.histogram[0]);
  out.set(positions.subarray(p * POSITION_FEATURES, (p + 1) * POSITION_FEATURES), o + L.position[0]);
  pairFeatures(r, c, out, o + L.pairs[0]);
  lbpFeatures(r, c, out, o + L.lbp[0]);
}

/**
 * Features of one screen from its resized RGB image (`fine`: g.fineWidth × g.fineHeight × 3 bytes,
 * as resizeForBuiltin gives it): patches × dim, padding patches zero, written into `out` (zeros of
 * that size; a new array by default). Pure but for `out`; exported for tests and benchmarks.
 * `native`: the addon's pass (null: the JavaScript below; the same bits).
 */
export function builtinFeatures(fine: Uint8Array, g: ScreenGeometry, native = pixelKernels(), out: Float32Array = new Float32Array(BUILTIN_INFO.patches * DIM)): Float32Array {
  const expected = g.fineWidth * g.fineHeight * 3;
  if (fine.length !== expected) throw new Error(`builtinFeatures: expected ${g.fineWidth}×${g.fineHeight}×3 = ${expected} bytes, got ${fine.length}`);
  if (out.length !== BUILTIN_INFO.patches * DIM) throw new RangeError(`builtinFeatures: out has ${out.length} values, expected ${BUILTIN_INFO.patches}×${DIM}`);
  if (native) {
    native.builtinFeatures(fine, g.width, g.height, g.rows, g.cols, GRID_COLS, NATIVE_LAYOUT, lutBins, lutWeights, lutCounts, BIN_OF, positionTable(g.layout), out);
    return out;
  }
  splitFine(fine, g);
  fillPlanes(coarseRgb, g.width * g.height, planes);
  accumulatePairs(planes, g.width, g.height);
  accumulateLbp(fineGrey, g.fineWidth, g.fineHeight);
  const positions = positionTable(g.layout);
  const at = { histogram: BUILTIN_LAYOUT.histogram[0], edges: BUILTIN_LAYOUT.edges[0], row: BUILTIN_LAYOUT.row[0] };
  for (let r = 0; r < g.rows; r++) {
    for (let c = 0; c < g.cols; c++) patchVector(g, r, c, positions, out);
    rowFeatures(out, r, g.cols, GRID_COLS, DIM, at);
  }
  return out;
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

/**
 * Resizes any screen (1–2 channels grey, 3–4 RGB; alpha dropped) to its fine RGB image, keeping
 * the aspect (see builtinGeometry). libvips shrinks by whole factors with a box filter, then
 * finishes with a linear kernel: a local kernel (not lanczos) keeps a pixel's influence within
 * ~2 output pixels. RGB screens shrunk by less than 1.5 take reduce.ts's copy of that arithmetic:
 * the same bytes without a libvips call.
 */
export async function resizeForBuiltin(img: RawImage): Promise<{ fine: Uint8Array; geometry: ScreenGeometry }> {
  const geometry = builtinGeometry(img);
  const reduced = reduceLinear(img, geometry.fineWidth, geometry.fineHeight);
  if (reduced) return { fine: reduced, geometry };
  const buf = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels as 1 | 2 | 3 | 4 } })
    .removeAlpha()
    .toColourspace('srgb')
    .resize(geometry.fineWidth, geometry.fineHeight, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  const fine = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
  if (fine.length !== geometry.fineWidth * geometry.fineHeight * 3) throw new Error(`libvips gave ${fine.length} bytes for a ${geometry.fineWidth}×${geometry.fineHeight} RGB image`);
  return { fine, geometry };
}

export class BuiltinEncoder implements VisionEncoder {
  readonly info: EncoderInfo = BUILTIN_INFO;

  /** Each screen's features: views of one batch-wide array (so a screen kept keeps its batch's array alive). */
  async encode(images: RawImage[]): Promise<Float32Array[]> {
    const size = this.info.patches * this.info.dim;
    const out = await this.encodeInto(images, new Float32Array(images.length * size));
    return images.map((_, i) => out.subarray(i * size, (i + 1) * size));
  }

  /**
   * The batch's features side by side in `out` (zeros, images × patches × dim). Why one array: a new
   * one per screen is a page fault per 4 KB on first touch, dear on a virtual machine (README
   * Performance), and the worker threads hand their chunk back as one array anyway.
   */
  async encodeInto(images: RawImage[], out: Float32Array): Promise<Float32Array> {
    images.forEach((img, i) => checkRawImage(img, `image ${i} of the batch`));
    const size = this.info.patches * this.info.dim;
    if (out.length !== images.length * size) throw new RangeError(`encodeInto: out has ${out.length} values, expected ${images.length}×${size}`);
    // Resizes run concurrently on libuv's pool; each feature pass is synchronous on this thread.
    await Promise.all(
      images.map(async (img, i) => {
        const { fine, geometry } = await resizeForBuiltin(img);
        builtinFeatures(fine, geometry, undefined, out.subarray(i * size, (i + 1) * size));
      }),
    );
    return out;
  }
}
