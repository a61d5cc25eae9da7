/**
 * GatherV2 by whole slices. The wasm backend's stock kernel computes every output element's source
 * offset from strides, one element at a time; beam search re-selects its hypotheses' decoder state
 * every step (text_beam.ts → selectDecoderRows), gathering each layer's cross-attention keys and
 * values by rows of tens of thousands of floats, and that loop was half of a validation pass's time.
 * A gathered slice is contiguous in both input and output, so it is one TypedArray.set, which V8
 * runs as a memory copy.
 */

/** The flattened shapes of a gather (tfjs's collectGatherOpShapeInfo): x is [batch, outer, dim, slice]. */
export interface GatherShape {
  batchSize: number;
  outerSize: number;
  dimSize: number;
  sliceSize: number;
}

/** Below this many elements a slice is cheaper to leave to the stock kernel than to copy with a call per slice. */
export const MIN_GATHER_SLICE = 64;

type Values = Float32Array | Int32Array;

/**
 * out[b, o, j, :] = x[b, o, indices[b, j], :] for out laid out [batch, outer, indices per batch,
 * slice]. Indices must lie in [0, dimSize) (the kernel checks them first).
 */
export function gatherSlices<T extends Values>(x: T, indices: Int32Array, s: GatherShape, out: T): void {
  const perBatch = indices.length / s.batchSize;
  const { sliceSize: slice, dimSize: dim } = s;
  let at = 0;
  for (let b = 0; b < s.batchSize; b++) {
    for (let o = 0; o < s.outerSize; o++) {
      const base = (b * s.outerSize + o) * dim;
      for (let j = 0; j < perBatch; j++) {
        const from = (base + indices[b * perBatch + j]!) * slice;
        out.set(x.subarray(from, from + slice), at);
        at += slice;
      }
    }
  }
}
