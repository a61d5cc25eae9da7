/**
 * Writes a ViT vision tower (CLIP or SigLIP style) as a Hugging Face / transformers.js model folder:
 *   DIR/config.json, DIR/preprocessor_config.json, DIR/onnx/model.onnx
 * The graph is built with onnx-proto (ONNX's protobuf messages for JavaScript) with seeded random
 * weights. Tests use tiny towers; the
 * benchmark a CLIP-B/32-sized one.
 *
 * Graph (pre-LN ViT, as HF CLIPVisionModel / SiglipVisionModel):
 *   pixel_values [B, 3, S, S] → Conv(patch, stride patch) → tokens [B, N, D]
 *   CLIP: prepend class embedding, add positions, pre-LayerNorm; SigLIP: add positions
 *   L × { x += MHA(LN(x)); x += MLP(LN(x)) }   (CLIP quick_gelu, SigLIP gelu-tanh)
 *   CLIP:   last_hidden_state = x,     pooler_output = LN_post(x[:, 0])
 *   SigLIP: last_hidden_state = LN(x), pooler_output = mean of last_hidden_state over tokens
 *     (SigLIP's real head is attention pooling; for features and timing a mean is enough)
 *
 * Usage: node dist/scripts/make_tiny_onnx.js DIR [clip|siglip] [imageSize patch width layers heads]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

const { FLOAT, INT64 } = onnx.TensorProto.DataType;
const { FLOAT: ATTR_FLOAT, INT: ATTR_INT, INTS: ATTR_INTS } = onnx.AttributeProto.AttributeType;

export interface TowerSpec {
  kind: 'clip' | 'siglip';
  imageSize: number;
  patchSize: number;
  hiddenSize: number;
  layers: number;
  heads: number;
  seed: number;
}

export const TINY_CLIP: TowerSpec = { kind: 'clip', imageSize: 32, patchSize: 8, hiddenSize: 16, layers: 1, heads: 2, seed: 1 };
export const TINY_SIGLIP: TowerSpec = { kind: 'siglip', imageSize: 24, patchSize: 8, hiddenSize: 12, layers: 2, heads: 3, seed: 2 };
/** ViT-B/32 (CLIP's image tower): 224², 7×7 patches + CLS, width 768, 12 layers, 12 heads. */
export const CLIP_B32: TowerSpec = { kind: 'clip', imageSize: 224, patchSize: 32, hiddenSize: 768, layers: 12, heads: 12, seed: 3 };

export type Attr = { name: string; f?: number; i?: number; ints?: number[] };
/** A graph input or output: its name and dims (a string dim is a named, dynamic one; no dims: shape unknown). */
export type ValueSpec = [name: string, dims?: (number | string)[]];

/** Builds the node list and initialisers (seeded random weights); names are unique per builder. Tests build small graphs with it too. */
export class GraphBuilder {
  readonly nodes: onnxProto.onnx.INodeProto[] = [];
  readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private n = 0;
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 1;
  }

  /** xorshift32 → uniform(−a, a): deterministic, fast enough for 88M weights. */
  private uniform(count: number, scale: number): Float32Array {
    const out = new Float32Array(count);
    let s = this.state;
    for (let i = 0; i < count; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      out[i] = ((s >>> 0) / 4294967296 - 0.5) * 2 * scale;
    }
    this.state = s;
    return out;
  }

  weight(dims: number[], scale: number): string {
    const count = dims.reduce((a, b) => a * b, 1);
    return this.constant(dims, this.uniform(count, scale));
  }

  constant(dims: number[], values: Float32Array): string {
    const name = `w${this.n++}`;
    this.initializers.push({ name, dims, dataType: FLOAT, rawData: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) });
    return name;
  }

  ints(values: number[]): string {
    const name = `c${this.n++}`;
    const data = new BigInt64Array(values.map((v) => BigInt(v)));
    this.initializers.push({ name, dims: [values.length], dataType: INT64, rawData: new Uint8Array(data.buffer) });
    return name;
  }

  op(opType: string, inputs: string[], attrs: Attr[] = [], output?: string): string {
    const out = output ?? `t${this.n++}`;
    const attribute = attrs.map((a) =>
      a.ints ? { name: a.name, ints: a.ints, type: ATTR_INTS } : a.f !== undefined ? { name: a.name, f: a.f, type: ATTR_FLOAT } : { name: a.name, i: a.i, type: ATTR_INT },
    );
    this.nodes.push({ input: inputs, output: [out], name: `${opType}_${this.n++}`, opType, attribute });
    return out;
  }

  /** ModelProto bytes of the nodes so far, with `inputs` and `outputs` (the graph's, in order). */
  model(o: { name: string; opset: number; irVersion?: number; inputs: ValueSpec[]; outputs: ValueSpec[] }): Uint8Array {
    const valueInfo = ([name, dims]: ValueSpec) => ({
      name,
      type: { tensorType: { elemType: FLOAT, ...(dims ? { shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } : {}) } },
    });
    const model = {
      irVersion: o.irVersion ?? 8,
      producerName: 'autoui make_tiny_onnx',
      opsetImport: [{ domain: '', version: o.opset }],
      graph: { name: o.name, node: this.nodes, initializer: this.initializers, input: o.inputs.map(valueInfo), output: o.outputs.map(valueInfo) },
    };
    return onnx.ModelProto.encode(onnx.ModelProto.fromObject(model)).finish();
  }

  layerNorm(x: string, d: number, output?: string): string {
    const gamma = this.constant([d], new Float32Array(d).fill(1).map((v, i) => v + 0.01 * (i % 7)));
    const beta = this.constant([d], new Float32Array(d).map((_, i) => 0.01 * (i % 5)));
    return this.op('LayerNormalization', [x, gamma, beta], [{ name: 'axis', i: -1 }, { name: 'epsilon', f: 1e-5 }], output);
  }

  linear(x: string, din: number, dout: number): string {
    return this.op('Add', [this.op('MatMul', [x, this.weight([din, dout], 1 / Math.sqrt(din))]), this.weight([dout], 0.02)]);
  }
}

/** ModelProto bytes of the tower. */
export function buildVisionTower(spec: TowerSpec): Uint8Array {
  const { imageSize: S, patchSize: P, hiddenSize: D, heads: H } = spec;
  if (S % P !== 0 || D % H !== 0) throw new Error('imageSize must be a multiple of patchSize and hiddenSize of heads');
  const grid = S / P;
  const clip = spec.kind === 'clip';
  const tokens = grid * grid + (clip ? 1 : 0);
  const dh = D / H;
  const g = new GraphBuilder(spec.seed);

  const conv = g.op('Conv', ['pixel_values', g.weight([D, 3, P, P], 1 / Math.sqrt(3 * P * P))], [{ name: 'kernel_shape', ints: [P, P] }, { name: 'strides', ints: [P, P] }]);
  const flat = g.op('Reshape', [conv, g.ints([0, D, grid * grid])]); // [B, D, N]
  let x = g.op('Transpose', [flat], [{ name: 'perm', ints: [0, 2, 1] }]); // [B, N, D]
  if (clip) {
    // Class token broadcast over the batch: zeros [B, 1, D] (from the first token) + the embedding.
    const first = g.op('Slice', [x, g.ints([0]), g.ints([1]), g.ints([1])]);
    const cls = g.op('Add', [g.op('Mul', [first, g.constant([1], new Float32Array([0]))]), g.weight([1, 1, D], 1)]);
    x = g.op('Concat', [cls, x], [{ name: 'axis', i: 1 }]);
  }
  x = g.op('Add', [x, g.weight([1, tokens, D], 0.5)]);
  if (clip) x = g.layerNorm(x, D); // CLIP's pre_layrnorm

  const heads = (t: string) => g.op('Transpose', [g.op('Reshape', [t, g.ints([0, 0, H, dh])])], [{ name: 'perm', ints: [0, 2, 1, 3] }]);
  for (let l = 0; l < spec.layers; l++) {
    const h = g.layerNorm(x, D);
    const q = heads(g.op('Mul', [g.linear(h, D, D), g.constant([1], new Float32Array([1 / Math.sqrt(dh)]))]));
    const k = heads(g.linear(h, D, D));
    const v = heads(g.linear(h, D, D));
    const kt = g.op('Transpose', [k], [{ name: 'perm', ints: [0, 1, 3, 2] }]);
    const attn = g.op('Softmax', [g.op('MatMul', [q, kt])], [{ name: 'axis', i: -1 }]);
    const ctx = g.op('Transpose', [g.op('MatMul', [attn, v])], [{ name: 'perm', ints: [0, 2, 1, 3] }]);
    x = g.op('Add', [x, g.linear(g.op('Reshape', [ctx, g.ints([0, 0, D])]), D, D)]);
    const m = g.linear(g.layerNorm(x, D), D, 4 * D);
    // quick_gelu for CLIP; SigLIP's gelu-tanh written as x·sigmoid(1.5957691·(x + 0.044715x³)).
    const act = clip
      ? g.op('Mul', [m, g.op('Sigmoid', [g.op('Mul', [m, g.constant([1], new Float32Array([1.702]))])])])
      : g.op('Mul', [m, g.op('Sigmoid', [g.op('Mul', [g.op('Add', [m, g.op('Mul', [g.op('Mul', [g.op('Mul', [m, m]), m]), g.constant([1], new Float32Array([0.044715]))])]), g.constant([1], new Float32Array([1.5957691]))])])]);
    x = g.op('Add', [x, g.linear(act, 4 * D, D)]);
  }
  if (clip) {
    g.op('Identity', [x], [], 'last_hidden_state');
    const cls = g.op('Squeeze', [g.op('Slice', [x, g.ints([0]), g.ints([1]), g.ints([1])]), g.ints([1])]);
    g.layerNorm(cls, D, 'pooler_output');
  } else {
    const last = g.layerNorm(x, D, 'last_hidden_state');
    g.op('ReduceMean', [last], [{ name: 'axes', ints: [1] }, { name: 'keepdims', i: 0 }], 'pooler_output');
  }

  return g.model({
    name: `${spec.kind}_vision_tower`,
    opset: 17,
    inputs: [['pixel_values', ['batch_size', 3, S, S]]],
    outputs: [['last_hidden_state', ['batch_size', tokens, D]], ['pooler_output', ['batch_size', D]]],
  });
}

/** HF config.json and preprocessor_config.json of the tower, as the real CLIP / SigLIP folders have them. */
export function towerConfigs(spec: TowerSpec): { config: object; preprocessor: object } {
  const vision = {
    hidden_size: spec.hiddenSize,
    image_size: spec.imageSize,
    patch_size: spec.patchSize,
    num_hidden_layers: spec.layers,
    num_attention_heads: spec.heads,
    intermediate_size: 4 * spec.hiddenSize,
    num_channels: 3,
  };
  if (spec.kind === 'clip') {
    return {
      config: { architectures: ['CLIPVisionModel'], model_type: 'clip_vision_model', hidden_act: 'quick_gelu', ...vision },
      preprocessor: {
        crop_size: { height: spec.imageSize, width: spec.imageSize },
        do_center_crop: true,
        do_convert_rgb: true,
        do_normalize: true,
        do_rescale: true,
        do_resize: true,
        image_mean: [0.48145466, 0.4578275, 0.40821073],
        image_std: [0.26862954, 0.26130258, 0.27577711],
        image_processor_type: 'CLIPImageProcessor',
        resample: 3,
        rescale_factor: 1 / 255,
        size: { shortest_edge: spec.imageSize },
      },
    };
  }
  return {
    config: { architectures: ['SiglipVisionModel'], model_type: 'siglip_vision_model', hidden_act: 'gelu_pytorch_tanh', ...vision },
    preprocessor: {
      do_normalize: true,
      do_rescale: true,
      do_resize: true,
      image_mean: [0.5, 0.5, 0.5],
      image_std: [0.5, 0.5, 0.5],
      image_processor_type: 'SiglipImageProcessor',
      resample: 3,
      rescale_factor: 1 / 255,
      size: { height: spec.imageSize, width: spec.imageSize },
    },
  };
}

/** Writes the model folder; returns its path. */
export async function writeVisionTower(dir: string, spec: TowerSpec): Promise<string> {
  const { config, preprocessor } = towerConfigs(spec);
  await mkdir(join(dir, 'onnx'), { recursive: true });
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  await writeFile(join(dir, 'preprocessor_config.json'), JSON.stringify(preprocessor, null, 2));
  await writeFile(join(dir, 'onnx', 'model.onnx'), buildVisionTower(spec));
  return dir;
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const [dir, kind = 'clip', ...nums] = process.argv.slice(2);
  if (!dir || (kind !== 'clip' && kind !== 'siglip')) {
    console.error('usage: node dist/scripts/make_tiny_onnx.js DIR [clip|siglip] [imageSize patch width layers heads]');
    process.exit(2);
  }
  const base = kind === 'clip' ? TINY_CLIP : TINY_SIGLIP;
  const [imageSize, patchSize, hiddenSize, layers, heads] = nums.map(Number);
  const spec: TowerSpec = { ...base, imageSize: imageSize ?? base.imageSize, patchSize: patchSize ?? base.patchSize, hiddenSize: hiddenSize ?? base.hiddenSize, layers: layers ?? base.layers, heads: heads ?? base.heads };
  await writeVisionTower(dir, spec);
  console.log(`wrote ${kind} tower to ${dir}`);
}
