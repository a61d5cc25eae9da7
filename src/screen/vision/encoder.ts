import type { RawImage } from '../types.js';

/**
 * What a frozen vision encoder produces. `id` is its identity: shards and checkpoints record it,
 * and features from two encoders with different ids must never be mixed.
 */
export interface EncoderInfo {
  /** e.g. 'builtin-v6'; bump the version whenever the features change. */
  id: string;
  /** Feature vectors per screen (1 when pooled). */
  patches: number;
  /** Width of each feature vector. */
  dim: number;
  /** Patch layout, row-major (`patches === rows * cols`); null for pooled or non-grid encoders. */
  grid: [rows: number, cols: number] | null;
  /** True when the encoder gives one vector per screen (BLIP-2 style), false for patch grids. */
  pooled: boolean;
  /**
   * How the grid lies on a screen (grid encoders only; absent = 'stretch'):
   * - 'stretch': the grid covers the whole screen whatever its aspect (each patch 1/rows × 1/cols);
   * - 'square': patches are squares in screen pixels, so a screen fills as many rows and columns
   *   as its aspect needs (at most `grid`); the rest of the grid is padding, zero and masked.
   */
  layout?: 'stretch' | 'square';
}

/** Where one screen's patches lie, as fractions of the screen; a pure function of the encoder and the screen size. */
export interface PatchLayout {
  /** The full grid [rows, cols]; patch p is row ⌊p / cols⌋, column p mod cols. */
  grid: readonly [number, number];
  /** Rows and columns that hold the screen; patches outside them are padding. */
  rows: number;
  cols: number;
  /** Height and width of one patch, normalised by the screen's height and width. */
  rowHeight: number;
  colWidth: number;
}

/**
 * The patch layout of a `width × height` screen, or null for pooled / grid-less encoders. For
 * 'square' layouts the patch side is the larger of width/cols and height/rows pixels, so the screen
 * fits the grid whichever way it is oriented.
 */
export function patchLayout(info: EncoderInfo, size: { width: number; height: number }): PatchLayout | null {
  if (!info.grid) return null;
  const [gr, gc] = info.grid;
  if ((info.layout ?? 'stretch') === 'stretch') return { grid: info.grid, rows: gr, cols: gc, rowHeight: 1 / gr, colWidth: 1 / gc };
  const side = Math.max(size.width / gc, size.height / gr);
  const rows = Math.min(gr, Math.ceil(size.height / side - 1e-9));
  const cols = Math.min(gc, Math.ceil(size.width / side - 1e-9));
  return { grid: info.grid, rows, cols, rowHeight: side / size.height, colWidth: side / size.width };
}

/** Patch p's box (y, x, h, w), normalised, clipped to the screen. */
export function patchBox(layout: PatchLayout, p: number): [number, number, number, number] {
  const r = Math.floor(p / layout.grid[1]);
  const c = p % layout.grid[1];
  const y = r * layout.rowHeight;
  const x = c * layout.colWidth;
  return [y, x, Math.min(layout.rowHeight, 1 - y), Math.min(layout.colWidth, 1 - x)];
}

/** True for patches that hold part of the screen (not padding). */
export function patchIsReal(layout: PatchLayout, p: number): boolean {
  return Math.floor(p / layout.grid[1]) < layout.rows && p % layout.grid[1] < layout.cols;
}

/** A frozen image encoder: screens in, `patches × dim` row-major features out. Never trained. */
export interface VisionEncoder {
  readonly info: EncoderInfo;
  /** One Float32Array of length `patches * dim` per image, in input order; padding patches (see patchLayout) are all zero. */
  encode(images: RawImage[]): Promise<Float32Array[]>;
  dispose?(): void;
}

/** True when two encoders give interchangeable features. */
export function sameEncoder(a: EncoderInfo, b: EncoderInfo): boolean {
  return (
    a.id === b.id &&
    a.patches === b.patches &&
    a.dim === b.dim &&
    a.pooled === b.pooled &&
    JSON.stringify(a.grid) === JSON.stringify(b.grid) &&
    (a.layout ?? 'stretch') === (b.layout ?? 'stretch')
  );
}
