/**
 * Fused training ops over the addon (native/): each is one tfjs kernel forward and one backward,
 * in place of the chain of small tfjs ops the model would otherwise record (see src/model for the
 * chains, which stay the path without the addon). The kernels themselves are registered per
 * backend by src/native/kernels.ts; this file names them, wraps them as differentiable tensor
 * functions, and loads no backend, so the model can ask `hasFused(op)` cheaply.
 *
 * Gradients: single-output kernels use registered gradient configs. Kernels that also return
 * tensors only the backward pass needs (pre-activations, attention probabilities) are wrapped in
 * tf.customGrad instead: the tape would otherwise allocate zero gradients for those outputs.
 *
 * Dropout inside these ops is a pure function of (seed, element index) (native/mathfun.h): the
 * backward kernels recompute the mask from the same seed rather than keeping it.
 */
import * as tf from '@tensorflow/tfjs-core';

export const FUSED = {
  dropout: 'AutouiDropout',
  addDropout: 'AutouiAddDropout',
  rmsNorm: 'AutouiRmsNorm',
  rmsNormGrad: 'AutouiRmsNormGrad',
  feedForward: 'AutouiFeedForward',
  feedForwardGrad: 'AutouiFeedForwardGrad',
  attention: 'AutouiAttention',
  attentionGrad: 'AutouiAttentionGrad',
  attentionLayer: 'AutouiAttentionLayer',
  attentionLayerGrad: 'AutouiAttentionLayerGrad',
  linear: 'AutouiLinear',
  linearGrad: 'AutouiLinearGrad',
  attentionProbs: 'AutouiAttentionProbs',
  attentionProbsGrad: 'AutouiAttentionProbsGrad',
  crossEntropy: 'AutouiCrossEntropy',
  crossEntropyGrad: 'AutouiCrossEntropyGrad',
  embedding: 'AutouiEmbedding',
  embeddingGrad: 'AutouiEmbeddingGrad',
  meanTokenAttention: 'AutouiMeanTokenAttention',
  meanTokenAttentionGrad: 'AutouiMeanTokenAttentionGrad',
  groundingLoss: 'AutouiGroundingLoss',
  groundingLossGrad: 'AutouiGroundingLossGrad',
} as const;

export type FusedKernelName = (typeof FUSED)[keyof typeof FUSED];

/** The fused ops and the kernels each needs (forward, backward, and kernels its gradient runs). */
export const FUSED_OPS = {
  dropout: [FUSED.dropout],
  addDropout: [FUSED.addDropout, FUSED.dropout],
  rmsNorm: [FUSED.rmsNorm, FUSED.rmsNormGrad],
  feedForward: [FUSED.feedForward, FUSED.feedForwardGrad],
  attention: [FUSED.attention, FUSED.attentionGrad],
  attentionLayer: [FUSED.attentionLayer, FUSED.attentionLayerGrad],
  linear: [FUSED.linear, FUSED.linearGrad],
  attentionProbs: [FUSED.attentionProbs, FUSED.attentionProbsGrad],
  crossEntropy: [FUSED.crossEntropy, FUSED.crossEntropyGrad],
  embedding: [FUSED.embedding, FUSED.embeddingGrad],
  meanTokenAttention: [FUSED.meanTokenAttention, FUSED.meanTokenAttentionGrad],
  groundingLoss: [FUSED.groundingLoss, FUSED.groundingLossGrad],
} as const satisfies Record<string, readonly FusedKernelName[]>;

export type FusedOp = keyof typeof FUSED_OPS;

/** Dropout of one op: rate 0 = none; seed picks the mask. */
export interface DropoutAttrs {
  rate: number;
  seed: number;
}

/** Attributes of the attention kernels (shapes are read from the inputs). */
export interface AttentionAttrs extends DropoutAttrs {
  batch: number;
  numHeads: number;
  /** Multiplies q·kᵀ before the bias (T5: 1). */
  scale: number;
  causal: boolean;
  queryOffset: number;
  /** Bucket of every (query, key) pair, row-major [lq, lk], when the inputs include a position table. */
  buckets: Int32Array | null;
  /** Rows of that table (the size of its gradient). */
  numBuckets: number;
}

/**
 * Whether a fused op's kernels are registered for the backend in use. Looked up on every call (a
 * map lookup): tests and benchmarks switch backends and kernels within one process.
 */
export function hasFused(op: FusedOp): boolean {
  return tf.getKernel(FUSED_OPS[op][0], tf.getBackend()) !== undefined;
}

type Inputs = Record<string, tf.Tensor>;

function run(kernel: FusedKernelName, inputs: Inputs, attrs: object = {}): tf.Tensor[] {
  const out = tf.engine().runKernel(kernel, inputs as unknown as tf.NamedTensorMap, attrs as unknown as tf.NamedAttrMap);
  return Array.isArray(out) ? (out as tf.Tensor[]) : [out as tf.Tensor];
}

function run1(kernel: FusedKernelName, inputs: Inputs, attrs: object = {}): tf.Tensor {
  return run(kernel, inputs, attrs)[0]!;
}

type CustomGradFn = Parameters<typeof tf.customGrad>[0];
type GradResult = { value: tf.Tensor; gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor[] };

/** tf.customGrad over a list of inputs (its own parameter type is a variadic union). */
function customGradList(inputs: tf.Tensor[], f: (save: tf.GradSaveFunc) => GradResult): tf.Tensor {
  const g = tf.customGrad(((...args: unknown[]) => f(args[args.length - 1] as tf.GradSaveFunc)) as unknown as CustomGradFn);
  return (g as unknown as (...xs: tf.Tensor[]) => tf.Tensor)(...inputs);
}

/** Gradients of the single-output kernels, registered once at import. */
const GRADIENTS: tf.GradConfig[] = [
  {
    kernelName: FUSED.dropout,
    gradFunc: (dy, _saved, attrs) => ({ x: () => run1(FUSED.dropout, { x: dy as tf.Tensor }, attrs) }),
  },
  {
    kernelName: FUSED.addDropout,
    // Never the same tensor object for both inputs: the tape disposes a gradient once it has added
    // another into it, which would leave the other input with a disposed one (a clone shares the data).
    gradFunc: (dy, _saved, attrs) => ({
      x: () => dy as tf.Tensor,
      h: () => ((attrs as unknown as DropoutAttrs).rate > 0 ? run1(FUSED.dropout, { x: dy as tf.Tensor }, attrs) : tf.clone(dy as tf.Tensor)),
    }),
  },
  {
    kernelName: FUSED.rmsNorm,
    inputsToSave: ['x', 'weight'],
    gradFunc: (dy, saved, attrs) => {
      const [x, weight] = saved as [tf.Tensor, tf.Tensor];
      const [dx, dw] = run(FUSED.rmsNormGrad, { dy: dy as tf.Tensor, x, weight }, attrs);
      return { x: () => dx!, weight: () => dw! };
    },
  },
  {
    kernelName: FUSED.linear,
    inputsToSave: ['x', 'weight'],
    // The input's gradient is its own product, run only when the tape asks for it: a layer over constant features (the
    // screen's projection, the largest linear layer of a step) needs the weight's alone.
    gradFunc: (dy, saved, attrs) => {
      const [x, weight] = saved as [tf.Tensor, tf.Tensor];
      const [dw, dbias] = run(FUSED.linearGrad, { dy: dy as tf.Tensor, x, weight }, attrs);
      return { x: () => tf.matMul(dy as tf.Tensor2D, weight as tf.Tensor2D), weight: () => dw!, bias: () => dbias! };
    },
  },
  {
    kernelName: FUSED.attentionProbs,
    inputsToSave: ['q', 'k'],
    outputsToSave: [true],
    gradFunc: (dy, saved, attrs) => {
      const [q, k, probs] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
      const [dq, dk] = run(FUSED.attentionProbsGrad, { dProbs: dy as tf.Tensor, q, k, probs }, attrs);
      return { q: () => dq!, k: () => dk! };
    },
  },
  {
    kernelName: FUSED.crossEntropy,
    inputsToSave: ['logits', 'labels'],
    gradFunc: (dy, saved, attrs) => {
      const [logits, labels] = saved as [tf.Tensor, tf.Tensor];
      return { logits: () => run1(FUSED.crossEntropyGrad, { dloss: dy as tf.Tensor, logits, labels }, attrs) };
    },
  },
  {
    kernelName: FUSED.embedding,
    inputsToSave: ['table', 'ids'],
    gradFunc: (dy, saved, attrs) => {
      const [table, ids] = saved as [tf.Tensor, tf.Tensor];
      return { table: () => run1(FUSED.embeddingGrad, { dy: dy as tf.Tensor, table, ids }, attrs) };
    },
  },
  {
    kernelName: FUSED.meanTokenAttention,
    inputsToSave: ['attention', 'mask'],
    gradFunc: (dy, saved) => {
      const [attention, mask] = saved as [tf.Tensor, tf.Tensor];
      return { attention: () => run1(FUSED.meanTokenAttentionGrad, { dy: dy as tf.Tensor, attention, mask }) };
    },
  },
  {
    kernelName: FUSED.groundingLoss,
    inputsToSave: ['attention', 'mask', 'targets'],
    gradFunc: (dy, saved) => {
      const [attention, mask, targets] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
      return { attention: () => run1(FUSED.groundingLossGrad, { dy: dy as tf.Tensor, attention, mask, targets }) };
    },
  },
];
for (const config of GRADIENTS) if (!tf.getGradient(config.kernelName)) tf.registerGradient(config);

/** Masks go to the kernels as int32 or float32; anything else (bool) is cast once here. */
function maskInput(mask: tf.Tensor): tf.Tensor {
  return mask.dtype === 'int32' || mask.dtype === 'float32' ? mask : tf.cast(mask, 'int32');
}

/** x ⊙ dropout mask. */
export function fusedDropout<T extends tf.Tensor>(x: T, rate: number, seed: number): T {
  return run1(FUSED.dropout, { x }, { rate, seed }) as T;
}

/** x + h ⊙ dropout mask: a residual connection. */
export function fusedAddDropout<T extends tf.Tensor>(x: T, h: tf.Tensor, rate: number, seed: number): T {
  return run1(FUSED.addDropout, { x, h }, { rate, seed }) as T;
}

/** T5LayerNorm over the last axis: x·(mean(x²) + ε)^-½·w. */
export function fusedRmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, epsilon: number): T {
  return run1(FUSED.rmsNorm, { x, weight }, { epsilon }) as T;
}

/** Feed-forward weights in HF layout: wi0 (and, gated, wi1) [dff, d]; wo [d, dff]. */
export interface FusedFeedForwardWeights {
  wi0: tf.Tensor2D;
  wi1?: tf.Tensor2D;
  wo: tf.Tensor2D;
}

/** wo·drop(gelu_new(wi0·x) ⊙ wi1·x) (gated) or wo·drop(relu(wi0·x)) on rows x [n, d]. */
export function fusedFeedForward(x: tf.Tensor2D, w: FusedFeedForwardWeights, rate: number, seed: number): tf.Tensor2D {
  const gated = w.wi1 !== undefined;
  const inputs = gated ? [x, w.wi0, w.wi1!, w.wo] : [x, w.wi0, w.wo];
  const attrs: DropoutAttrs = { rate, seed };
  return customGradList(inputs, (save) => {
    const named = (ts: tf.Tensor[]): Inputs => (gated ? { x: ts[0]!, wi0: ts[1]!, wi1: ts[2]!, wo: ts[3]! } : { x: ts[0]!, wi0: ts[1]!, wo: ts[2]! });
    const [y, a, b] = run(FUSED.feedForward, named(inputs), attrs);
    save([...inputs, a!, ...(b ? [b] : [])]);
    return {
      value: y!,
      gradFunc: (dy, saved) => {
        const ins = saved.slice(0, inputs.length);
        const pre: Inputs = gated ? { a: saved[inputs.length]!, b: saved[inputs.length + 1]! } : { a: saved[inputs.length]! };
        return run(FUSED.feedForwardGrad, { dy, ...named(ins), ...pre }, attrs);
      },
    };
  }) as tf.Tensor2D;
}

/** What an attention's scores get added, for the fused kernel. */
export interface FusedAttentionBias {
  /** Relative position bias: table [numBuckets, H] looked up at buckets [lq·lk]. */
  position?: { table: tf.Tensor2D; buckets: Int32Array };
  /** [B, Lk], 1 = real key. */
  keyMask?: tf.Tensor;
  /** Key j hidden from query i when j > i + queryOffset. */
  causal?: boolean;
  queryOffset?: number;
}

/**
 * Multi-head attention on rows: q [B·Lq, H·dk], k and v [B·Lk, H·dk] → [B·Lq, H·dk]:
 * dropout(softmax(scale·q·kᵀ + bias))·v per head.
 */
export function fusedAttention(
  q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, batch: number, numHeads: number, bias: FusedAttentionBias, rate: number, seed: number, scale = 1,
): tf.Tensor2D {
  const attrs: AttentionAttrs = {
    batch, numHeads, scale, rate, seed,
    causal: bias.causal ?? false,
    queryOffset: bias.queryOffset ?? 0,
    buckets: bias.position?.buckets ?? null,
    numBuckets: bias.position?.table.shape[0] ?? 0,
  };
  const table = bias.position?.table;
  const mask = bias.keyMask ? maskInput(bias.keyMask) : undefined;
  const inputs = table ? [q, k, v, table] : [q, k, v];
  return customGradList(inputs, (save) => {
    const [out, probs] = run(FUSED.attention, { q, k, v, ...(table ? { table } : {}), ...(mask ? { keyMask: mask } : {}) }, attrs);
    save([q, k, v, probs!]);
    return {
      value: out!,
      gradFunc: (dy, saved) => {
        const [sq, sk, sv, sp] = saved as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
        return run(FUSED.attentionGrad, { dy, q: sq, k: sk, v: sv, probs: sp }, attrs);
      },
    };
  }) as tf.Tensor2D;
}

/** Attention projections in HF layout: q, k, v [H·dk, d]; o [d, H·dk]. */
export interface FusedAttentionWeights {
  q: tf.Tensor2D;
  k: tf.Tensor2D;
  v: tf.Tensor2D;
  o: tf.Tensor2D;
}

/**
 * The whole T5 attention sub-layer on rows: x [B·Lq, d] attends over `source` [B·Lk, d] (null:
 * self-attention over x) → o·attention(q·x, k·source, v·source) [B·Lq, d].
 */
export function fusedAttentionLayer(
  x: tf.Tensor2D, source: tf.Tensor2D | null, w: FusedAttentionWeights, batch: number, numHeads: number, bias: FusedAttentionBias, rate: number, seed: number,
): tf.Tensor2D {
  const attrs: AttentionAttrs = {
    batch, numHeads, scale: 1, rate, seed,
    causal: bias.causal ?? false,
    queryOffset: bias.queryOffset ?? 0,
    buckets: bias.position?.buckets ?? null,
    numBuckets: bias.position?.table.shape[0] ?? 0,
  };
  const table = bias.position?.table;
  const mask = bias.keyMask ? maskInput(bias.keyMask) : undefined;
  const inputs = [x, ...(source ? [source] : []), w.q, w.k, w.v, w.o, ...(table ? [table] : [])];
  const named = (ts: tf.Tensor[]): Inputs => {
    const [sx, ...rest] = ts;
    const src = source ? rest.shift()! : undefined;
    const [wq, wk, wv, wo] = rest as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
    return { x: sx!, ...(src ? { src } : {}), wq, wk, wv, wo };
  };
  return customGradList(inputs, (save) => {
    const [y, q, k, v, ctx, probs] = run(FUSED.attentionLayer, { ...named(inputs), ...(table ? { table } : {}), ...(mask ? { keyMask: mask } : {}) }, attrs);
    const layerInputs = inputs.slice(0, source ? 6 : 5);
    save([...layerInputs, q!, k!, v!, ctx!, probs!]);
    return {
      value: y!,
      gradFunc: (dy, saved) => {
        const n = layerInputs.length;
        const [sq, sk, sv, sctx, sprobs] = saved.slice(n) as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
        return run(FUSED.attentionLayerGrad, { dy, ...named(saved.slice(0, n)), q: sq, k: sk, v: sv, ctx: sctx, probs: sprobs }, attrs);
      },
    };
  }) as tf.Tensor2D;
}

/** y [n, out] = x [n, in]·Wᵀ (+ bias) for an HF weight W [out, in], in one op each way. */
export function fusedLinear(x: tf.Tensor2D, weight: tf.Tensor2D, bias?: tf.Tensor1D): tf.Tensor2D {
  return run1(FUSED.linear, { x, weight, ...(bias ? { bias } : {}) }, { hasBias: bias !== undefined }) as tf.Tensor2D;
}

/** softmax(scale·q·kᵀ + key-mask bias) for one head: q [B, Lq, d], k [B, Lk, d] → [B, Lq, Lk]. */
export function fusedAttentionProbs(q: tf.Tensor3D, k: tf.Tensor3D, keyMask: tf.Tensor | undefined, scale: number): tf.Tensor3D {
  const attrs: AttentionAttrs = { batch: q.shape[0], numHeads: 1, scale, rate: 0, seed: 0, causal: false, queryOffset: 0, buckets: null, numBuckets: 0 };
  return run1(FUSED.attentionProbs, { q, k, ...(keyMask ? { keyMask: maskInput(keyMask) } : {}) }, attrs) as tf.Tensor3D;
}

/** Per-token −log softmax(logits)[label] for logits [N, V], labels [N] (int32); 0 where label = ignoreIndex. */
export function fusedCrossEntropy(logits: tf.Tensor2D, labels: tf.Tensor1D, ignoreIndex: number): tf.Tensor1D {
  const l = labels.dtype === 'int32' ? labels : tf.cast(labels, 'int32');
  return run1(FUSED.crossEntropy, { logits, labels: l }, { ignoreIndex }) as tf.Tensor1D;
}

/** dropout(table[ids]) → [...ids.shape, d]; the gradient scatter-adds into the table. */
export function fusedEmbedding(table: tf.Tensor2D, ids: tf.Tensor, rate: number, seed: number): tf.Tensor {
  const i = ids.dtype === 'int32' ? ids : tf.cast(ids, 'int32');
  return run1(FUSED.embedding, { table, ids: i }, { rate, seed });
}

/** ā [B, P] = Σ_t m_t·a[b, t, :] / max(Σ_t m_t, 1) for attention [B, L, P] and mask [B, L]. */
export function fusedMeanTokenAttention(attention: tf.Tensor3D, mask: tf.Tensor2D): tf.Tensor2D {
  return run1(FUSED.meanTokenAttention, { attention, mask: maskInput(mask) }) as tf.Tensor2D;
}

/** src/model/grounding.ts's L_gnd as one op: attention [B, L, P], mask [B, L], targets [B, P] → scalar. */
export function fusedGroundingLoss(attention: tf.Tensor3D, mask: tf.Tensor2D, targets: tf.Tensor2D): tf.Scalar {
  const t = targets.dtype === 'float32' ? targets : tf.cast(targets, 'float32');
  return run1(FUSED.groundingLoss, { attention, mask: maskInput(mask), targets: t }) as tf.Scalar;
}
