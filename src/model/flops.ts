import { innerDim, type ModelConfig } from './config.js';

/** Shapes of one batch: B sequences, L input tokens, T target tokens, P screen patches. */
export interface BatchShape {
  B: number;
  L: number;
  T: number;
  P: number;
}

/**
 * Multiply-add FLOPs (2 per MAC) of one forward pass, counted from the equations: what a benchmark
 * divides by time to report achieved GFLOP/s. Norms, softmax and biases are left out (they are
 * memory-bound and small). A training step costs about 3× this (forward + two backward matmuls).
 */
export function forwardFlops(c: ModelConfig, { B, L, T, P }: BatchShape): { encoder: number; fusion: number; decoder: number; lmHead: number; total: number } {
  const d = c.dModel;
  const inner = innerDim(c);
  const ffMats = c.feedForwardProj === 'gated-gelu' ? 3 : 2;
  const mm = (rows: number, k: number, n: number) => 2 * rows * k * n;
  const selfAttn = (n: number) => mm(B * n, d, 3 * inner) + mm(B * n, inner, d) + 2 * mm(B * c.numHeads * n, c.dKv, n);
  const ff = (n: number) => ffMats * mm(B * n, d, c.dFf);
  const encoder = c.numLayers * (selfAttn(L) + ff(L));
  // Screen projection W, single-head attention (QK^T and AV) and the two gate projections.
  const fusion = mm(B * P, c.screenDim, d) + 2 * mm(B * L, d, P) + 2 * mm(B * L, d, d);
  const cross = mm(B * T, d, inner) + mm(B * L, d, 2 * inner) + mm(B * T, inner, d) + 2 * mm(B * c.numHeads * T, c.dKv, L);
  const decoder = c.numDecoderLayers * (selfAttn(T) + cross + ff(T));
  const lmHead = mm(B * T, d, c.vocabSize);
  return { encoder, fusion, decoder, lmHead, total: encoder + fusion + decoder + lmHead };
}
