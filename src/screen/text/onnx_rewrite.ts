/**
 * Rewrites of the PP-OCRv4 ONNX graphs, done once when the OCR sessions open: the convolutions'
 * element-wise tails folded into them (speed), and the recogniser ending in each step's best class
 * (what decoding reads).
 *
 * The fold, why: both PP-OCRv4 mobile models are built on PP-LCNetV3, which follows each convolution
 * with a scalar affine (x·s + b, its "learnable affine block"), a hard-swish exported as four
 * element-wise nodes (x · Clip(x + 3, 0, 6) / 6), and a second scalar affine. onnxruntime fuses none
 * of these, so each convolution is followed by eight passes over its output. Folded, the convolution
 * carries the first affine in its weights, the hard-swish becomes x · HardSigmoid(x) (which
 * onnxruntime's NCHWc pass fuses into the convolution), and the second affine moves into the next
 * convolution's weights. No library does this: onnxruntime's own graph optimiser has no rule for
 * these patterns, and onnx-simplifier / onnxoptimizer are Python and C++ tools we would have to ship.
 * Every fold is exact in real arithmetic; in float32 the outputs move by rounding only (about 1e-6
 * of a probability on the real models, tests/onnx_rewrite.test.ts). A graph without these patterns
 * keeps its nodes.
 *
 * The best class per step, why: greedy CTC decoding needs only each step's best class and its
 * probability, so onnxruntime's ArgMax and ReduceMax give those instead of handing over all 6,625
 * classes of every step to be scanned here.
 */
import onnxProto, { type onnx as OnnxTypes } from 'onnx-proto';

const { onnx } = onnxProto;
type Node = OnnxTypes.INodeProto;
type Tensor = OnnxTypes.ITensorProto;

const FLOAT = onnx.TensorProto.DataType.FLOAT;

/** How many of each rewrite were made. */
export interface FoldCounts {
  /** x · 1 → x. */
  identityScales: number;
  /** x · Clip(x + 3, 0, 6) / 6 → x · HardSigmoid(x). */
  hardSwishes: number;
  /** Conv → · s → + b, folded into the convolution. */
  affinesIntoConv: number;
  /** · s → + b → Conv: s into the next convolutions' weights, b into their bias or a shift before them. */
  affinesIntoNextConv: number;
}

/** The graph's nodes with their float constants (Constant nodes and initializers) looked up by name. */
class Graph {
  nodes: Node[];
  private readonly consts = new Map<string, { data: Float32Array; dims: number[] }>();
  private readonly added: Tensor[] = [];
  private fresh = 0;

  constructor(private readonly graph: OnnxTypes.IGraphProto) {
    this.nodes = [...(graph.node ?? [])];
    const keep = (t: Tensor | null | undefined, name: string | null | undefined) => {
      if (t && name && t.dataType === FLOAT) this.consts.set(name, { data: floats(t), dims: (t.dims ?? []).map(Number) });
    };
    for (const t of graph.initializer ?? []) keep(t, t.name);
    for (const n of this.nodes) if (n.opType === 'Constant') keep(n.attribute?.find((a) => a.name === 'value')?.t, n.output?.[0]);
  }

  constant(name: string | undefined): { data: Float32Array; dims: number[] } | undefined {
    return name === undefined ? undefined : this.consts.get(name);
  }

  /** The value of a one-element float constant of rank 0 or 1 (so it broadcasts without adding dimensions), or undefined. */
  scalar(name: string | undefined): number | undefined {
    const c = this.constant(name);
    return c && c.data.length === 1 && c.dims.length <= 1 ? c.data[0] : undefined;
  }

  /** A new float initializer named after `base`; returns its name. */
  addConstant(data: Float32Array, dims: number[], base: string): string {
    const name = `${base}/folded${this.fresh++}`;
    this.added.push(onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) }));
    this.consts.set(name, { data, dims });
    return name;
  }

  /** Who reads each value (a graph output counts as a reader no rewrite may remove). */
  readers(): Map<string, Node[]> {
    const r = new Map<string, Node[]>();
    const add = (name: string, n: Node) => (r.get(name) ?? r.set(name, []).get(name)!).push(n);
    for (const n of this.nodes) for (const i of n.input ?? []) add(i, n);
    for (const o of this.graph.output ?? []) add(o.name ?? '', GRAPH_OUTPUT);
    return r;
  }

  producers(): Map<string, Node> {
    const p = new Map<string, Node>();
    for (const n of this.nodes) for (const o of n.output ?? []) p.set(o, n);
    return p;
  }

  /**
   * Writes the nodes back, with the new constants, and without constants nothing reads any more (an
   * initializer dropped leaves the graph's inputs too, where models before IR 4 list every one).
   */
  finish(): void {
    const read = this.readers();
    this.graph.node = this.nodes.filter((n) => n.opType !== 'Constant' || read.has(n.output?.[0] ?? ''));
    const all = [...(this.graph.initializer ?? []), ...this.added];
    this.graph.initializer = all.filter((t) => read.has(t.name ?? ''));
    const dropped = new Set(all.filter((t) => !read.has(t.name ?? '')).map((t) => t.name));
    this.graph.input = (this.graph.input ?? []).filter((i) => !dropped.has(i.name));
  }
}

const GRAPH_OUTPUT: Node = { opType: '(graph output)' };

function floats(t: Tensor): Float32Array {
  if (t.floatData && t.floatData.length > 0) return Float32Array.from(t.floatData);
  // A copy: raw is a view into the file's bytes, maybe unaligned (and a Buffer's slice() would not copy).
  const raw = Uint8Array.from(t.rawData ?? []);
  return new Float32Array(raw.buffer, 0, raw.byteLength >> 2);
}

const attr = (n: Node, name: string) => n.attribute?.find((a) => a.name === name);
const only = (r: Map<string, Node[]>, value: string) => (r.get(value)?.length === 1 ? r.get(value)![0] : undefined);
/** The input of a two-input node that is not `x`. */
const otherInput = (n: Node, x: string) => (n.input![0] === x ? n.input![1] : n.input![0]);

/** x · 1 → x: readers of the product read x. */
function dropIdentityScales(g: Graph): number {
  const ones = g.nodes.filter((n) => n.opType === 'Mul' && n.input?.length === 2 && n.input.some((i) => g.scalar(i) === 1));
  let count = 0;
  for (const mul of ones) {
    const one = mul.input!.find((i) => g.scalar(i) === 1)!;
    const x = otherInput(mul, one)!;
    const product = mul.output![0]!;
    if (g.readers().get(product)?.includes(GRAPH_OUTPUT)) continue;
    for (const n of g.nodes) n.input = n.input?.map((i) => (i === product ? x : i));
    g.nodes = g.nodes.filter((n) => n !== mul);
    count++;
  }
  return count;
}

/** Clip's bounds, from its attributes (opset < 11) or its inputs. */
function clipBounds(g: Graph, clip: Node): [number | undefined, number | undefined] {
  const lo = clip.input?.[1] ? g.scalar(clip.input[1]) : (attr(clip, 'min')?.f ?? -Infinity);
  const hi = clip.input?.[2] ? g.scalar(clip.input[2]) : (attr(clip, 'max')?.f ?? Infinity);
  return [lo, hi];
}

/** Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6) → Mul(x, HardSigmoid(x; α = 1/6, β = 1/2)). */
function fuseHardSwishes(g: Graph): number {
  const made = g.producers();
  const read = g.readers();
  let count = 0;
  for (const div of [...g.nodes]) {
    if (div.opType !== 'Div' || g.scalar(div.input?.[1]) !== 6) continue;
    const mul = made.get(div.input![0]!);
    if (mul?.opType !== 'Mul') continue;
    const clip = mul.input!.map((i) => made.get(i)).find((n) => n?.opType === 'Clip');
    if (!clip) continue;
    const x = otherInput(mul, clip.output![0]!)!;
    const add = made.get(clip.input![0]!);
    if (add?.opType !== 'Add' || !add.input!.includes(x) || g.scalar(otherInput(add, x)) !== 3) continue;
    const [lo, hi] = clipBounds(g, clip);
    if (lo !== 0 || hi !== 6) continue;
    if ([add, clip, mul].some((n) => only(read, n.output![0]!) === undefined)) continue;
    const out = div.output![0]!;
    const sigmoid = onnx.NodeProto.create({
      opType: 'HardSigmoid',
      input: [x],
      output: [`${out}/hard_sigmoid`],
      attribute: [
        onnx.AttributeProto.create({ name: 'alpha', type: onnx.AttributeProto.AttributeType.FLOAT, f: 1 / 6 }),
        onnx.AttributeProto.create({ name: 'beta', type: onnx.AttributeProto.AttributeType.FLOAT, f: 0.5 }),
      ],
    });
    const product = onnx.NodeProto.create({ opType: 'Mul', input: [x, sigmoid.output[0]!], output: [out] });
    g.nodes.splice(g.nodes.indexOf(div), 1, sigmoid, product);
    g.nodes = g.nodes.filter((n) => n !== add && n !== clip && n !== mul);
    count++;
  }
  return count;
}

/** A scalar affine x · s + b starting at `mul` (a Mul by a scalar read only by an Add of a scalar). */
function scalarAffine(g: Graph, read: Map<string, Node[]>, mul: Node | undefined, x: string): { s: number; b: number; add: Node } | undefined {
  if (mul?.opType !== 'Mul' || mul.input?.length !== 2 || !mul.input.includes(x)) return undefined;
  const s = g.scalar(otherInput(mul, x));
  const add = only(read, mul.output![0]!);
  if (s === undefined || add?.opType !== 'Add' || add.input?.length !== 2) return undefined;
  const b = g.scalar(otherInput(add, mul.output![0]!));
  return b === undefined ? undefined : { s, b, add };
}

/** A convolution's float weights [O, I/group, kH, kW] and bias [O] (zeros when it has none). */
function convWeights(g: Graph, conv: Node): { w: Float32Array; dims: number[]; bias: Float32Array } | undefined {
  const w = g.constant(conv.input?.[1]);
  if (!w) return undefined;
  const outputs = w.dims[0]!;
  const bias = conv.input?.[2] ? g.constant(conv.input[2])?.data : new Float32Array(outputs);
  return bias && bias.length === outputs ? { w: w.data, dims: w.dims, bias: Float32Array.from(bias) } : undefined;
}

function setConvWeights(g: Graph, conv: Node, w: Float32Array, dims: number[], bias: Float32Array): void {
  const base = conv.output![0]!;
  conv.input = [conv.input![0]!, g.addConstant(w, dims, `${base}/W`), g.addConstant(bias, [dims[0]!], `${base}/B`)];
}

/** Conv → · s → + b: the convolution computes s·(W∗x + B) + b itself (weights s·W, bias s·B + b). */
function foldAffinesIntoConv(g: Graph): number {
  let count = 0;
  for (const conv of g.nodes.filter((n) => n.opType === 'Conv')) {
    const read = g.readers();
    const y = conv.output![0]!;
    const affine = scalarAffine(g, read, only(read, y), y);
    const weights = convWeights(g, conv);
    if (!affine || !weights) continue;
    const { s, b, add } = affine;
    setConvWeights(g, conv, weights.w.map((v) => v * s), weights.dims, weights.bias.map((v) => v * s + b));
    conv.output = [add.output![0]!];
    const mul = only(read, y)!;
    g.nodes = g.nodes.filter((n) => n !== mul && n !== add);
    count++;
  }
  return count;
}

/** Input channels of a convolution: its weights' second dimension times its groups. */
function channelsIn(conv: Node, g: Graph): number {
  return g.constant(conv.input![1])!.dims[1]! * Number(attr(conv, 'group')?.i ?? 1);
}

/** out = x + shift on every element of x [N, C, …], as a 1×1 depthwise convolution (weights 1, bias `shift`). */
function shiftNode(g: Graph, x: string, out: string, channels: number, shift: number): Node {
  const ints = onnx.AttributeProto.AttributeType.INTS;
  return onnx.NodeProto.create({
    opType: 'Conv',
    input: [x, g.addConstant(new Float32Array(channels).fill(1), [channels, 1, 1, 1], `${out}/W`), g.addConstant(new Float32Array(channels).fill(shift), [channels], `${out}/B`)],
    output: [out],
    attribute: [
      onnx.AttributeProto.create({ name: 'group', type: onnx.AttributeProto.AttributeType.INT, i: channels }),
      onnx.AttributeProto.create({ name: 'kernel_shape', type: ints, ints: [1, 1] }),
    ],
  });
}

/** True when the convolution reads outside its input (explicit pads, or SAME auto-padding). */
function pads(conv: Node): boolean {
  const auto = attr(conv, 'auto_pad')?.s;
  const mode = auto ? new TextDecoder().decode(auto) : 'NOTSET';
  return (attr(conv, 'pads')?.ints ?? []).some((p) => Number(p) !== 0) || (mode !== 'NOTSET' && mode !== 'VALID');
}

/**
 * h · s + b read only by convolutions (as their data): W∗(s·h + b) = (s·W)∗h + b·ΣW where the
 * convolution does not pad, so s goes into the weights and b into the bias; where it pads, the border
 * sees zeros rather than b, so the weights take s and the shift by b / s stays: (s·W)∗(h + b/s). The
 * shift is a 1×1 depthwise convolution with that bias rather than an Add, because onnxruntime runs a
 * scalar Add outside its blocked (NCHWc) layout, with a reorder of the tensor out and back in.
 */
function foldAffinesIntoNextConv(g: Graph): number {
  let count = 0;
  for (const mul of g.nodes.filter((n) => n.opType === 'Mul' && n.input?.length === 2)) {
    const read = g.readers();
    const h = mul.input!.find((i) => g.scalar(i) === undefined);
    const affine = h === undefined ? undefined : scalarAffine(g, read, mul, h);
    if (!affine || affine.s === 0) continue;
    const { s, b, add } = affine;
    const z = add.output![0]!;
    const convs = read.get(z) ?? [];
    if (convs.length === 0 || !convs.every((c) => c.opType === 'Conv' && c.input![0] === z && c.input!.slice(1).every((i) => i !== z) && convWeights(g, c))) continue;
    const keepAdd = b !== 0 && convs.some(pads);
    for (const conv of convs) {
      const { w, dims, bias } = convWeights(g, conv)!;
      if (!keepAdd && b !== 0) {
        const per = w.length / dims[0]!;
        for (let o = 0; o < dims[0]!; o++) {
          let sum = 0;
          for (let k = 0; k < per; k++) sum += w[o * per + k]!;
          bias[o] = bias[o]! + b * sum;
        }
      }
      setConvWeights(g, conv, w.map((v) => v * s), dims, bias);
      conv.input![0] = keepAdd ? z : h!;
    }
    if (keepAdd) g.nodes.splice(g.nodes.indexOf(add), 1, shiftNode(g, h!, z, channelsIn(convs[0]!, g), b / s));
    g.nodes = g.nodes.filter((n) => n !== mul && n !== add);
    count++;
  }
  return count;
}

/** Applies the folds above to a decoded graph, in place. */
export function foldConvTails(graph: OnnxTypes.IGraphProto): FoldCounts {
  const g = new Graph(graph);
  const counts: FoldCounts = {
    identityScales: dropIdentityScales(g),
    hardSwishes: fuseHardSwishes(g),
    affinesIntoConv: foldAffinesIntoConv(g),
    affinesIntoNextConv: foldAffinesIntoNextConv(g),
  };
  g.finish();
  return counts;
}

/** The graph output names bestPerStep gives: each step's best class (int32 [N, T]) and its probability (float [N, T]). */
export const BEST_PER_STEP = { classes: 'best_class', probs: 'best_prob' } as const;

/**
 * A recogniser whose one output is probabilities [N, T, C] made to output, instead, each step's best
 * class and that class's probability (BEST_PER_STEP); in place.
 */
export function bestPerStep(model: OnnxTypes.IModelProto): void {
  const graph = model.graph!;
  const [y, ...more] = graph.output ?? [];
  if (!y?.name || more.length > 0) throw new Error(`a recogniser has one output, of probabilities [N, T, C]; this graph has ${graph.output?.length ?? 0}`);
  const opset = Number(model.opsetImport?.find((o) => !o.domain)?.version ?? 0);
  const T = onnx.AttributeProto.AttributeType;
  const int = (name: string, i: number) => onnx.AttributeProto.create({ name, type: T.INT, i });
  // ReduceMax takes its axes as an input from opset 18, as an attribute before.
  const axes = opset >= 18 ? `${y.name}/axes` : undefined;
  if (axes) graph.initializer = [...(graph.initializer ?? []), onnx.TensorProto.create({ name: axes, dims: [1], dataType: onnx.TensorProto.DataType.INT64, int64Data: [2] })];
  graph.node = [
    ...(graph.node ?? []),
    onnx.NodeProto.create({ opType: 'ArgMax', input: [y.name], output: [`${y.name}/argmax`], attribute: [int('axis', 2), int('keepdims', 0)] }),
    onnx.NodeProto.create({ opType: 'Cast', input: [`${y.name}/argmax`], output: [BEST_PER_STEP.classes], attribute: [int('to', onnx.TensorProto.DataType.INT32)] }),
    onnx.NodeProto.create({
      opType: 'ReduceMax',
      input: axes ? [y.name, axes] : [y.name],
      output: [BEST_PER_STEP.probs],
      attribute: axes ? [int('keepdims', 0)] : [onnx.AttributeProto.create({ name: 'axes', type: T.INTS, ints: [2] }), int('keepdims', 0)],
    }),
  ];
  const info = (name: string, elemType: number) => onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType } } });
  graph.output = [info(BEST_PER_STEP.classes, onnx.TensorProto.DataType.INT32), info(BEST_PER_STEP.probs, onnx.TensorProto.DataType.FLOAT)];
}

/** Decodes an ONNX model, lets `edit` change it, and encodes it again (the input bytes are not changed). */
export function rewriteModel<T>(bytes: Uint8Array, edit: (model: OnnxTypes.IModelProto) => T): { model: Uint8Array; result: T } {
  const m = onnx.ModelProto.decode(bytes);
  if (!m.graph) throw new Error('not an ONNX model: no graph');
  const result = edit(m);
  return { model: onnx.ModelProto.encode(m).finish(), result };
}
