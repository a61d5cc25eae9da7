/**
 * A fixed position code per real patch, from its place in the grid and on the screen:
 *   - the patch centre's y and x as fractions of the screen, in [-1, 1]: a linear head reads
 *     AITW's normalised coordinates off them directly;
 *   - its distance from the top and from the bottom of the screen in patch units (over the grid's
 *     rows), in [-1, 1]: status bars and app bars keep their distance from the top, navigation
 *     bars and keyboards from the bottom, whatever the screen's aspect;
 *   - sin/cos of the grid row and column at octave frequencies, the finest with a period of two
 *     patches (the Nyquist limit of the grid), so attention can sharpen onto nearby patches:
 *     5 octaves for 20 rows, 4 for 8 columns.
 */
import { patchBox, type PatchLayout } from '../encoder.js';

const Y_OCTAVES = 5;
const X_OCTAVES = 4;
export const POSITION_FEATURES = 4 + 2 * Y_OCTAVES + 2 * X_OCTAVES;

/** Writes the code of patch p (real) of `layout` at out[o…]. */
export function positionFeatures(layout: PatchLayout, p: number, out: Float32Array, o: number): void {
  const [gridRows, gridCols] = layout.grid;
  const r = Math.floor(p / gridCols);
  const c = p % gridCols;
  const [by, bx, bh, bw] = patchBox(layout, p);
  let k = o;
  out[k++] = 2 * (by + bh / 2) - 1;
  out[k++] = 2 * (bx + bw / 2) - 1;
  out[k++] = (2 * (r + 0.5)) / gridRows - 1;
  out[k++] = (2 * (layout.rows - r - 0.5)) / gridRows - 1;
  const gy = (r + 0.5) / gridRows;
  const gx = (c + 0.5) / gridCols;
  for (let f = 0; f < Y_OCTAVES; f++) {
    out[k++] = Math.sin(Math.PI * 2 ** f * gy);
    out[k++] = Math.cos(Math.PI * 2 ** f * gy);
  }
  for (let f = 0; f < X_OCTAVES; f++) {
    out[k++] = Math.sin(Math.PI * 2 ** f * gx);
    out[k++] = Math.cos(Math.PI * 2 ** f * gx);
  }
}
