import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, expect, test } from 'vitest';
import { initBackend } from '../src/backend.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { microConfig, randomBatch, rng } from './model_fixtures.js';

beforeAll(async () => {
  // The cpu backend is deterministic op by op, which finite differences need.
  await initBackend('cpu');
});

/** Central finite differences on a few entries of each parameter vs tf.variableGrads. */
function gradientCheck(model: AutoUiModel, names: string[], seed: number): void {
  const batch = randomBatch(model, 2, 4, 3, 3, seed);
  batch.screenMask = tf.tensor2d([[1, 1, 0], [1, 1, 1]], [2, 3], 'int32');
  batch.inputMask = tf.tensor2d([[1, 1, 1, 0], [1, 1, 1, 1]], [2, 4], 'int32');
  batch.labels = tf.tensor2d([[3, 4, -100], [5, 6, 7]], [2, 3], 'int32');
  const lossValue = () => tf.tidy(() => model.loss(batch).dataSync()[0]!);
  const weights = model.namedWeights();
  const { grads, value } = tf.variableGrads(() => model.loss(batch), names.map((n) => weights.get(n)!));
  value.dispose();
  const pick = rng(seed);
  const eps = 1e-2;
  for (const name of names) {
    const variable = weights.get(name)!;
    const analytic = grads[variable.name]!.dataSync();
    const original = variable.dataSync().slice();
    for (let trial = 0; trial < 3; trial++) {
      const i = Math.floor(pick() * original.length);
      const at = (delta: number) => {
        const values = original.slice();
        values[i] = values[i]! + delta;
        variable.assign(tf.tensor(values, variable.shape));
        return lossValue();
      };
      const numeric = (at(eps) - at(-eps)) / (2 * eps);
      variable.assign(tf.tensor(original, variable.shape));
      const tolerance = 2e-3 + 3e-2 * Math.abs(numeric);
      expect(Math.abs(numeric - analytic[i]!), `${name}[${i}] numeric ${numeric} analytic ${analytic[i]}`).toBeLessThan(tolerance);
    }
  }
  tf.dispose(grads);
}

const NAMES = [
  'shared.weight',
  'encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight',
  'encoder.block.1.layer.0.SelfAttention.q.weight',
  'encoder.block.0.layer.0.layer_norm.weight',
  'decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight',
  'decoder.block.1.layer.1.EncDecAttention.v.weight',
  'decoder.block.0.layer.0.SelfAttention.o.weight',
  'screen_proj.weight',
  'screen_proj.bias',
  'fusion.gate_lang.weight',
  'fusion.gate_attn.bias',
];

test('finite differences agree with tf.variableGrads (gated-gelu, untied)', () => {
  const model = new AutoUiModel(microConfig({ dropoutRate: 0 }), 21);
  gradientCheck(model, [...NAMES, 'decoder.block.1.layer.2.DenseReluDense.wi_0.weight', 'encoder.block.0.layer.1.DenseReluDense.wo.weight', 'lm_head.weight'], 1);
  model.dispose();
});

test('finite differences agree with tf.variableGrads (relu, tied)', () => {
  const model = new AutoUiModel(microConfig({ dropoutRate: 0, feedForwardProj: 'relu', tieWordEmbeddings: true }), 22);
  gradientCheck(model, [...NAMES, 'decoder.block.1.layer.2.DenseReluDense.wi.weight'], 2);
  model.dispose();
});
