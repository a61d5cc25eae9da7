import * as tf from '@tensorflow/tfjs-core';
import { InputError } from '../util/errors.js';
import { innerDim, type ModelConfig } from './config.js';
import { BOX_CODE_DIM } from './screen_text.js';

/**
 * Every trainable tensor of Auto-UI under its Hugging Face T5 name and HF shape (nn.Linear weights
 * are [out, in]), so a checkpoint maps 1:1 onto `T5ForConditionalGeneration.state_dict()`.
 *
 * Auto-UI's own tensors (not in T5):
 * - `screen_proj.weight` [d, screenDim], `screen_proj.bias` [d] — W in H'_screen = W·H_screen
 *   (the original code's `image_dense`).
 * - `fusion.gate_lang.weight` [d, d] (W_l), `fusion.gate_attn.weight` [d, d] (W_v),
 *   `fusion.gate_attn.bias` [d] — λ = sigmoid(W_l·H_language + W_v·H_attn + b). The original code's
 *   `gate_dense` (Linear(2d → d) over [H_language; H_attn]) is cat([gate_lang, gate_attn], dim=1)
 *   with bias gate_attn.bias.
 * - `text_proj.weight` [d, d + box code], `text_proj.bias` [d] — W_t and b_t of the screen's text
 *   tokens (screen_text.ts), only when the model reads screen text (`screenText`).
 * The screen interaction itself (softmax(Q Kᵀ/√d) V with Q = H_language, K = V = H'_screen) has no
 * parameters, as in the paper's equations.
 */
export interface ParamSpec {
  name: string;
  shape: number[];
  init: { kind: 'normal'; std: number } | { kind: 'ones' } | { kind: 'zeros' };
}

const normal = (std: number) => ({ kind: 'normal', std }) as const;
const ONES = { kind: 'ones' } as const;
const ZEROS = { kind: 'zeros' } as const;

/** Name prefix of one attention sub-layer, e.g. `encoder.block.0.layer.0.SelfAttention`. */
export function attentionPrefix(stack: 'encoder' | 'decoder', block: number, cross = false): string {
  return cross ? `decoder.block.${block}.layer.1.EncDecAttention` : `${stack}.block.${block}.layer.0.SelfAttention`;
}

/** Layer index of the feed-forward sub-layer inside a block. */
export function feedForwardLayer(stack: 'encoder' | 'decoder'): number {
  return stack === 'encoder' ? 1 : 2;
}

/**
 * The full parameter list with HF `T5PreTrainedModel._init_weights` initialisation
 * (initializer_factor 1): embeddings N(0, 1); q N(0, (d·d_kv)^-½) (absorbs the missing 1/√d_kv);
 * k, v N(0, d^-½); o N(0, (H·d_kv)^-½); wi N(0, d^-½); wo N(0, d_ff^-½); relative bias N(0, d^-½);
 * norms 1. Auto-UI extras: weights N(0, in^-½), biases 0. One deliberate departure: the untied LM head
 * is N(0, d^-½), not HF's N(0, 1) — HF's value only matters before pretrained weights overwrite it,
 * and from scratch it starts logits at std √d (a first loss of ~25 nats that takes hundreds of steps
 * to undo).
 */
export function parameterSpecs(config: ModelConfig): ParamSpec[] {
  const d = config.dModel;
  const inner = innerDim(config);
  const specs: ParamSpec[] = [{ name: 'shared.weight', shape: [config.vocabSize, d], init: normal(1) }];
  const attention = (prefix: string, relativeBias: boolean) => {
    specs.push(
      { name: `${prefix}.q.weight`, shape: [inner, d], init: normal((d * config.dKv) ** -0.5) },
      { name: `${prefix}.k.weight`, shape: [inner, d], init: normal(d ** -0.5) },
      { name: `${prefix}.v.weight`, shape: [inner, d], init: normal(d ** -0.5) },
      { name: `${prefix}.o.weight`, shape: [d, inner], init: normal(inner ** -0.5) },
    );
    if (relativeBias) {
      specs.push({ name: `${prefix}.relative_attention_bias.weight`, shape: [config.relativeAttentionNumBuckets, config.numHeads], init: normal(d ** -0.5) });
    }
  };
  const feedForward = (prefix: string) => {
    const wi = config.feedForwardProj === 'gated-gelu' ? ['wi_0', 'wi_1'] : ['wi'];
    for (const name of wi) specs.push({ name: `${prefix}.DenseReluDense.${name}.weight`, shape: [config.dFf, d], init: normal(d ** -0.5) });
    specs.push({ name: `${prefix}.DenseReluDense.wo.weight`, shape: [d, config.dFf], init: normal(config.dFf ** -0.5) });
    specs.push({ name: `${prefix}.layer_norm.weight`, shape: [d], init: ONES });
  };
  for (const stack of ['encoder', 'decoder'] as const) {
    const layers = stack === 'encoder' ? config.numLayers : config.numDecoderLayers;
    for (let i = 0; i < layers; i++) {
      attention(attentionPrefix(stack, i), i === 0);
      specs.push({ name: `${stack}.block.${i}.layer.0.layer_norm.weight`, shape: [d], init: ONES });
      if (stack === 'decoder') {
        attention(attentionPrefix(stack, i, true), false);
        specs.push({ name: `decoder.block.${i}.layer.1.layer_norm.weight`, shape: [d], init: ONES });
      }
      feedForward(`${stack}.block.${i}.layer.${feedForwardLayer(stack)}`);
    }
    specs.push({ name: `${stack}.final_layer_norm.weight`, shape: [d], init: ONES });
  }
  if (!config.tieWordEmbeddings) specs.push({ name: 'lm_head.weight', shape: [config.vocabSize, d], init: normal(d ** -0.5) });
  specs.push(
    { name: 'screen_proj.weight', shape: [d, config.screenDim], init: normal(config.screenDim ** -0.5) },
    { name: 'screen_proj.bias', shape: [d], init: ZEROS },
    { name: 'fusion.gate_lang.weight', shape: [d, d], init: normal(d ** -0.5) },
    { name: 'fusion.gate_attn.weight', shape: [d, d], init: normal(d ** -0.5) },
    { name: 'fusion.gate_attn.bias', shape: [d], init: ZEROS },
  );
  if (config.screenText) {
    specs.push(
      { name: 'text_proj.weight', shape: [d, d + BOX_CODE_DIM], init: normal((d + BOX_CODE_DIM) ** -0.5) },
      { name: 'text_proj.bias', shape: [d], init: ZEROS },
    );
  }
  return specs;
}

/** FNV-1a, so each tensor's init depends on (seed, name) only, not on creation order. */
function tensorSeed(seed: number, name: string): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Owns the model's variables, keyed by HF name. */
export class ParamStore {
  private readonly vars = new Map<string, tf.Variable>();
  /** Tensors made from parameters, with the data their sources had when they were made. */
  private readonly derivedCache = new Map<string, { sources: object[]; value: tf.Tensor }>();
  readonly specs: readonly ParamSpec[];

  constructor(specs: ParamSpec[], seed: number) {
    this.specs = specs;
    for (const spec of specs) {
      const value = tf.tidy(() => {
        switch (spec.init.kind) {
          case 'ones': return tf.ones(spec.shape);
          case 'zeros': return tf.zeros(spec.shape);
          case 'normal': return tf.randomNormal(spec.shape, 0, spec.init.std, 'float32', tensorSeed(seed, spec.name));
        }
      });
      // Unnamed: tfjs variable names are global, and several models may coexist.
      this.vars.set(spec.name, tf.variable(value, true));
      value.dispose();
    }
  }

  has(name: string): boolean {
    return this.vars.has(name);
  }

  get<T extends tf.Tensor = tf.Tensor>(name: string): T {
    const v = this.vars.get(name);
    if (!v) throw new Error(`no parameter named '${name}'`);
    return v as unknown as T;
  }

  /**
   * A tensor computed from parameters (e.g. a transposed layout for inference), kept and reused
   * until one of its source variables is assigned: Variable.assign (the optimiser, load()) gives
   * the variable a new data id, so comparing ids catches every update without anyone having to
   * report it. Not for use under a gradient tape: the result is a constant, not a function of the
   * variables. The store owns the result (do not dispose it).
   */
  derived<T extends tf.Tensor>(key: string, sources: readonly string[], make: (...values: tf.Tensor[]) => T): T {
    const vars = sources.map((n) => this.get(n));
    const hit = this.derivedCache.get(key);
    if (hit && hit.sources.length === vars.length && hit.sources.every((id, i) => id === vars[i]!.dataId)) return hit.value as T;
    hit?.value.dispose();
    const value = tf.keep(tf.tidy(() => make(...vars)));
    this.derivedCache.set(key, { sources: vars.map((v) => v.dataId), value });
    return value;
  }

  /** HF name → variable (the live training variables, HF shapes). */
  namedWeights(): Map<string, tf.Variable> {
    return new Map(this.vars);
  }

  variables(): tf.Variable[] {
    return [...this.vars.values()];
  }

  parameterCount(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.size;
    return n;
  }

  /**
   * Overwrites variables from named tensors (a checkpoint). Shapes must match exactly. With
   * `strict`, every parameter must be present and no unknown name may appear. Returns the names
   * that were left at their current values.
   */
  load(weights: Map<string, tf.Tensor>, options: { strict?: boolean; where?: string } = {}): string[] {
    const where = options.where ?? 'checkpoint';
    for (const [name, t] of weights) {
      const v = this.vars.get(name);
      if (!v) {
        if (options.strict) throw new InputError(`unexpected tensor '${name}' (not a parameter of this model)`, where);
        continue;
      }
      if (!tf.util.arraysEqual(v.shape, t.shape)) {
        throw new InputError(`tensor '${name}' has shape [${t.shape.join(', ')}], expected [${v.shape.join(', ')}]`, where);
      }
    }
    const missing = [...this.vars.keys()].filter((n) => !weights.has(n));
    if (options.strict && missing.length > 0) throw new InputError(`missing tensors: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`, where);
    for (const [name, t] of weights) {
      const v = this.vars.get(name);
      if (!v) continue;
      if (t.dtype === 'float32') {
        v.assign(t);
      } else {
        const cast = tf.cast(t, 'float32');
        v.assign(cast);
        cast.dispose();
      }
    }
    return missing;
  }

  dispose(): void {
    for (const { value } of this.derivedCache.values()) value.dispose();
    this.derivedCache.clear();
    for (const v of this.vars.values()) v.dispose();
    this.vars.clear();
  }
}
