/**
 * The fused kernels of src/native/fused_ops.ts for the `cpu` and `wasm` backends: each allocates
 * its outputs, then hands the inputs' and outputs' memory to one addon call (native/addon.cc),
 * which checks every length against the shapes. Views are taken after all allocations (see
 * memory.ts: on wasm an allocation may move the heap).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { NativeBlas } from './blas.js';
import { FUSED, type AttentionAttrs, type DropoutAttrs, type FusedKernelName } from './fused_ops.js';
import { KernelViews, memoryOf, type NativeBackendName, type TensorMemory } from './memory.js';

type KernelFunc = tf.KernelConfig['kernelFunc'];
type Infos = Record<string, tf.TensorInfo | undefined>;

interface KernelCall {
  inputs: Infos;
  attrs: Record<string, unknown>;
  mem: TensorMemory;
  views: KernelViews;
}

type Body = (blas: NativeBlas, call: KernelCall) => tf.TensorInfo | tf.TensorInfo[];

function need(t: tf.TensorInfo | undefined, kernel: string, name: string): tf.TensorInfo {
  if (!t) throw new Error(`${kernel}: input ${name} is missing`);
  return t;
}

function rank(t: tf.TensorInfo, r: number, kernel: string, name: string): void {
  if (t.shape.length !== r) throw new Error(`${kernel}: ${name} must have rank ${r}, got shape [${t.shape.join(', ')}]`);
}

const drop = (attrs: Record<string, unknown>) => attrs as unknown as DropoutAttrs;

const dropout: Body = (blas, { inputs, attrs, mem, views }) => {
  const x = need(inputs.x, FUSED.dropout, 'x');
  const y = mem.allocate(x.shape);
  blas.dropout(views.f32(x, 'x'), views.out(y), drop(attrs).rate, drop(attrs).seed);
  return y.info;
};

const addDropout: Body = (blas, { inputs, attrs, mem, views }) => {
  const x = need(inputs.x, FUSED.addDropout, 'x');
  const h = need(inputs.h, FUSED.addDropout, 'h');
  if (!tf.util.arraysEqual(x.shape, h.shape)) throw new Error(`${FUSED.addDropout}: x [${x.shape}] and h [${h.shape}] must have one shape`);
  const y = mem.allocate(x.shape);
  blas.addDropout(views.f32(x, 'x'), views.f32(h, 'h'), views.out(y), drop(attrs).rate, drop(attrs).seed);
  return y.info;
};

const rmsNorm: Body = (blas, { inputs, attrs, mem, views }) => {
  const x = need(inputs.x, FUSED.rmsNorm, 'x');
  const w = need(inputs.weight, FUSED.rmsNorm, 'weight');
  const y = mem.allocate(x.shape);
  blas.rmsNorm(views.f32(x, 'x'), views.f32(w, 'weight'), views.out(y), attrs.epsilon as number);
  return y.info;
};

const rmsNormGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const [dy, x, w] = ['dy', 'x', 'weight'].map((n) => need(inputs[n], FUSED.rmsNormGrad, n));
  const dx = mem.allocate(x!.shape);
  const dw = mem.allocate(w!.shape);
  blas.rmsNormGrad(views.f32(dy!, 'dy'), views.f32(x!, 'x'), views.f32(w!, 'weight'), views.out(dx), views.out(dw), attrs.epsilon as number);
  return [dx.info, dw.info];
};

/** n, d, dff of a feed-forward call from x [n, d] and wi0 [dff, d]. */
function ffShape(x: tf.TensorInfo, wi0: tf.TensorInfo, kernel: string): [number, number, number] {
  rank(x, 2, kernel, 'x');
  rank(wi0, 2, kernel, 'wi0');
  return [x.shape[0]!, x.shape[1]!, wi0.shape[0]!];
}

const feedForward: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.feedForward;
  const x = need(inputs.x, k, 'x');
  const wi0 = need(inputs.wi0, k, 'wi0');
  const wo = need(inputs.wo, k, 'wo');
  const [n, d, dff] = ffShape(x, wi0, k);
  const y = mem.allocate([n, d]);
  const a = mem.allocate([n, dff]);
  const b = inputs.wi1 ? mem.allocate([n, dff]) : undefined;
  blas.feedForward(
    views.f32(x, 'x'), views.f32(wi0, 'wi0'), views.f32Opt(inputs.wi1, 'wi1'), views.f32(wo, 'wo'),
    views.out(y), views.out(a), views.outOpt(b), n, d, dff, drop(attrs).rate, drop(attrs).seed,
  );
  return b ? [y.info, a.info, b.info] : [y.info, a.info];
};

const feedForwardGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.feedForwardGrad;
  const [dy, x, wi0, wo, a] = ['dy', 'x', 'wi0', 'wo', 'a'].map((name) => need(inputs[name], k, name));
  const [n, d, dff] = ffShape(x!, wi0!, k);
  const dx = mem.allocate(x!.shape);
  const dwi0 = mem.allocate(wi0!.shape);
  const dwi1 = inputs.wi1 ? mem.allocate(inputs.wi1.shape) : undefined;
  const dwo = mem.allocate(wo!.shape);
  blas.feedForwardGrad(
    views.f32(dy!, 'dy'), views.f32(x!, 'x'), views.f32(wi0!, 'wi0'), views.f32Opt(inputs.wi1, 'wi1'), views.f32(wo!, 'wo'),
    views.f32(a!, 'a'), views.f32Opt(inputs.b, 'b'), views.out(dx), views.out(dwi0), views.outOpt(dwi1), views.out(dwo),
    n, d, dff, drop(attrs).rate, drop(attrs).seed,
  );
  return dwi1 ? [dx.info, dwi0.info, dwi1.info, dwo.info] : [dx.info, dwi0.info, dwo.info];
};

/** batch, lq, lk, heads, dk of an attention call on rows q [B·Lq, H·dk], k [B·Lk, H·dk]. */
function rowsShape(q: tf.TensorInfo, key: tf.TensorInfo, a: AttentionAttrs, kernel: string): [number, number, number, number, number] {
  rank(q, 2, kernel, 'q');
  rank(key, 2, kernel, 'k');
  const [rowsQ, width] = q.shape as [number, number];
  const rowsK = key.shape[0]!;
  if (rowsQ % a.batch !== 0 || rowsK % a.batch !== 0 || width % a.numHeads !== 0 || key.shape[1] !== width) {
    throw new Error(`${kernel}: q [${q.shape}] and k [${key.shape}] are not rows of ${a.batch} sequences of ${a.numHeads} heads`);
  }
  return [a.batch, rowsQ / a.batch, rowsK / a.batch, a.numHeads, width / a.numHeads];
}

const attention: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.attention;
  const a = attrs as unknown as AttentionAttrs;
  const [q, key, v] = ['q', 'k', 'v'].map((name) => need(inputs[name], k, name));
  const [batch, lq, lk, heads, dk] = rowsShape(q!, key!, a, k);
  const out = mem.allocate(q!.shape);
  const probs = mem.allocate([batch, heads, lq, lk]);
  blas.attention(
    views.f32(q!, 'q'), views.f32(key!, 'k'), views.f32(v!, 'v'), views.out(out), views.out(probs),
    views.f32Opt(inputs.table, 'table'), inputs.table ? a.buckets : null, views.mask(inputs.keyMask, 'keyMask'),
    batch, lq, lk, heads, dk, a.scale, a.causal, a.queryOffset, a.rate, a.seed,
  );
  return [out.info, probs.info];
};

const attentionGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.attentionGrad;
  const a = attrs as unknown as AttentionAttrs;
  const [dy, q, key, v, probs] = ['dy', 'q', 'k', 'v', 'probs'].map((name) => need(inputs[name], k, name));
  const [batch, lq, lk, heads, dk] = rowsShape(q!, key!, a, k);
  const dq = mem.allocate(q!.shape);
  const dK = mem.allocate(key!.shape);
  const dv = mem.allocate(v!.shape);
  const dTable = a.buckets ? mem.allocate([a.numBuckets, heads]) : undefined;
  blas.attentionGrad(
    views.f32(dy!, 'dy'), null, views.f32(q!, 'q'), views.f32(key!, 'k'), views.f32(v!, 'v'), views.f32(probs!, 'probs'),
    views.out(dq), views.out(dK), views.out(dv), views.outOpt(dTable), a.buckets,
    batch, lq, lk, heads, dk, a.scale, a.rate, a.seed,
  );
  return dTable ? [dq.info, dK.info, dv.info, dTable.info] : [dq.info, dK.info, dv.info];
};

/** The attention shape of a layer call: x [B·Lq, d], source [B·Lk, d] (or x), wq [H·dk, d]. */
function layerShape(x: tf.TensorInfo, src: tf.TensorInfo, wq: tf.TensorInfo, a: AttentionAttrs, kernel: string): { batch: number; lq: number; lk: number; heads: number; dk: number; d: number } {
  rank(x, 2, kernel, 'x');
  rank(src, 2, kernel, 'src');
  rank(wq, 2, kernel, 'wq');
  const [rowsQ, d] = x.shape as [number, number];
  const width = wq.shape[0]!;
  if (rowsQ % a.batch !== 0 || src.shape[0]! % a.batch !== 0 || width % a.numHeads !== 0) {
    throw new Error(`${kernel}: x [${x.shape}], source [${src.shape}] and wq [${wq.shape}] are not rows of ${a.batch} sequences of ${a.numHeads} heads`);
  }
  return { batch: a.batch, lq: rowsQ / a.batch, lk: src.shape[0]! / a.batch, heads: a.numHeads, dk: width / a.numHeads, d };
}

const attentionLayer: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.attentionLayer;
  const a = attrs as unknown as AttentionAttrs;
  const [x, wq, wk, wv, wo] = ['x', 'wq', 'wk', 'wv', 'wo'].map((name) => need(inputs[name], k, name));
  const s = layerShape(x!, inputs.src ?? x!, wq!, a, k);
  const width = s.heads * s.dk;
  const y = mem.allocate(x!.shape);
  const q = mem.allocate([s.batch * s.lq, width]);
  const key = mem.allocate([s.batch * s.lk, width]);
  const v = mem.allocate([s.batch * s.lk, width]);
  const ctx = mem.allocate([s.batch * s.lq, width]);
  const probs = mem.allocate([s.batch, s.heads, s.lq, s.lk]);
  blas.attentionLayer(
    views.f32(x!, 'x'), views.f32Opt(inputs.src, 'src'), views.f32(wq!, 'wq'), views.f32(wk!, 'wk'), views.f32(wv!, 'wv'), views.f32(wo!, 'wo'),
    views.out(y), views.out(q), views.out(key), views.out(v), views.out(ctx), views.out(probs),
    views.f32Opt(inputs.table, 'table'), inputs.table ? a.buckets : null, views.mask(inputs.keyMask, 'keyMask'),
    s.batch, s.lq, s.lk, s.heads, s.dk, s.d, a.causal, a.queryOffset, a.rate, a.seed,
  );
  return [y.info, q.info, key.info, v.info, ctx.info, probs.info];
};

const attentionLayerGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.attentionLayerGrad;
  const a = attrs as unknown as AttentionAttrs;
  const [dy, x, wq, wk, wv, wo, q, key, v, ctx, probs] = ['dy', 'x', 'wq', 'wk', 'wv', 'wo', 'q', 'k', 'v', 'ctx', 'probs'].map((name) => need(inputs[name], k, name));
  const s = layerShape(x!, inputs.src ?? x!, wq!, a, k);
  const dx = mem.allocate(x!.shape);
  const dsrc = inputs.src ? mem.allocate(inputs.src.shape) : undefined;
  const dw = [wq, wk, wv, wo].map((w) => mem.allocate(w!.shape));
  const dTable = a.buckets ? mem.allocate([a.numBuckets, s.heads]) : undefined;
  blas.attentionLayerGrad(
    views.f32(dy!, 'dy'), views.f32(x!, 'x'), views.f32Opt(inputs.src, 'src'),
    views.f32(wq!, 'wq'), views.f32(wk!, 'wk'), views.f32(wv!, 'wv'), views.f32(wo!, 'wo'),
    views.f32(q!, 'q'), views.f32(key!, 'k'), views.f32(v!, 'v'), views.f32(ctx!, 'ctx'), views.f32(probs!, 'probs'),
    views.out(dx), views.outOpt(dsrc), views.out(dw[0]!), views.out(dw[1]!), views.out(dw[2]!), views.out(dw[3]!), views.outOpt(dTable), a.buckets,
    s.batch, s.lq, s.lk, s.heads, s.dk, s.d, a.rate, a.seed,
  );
  return [dx.info, ...(dsrc ? [dsrc.info] : []), ...dw.map((t) => t.info), ...(dTable ? [dTable.info] : [])];
};

const linear: Body = (blas, { inputs, mem, views }) => {
  const k = FUSED.linear;
  const x = need(inputs.x, k, 'x');
  const w = need(inputs.weight, k, 'weight');
  rank(x, 2, k, 'x');
  rank(w, 2, k, 'weight');
  if (x.shape[1] !== w.shape[1]) throw new Error(`${k}: x [${x.shape}] and weight [${w.shape}] (HF [out, in]) do not share the input width`);
  const y = mem.allocate([x.shape[0]!, w.shape[0]!]);
  blas.linear(views.f32(x, 'x'), views.f32(w, 'weight'), views.f32Opt(inputs.bias, 'bias'), views.out(y), x.shape[1]!);
  return y.info;
};

const linearGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.linearGrad;
  const [dy, x, w] = ['dy', 'x', 'weight'].map((name) => need(inputs[name], k, name));
  const dw = mem.allocate(w!.shape);
  const dbias = attrs.hasBias ? mem.allocate([w!.shape[0]!]) : undefined;
  blas.linearGrad(views.f32(dy!, 'dy'), views.f32(x!, 'x'), views.out(dw), views.outOpt(dbias), x!.shape[1]!);
  return dbias ? [dw.info, dbias.info] : [dw.info];
};

/** batch, lq, lk, d of single-head probabilities from q [B, Lq, d], k [B, Lk, d]. */
function probsShape(q: tf.TensorInfo, key: tf.TensorInfo, kernel: string): [number, number, number, number] {
  rank(q, 3, kernel, 'q');
  rank(key, 3, kernel, 'k');
  if (q.shape[0] !== key.shape[0] || q.shape[2] !== key.shape[2]) throw new Error(`${kernel}: q [${q.shape}] and k [${key.shape}] must agree in batch and width`);
  return [q.shape[0]!, q.shape[1]!, key.shape[1]!, q.shape[2]!];
}

const attentionProbs: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.attentionProbs;
  const [q, key] = ['q', 'k'].map((name) => need(inputs[name], k, name));
  const [batch, lq, lk, d] = probsShape(q!, key!, k);
  const probs = mem.allocate([batch, lq, lk]);
  blas.attention(
    views.f32(q!, 'q'), views.f32(key!, 'k'), null, null, views.out(probs), null, null, views.mask(inputs.keyMask, 'keyMask'),
    batch, lq, lk, 1, d, (attrs as unknown as AttentionAttrs).scale, false, 0, 0, 0,
  );
  return probs.info;
};

const attentionProbsGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.attentionProbsGrad;
  const [dProbs, q, key, probs] = ['dProbs', 'q', 'k', 'probs'].map((name) => need(inputs[name], k, name));
  const [batch, lq, lk, d] = probsShape(q!, key!, k);
  const dq = mem.allocate(q!.shape);
  const dK = mem.allocate(key!.shape);
  blas.attentionGrad(
    null, views.f32(dProbs!, 'dProbs'), views.f32(q!, 'q'), views.f32(key!, 'k'), null, views.f32(probs!, 'probs'),
    views.out(dq), views.out(dK), null, null, null, batch, lq, lk, 1, d, (attrs as unknown as AttentionAttrs).scale, 0, 0,
  );
  return [dq.info, dK.info];
};

const crossEntropy: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.crossEntropy;
  const logits = need(inputs.logits, k, 'logits');
  const labels = need(inputs.labels, k, 'labels');
  rank(logits, 2, k, 'logits');
  const loss = mem.allocate([logits.shape[0]!]);
  blas.crossEntropy(views.f32(logits, 'logits'), views.i32(labels, 'labels'), views.out(loss), attrs.ignoreIndex as number);
  return loss.info;
};

const crossEntropyGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.crossEntropyGrad;
  const [dloss, logits, labels] = ['dloss', 'logits', 'labels'].map((name) => need(inputs[name], k, name));
  const out = mem.allocate(logits!.shape);
  blas.crossEntropyGrad(views.f32(dloss!, 'dloss'), views.f32(logits!, 'logits'), views.i32(labels!, 'labels'), views.out(out), attrs.ignoreIndex as number);
  return out.info;
};

const embedding: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.embedding;
  const table = need(inputs.table, k, 'table');
  const ids = need(inputs.ids, k, 'ids');
  rank(table, 2, k, 'table');
  const d = table.shape[1]!;
  const y = mem.allocate([...ids.shape, d]);
  blas.embedding(views.f32(table, 'table'), views.i32(ids, 'ids'), views.out(y), d, drop(attrs).rate, drop(attrs).seed);
  return y.info;
};

const embeddingGrad: Body = (blas, { inputs, attrs, mem, views }) => {
  const k = FUSED.embeddingGrad;
  const [dy, table, ids] = ['dy', 'table', 'ids'].map((name) => need(inputs[name], k, name));
  const out = mem.allocate(table!.shape);
  blas.embeddingGrad(views.f32(dy!, 'dy'), views.i32(ids!, 'ids'), views.out(out), table!.shape[1]!, drop(attrs).rate, drop(attrs).seed);
  return out.info;
};

/** batch, l, p of grounding inputs: attention [B, L, P]. */
function groundingShape(attention: tf.TensorInfo, kernel: string): [number, number, number] {
  rank(attention, 3, kernel, 'attention');
  return attention.shape as [number, number, number];
}

const meanTokenAttention: Body = (blas, { inputs, mem, views }) => {
  const k = FUSED.meanTokenAttention;
  const attention = need(inputs.attention, k, 'attention');
  const [b, l, p] = groundingShape(attention, k);
  const out = mem.allocate([b, p]);
  blas.meanTokenAttention(views.f32(attention, 'attention'), views.mask(need(inputs.mask, k, 'mask'), 'mask')!, views.out(out), b, l, p);
  return out.info;
};

const meanTokenAttentionGrad: Body = (blas, { inputs, mem, views }) => {
  const k = FUSED.meanTokenAttentionGrad;
  const attention = need(inputs.attention, k, 'attention');
  const [b, l, p] = groundingShape(attention, k);
  const out = mem.allocate(attention.shape);
  blas.meanTokenAttentionGrad(views.f32(need(inputs.dy, k, 'dy'), 'dy'), views.mask(need(inputs.mask, k, 'mask'), 'mask')!, views.out(out), b, l, p);
  return out.info;
};

const groundingLoss: Body = (blas, { inputs, mem, views }) => {
  const k = FUSED.groundingLoss;
  const attention = need(inputs.attention, k, 'attention');
  const [b, l, p] = groundingShape(attention, k);
  const out = mem.allocate([]);
  const loss = blas.groundingLoss(views.f32(attention, 'attention'), views.mask(need(inputs.mask, k, 'mask'), 'mask')!, views.f32(need(inputs.targets, k, 'targets'), 'targets'), b, l, p);
  views.f32(out.info, 'loss')[0] = loss;
  return out.info;
};

const groundingLossGrad: Body = (blas, { inputs, mem, views }) => {
  const k = FUSED.groundingLossGrad;
  const attention = need(inputs.attention, k, 'attention');
  const [b, l, p] = groundingShape(attention, k);
  const out = mem.allocate(attention.shape);
  const dLoss = views.f32(need(inputs.dy, k, 'dy'), 'dy')[0]!;
  blas.groundingLossGrad(dLoss, views.f32(attention, 'attention'), views.mask(need(inputs.mask, k, 'mask'), 'mask')!, views.f32(need(inputs.targets, k, 'targets'), 'targets'), views.out(out), b, l, p);
  return out.info;
};

const BODIES: Record<FusedKernelName, Body> = {
  [FUSED.dropout]: dropout,
  [FUSED.addDropout]: addDropout,
  [FUSED.rmsNorm]: rmsNorm,
  [FUSED.rmsNormGrad]: rmsNormGrad,
  [FUSED.feedForward]: feedForward,
  [FUSED.feedForwardGrad]: feedForwardGrad,
  [FUSED.attention]: attention,
  [FUSED.attentionGrad]: attentionGrad,
  [FUSED.attentionLayer]: attentionLayer,
  [FUSED.attentionLayerGrad]: attentionLayerGrad,
  [FUSED.linear]: linear,
  [FUSED.linearGrad]: linearGrad,
  [FUSED.attentionProbs]: attentionProbs,
  [FUSED.attentionProbsGrad]: attentionProbsGrad,
  [FUSED.crossEntropy]: crossEntropy,
  [FUSED.crossEntropyGrad]: crossEntropyGrad,
  [FUSED.embedding]: embedding,
  [FUSED.embeddingGrad]: embeddingGrad,
  [FUSED.meanTokenAttention]: meanTokenAttention,
  [FUSED.meanTokenAttentionGrad]: meanTokenAttentionGrad,
  [FUSED.groundingLoss]: groundingLoss,
  [FUSED.groundingLossGrad]: groundingLossGrad,
};

/** Every fused kernel for one backend, as configs for tf.registerKernel. */
export function fusedKernelConfigs(blas: NativeBlas, backendName: NativeBackendName): tf.KernelConfig[] {
  return (Object.entries(BODIES) as Array<[FusedKernelName, Body]>).map(([kernelName, body]) => ({
    kernelName,
    backendName,
    kernelFunc: ((args) => {
      const mem = memoryOf(backendName, args.backend);
      return body(blas, { inputs: args.inputs as Infos, attrs: args.attrs as Record<string, unknown>, mem, views: new KernelViews(mem, kernelName) });
    }) as KernelFunc,
  }));
}
