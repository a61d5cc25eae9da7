import { patchLayout, type EncoderInfo, type PatchLayout } from '../encoder.js';

/**
 * Where the built-in encoder's pixels lie. The grid is square patches in screen pixels
 * ('square' layout, see encoder.ts): a screen is resized, keeping its aspect, so that one patch
 * becomes PATCH_PX × PATCH_PX pixels, and fills as many grid rows and columns as its aspect needs.
 *
 * Grid size: 8 columns, because a phone is 360–412 dp wide and 8 columns then make patches of
 * 45–51 dp, Material Design's 48 dp minimum touch target: one patch ≈ one tappable thing. 20 rows
 * hold any portrait screen down to an aspect (width:height) of 8:20 = 0.4, which covers phones
 * from 9:16 (0.56) to 9:21 (0.43), AITW's 1080×2400 (0.45) included.
 */
export const GRID_COLS = 8;
export const GRID_ROWS = 20;
/**
 * Pixels per patch side in the colour image every group but the glyph shapes reads: 8 px on a
 * ~48 dp patch is ~6 dp a pixel, the size of the smallest things that matter (a switch knob, a
 * radio dot, a text stroke cluster). The glyph-shape group reads a grey copy at twice that.
 */
export const PATCH_PX = 8;
export const FINE_SCALE = 2;
export const FINE_PATCH_PX = PATCH_PX * FINE_SCALE;
/** Largest resized images any screen can give (the whole grid). */
export const MAX_COARSE_PIXELS = GRID_COLS * PATCH_PX * GRID_ROWS * PATCH_PX;
export const MAX_FINE_PIXELS = MAX_COARSE_PIXELS * FINE_SCALE * FINE_SCALE;

/** One screen's pixel geometry: its patch layout and the size of its resized images. */
export interface ScreenGeometry {
  layout: PatchLayout;
  /** Real (non-padding) patch rows and columns. */
  rows: number;
  cols: number;
  /** The colour image: `width × height` pixels, PATCH_PX per patch side (the last row/column may be cut). */
  width: number;
  height: number;
  /** The grey copy: exactly FINE_SCALE times the colour image per side. */
  fineWidth: number;
  fineHeight: number;
}

/**
 * The geometry of a `width × height` screen under `info` (a 'square' layout). The resized size is
 * the screen's size at PATCH_PX pixels per patch side, rounded, then clamped so that exactly the
 * layout's real rows and columns hold pixels: patch boundaries stay within half a pixel of
 * patchLayout's, and a patch is padding exactly when patchLayout says so.
 */
export function screenGeometry(info: EncoderInfo, size: { width: number; height: number }): ScreenGeometry {
  const layout = patchLayout(info, size);
  if (!layout) throw new Error(`encoder ${info.id} has no patch grid`);
  const fit = (real: number, screenFraction: number) => {
    const px = Math.round(PATCH_PX / screenFraction);
    return Math.min(real * PATCH_PX, Math.max((real - 1) * PATCH_PX + 1, px));
  };
  // A patch is colWidth of the screen wide, so the screen is PATCH_PX / colWidth pixels wide.
  const width = fit(layout.cols, layout.colWidth);
  const height = fit(layout.rows, layout.rowHeight);
  return { layout, rows: layout.rows, cols: layout.cols, width, height, fineWidth: width * FINE_SCALE, fineHeight: height * FINE_SCALE };
}
