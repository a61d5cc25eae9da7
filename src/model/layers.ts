import * as tf from '@tensorflow/tfjs-core';
import {
  fusedAddDropout, fusedCrossEntropy, fusedDropout, fusedEmbedding, fusedFeedForward, fusedLinear, fusedRmsNorm, hasFused,
} from '../native/fused_ops.js';
import './register_gradients.js';

/*
 * Building blocks shared by T5 and the fusion module. Weights use HF's nn.Linear layout [out, in].
 *
 * Each op that has a fused kernel (src/native/fused_ops.ts: one native call forward and one
 * backward) takes it when the kernels are registered for the active backend, and otherwise runs
 * its chain of tfjs ops; both compute the same function.
 *
 * Two ways to compute x·Wᵀ, chosen per call by transposeFlagsAreFree():
 * - Where transpose flags cost nothing (the OpenBLAS matmul kernels of src/native, the cpu backend,
 *   tfjs-node), a plain tf.matMul with transposeB: no transposed copies in the forward pass, and
 *   tfjs's own gradient (dy·W and dyᵀ·x) uses flags too.
 * - On the stock wasm kernel only the plain `a · b` matmul reaches XNNPACK (~20–25 GFLOP/s);
 *   `a · bᵀ` and `aᵀ · b` fall to a loop at 0.5–2 GFLOP/s, so linear2d/matMul2d materialise the
 *   transposes (one copy each) and keep every product, forward and backward, on the fast path.
 */

type CustomGradFn = Parameters<typeof tf.customGrad>[0];

/** tf.customGrad's parameter type is a variadic union; this keeps the call sites readable. */
export function customGrad<A extends tf.Tensor[]>(
  f: (...args: [...A, tf.GradSaveFunc]) => { value: tf.Tensor; gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor | tf.Tensor[] },
): (...args: A) => tf.Tensor {
  return tf.customGrad(f as unknown as CustomGradFn) as unknown as (...args: A) => tf.Tensor;
}

/** x in the forward pass, no gradient in the backward one (tfjs has no stop-gradient op). */
export const stopGradient = customGrad((x: tf.Tensor, _save: tf.GradSaveFunc) => ({ value: tf.clone(x), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) })) as <T extends tf.Tensor>(x: T) => T;

/** a [n, k] · b [k, m] whose backward pass also uses only untransposed matmuls. */
export const matMul2d = customGrad((a: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [tf.matMul(dy as tf.Tensor2D, tf.transpose(sb)), tf.matMul(tf.transpose(sa), dy as tf.Tensor2D)];
    },
  };
}) as (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor2D;

/**
 * y = x Wᵀ for x [n, in] and W [out, in] (HF layout). Backward: dx = dy W (already untransposed);
 * dW = dyᵀ x or (xᵀ dy)ᵀ, whichever transposes fewer elements (for an LM head, dy [n, vocab] is
 * by far the largest tensor, so the second form wins).
 */
export const linear2d = customGrad((x: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
  save([x, w]);
  return {
    value: tf.matMul(x as tf.Tensor2D, tf.transpose(w as tf.Tensor2D)),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sx, sw] = saved as [tf.Tensor2D, tf.Tensor2D];
      const g = dy as tf.Tensor2D;
      const [n, inDim] = sx.shape;
      const out = sw.shape[0];
      const dw = n * out <= n * inDim + inDim * out
        ? tf.matMul(tf.transpose(g), sx)
        : tf.transpose(tf.matMul(tf.transpose(sx), g));
      return [tf.matMul(g, sw), dw];
    },
  };
}) as (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/**
 * Whether matmuls with transpose flags run as fast as plain ones on the active backend. Only the
 * stock wasm kernel is slow with flags; it binds its C++ entry point in setupFunc, which the
 * OpenBLAS replacement registered by src/native/kernels.ts does not have. Looked up on every call
 * (a map lookup) because tests switch backends and kernels within one process.
 */
export function transposeFlagsAreFree(): boolean {
  return tf.getBackend() !== 'wasm' || tf.getKernel(tf.BatchMatMul, 'wasm')?.setupFunc === undefined;
}

/** y = x Wᵀ for x [n, in] and W [out, in], differentiable, on the backend's fastest matmul form. */
export function linear(x: tf.Tensor2D, weight: tf.Tensor2D): tf.Tensor2D {
  if (hasFused('linear')) return fusedLinear(x, weight);
  return transposeFlagsAreFree() ? tf.matMul(x, weight, false, true) : linear2d(x, weight);
}

/** x [..., in] · wT [in, out] for weights already transposed (inference caches); no custom gradient. */
export function denseTransposed<R extends tf.Rank>(x: tf.Tensor<R>, weightT: tf.Tensor2D, bias?: tf.Tensor1D): tf.Tensor<R> {
  const [inDim, out] = weightT.shape;
  let y: tf.Tensor = tf.matMul(tf.reshape(x, [-1, inDim]) as tf.Tensor2D, weightT);
  if (bias) y = tf.add(y, bias);
  return tf.reshape<tf.Rank>(y, [...x.shape.slice(0, -1), out]) as tf.Tensor<R>;
}

/** Dense layer on any leading shape: x [..., in] · Wᵀ (+ b) → [..., out], as one [N, in] × [in, out] product. */
export function dense<R extends tf.Rank>(x: tf.Tensor<R>, weight: tf.Tensor2D, bias?: tf.Tensor1D): tf.Tensor<R> {
  const [out, inDim] = weight.shape;
  if (x.rank === 2 && !bias) return linear(x as unknown as tf.Tensor2D, weight) as unknown as tf.Tensor<R>;
  const lead = x.shape.slice(0, -1);
  if (hasFused('linear')) {
    const rows = x.rank === 2 ? (x as unknown as tf.Tensor2D) : (tf.reshape(x, [-1, inDim]) as tf.Tensor2D);
    const y = fusedLinear(rows, weight, bias);
    return (x.rank === 2 ? y : tf.reshape(y, [...lead, out])) as unknown as tf.Tensor<R>;
  }
  let y: tf.Tensor = linear(tf.reshape(x, [-1, inDim]) as tf.Tensor2D, weight);
  if (bias) y = tf.add(y, bias);
  return tf.reshape<tf.Rank>(y, [...lead, out]) as tf.Tensor<R>;
}

/**
 * T5LayerNorm: scale by the root mean square, no mean subtraction and no bias. A custom gradient
 * because autodiff through its six ops records ~25 kernels and a saved copy per op; by hand, with
 * n = x·r and r = (mean(x²) + ε)^-½: dw = Σ dy·n, dx = r·(g − n·mean(g·n)) where g = dy·w.
 */
export function rmsNorm<R extends tf.Rank>(x: tf.Tensor<R>, weight: tf.Tensor1D, epsilon: number): tf.Tensor<R> {
  if (hasFused('rmsNorm')) return fusedRmsNorm(x, weight, epsilon);
  return rmsNormGrad(x, weight, epsilon) as tf.Tensor<R>;
}

function rmsNormGrad(x: tf.Tensor, weight: tf.Tensor, epsilon: number): tf.Tensor {
  const f = customGrad((xi: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(xi), -1, true), epsilon));
    const n = tf.mul(xi, r);
    save([n, r, w]);
    return {
      value: tf.mul(n, w),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sn, sr, sw] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
        const g = tf.mul(dy, sw);
        const dx = tf.mul(sr, tf.sub(g, tf.mul(sn, tf.mean(tf.mul(g, sn), -1, true))));
        const dw = tf.sum(tf.reshape(tf.mul(dy, sn), [-1, sw.shape[0]!]), 0);
        return [dx, dw];
      },
    };
  });
  return f(x, weight);
}

const GELU_C = Math.sqrt(2 / Math.PI);

/**
 * HF `gelu_new` (tanh approximation) written with the identity 0.5·(1 + tanh z) = sigmoid(2z):
 * wasm's sigmoid is vectorised while its tanh is ~15× slower.
 */
export function geluNew<T extends tf.Tensor>(x: T): T {
  const inner = tf.mul(tf.add(x, tf.mul(0.044715, tf.mul(x, tf.mul(x, x)))), 2 * GELU_C);
  return tf.mul(x, tf.sigmoid(inner)) as T;
}

/** Inverted dropout, only while training (rate 0 or eval: identity). */
export function dropout<T extends tf.Tensor>(x: T, rate: number, training: boolean, seed?: number): T {
  if (!training || rate <= 0) return x;
  return tf.dropout(x, rate, undefined, seed) as T;
}

/** Source of dropout seeds so a run is reproducible from the model seed. */
export interface DropoutRng {
  rate: number;
  training: boolean;
  nextSeed(): number;
}

/** The rate and seed of the next dropout drawn from `rng` (rate 0 when inactive; a seed is drawn only when active). */
export function drawDropout(rng: DropoutRng): { rate: number; seed: number } {
  return rng.training && rng.rate > 0 ? { rate: rng.rate, seed: rng.nextSeed() } : { rate: 0, seed: 0 };
}

export function applyDropout<T extends tf.Tensor>(x: T, rng: DropoutRng): T {
  const { rate, seed } = drawDropout(rng);
  if (rate === 0) return x;
  return hasFused('dropout') ? fusedDropout(x, rate, seed) : dropout(x, rate, true, seed);
}

/** A residual connection x + dropout(h), with one seed drawn as applyDropout does. */
export function residual<T extends tf.Tensor>(x: T, h: tf.Tensor, rng: DropoutRng): T {
  if (!hasFused('addDropout')) return tf.add(x, applyDropout(h, rng));
  const { rate, seed } = drawDropout(rng);
  return fusedAddDropout(x, h, rate, seed);
}

export interface FeedForwardWeights {
  /** relu: wi [dFf, d]; gated-gelu: wi0 (gelu branch) and wi1 (linear branch). */
  wi?: tf.Tensor2D;
  wi0?: tf.Tensor2D;
  wi1?: tf.Tensor2D;
  wo: tf.Tensor2D;
}

/**
 * T5 DenseReluDense / DenseGatedActDense: wo(dropout(act(wi x))) or wo(dropout(gelu(wi_0 x) ⊙ wi_1 x)),
 * on x [..., d]. The gated pair runs as two matmuls: fusing them would need a concatenated weight
 * (a copy per call, and a slice per gradient) and a split of the product, which cost more than
 * the extra matmul call saves.
 */
export function feedForward<R extends tf.Rank>(x: tf.Tensor<R>, w: FeedForwardWeights, rng: DropoutRng): tf.Tensor<R> {
  if (hasFused('feedForward') && (w.wi || (w.wi0 && w.wi1))) {
    const { rate, seed } = drawDropout(rng);
    const d = x.shape[x.rank - 1]!;
    const rows = x.rank === 2 ? (x as unknown as tf.Tensor2D) : (tf.reshape(x, [-1, d]) as tf.Tensor2D);
    const y = fusedFeedForward(rows, w.wi ? { wi0: w.wi, wo: w.wo } : { wi0: w.wi0!, wi1: w.wi1!, wo: w.wo }, rate, seed);
    return (x.rank === 2 ? y : tf.reshape(y, x.shape)) as tf.Tensor<R>;
  }
  let h: tf.Tensor<R>;
  if (w.wi0 && w.wi1) {
    h = tf.mul(geluNew(dense(x, w.wi0)), dense(x, w.wi1));
  } else if (w.wi) {
    h = tf.relu(dense(x, w.wi));
  } else {
    throw new Error('feedForward: needs wi (relu) or wi0 and wi1 (gated-gelu)');
  }
  return dense(applyDropout(h, rng), w.wo);
}

/**
 * Embedding lookup dropout(rows[ids]) → [...ids.shape, d] (no dropout unless `rng` is given and
 * training). Unfused, the gradient is a scatter-add (ScatterNd sums duplicate ids), because
 * tf.gather's own gradient needs UnsortedSegmentSum, which the wasm backend lacks, and a one-hot
 * matmul would cost N·V·d.
 */
export function embed(table: tf.Tensor2D, ids: tf.Tensor, rng?: DropoutRng): tf.Tensor {
  if (hasFused('embedding')) {
    const { rate, seed } = rng ? drawDropout(rng) : { rate: 0, seed: 0 };
    return fusedEmbedding(table, ids, rate, seed);
  }
  const [vocab, d] = table.shape;
  const flat = ids.rank === 1 ? (ids as tf.Tensor1D) : (tf.reshape(ids, [-1]) as tf.Tensor1D);
  const lookup = customGrad((t: tf.Tensor, save: tf.GradSaveFunc) => {
    save([flat]);
    return {
      value: tf.gather(t, flat),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.scatterND(tf.reshape(saved[0], [-1, 1]), dy, [vocab, d]),
    };
  });
  const rows = lookup(table);
  const out = ids.rank === 1 ? rows : tf.reshape(rows, [...ids.shape, d]);
  return rng ? applyDropout(out, rng) : out;
}

/**
 * Token cross-entropy from logits [N, V] and labels [N] (int32); labels equal to ignoreIndex
 * contribute nothing. Returns the per-token losses [N] (0 where ignored).
 * log Z is taken as max(z) − log(max(softmax(z))) (the largest probability is ≥ 1/V, so this is
 * exact and never underflows): wasm's softmax kernel is vectorised while its exp is ~6× slower, and
 * the probabilities are reused by the custom gradient softmax − onehot (which also avoids the
 * gather gradient).
 */
export function tokenCrossEntropy(logits: tf.Tensor2D, labels: tf.Tensor1D, ignoreIndex = -100): tf.Tensor1D {
  if (hasFused('crossEntropy')) return fusedCrossEntropy(logits, labels, ignoreIndex);
  const [n, vocab] = logits.shape;
  const valid = tf.notEqual(labels, ignoreIndex);
  const safeLabels = tf.where(valid, labels, tf.zerosLike(labels));
  const weights = tf.cast(valid, 'float32');
  const ce = customGrad((z: tf.Tensor, save: tf.GradSaveFunc) => {
    const probs = tf.softmax(z);
    const logZ = tf.sub(tf.max(z, -1), tf.log(tf.max(probs, -1)));
    const picked = tf.gatherND(z, tf.stack([tf.range(0, n, 1, 'int32'), safeLabels], 1));
    // Everything the backward pass reads goes through save(): callers may tidy away the originals.
    save([probs, safeLabels, weights]);
    return {
      value: tf.mul(tf.sub(logZ, picked), weights),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sProbs, sLabels, sWeights] = saved as [tf.Tensor2D, tf.Tensor1D, tf.Tensor1D];
        const scale = tf.reshape(tf.mul(dy, sWeights), [n, 1]);
        return tf.mul(tf.sub(sProbs, tf.oneHot(sLabels, vocab)), scale);
      },
    };
  });
  return ce(logits) as tf.Tensor1D;
}
