import * as tf from '@tensorflow/tfjs-core';
import type { YX } from '../data/types.js';
import { groundingPatches } from './grounding.js';
import { dense, stopGradient } from './layers.js';
import { patchCentre, type ScreenLayout } from './pointer.js';

/*
 * Where inside the pointed patch a tap lands (our addition): the tap pointer picks a screen token,
 * and a patch is ~48 dp on a phone, so its centre can sit 20 px from a 21-px-tall search field, past
 * the reach of a finger's contact. The offset head reads the decoder's state at the tap and the
 * patch's own token, and says where in the patch's neighbourhood the target's centre lies:
 *   z      = relu(W_h h + W_k k_j + b_1)
 *   o_j    = R · tanh(W_o z + b_o)                 (in patch heights and widths)
 *   tap    = centre_j + o_j ⊙ (patch height, patch width)
 *   L_off  = mean over the patches j around the gold tap of ‖o_j − (tap_gold − centre_j) / size‖²
 * Every patch the grounding loss marks around a tap is trained (groundingPatches: within one patch of
 * it), since the pointer may settle on any of them. The patch's token carries its 4×4 brightness and
 * per-quadrant edges, which say where inside it a border or a word sits; the decoder's state says what
 * is being tapped. W_o and b_o start at zero, so an untrained head taps the patch's centre. A text item
 * is tapped at its box's centre. No gradient of L_off reaches h or k_j: the head reads the
 * model's states without reshaping them (trained through them, it cost synthetic typed text 2.5–5.6
 * points on three seeds; README Results).
 */

/** R: how far (in patch units) an offset may move a tap; the patches trained lie within one patch, and an edge row's cut-off cell moves its centre by up to half a patch more. */
export const OFFSET_RANGE = 1.5;
/** Most patches groundingPatches marks around one tap (the patch under it and four neighbours). */
export const OFFSET_SLOTS = 5;

/** The offset head's weights (params.ts). */
export interface OffsetWeights {
  /** W_h [d, d]. */
  hidden: tf.Tensor2D;
  /** W_k [d, d]. */
  key: tf.Tensor2D;
  /** b_1 [d]. */
  bias: tf.Tensor1D;
  /** W_o [2, d]. */
  out: tf.Tensor2D;
  /** b_o [2]. */
  outBias: tf.Tensor1D;
}

/** The offset head's training targets for a batch: OFFSET_SLOTS slots per row. */
export interface OffsetTargets {
  /** [B·C] int32: a patch around the row's gold tap, as an index into the row's screen tokens; 0 on empty slots. */
  patch: tf.Tensor1D;
  /** [B·C, 2] the gold tap's offset from that patch's centre, in patch heights and widths. */
  offset: tf.Tensor2D;
  /** [B·C] 1 on slots that hold a patch. */
  mask: tf.Tensor1D;
}

/** The offset of `tap` from the centre of patch `p`, in patch heights and widths. */
export function patchOffset(tap: YX, p: number, layout: ScreenLayout): YX {
  const [cy, cx] = patchCentre(p, layout.patches);
  return [(tap[0] - cy) / layout.patches.rowHeight, (tap[1] - cx) / layout.patches.colWidth];
}

/** Patch `p`'s centre moved by `offset` (patch units), kept on the screen. */
export function offsetPoint(p: number, offset: YX, layout: ScreenLayout): YX {
  const [cy, cx] = patchCentre(p, layout.patches);
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  return [clamp(cy + offset[0] * layout.patches.rowHeight), clamp(cx + offset[1] * layout.patches.colWidth)];
}

/** Per row, the patches around its gold tap (none for a row without one) and the tap's offset from each. */
export function offsetTargets(taps: readonly (YX | null)[], layouts: readonly ScreenLayout[]): { patches: number[]; offsets: YX[] }[] {
  return taps.map((tap, b) => {
    if (!tap) return { patches: [], offsets: [] };
    const patches = groundingPatches(tap, layouts[b]!.patches);
    return { patches, offsets: patches.map((p) => patchOffset(tap, p, layouts[b]!)) };
  });
}

/**
 * o [B·C, 2] for the decoder states `hidden` [B, d] at each row's tap and C patches per row:
 * `patch` [B·C] indexes row b's screen tokens `keys` [B, S, d] (rows b·C … b·C + C − 1 are row b's).
 */
export function tapOffsets(hidden: tf.Tensor2D, keys: tf.Tensor3D, patch: tf.Tensor1D, w: OffsetWeights): tf.Tensor2D {
  return tf.tidy(() => {
    const [b, s, d] = keys.shape;
    const c = patch.shape[0] / b;
    // A one-hot product, not tf.gather: gather's gradient (UnsortedSegmentSum) has no wasm kernel.
    const pick = tf.reshape(tf.oneHot(tf.cast(patch, 'int32'), s), [b, c, s]);
    const k = stopGradient(tf.reshape(tf.matMul(pick, keys), [b * c, d]) as tf.Tensor2D); // k_j, [B·C, d]
    const h = tf.expandDims(dense(stopGradient(hidden), w.hidden), 1); // [B, 1, d]
    const z = tf.relu(tf.add(tf.reshape(dense(k, w.key), [b, c, d]), tf.add(h, w.bias)));
    return tf.mul(tf.tanh(dense(tf.reshape(z, [b * c, d]) as tf.Tensor2D, w.out, w.outBias)), OFFSET_RANGE) as tf.Tensor2D;
  });
}

/** L_off: the mean squared offset error (summed over y and x) over the slots that hold a patch; 0 when none does. */
export function offsetLoss(predicted: tf.Tensor2D, t: OffsetTargets): tf.Scalar {
  return tf.tidy(() => {
    const perSlot = tf.sum(tf.square(tf.sub(predicted, t.offset)), 1);
    return tf.div(tf.sum(tf.mul(perSlot, t.mask)), tf.maximum(tf.sum(t.mask), 1)) as tf.Scalar;
  });
}

/** The batch tensors of offsetTargets' rows, OFFSET_SLOTS slots each. */
export function offsetTargetBatch(rows: readonly { patches: readonly number[]; offsets: readonly YX[] }[]): OffsetTargets {
  const n = rows.length * OFFSET_SLOTS;
  const patch = new Int32Array(n);
  const offset = new Float32Array(n * 2);
  const mask = new Float32Array(n);
  rows.forEach((r, b) =>
    r.patches.slice(0, OFFSET_SLOTS).forEach((p, i) => {
      const at = b * OFFSET_SLOTS + i;
      patch[at] = p;
      offset.set(r.offsets[i]!, at * 2);
      mask[at] = 1;
    }),
  );
  return { patch: tf.tensor1d(patch, 'int32'), offset: tf.tensor2d(offset, [n, 2]), mask: tf.tensor1d(mask) };
}
