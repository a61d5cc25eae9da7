import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { initBackend } from '../src/backend.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { transposeFlagsAreFree } from '../src/model/layers.js';
import { maxAbsDiff, microConfig, randomBatch } from './model_fixtures.js';

// Plain wasm (no native kernels): the path that keeps transposed weights in the ParamStore.
beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(async () => {
  await initBackend();
});

/** Next-token logits of the first decoding step, through the incremental decoder. */
function firstStepLogits(model: AutoUiModel, batch: ReturnType<typeof randomBatch>): tf.Tensor2D {
  const h = model.encode(batch.inputIds, batch.inputMask, batch.screen);
  const state = model.startDecoding(h, batch.inputMask);
  const tokens = tf.fill([batch.inputIds.shape[0]], model.config.decoderStartTokenId, 'int32') as tf.Tensor1D;
  const { logits, hidden, state: next } = model.decodeStep(state, tokens);
  model.disposeDecoding(next);
  tf.dispose([h, tokens, hidden]);
  return logits;
}

describe('weights derived for inference', () => {
  test('the stock wasm matmul is the backend that needs transposed weights', () => {
    expect(transposeFlagsAreFree()).toBe(false);
  });

  test('derived tensors are reused until a source variable is assigned, then rebuilt', () => {
    const model = new AutoUiModel(microConfig(), 3);
    const name = 'lm_head.weight';
    const make = (w: tf.Tensor) => tf.transpose(w);
    const first = model.params.derived('t', [name], make);
    expect(model.params.derived('t', [name], make)).toBe(first);
    const v = model.params.get<tf.Variable>(name);
    v.assign(tf.mul(v, 2));
    const second = model.params.derived('t', [name], make);
    expect(second).not.toBe(first);
    expect(first.isDisposed).toBe(true);
    expect(maxAbsDiff(second, tf.transpose(v))).toBe(0);
    model.dispose();
    expect(second.isDisposed).toBe(true);
  });

  test('decoding after new weights are loaded uses the new weights, and repeated decodes leak nothing', () => {
    const a = new AutoUiModel(microConfig(), 4);
    const b = new AutoUiModel(microConfig(), 5);
    const batch = randomBatch(a, 2, 4, 3, 2, 7);
    const before = firstStepLogits(a, batch);
    firstStepLogits(a, batch).dispose();
    const tensors = tf.memory().numTensors;
    firstStepLogits(a, batch).dispose();
    expect(tf.memory().numTensors).toBe(tensors);
    a.params.load(b.namedWeights(), { strict: true });
    const after = firstStepLogits(a, batch);
    const reference = firstStepLogits(b, batch);
    expect(maxAbsDiff(after, reference)).toBeLessThan(1e-6);
    expect(maxAbsDiff(after, before)).toBeGreaterThan(1e-3);
    a.dispose();
    b.dispose();
  });
});
