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

/**
 * Codes depend only on the layout, and a data set has one or a few screen sizes: tables are kept
 * per layout (a bounded number, cleared when full) so the sines are computed once per size.
 */
const MAX_TABLES = 64;
const tables = new Map<string, Float32Array>();

/** The codes of every patch of `layout`, [patch * POSITION_FEATURES + k]. */
export function positionTable(layout: PatchLayout): Float32Array {
  const key = `${layout.grid[0]},${layout.grid[1]},${layout.rows},${layout.cols},${layout.rowHeight},${layout.colWidth}`;
  let table = tables.get(key);
  if (!table) {
    if (tables.size >= MAX_TABLES) tables.clear();
    const patches = layout.grid[0] * layout.grid[1];
    table = new Float32Array(patches * POSITION_FEATURES);
    for (let q = 0; q < patches; q++) positionCode(layout, q, table, q * POSITION_FEATURES);
    tables.set(key, table);
  }
  return table;
}

function positionCode(layout: PatchLayout, p: number, out: Float32Array, o: number): void {
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
