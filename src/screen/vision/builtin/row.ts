/**
 * Row context, the one group that looks beyond a patch's window (as a ViT's patch tokens do
 * through self-attention): for each patch, the largest share of each colour bin among the patches
 * to its left in its row, the same to its right, and the row's mean edge energy per orientation.
 * List rows put their state (a switch, a checkbox, a count, a chevron) on the far side of their
 * label; a single attention query that finds a row by its icon or words then also carries what the
 * row's other end shows, wherever in the row that is. The maximum, not the mean, so a small
 * accent-coloured thing counts fully however long the row.
 */
import { COLOUR_BINS } from './colour.js';

export const ROW_FEATURES = 2 * COLOUR_BINS + 4;

/** Offsets of the inputs (each patch's colour histogram and edge energies) and the output in a patch vector. */
export interface RowOffsets {
  histogram: number;
  edges: number;
  row: number;
}

const running = new Float32Array(COLOUR_BINS);
const edgeMean = new Float64Array(4);

/** Fills the row context of the `cols` real patches of grid row `r` (patch vectors `dim` wide, grid `gridCols` wide). */
export function rowFeatures(out: Float32Array, r: number, cols: number, gridCols: number, dim: number, at: RowOffsets): void {
  const base = (c: number) => (r * gridCols + c) * dim;
  // Left maxima, sweeping right; then right maxima, sweeping left.
  running.fill(0);
  for (let c = 0; c < cols; c++) {
    out.set(running, base(c) + at.row);
    for (let k = 0; k < COLOUR_BINS; k++) running[k] = Math.max(running[k]!, out[base(c) + at.histogram + k]!);
  }
  running.fill(0);
  for (let c = cols - 1; c >= 0; c--) {
    out.set(running, base(c) + at.row + COLOUR_BINS);
    for (let k = 0; k < COLOUR_BINS; k++) running[k] = Math.max(running[k]!, out[base(c) + at.histogram + k]!);
  }
  edgeMean.fill(0);
  for (let c = 0; c < cols; c++) {
    for (let q = 0; q < 16; q++) edgeMean[q % 4] += out[base(c) + at.edges + q]! / (4 * cols);
  }
  for (let c = 0; c < cols; c++) for (let k = 0; k < 4; k++) out[base(c) + at.row + 2 * COLOUR_BINS + k] = edgeMean[k]!;
}
