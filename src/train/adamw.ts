import * as tf from '@tensorflow/tfjs-core';
import { ADAMW_KERNEL, SUM_SQUARES_KERNEL, hasKernel, type AdamWAttrs } from '../native/optimizer_kernels.js';

/*
 * AdamW (Loshchilov & Hutter): tfjs ships Adam but not decoupled weight decay, and its optimiser
 * state is not addressable by parameter name, which exact resume needs. So a small one here.
 */

export interface AdamWConfig {
  beta1: number;
  beta2: number;
  epsilon: number;
  weightDecay: number;
  /** Clip the global L2 norm of the gradients to this (0 = off). */
  clipNorm: number;
}

export const DEFAULT_ADAMW: AdamWConfig = { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0.01, clipNorm: 1.0 };

export class AdamW {
  step = 0;
  readonly m = new Map<string, tf.Variable>();
  readonly v = new Map<string, tf.Variable>();

  constructor(
    readonly params: Map<string, tf.Variable>,
    readonly cfg: AdamWConfig = DEFAULT_ADAMW,
    /** Names that skip weight decay (norm scales, biases), as is usual for transformers. */
    readonly noDecay: (name: string) => boolean = (n) => /layer_norm|bias/.test(n),
  ) {
    for (const [name, p] of params) {
      this.m.set(name, tf.variable(tf.zerosLike(p), false));
      this.v.set(name, tf.variable(tf.zerosLike(p), false));
    }
  }

  /**
   * One update with learning rate `lr`; returns the pre-clip global gradient norm. With the native
   * kernels (src/native) each parameter is one kernel call instead of ~20 small tfjs ops, whose
   * dispatch cost dominated the update of a small model.
   */
  apply(grads: Map<string, tf.Tensor>, lr: number): number {
    const { beta1, beta2, epsilon, weightDecay, clipNorm } = this.cfg;
    this.step += 1;
    const gradNorm = globalNorm([...grads.values()]);
    const scale = clipNorm > 0 && gradNorm > clipNorm ? clipNorm / gradNorm : 1;
    const bc1 = 1 - beta1 ** this.step;
    const bc2 = 1 - beta2 ** this.step;
    const fused = hasKernel(ADAMW_KERNEL);
    tf.tidy(() => {
      for (const [name, p] of this.params) {
        const g0 = grads.get(name);
        if (!g0) continue;
        const m = this.m.get(name)!;
        const v = this.v.get(name)!;
        const decay = weightDecay > 0 && !this.noDecay(name) ? lr * weightDecay : 0;
        if (fused) {
          const attrs: AdamWAttrs = { lr, beta1, beta2, bc1, bc2, epsilon, decay, gradScale: scale };
          const [p1, m1, v1] = tf.engine().runKernel(ADAMW_KERNEL, { p, g: g0, m, v }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor[];
          p.assign(p1!);
          m.assign(m1!);
          v.assign(v1!);
          continue;
        }
        const g = scale === 1 ? g0 : tf.mul(g0, scale);
        m.assign(tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1)));
        v.assign(tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2)));
        const update = tf.div(tf.div(m, bc1), tf.add(tf.sqrt(tf.div(v, bc2)), epsilon));
        const decayed = decay !== 0 ? tf.mul(p, 1 - decay) : p;
        p.assign(tf.sub(decayed, tf.mul(update, lr)));
      }
    });
    return gradNorm;
  }

  dispose(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) t.dispose();
  }
}

/** √(Σ over every gradient of Σ g²). */
function globalNorm(grads: tf.Tensor[]): number {
  if (hasKernel(SUM_SQUARES_KERNEL)) {
    const total = tf.engine().runKernel(SUM_SQUARES_KERNEL, Object.fromEntries(grads.map((g, i) => [`x${i}`, g]))) as tf.Tensor;
    const sum = total.dataSync()[0]!;
    total.dispose();
    return Math.sqrt(sum);
  }
  return tf.tidy(() => tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g))))).dataSync()[0]!);
}

/** Linear warm-up to `peak`, then linear decay to 0 at `total` steps (as Hugging Face's default schedule). */
export function learningRate(step: number, total: number, peak: number, warmupSteps: number): number {
  if (step < warmupSteps) return (peak * (step + 1)) / warmupSteps;
  const rest = Math.max(1, total - warmupSteps);
  return peak * Math.max(0, (total - step) / rest);
}
