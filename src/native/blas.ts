/**
 * The optional OpenBLAS addon (native/, built by scripts/build-native.mjs). Loading it is
 * best effort: absent, unbuildable or broken, `loadNativeBlas()` returns undefined and callers keep
 * the JS/wasm kernels.
 */
import { loadAddon } from '../util/addon.js';

/** A 0/1 mask as the tensor holds it (int32 or float32). */
export type MaskArray = Int32Array | Float32Array;

/**
 * The addon's exports (native/addon.cc). Every array is used in place; every function checks
 * that each array covers the shape it is given (RangeError otherwise, TypeError for a wrong
 * type) and writes only its outputs. `rate`/`seed` describe a dropout mask (rate 0 = none) that
 * is a pure function of (seed, element index), so a backward pass given the same pair applies
 * the forward mask again.
 */
export interface NativeBlas {
  /**
   * Row-major c[bi] = op(a[bi % batchA]) · op(b[bi % batchB]) for bi < batch, where op(x) = xᵀ when
   * its flag is set; a holds batchA [m, k] (or [k, m] if transA) matrices, b batchB [k, n] (or [n, k]),
   * c batch [m, n]. Writes c in place; throws if an array is shorter than its shape needs.
   */
  sgemm(
    a: Float32Array, b: Float32Array, c: Float32Array,
    batch: number, batchA: number, batchB: number,
    m: number, n: number, k: number,
    transA: boolean, transB: boolean,
  ): void;
  /**
   * One AdamW step for one parameter tensor into pOut, mOut, vOut (all arrays one length):
   * g' = gradScale·g, m' = β1·m + (1−β1)·g', v' = β2·v + (1−β2)·g'², p' = (1 − decay)·p − lr·(m'/bc1)/(√(v'/bc2) + ε).
   */
  adamw(
    p: Float32Array, g: Float32Array, m: Float32Array, v: Float32Array,
    pOut: Float32Array, mOut: Float32Array, vOut: Float32Array,
    lr: number, beta1: number, beta2: number, bc1: number, bc2: number, epsilon: number, decay: number, gradScale: number,
  ): void;
  /** Σ x², accumulated in double. */
  sumSquares(x: Float32Array): number;
  /**
   * y [n0, n1, n2] = a op b (op 0 add, 1 sub, 2 mul), element (i, j, k) reading a[i·a0 + j·a1 + k·a2]
   * and b[i·b0 + j·b1 + k·b2]; a2 and b2 are 0 (broadcast) or 1.
   */
  binary(op: number, a: Float32Array, b: Float32Array, y: Float32Array, n0: number, n1: number, n2: number, a0: number, a1: number, a2: number, b0: number, b1: number, b2: number): void;
  /** y [outer, inner] = Σ over mid of x [outer, mid, inner], each sum from 0 in order. */
  sumAxis(x: Float32Array, y: Float32Array, outer: number, mid: number, inner: number): void;
  /** y = x ⊙ dropout mask. */
  dropout(x: Float32Array, y: Float32Array, rate: number, seed: number): void;
  /** y = x + h ⊙ dropout mask. */
  addDropout(x: Float32Array, h: Float32Array, y: Float32Array, rate: number, seed: number): void;
  /** T5LayerNorm over rows of w.length: y = x·(mean(x²) + eps)^-½·w. */
  rmsNorm(x: Float32Array, w: Float32Array, y: Float32Array, eps: number): void;
  rmsNormGrad(dy: Float32Array, x: Float32Array, w: Float32Array, dx: Float32Array, dw: Float32Array, eps: number): void;
  /**
   * T5 feed-forward on rows x [n, d] (HF weights wi0/wi1 [dff, d], wo [d, dff]): gated
   * (wi1 given) y = wo·drop(gelu_new(wi0·x) ⊙ wi1·x), else y = wo·drop(relu(wi0·x)). Writes the
   * pre-activations a = x·wi0ᵀ and b = x·wi1ᵀ [n, dff] for the backward pass.
   */
  feedForward(
    x: Float32Array, wi0: Float32Array, wi1: Float32Array | null, wo: Float32Array,
    y: Float32Array, a: Float32Array, b: Float32Array | null, n: number, d: number, dff: number, rate: number, seed: number,
  ): void;
  feedForwardGrad(
    dy: Float32Array, x: Float32Array, wi0: Float32Array, wi1: Float32Array | null, wo: Float32Array, a: Float32Array, b: Float32Array | null,
    dx: Float32Array, dwi0: Float32Array, dwi1: Float32Array | null, dwo: Float32Array, n: number, d: number, dff: number, rate: number, seed: number,
  ): void;
  /**
   * Attention over row layouts q [batch·lq, heads·dk], k/v [batch·lk, heads·dk]: probs
   * [batch, heads, lq, lk] = softmax(scale·q·kᵀ + table[buckets] + keyMask bias + causal bias),
   * out = dropout(probs)·v in q's layout. v and out null: probs only.
   */
  attention(
    q: Float32Array, k: Float32Array, v: Float32Array | null, out: Float32Array | null, probs: Float32Array,
    table: Float32Array | null, buckets: Int32Array | null, keyMask: MaskArray | null,
    batch: number, lq: number, lk: number, heads: number, dk: number, scale: number, causal: boolean, queryOffset: number, rate: number, seed: number,
  ): void;
  /** Backward of attention from dOut (with v, dv) or dProbs (without); dTable [numBuckets, heads] with buckets. */
  attentionGrad(
    dOut: Float32Array | null, dProbs: Float32Array | null, q: Float32Array, k: Float32Array, v: Float32Array | null, probs: Float32Array,
    dq: Float32Array, dk: Float32Array, dv: Float32Array | null, dTable: Float32Array | null, buckets: Int32Array | null,
    batch: number, lq: number, lk: number, heads: number, dkDim: number, scale: number, rate: number, seed: number,
  ): void;
  /**
   * The whole T5 attention sub-layer on rows x [batch·lq, d] over src [batch·lk, d] (null: x):
   * q = x·wqᵀ, k = src·wkᵀ, v = src·wvᵀ, ctx = attention(q, k, v) as `attention` computes it,
   * y = ctx·woᵀ. Writes q, k, v, ctx and probs for the backward pass.
   */
  attentionLayer(
    x: Float32Array, src: Float32Array | null, wq: Float32Array, wk: Float32Array, wv: Float32Array, wo: Float32Array,
    y: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, ctx: Float32Array, probs: Float32Array,
    table: Float32Array | null, buckets: Int32Array | null, keyMask: MaskArray | null,
    batch: number, lq: number, lk: number, heads: number, dk: number, d: number, causal: boolean, queryOffset: number, rate: number, seed: number,
  ): void;
  /** Backward of attentionLayer: dx (and dsrc when src was given), the four weight gradients, dTable with buckets. */
  attentionLayerGrad(
    dy: Float32Array, x: Float32Array, src: Float32Array | null, wq: Float32Array, wk: Float32Array, wv: Float32Array, wo: Float32Array,
    q: Float32Array, k: Float32Array, v: Float32Array, ctx: Float32Array, probs: Float32Array,
    dx: Float32Array, dsrc: Float32Array | null, dwq: Float32Array, dwk: Float32Array, dwv: Float32Array, dwo: Float32Array,
    dTable: Float32Array | null, buckets: Int32Array | null,
    batch: number, lq: number, lk: number, heads: number, dk: number, d: number, rate: number, seed: number,
  ): void;
  /** y [n, out] = x [n, in]·wᵀ (+ bias [out]). */
  linear(x: Float32Array, w: Float32Array, bias: Float32Array | null, y: Float32Array, inDim: number): void;
  /** The parameters' gradients of a linear layer (dW, and dbias when given); the input's is a plain matmul. */
  linearGrad(dy: Float32Array, x: Float32Array, dw: Float32Array, dbias: Float32Array | null, inDim: number): void;
  /** Per-row loss = log Σ e^logits − logits[label] (0 where label = ignoreIndex). */
  crossEntropy(logits: Float32Array, labels: Int32Array, loss: Float32Array, ignoreIndex: number): void;
  /** dlogits = (softmax − onehot(label))·dloss per row. */
  crossEntropyGrad(dloss: Float32Array, logits: Float32Array, labels: Int32Array, dlogits: Float32Array, ignoreIndex: number): void;
  /** y [ids.length, d] = dropout(table[ids]). */
  embedding(table: Float32Array, ids: Int32Array, y: Float32Array, d: number, rate: number, seed: number): void;
  /** dtable = scatter-add of dropout(dy) rows at ids (dtable is overwritten). */
  embeddingGrad(dy: Float32Array, ids: Int32Array, dtable: Float32Array, d: number, rate: number, seed: number): void;
  /** ā [batch, p] = Σ_t m_t·a[b, t, :] / max(Σ_t m_t, 1). */
  meanTokenAttention(a: Float32Array, mask: MaskArray, out: Float32Array, batch: number, l: number, p: number): void;
  meanTokenAttentionGrad(dOut: Float32Array, mask: MaskArray, da: Float32Array, batch: number, l: number, p: number): void;
  /** Mean over rows with a target of −log(Σ_p ā_p·t_p + 1e-6); 0 when no row has one. */
  groundingLoss(a: Float32Array, mask: MaskArray, targets: Float32Array, batch: number, l: number, p: number): number;
  groundingLossGrad(dLoss: number, a: Float32Array, mask: MaskArray, targets: Float32Array, da: Float32Array, batch: number, l: number, p: number): void;
  /** Threads the kernels split their work over (OpenBLAS itself stays single-threaded). */
  setThreads(threads: number): void;
  threads(): number;
  /** OpenBLAS build string, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64". */
  config(): string;
}

let cached: { blas: NativeBlas | undefined } | undefined;

/**
 * The addon with its threads set (default 2 = this machine's cores; AUTOUI_BLAS_THREADS overrides),
 * or undefined when it is not built, fails to load, or AUTOUI_NATIVE=0. Loaded once.
 */
export function loadNativeBlas(): NativeBlas | undefined {
  if (cached) return cached.blas;
  const blas = loadAddon<NativeBlas>('autoui_blas');
  // A fixed count, not "all cores": results must not depend on the machine for resume to be bit-exact.
  blas?.setThreads(blasThreads());
  cached = { blas };
  return blas;
}

function blasThreads(): number {
  const v = Number(process.env.AUTOUI_BLAS_THREADS);
  return Number.isInteger(v) && v >= 1 ? v : 2;
}
