/**
 * The OCR models' graph rewrites (src/screen/text/onnx_rewrite.ts). The convolution-tail fold: on
 * small hand-built graphs with every pattern it rewrites (and the cases it must leave alone), and on
 * the two PP-OCRv4 models it is for: the folded graph computes what the shipped one does, to float
 * rounding, with fewer nodes. The recogniser's best class per step: the argmax and maximum of the
 * probabilities it replaces.
 */
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';
import onnxProto from 'onnx-proto';
import { describe, expect, test } from 'vitest';
import { GraphBuilder, type ValueSpec } from '../scripts/make_tiny_onnx.js';
import { BEST_PER_STEP, bestPerStep, foldConvTails, rewriteModel, type FoldCounts } from '../src/screen/text/onnx_rewrite.js';
import { resolveModelPaths } from '../src/screen/text/ocr_models.js';
import { Rng } from '../src/util/rng.js';

const { onnx } = onnxProto;

function random(n: number, seed: number, scale = 1): Float32Array {
  const rng = Rng.from('onnx_rewrite', seed);
  return Float32Array.from({ length: n }, () => rng.range(-scale, scale));
}

/** make_tiny_onnx's builder with PP-LCNetV3's pieces, for graphs with one float input x [1, C, H, W]. */
class Builder extends GraphBuilder {
  constructor(private readonly opset: number) {
    super(1);
  }

  scalar(v: number, dims: number[] = [1]): string {
    return this.constant(dims, Float32Array.of(v));
  }

  conv(x: string, cin: number, cout: number, k: number, pad: number, group = 1): string {
    const w = this.weight([cout, cin / group, k, k], 0.5);
    return this.op('Conv', [x, w, this.weight([cout], 0.1)], [{ name: 'kernel_shape', ints: [k, k] }, { name: 'pads', ints: [pad, pad, pad, pad] }, { name: 'group', i: group }]);
  }

  affine(x: string, s: number, b: number): string {
    return this.op('Add', [this.op('Mul', [this.scalar(s), x]), this.scalar(b)]);
  }

  /** x · Clip(x + 3, 0, 6) / 6, as PaddlePaddle exports it (Clip's bounds as attributes before opset 11). */
  hardSwish(x: string): string {
    const shifted = this.op('Add', [x, this.scalar(3, [])]);
    const clip = this.opset < 11
      ? this.op('Clip', [shifted], [{ name: 'min', f: 0 }, { name: 'max', f: 6 }])
      : this.op('Clip', [shifted, this.scalar(0, []), this.scalar(6, [])]);
    return this.op('Div', [this.op('Mul', [x, clip]), this.scalar(6, [])]);
  }

  /** The model; `listInitializers` lists every constant among the graph's inputs too, as models before IR 4 must. */
  graph(input: number[], outputs: string[], listInitializers = false): Uint8Array {
    const constants: ValueSpec[] = listInitializers ? this.initializers.map((t) => [t.name!, (t.dims ?? []).map(Number)]) : [];
    return this.model({ name: 'g', opset: this.opset, irVersion: listInitializers ? 3 : 7, inputs: [['x', input], ...constants], outputs: outputs.map((o) => [o]) });
  }
}

/** Every output of `model` for input x, in the graph's output order. */
async function run(model: Uint8Array, x: Float32Array, dims: number[]): Promise<Float32Array[]> {
  const s = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all', intraOpNumThreads: 1 });
  try {
    const out = await s.run({ [s.inputNames[0]!]: new ort.Tensor('float32', x, dims) });
    return s.outputNames.map((n) => out[n]!.data as Float32Array);
  } finally {
    await s.release();
  }
}

function expectClose(a: Float32Array, b: Float32Array, tol: number): void {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / (1 + Math.abs(a[i]!)));
  expect(worst).toBeLessThan(tol);
}

const nodeCount = (model: Uint8Array) => onnx.ModelProto.decode(model).graph!.node!.length;
const fold = (model: Uint8Array): { model: Uint8Array; counts: FoldCounts } => {
  const { model: folded, result } = rewriteModel(model, (m) => foldConvTails(m.graph!));
  return { model: folded, counts: result };
};

/**
 * PP-LCNetV3's block, both ways it continues: conv → affine → hard-swish → affine → a padded
 * depthwise conv (the shift stays) and, on a second block, → a 1×1 conv (the shift folds into its bias).
 */
function lcnetBlocks(opset: number, listInitializers = false): { model: Uint8Array; dims: number[] } {
  const g = new Builder(opset);
  let x = g.conv('x', 3, 8, 3, 1);
  x = g.affine(x, 1.7, 0.4);
  x = g.affine(g.hardSwish(x), 0.3, -0.2);
  x = g.conv(x, 8, 8, 3, 1, 8); // depthwise, padded
  x = g.affine(x, 2.1, 1.0);
  x = g.affine(g.hardSwish(x), 0.6, 0.25);
  x = g.conv(x, 8, 6, 1, 0); // pointwise
  const y = g.op('Relu', [g.op('Mul', [x, g.scalar(1, [])])]);
  return { model: g.graph([1, 3, 9, 13], [y], listInitializers), dims: [1, 3, 9, 13] };
}

describe('foldConvTails on hand-built graphs', () => {
  for (const [opset, listed] of [[9, true], [9, false], [13, false]] as const) {
    test(`opset ${opset}${listed ? ', constants listed as inputs (IR 3)' : ''}: every pattern folds, and the outputs stay the same`, async () => {
      const { model, dims } = lcnetBlocks(opset, listed);
      const folded = fold(model);
      expect(folded.counts).toEqual({ identityScales: 1, hardSwishes: 2, affinesIntoConv: 2, affinesIntoNextConv: 2 });
      // 3 convs + 2×(affine 2 + hard-swish 4 + affine 2) + Mul + Relu = 21 → 3 convs + 2×2 + one shift conv + Relu = 9
      expect(nodeCount(model)).toBe(21);
      expect(nodeCount(folded.model)).toBe(9);
      for (const seed of [1, 2, 3]) {
        const x = random(dims.reduce((a, b) => a * b), seed, 4); // wide enough to reach both ends of the hard-swish
        expectClose((await run(model, x, dims))[0]!, (await run(folded.model, x, dims))[0]!, 1e-5);
      }
    });
  }

  test('values something else reads, or the graph returns, are left alone', async () => {
    const g = new Builder(13);
    const conv = g.conv('x', 3, 4, 3, 1);
    const affined = g.affine(conv, 1.5, 0.5); // the conv's output is also a graph output: no fold into it
    const swish = g.hardSwish(affined);
    const tail = g.affine(swish, 0.5, 0.1); // read by a Relu, not a convolution: stays
    const model = g.graph([1, 3, 6, 6], [conv, g.op('Relu', [tail]), swish]);
    const folded = fold(model);
    expect(folded.counts).toEqual({ identityScales: 0, hardSwishes: 1, affinesIntoConv: 0, affinesIntoNextConv: 0 });
    const x = random(108, 9, 4);
    const [a, b] = [await run(model, x, [1, 3, 6, 6]), await run(folded.model, x, [1, 3, 6, 6])];
    a.forEach((out, i) => expectClose(out, b[i]!, 1e-5));
  });

  test('a graph without the patterns keeps its nodes; bytes that are not a model are refused', () => {
    const g = new Builder(13);
    // A one of rank 4 is not an identity: it would make a rank-2 input rank 4.
    const model = g.graph([1, 3, 4, 4], [g.op('Relu', [g.op('Mul', [g.conv('x', 3, 2, 1, 0), g.scalar(1, [1, 1, 1, 1])])])]);
    const folded = fold(model);
    expect(Object.values(folded.counts)).toEqual([0, 0, 0, 0]);
    expect(onnx.ModelProto.decode(folded.model).graph!.node!.map((n) => n.opType)).toEqual(['Conv', 'Mul', 'Relu']);
    expect(() => fold(new Uint8Array([1, 2, 3]))).toThrow();
  });
});

describe('foldConvTails on PP-OCRv4', () => {
  const paths = resolveModelPaths();

  test('the recogniser: the same per-step classes and probabilities to rounding, a quarter of its nodes gone', async () => {
    const shipped = new Uint8Array(readFileSync(paths.recognition));
    const folded = fold(shipped);
    expect(folded.counts.hardSwishes).toBeGreaterThan(20);
    expect(folded.counts.affinesIntoConv).toBeGreaterThan(20);
    expect(nodeCount(folded.model)).toBeLessThan(0.75 * nodeCount(shipped));
    const dims = [1, 3, 48, 160];
    const x = random(3 * 48 * 160, 4);
    const [a] = await run(shipped, x, dims);
    const [b] = await run(folded.model, x, dims);
    expectClose(a!, b!, 1e-4);
  });

  test("the recogniser made to give each step's best class: the argmax and the maximum of what it gave", async () => {
    const shipped = new Uint8Array(readFileSync(paths.recognition));
    const { model } = rewriteModel(shipped, (m) => {
      foldConvTails(m.graph!);
      bestPerStep(m);
    });
    const dims = [2, 3, 48, 96];
    const x = random(2 * 3 * 48 * 96, 6);
    const [probs] = await run(shipped, x, dims);
    const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
    const out = await s.run({ [s.inputNames[0]!]: new ort.Tensor('float32', x, dims) });
    await s.release();
    const [classes, best] = [out[BEST_PER_STEP.classes]!, out[BEST_PER_STEP.probs]!];
    expect(classes.type).toBe('int32');
    const steps = classes.dims[1]!;
    expect(classes.dims).toEqual([2, steps]);
    const C = probs!.length / (2 * steps);
    for (let r = 0; r < 2 * steps; r++) {
      const row = probs!.subarray(r * C, (r + 1) * C);
      const max = Math.max(...row);
      expect(row[(classes.data as Int32Array)[r]!]).toBeCloseTo(max, 4); // the folded graph's argmax: a near-tie may pick the other
      expect((best.data as Float32Array)[r]).toBeCloseTo(max, 4);
    }
  });

  test('bestPerStep refuses a graph that is not a one-output recogniser', () => {
    const g = new Builder(13);
    const model = g.graph([1, 3, 4, 4], [g.op('Relu', ['x']), g.op('Sigmoid', ['x'])]);
    expect(() => rewriteModel(model, bestPerStep)).toThrow(/one output/);
  });

  test('the detector: the same text map to rounding', async () => {
    const shipped = new Uint8Array(readFileSync(paths.detection));
    const folded = fold(shipped);
    expect(folded.counts.hardSwishes).toBeGreaterThan(20);
    const dims = [1, 3, 128, 96];
    const x = random(3 * 128 * 96, 5, 2);
    const [a] = await run(shipped, x, dims);
    const [b] = await run(folded.model, x, dims);
    expectClose(a!, b!, 1e-4);
  });
});
