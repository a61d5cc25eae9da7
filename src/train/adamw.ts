import * as tf from '@tensorflow/tfjs-core';

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

  /** One update with learning rate `lr`; returns the pre-clip global gradient norm. */
  apply(grads: Map<string, tf.Tensor>, lr: number): number {
    const { beta1, beta2, epsilon, weightDecay, clipNorm } = this.cfg;
    this.step += 1;
    const gradNorm = tf.tidy(() => tf.sqrt(tf.addN([...grads.values()].map((g) => tf.sum(tf.square(g))))).dataSync()[0]!);
    const scale = clipNorm > 0 && gradNorm > clipNorm ? clipNorm / gradNorm : 1;
    const bc1 = 1 - beta1 ** this.step;
    const bc2 = 1 - beta2 ** this.step;
    tf.tidy(() => {
      for (const [name, p] of this.params) {
        const g0 = grads.get(name);
        if (!g0) continue;
        const g = scale === 1 ? g0 : tf.mul(g0, scale);
        const m = this.m.get(name)!;
        const v = this.v.get(name)!;
        m.assign(tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1)));
        v.assign(tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2)));
        const update = tf.div(tf.div(m, bc1), tf.add(tf.sqrt(tf.div(v, bc2)), epsilon));
        const decayed = weightDecay > 0 && !this.noDecay(name) ? tf.mul(p, 1 - lr * weightDecay) : p;
        p.assign(tf.sub(decayed, tf.mul(update, lr)));
      }
    });
    return gradNorm;
  }

  dispose(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) t.dispose();
  }
}

/** Linear warm-up to `peak`, then linear decay to 0 at `total` steps (as Hugging Face's default schedule). */
export function learningRate(step: number, total: number, peak: number, warmupSteps: number): number {
  if (step < warmupSteps) return (peak * (step + 1)) / warmupSteps;
  const rest = Math.max(1, total - warmupSteps);
  return peak * Math.max(0, (total - step) / rest);
}
