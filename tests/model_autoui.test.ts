import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, test } from 'vitest';
import { initBackend } from '../src/backend.js';
import { AutoUiModel, IGNORE_INDEX } from '../src/model/autoui.js';
import { modelConfig, PRESETS, validateConfig } from '../src/model/config.js';
import { InputError } from '../src/util/errors.js';
import { disposeBatch, maxAbsDiff, microConfig, randomBatch } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('config and parameters', () => {
  test('presets match the t5-v1_1 / FLAN-T5 sizes', () => {
    expect(PRESETS.small).toMatchObject({ dModel: 512, dKv: 64, numHeads: 6, dFf: 1024, numLayers: 8, numDecoderLayers: 8, feedForwardProj: 'gated-gelu', tieWordEmbeddings: false });
    expect(PRESETS.base).toMatchObject({ dModel: 768, dKv: 64, numHeads: 12, dFf: 2048, numLayers: 12 });
    expect(PRESETS.large).toMatchObject({ dModel: 1024, dKv: 64, numHeads: 16, dFf: 2816, numLayers: 24 });
    expect(PRESETS.small).toMatchObject({ relativeAttentionNumBuckets: 32, relativeAttentionMaxDistance: 128, padTokenId: 0, eosTokenId: 1, decoderStartTokenId: 0 });
  });

  test('invalid configs are rejected with the field named', () => {
    expect(() => validateConfig({ ...microConfig(), dModel: 0 })).toThrow(/dModel/);
    expect(() => validateConfig({ ...microConfig(), eosTokenId: 99 })).toThrow(/eosTokenId/);
    expect(() => validateConfig({ ...microConfig(), feedForwardProj: 'swish' as 'relu' })).toThrow(InputError);
  });

  test('HF names and shapes ([out, in]) for a gated, untied model', () => {
    const model = new AutoUiModel(microConfig(), 1);
    const shapes = new Map([...model.namedWeights()].map(([k, v]) => [k, v.shape]));
    expect(shapes.get('shared.weight')).toEqual([23, 16]);
    expect(shapes.get('lm_head.weight')).toEqual([23, 16]);
    expect(shapes.get('encoder.block.0.layer.0.SelfAttention.q.weight')).toEqual([16, 16]);
    expect(shapes.get('encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight')).toEqual([8, 4]);
    expect(shapes.has('encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight')).toBe(false);
    expect(shapes.get('encoder.block.1.layer.1.DenseReluDense.wi_0.weight')).toEqual([24, 16]);
    expect(shapes.get('encoder.block.1.layer.1.DenseReluDense.wo.weight')).toEqual([16, 24]);
    expect(shapes.get('decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight')).toEqual([8, 4]);
    expect(shapes.get('decoder.block.1.layer.1.EncDecAttention.o.weight')).toEqual([16, 16]);
    expect(shapes.get('decoder.block.1.layer.2.DenseReluDense.wi_1.weight')).toEqual([24, 16]);
    expect(shapes.get('decoder.final_layer_norm.weight')).toEqual([16]);
    expect(shapes.get('screen_proj.weight')).toEqual([16, 6]);
    expect(shapes.get('fusion.gate_lang.weight')).toEqual([16, 16]);
    expect(shapes.get('fusion.gate_attn.bias')).toEqual([16]);
    expect(model.trainableVariables()).toHaveLength(shapes.size);
    model.dispose();
    const relu = new AutoUiModel(microConfig({ feedForwardProj: 'relu', tieWordEmbeddings: true, dKv: 3 }), 1);
    const names = [...relu.namedWeights().keys()];
    expect(names).toContain('decoder.block.0.layer.2.DenseReluDense.wi.weight');
    expect(names).not.toContain('lm_head.weight');
    expect(relu.namedWeights().get('decoder.block.0.layer.0.SelfAttention.o.weight')!.shape).toEqual([16, 12]);
    relu.dispose();
  });

  test('initialisation is seeded and follows HF std factors', () => {
    const config = modelConfig('tiny', { vocabSize: 300, screenDim: 8 });
    const a = new AutoUiModel(config, 7);
    const b = new AutoUiModel(config, 7);
    const c = new AutoUiModel(config, 8);
    const name = 'encoder.block.1.layer.0.SelfAttention.q.weight';
    expect(maxAbsDiff(a.namedWeights().get(name)!, b.namedWeights().get(name)!)).toBe(0);
    expect(maxAbsDiff(a.namedWeights().get(name)!, c.namedWeights().get(name)!)).toBeGreaterThan(0);
    const std = (n: string) => tf.tidy(() => Math.sqrt(tf.moments(a.namedWeights().get(n)!).variance.dataSync()[0]!));
    expect(std(name)).toBeCloseTo((128 * 32) ** -0.5, 2); // q: (d·d_kv)^-½
    expect(std('encoder.block.1.layer.0.SelfAttention.k.weight')).toBeCloseTo(128 ** -0.5, 2);
    expect(std('decoder.block.0.layer.2.DenseReluDense.wo.weight')).toBeCloseTo(256 ** -0.5, 2);
    expect(std('shared.weight')).toBeCloseTo(1, 1);
    expect(a.namedWeights().get('encoder.final_layer_norm.weight')!.dataSync().every((v) => v === 1)).toBe(true);
    [a, b, c].forEach((m) => m.dispose());
  });

  test('checkpoint round trip through namedWeights; wrong shapes are named', () => {
    const a = new AutoUiModel(microConfig(), 1);
    const b = new AutoUiModel(microConfig(), 2);
    const batch = randomBatch(a, 2, 5, 4, 3, 1);
    const before = a.loss(batch);
    b.params.load(new Map([...a.namedWeights()].map(([k, v]) => [k, v as tf.Tensor])), { strict: true });
    expect(maxAbsDiff(before, b.loss(batch))).toBe(0);
    const bad = new Map<string, tf.Tensor>([['screen_proj.weight', tf.zeros([3, 3])]]);
    expect(() => b.params.load(bad)).toThrow(/screen_proj\.weight.*\[3, 3\]/);
    expect(() => b.params.load(new Map([['nope', tf.zeros([1])]]), { strict: true })).toThrow(/nope/);
    disposeBatch(batch);
    a.dispose();
    b.dispose();
  });
});

describe('forward pass', () => {
  test('shapes; padded input tokens and padded screen patches do not change the logits', () => {
    const model = new AutoUiModel(microConfig(), 3);
    const [b, l, t, p] = [2, 6, 4, 5];
    const batch = randomBatch(model, b, l, t, p, 5);
    const inputMask = tf.tensor2d([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], [b, l], 'int32');
    const screenMask = tf.tensor2d([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], [b, p], 'int32');
    const ids2 = tf.tensor2d([...batch.inputIds.arraySync()[0]!.slice(0, 4), 7, 9, ...batch.inputIds.arraySync()[1]!], [b, l], 'int32');
    const screen2 = tf.add(batch.screen, tf.mul(tf.randomNormal([b, p, 6], 0, 3, 'float32', 1), tf.reshape(tf.tensor2d([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]]), [b, p, 1]))) as tf.Tensor3D;
    const decIn = model.shiftRight(batch.labels);
    const run = (ids: tf.Tensor2D, screen: tf.Tensor3D) => model.decode(model.encode(ids, inputMask, screen, screenMask), inputMask, decIn);
    const base = run(batch.inputIds, batch.screen);
    expect(base.shape).toEqual([b, t, 23]);
    expect(model.encode(batch.inputIds, inputMask, batch.screen, screenMask).shape).toEqual([b, l, 16]);
    expect(maxAbsDiff(base, run(ids2, batch.screen))).toBeLessThan(1e-4);
    expect(maxAbsDiff(base, run(batch.inputIds, screen2))).toBeLessThan(1e-4);
    // and a change in a real token does matter
    const ids3 = tf.tensor2d([3, ...batch.inputIds.arraySync()[0]!.slice(1), ...batch.inputIds.arraySync()[1]!], [b, l], 'int32');
    expect(maxAbsDiff(base, run(ids3, batch.screen))).toBeGreaterThan(1e-3);
    model.dispose();
  });

  test('decoder is causal: changing token j leaves logits before j unchanged', () => {
    const model = new AutoUiModel(microConfig(), 4);
    const batch = randomBatch(model, 1, 5, 6, 3, 9);
    const h = model.encode(batch.inputIds, batch.inputMask, batch.screen);
    const dec = tf.tensor2d([[0, 5, 6, 7, 8, 9]], [1, 6], 'int32');
    const changed = tf.tensor2d([[0, 5, 6, 17, 8, 9]], [1, 6], 'int32');
    const a = model.decode(h, batch.inputMask, dec);
    const c = model.decode(h, batch.inputMask, changed);
    expect(maxAbsDiff(tf.slice(a, [0, 0, 0], [1, 3, 23]), tf.slice(c, [0, 0, 0], [1, 3, 23]))).toBeLessThan(1e-5);
    expect(maxAbsDiff(tf.slice(a, [0, 3, 0], [1, 1, 23]), tf.slice(c, [0, 3, 0], [1, 1, 23]))).toBeGreaterThan(1e-3);
    model.dispose();
  });

  test('tied head = untied head with lm_head = shared · d^-½ (HF scaling)', () => {
    const tied = new AutoUiModel(microConfig({ tieWordEmbeddings: true }), 5);
    const untied = new AutoUiModel(microConfig({ tieWordEmbeddings: false }), 6);
    const weights = new Map<string, tf.Tensor>([...tied.namedWeights()].map(([k, v]) => [k, v as tf.Tensor]));
    weights.set('lm_head.weight', tf.mul(tied.namedWeights().get('shared.weight')!, 16 ** -0.5));
    untied.params.load(weights, { strict: true });
    const batch = randomBatch(tied, 2, 4, 3, 2, 11);
    expect(maxAbsDiff(tied.loss(batch), untied.loss(batch))).toBeLessThan(1e-5);
    tied.dispose();
    untied.dispose();
  });

  test('loss is the mean cross-entropy over labels != -100 and dropout acts only when training', () => {
    const model = new AutoUiModel(microConfig({ dropoutRate: 0.3 }), 8);
    const batch = randomBatch(model, 2, 4, 3, 2, 13);
    batch.labels = tf.tensor2d([[4, 5, IGNORE_INDEX], [6, IGNORE_INDEX, IGNORE_INDEX]], [2, 3], 'int32');
    const logits = model.decode(model.encode(batch.inputIds, batch.inputMask, batch.screen), batch.inputMask, model.shiftRight(batch.labels));
    expect(model.shiftRight(batch.labels).arraySync()).toEqual([[0, 4, 5], [0, 6, 0]]);
    const logp = tf.logSoftmax(logits).arraySync() as number[][][];
    const expected = -(logp[0]![0]![4]! + logp[0]![1]![5]! + logp[1]![0]![6]!) / 3;
    expect(model.loss(batch).dataSync()[0]).toBeCloseTo(expected, 4);
    expect(model.loss(batch).dataSync()[0]).toBe(model.loss(batch).dataSync()[0]);
    expect(model.loss(batch, true).dataSync()[0]).not.toBeCloseTo(expected, 4);
    model.dispose();
  });
});

describe('incremental decoding', () => {
  for (const variant of [{}, { tieWordEmbeddings: true, feedForwardProj: 'relu' as const }]) {
    test(`decodeStep logits equal full decode logits at every position ${JSON.stringify(variant)}`, () => {
      const model = new AutoUiModel(microConfig({ ...variant, relativeAttentionMaxDistance: 6 }), 9);
      const [b, t] = [2, 9];
      const batch = randomBatch(model, b, 5, t, 3, 17);
      batch.inputMask = tf.tensor2d([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], [b, 5], 'int32');
      const h = model.encode(batch.inputIds, batch.inputMask, batch.screen);
      const decIn = model.shiftRight(batch.labels);
      const full = model.decode(h, batch.inputMask, decIn);
      let state = model.startDecoding(h, batch.inputMask);
      const cols = decIn.arraySync();
      for (let i = 0; i < t; i++) {
        const step = model.decodeStep(state, tf.tensor1d(cols.map((r) => r[i]!), 'int32'));
        state = step.state;
        expect(maxAbsDiff(step.logits, tf.reshape(tf.slice(full, [0, i, 0], [b, 1, 23]), [b, 23]))).toBeLessThan(1e-4);
      }
      model.disposeDecoding(state);
      model.dispose();
    });
  }

  test('selectDecodingRows reorders the cache like the batch', () => {
    const model = new AutoUiModel(microConfig(), 10);
    const batch = randomBatch(model, 2, 4, 3, 2, 19);
    const h = model.encode(batch.inputIds, batch.inputMask, batch.screen);
    let state = model.startDecoding(h, batch.inputMask);
    const first = model.decodeStep(state, tf.tensor1d([0, 0], 'int32'));
    state = model.selectDecodingRows(first.state, [1, 1, 0]);
    const next = model.decodeStep(state, tf.tensor1d([5, 5, 6], 'int32'));
    // reference: the original rows fed the same tokens
    let ref = model.startDecoding(h, batch.inputMask);
    ref = model.decodeStep(ref, tf.tensor1d([0, 0], 'int32')).state;
    const refNext = model.decodeStep(ref, tf.tensor1d([6, 5], 'int32'));
    const got = next.logits.arraySync();
    const want = refNext.logits.arraySync();
    expect(maxAbsDiff(tf.tensor(got[0]!), tf.tensor(want[1]!))).toBeLessThan(1e-5);
    expect(maxAbsDiff(tf.tensor(got[2]!), tf.tensor(want[0]!))).toBeLessThan(1e-5);
    model.disposeDecoding(next.state);
    model.disposeDecoding(refNext.state);
    model.dispose();
  });
});

describe('memory', () => {
  test('no tensor leaks across training steps and decode steps', () => {
    const model = new AutoUiModel(microConfig({ dropoutRate: 0.1 }), 11);
    const batch = randomBatch(model, 2, 5, 4, 3, 23);
    const optimizer = tf.train.adam(1e-3);
    const trainStep = () => {
      const cost = optimizer.minimize(() => model.loss(batch, true), true, model.trainableVariables());
      cost?.dispose();
    };
    trainStep();
    const h0 = model.encode(batch.inputIds, batch.inputMask, batch.screen);
    const decodeAll = () => {
      let state = model.startDecoding(h0, batch.inputMask);
      for (let i = 0; i < 4; i++) {
        const out = model.decodeStep(state, tf.tensor1d([1, 2], 'int32'));
        tf.dispose(out.logits);
        state = out.state;
      }
      model.disposeDecoding(state);
    };
    tf.tidy(decodeAll);
    const count = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) trainStep();
    expect(tf.memory().numTensors).toBe(count);
    for (let i = 0; i < 3; i++) tf.tidy(decodeAll);
    expect(tf.memory().numTensors).toBe(count);
    model.dispose();
  });
});
