import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, expect, test } from 'vitest';
import { initBackend } from '../src/backend.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { modelConfig } from '../src/model/config.js';
import { disposeBatch, randomBatch } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

test('50 Adam steps on one small batch drive the loss down by a large factor', () => {
  const model = new AutoUiModel(modelConfig('tiny', { vocabSize: 64, screenDim: 16, dModel: 64, dKv: 16, dFf: 128, dropoutRate: 0 }), 3);
  const batch = randomBatch(model, 4, 12, 8, 6, 31);
  const optimizer = tf.train.adam(3e-3);
  const losses: number[] = [];
  for (let step = 0; step < 50; step++) {
    const cost = optimizer.minimize(() => model.loss(batch, true), true, model.trainableVariables())!;
    losses.push(cost.dataSync()[0]!);
    cost.dispose();
  }
  // random labels over 64 tokens start near ln 64 ≈ 4.2 (plus the N(0,1) embedding init's spread)
  expect(losses[0]).toBeGreaterThan(3);
  expect(losses[49]!).toBeLessThan(losses[0]! / 10);
  optimizer.dispose();
  disposeBatch(batch);
  model.dispose();
});
