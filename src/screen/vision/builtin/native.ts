/**
 * The built-in encoder in C++ (native/pixels.cc, the optional `autoui_pixels` addon): the shrink
 * (reduce.ts) and the feature pass (builtin.ts and the modules it calls), transcribed so that every
 * number rounds as the JavaScript's does: the features are the same to the bit with or without it
 * (tests/pixels.test.ts). Why: V8 runs these loops an element at a time with bounds checks, a
 * compiler vectorises them, and the feature pass is most of `data prepare`'s CPU. Without the
 * addon (not built, AUTOUI_NATIVE=0) the JavaScript runs. Every function checks that its arrays
 * cover the sizes given (RangeError otherwise) and writes only its outputs.
 */
import { loadAddon } from '../../../util/addon.js';

export interface PixelKernels {
  /** reduce.ts reduceRows into `out` (index.length / 3 rows of rowBytes bytes). */
  reduceRows(src: Uint8Array, rowBytes: number, index: Int32Array, weight: Int32Array, out: Uint8Array): void;
  /** reduce.ts reduceColumns into `out` (index.length / 3 RGB pixels a row, `height` rows). */
  reduceColumns(src: Uint8Array, width: number, height: number, index: Int32Array, weight: Int32Array, out: Uint8Array): void;
  /**
   * builtin.ts builtinFeatures into `out` (zeros; gridRows × gridCols patch vectors of layout's `dim`):
   * the `fine` image (2·width × 2·height RGB) of a screen filling rows × cols patches; `layout` =
   * the start of the luma (chroma right after), edges, stats, histogram, position, pairs, row and lbp
   * groups, then dim; the colour table (colour.ts), the LBP bins (lbp.ts) and the position codes
   * (position.ts) as JavaScript made them.
   */
  builtinFeatures(
    fine: Uint8Array, width: number, height: number, rows: number, cols: number, gridCols: number, layout: Int32Array,
    lutBins: Uint8Array, lutWeights: Float32Array, lutCounts: Uint8Array, binOf: Int8Array, positions: Float32Array, out: Float32Array,
  ): void;
}

let cached: { kernels: PixelKernels | null } | undefined;

/** The addon's functions, or null; loaded once per thread. */
export function pixelKernels(): PixelKernels | null {
  cached ??= { kernels: loadAddon<PixelKernels>('autoui_pixels') ?? null };
  return cached.kernels;
}
