/**
 * Names and attributes of the optimiser kernels that src/native/kernels.ts registers on the addon
 * (native/blas.cc). Kept apart from kernels.ts so that the optimiser can ask whether they are
 * there without loading any backend.
 */
import * as tf from '@tensorflow/tfjs-core';

/** Inputs {p, g, m, v} (float32, one shape), attrs AdamWAttrs; outputs [p', m', v']. */
export const ADAMW_KERNEL = 'AutouiAdamW';
/** Inputs {x0, x1, …} (float32); output: a float32 scalar, Σ x² over all of them. */
export const SUM_SQUARES_KERNEL = 'AutouiSumSquares';

export interface AdamWAttrs {
  lr: number;
  beta1: number;
  beta2: number;
  /** Bias corrections 1 − β1^t and 1 − β2^t. */
  bc1: number;
  bc2: number;
  epsilon: number;
  /** Decoupled weight decay of this step, lr · weightDecay (0 for parameters that skip it). */
  decay: number;
  /** Multiplies the gradient first (global-norm clipping). */
  gradScale: number;
}

/** Whether `kernel` is registered for the backend in use. */
export function hasKernel(kernel: string): boolean {
  return tf.getKernel(kernel, tf.getBackend()) !== undefined;
}
