import * as tf from '@tensorflow/tfjs-core';
import { InputError } from '../util/errors.js';
import { innerDim, type ModelConfig } from './config.js';
import { BOX_CODE_DIM } from './screen_text.js';
import { MATCH_DIM } from './text_match.js';

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
 * - `text_match.weight` [d, MATCH_DIM] — W_m of the items' lexical match (text_match.ts), only with `textMatch`.
 * - `tap_pointer.weight` [d, d] — W_p of the decoder's tap pointer (pointer.ts), only with `tapPointer`;
 *   zero at initialisation, so the untrained pointer is the screen attention's look.
 * - `tap_offset.hidden.weight` [d, d], `tap_offset.key.weight` [d, d], `tap_offset.bias` [d] (W_h, W_k,
 *   b_1), `tap_offset.out.weight` [2, d], `tap_offset.out.bias` [2] (W_o, b_o) — where in the pointed
 *   patch a tap lands (tap_offset.ts), only with `tapOffset`; W_o and b_o zero at initialisation.
 * - `copy_pointer.weight` [d, d] (W_c), `copy_gate.weight` [1, d], `copy_gate.bias` [1] (w_g, b_g),
 *   `copy_stop.weight` [1, d], `copy_stop.bias` [1] (w_s, b_s) — the copy pointer over the goal
 *   (copy.ts), only with `copyPointer`; zero at initialisation.
 * - `copy_context.weight` [d, 2d] (W_x) — what the two goal tokens before a position add to the copy
 *   pointer's key there (copy.ts), only with `copyContext`; zero at initialisation.
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

/** HF names of one attention sub-layer's projections. */
export interface AttentionNames {
  q: string;
  k: string;
  v: string;
  o: string;
}

/** HF names of one feed-forward sub-layer: `wi` (relu) or `wi_0`/`wi_1` (gated-gelu), and `wo`. */
export interface FeedForwardNames {
  wi?: string;
  wi0?: string;
  wi1?: string;
  wo: string;
}

/** Every tensor name of one T5 block (HF T5Block: layer.0 self-attention, decoder layer.1 cross-attention, then the feed-forward). */
export interface BlockNames {
  selfAttention: AttentionNames;
  selfNorm: string;
  /** Block 0 of each stack: the relative position table shared by the stack's blocks. */
  relativeBias?: string;
  crossAttention?: AttentionNames;
  crossNorm?: string;
  feedForward: FeedForwardNames;
  feedForwardNorm: string;
}

export type Stack = 'encoder' | 'decoder';

function attentionNames(prefix: string): AttentionNames {
  return { q: `${prefix}.q.weight`, k: `${prefix}.k.weight`, v: `${prefix}.v.weight`, o: `${prefix}.o.weight` };
}

/** The one place that spells a T5 block's HF names. */
export function blockNames(stack: Stack, block: number, feedForwardProj: ModelConfig['feedForwardProj']): BlockNames {
  const layer = (n: number) => `${stack}.block.${block}.layer.${n}`;
  const ff = stack === 'encoder' ? layer(1) : layer(2);
  const dense = `${ff}.DenseReluDense`;
  return {
    selfAttention: attentionNames(`${layer(0)}.SelfAttention`),
    selfNorm: `${layer(0)}.layer_norm.weight`,
    ...(block === 0 ? { relativeBias: `${layer(0)}.SelfAttention.relative_attention_bias.weight` } : {}),
    ...(stack === 'decoder' ? { crossAttention: attentionNames(`${layer(1)}.EncDecAttention`), crossNorm: `${layer(1)}.layer_norm.weight` } : {}),
    feedForward: feedForwardProj === 'gated-gelu'
      ? { wi0: `${dense}.wi_0.weight`, wi1: `${dense}.wi_1.weight`, wo: `${dense}.wo.weight` }
      : { wi: `${dense}.wi.weight`, wo: `${dense}.wo.weight` },
    feedForwardNorm: `${ff}.layer_norm.weight`,
  };
}

/** The relative position table of a stack (kept in its block 0). */
export function relativeBiasName(stack: Stack): string {
  return blockNames(stack, 0, 'relu').relativeBias!;
}

/** The norm after a stack's last block. */
export function finalNormName(stack: Stack): string {
  return `${stack}.final_layer_norm.weight`;
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
  const attention = (names: AttentionNames) => {
    specs.push(
      { name: names.q, shape: [inner, d], init: normal((d * config.dKv) ** -0.5) },
      { name: names.k, shape: [inner, d], init: normal(d ** -0.5) },
      { name: names.v, shape: [inner, d], init: normal(d ** -0.5) },
      { name: names.o, shape: [d, inner], init: normal(inner ** -0.5) },
    );
  };
  for (const stack of ['encoder', 'decoder'] as const) {
    const layers = stack === 'encoder' ? config.numLayers : config.numDecoderLayers;
    for (let i = 0; i < layers; i++) {
      const names = blockNames(stack, i, config.feedForwardProj);
      attention(names.selfAttention);
      if (names.relativeBias) specs.push({ name: names.relativeBias, shape: [config.relativeAttentionNumBuckets, config.numHeads], init: normal(d ** -0.5) });
      specs.push({ name: names.selfNorm, shape: [d], init: ONES });
      if (names.crossAttention && names.crossNorm) {
        attention(names.crossAttention);
        specs.push({ name: names.crossNorm, shape: [d], init: ONES });
      }
      const ff = names.feedForward;
      for (const name of [ff.wi, ff.wi0, ff.wi1]) if (name) specs.push({ name, shape: [config.dFf, d], init: normal(d ** -0.5) });
      specs.push({ name: ff.wo, shape: [d, config.dFf], init: normal(config.dFf ** -0.5) });
      specs.push({ name: names.feedForwardNorm, shape: [d], init: ONES });
    }
    specs.push({ name: finalNormName(stack), shape: [d], init: ONES });
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
    if (config.textMatch) specs.push({ name: 'text_match.weight', shape: [d, MATCH_DIM], init: normal(MATCH_DIM ** -0.5) });
  }
  if (config.tapPointer) specs.push({ name: 'tap_pointer.weight', shape: [d, d], init: ZEROS });
  if (config.tapOffset) {
    specs.push(
      { name: 'tap_offset.hidden.weight', shape: [d, d], init: normal(d ** -0.5) },
      { name: 'tap_offset.key.weight', shape: [d, d], init: normal(d ** -0.5) },
      { name: 'tap_offset.bias', shape: [d], init: ZEROS },
      { name: 'tap_offset.out.weight', shape: [2, d], init: ZEROS },
      { name: 'tap_offset.out.bias', shape: [2], init: ZEROS },
    );
  }
  if (config.copyPointer) {
    specs.push(
      { name: 'copy_pointer.weight', shape: [d, d], init: ZEROS },
      { name: 'copy_gate.weight', shape: [1, d], init: ZEROS },
      { name: 'copy_gate.bias', shape: [1], init: ZEROS },
      { name: 'copy_stop.weight', shape: [1, d], init: ZEROS },
      { name: 'copy_stop.bias', shape: [1], init: ZEROS },
    );
    if (config.copyContext) specs.push({ name: 'copy_context.weight', shape: [d, 2 * d], init: ZEROS });
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
  private readonly names = new Map<tf.Tensor, string>();
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
      const v = tf.variable(value, true);
      this.vars.set(spec.name, v);
      this.names.set(v, spec.name);
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

  /** Wᵀ of a weight of this store ([out, in] → [in, out]), made once and kept until the weight is assigned (see derived). */
  transposed(weight: tf.Tensor2D): tf.Tensor2D {
    const name = this.names.get(weight);
    if (name === undefined) throw new Error('transposed: the tensor is not a parameter of this store');
    return this.derived(`transposed:${name}`, [name], (w) => tf.transpose(w as tf.Tensor2D));
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
    this.names.clear();
  }
}
