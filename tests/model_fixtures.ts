import * as tf from '@tensorflow/tfjs-core';
import { AutoUiModel, type AutoUiBatch } from '../src/model/autoui.js';
import { modelConfig, type ModelConfig } from '../src/model/config.js';

/** A very small model so tests run in milliseconds. */
export function microConfig(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return modelConfig('tiny', {
    vocabSize: 23, screenDim: 6, dModel: 16, dKv: 4, numHeads: 4, dFf: 24, numLayers: 2, numDecoderLayers: 2,
    relativeAttentionNumBuckets: 8, relativeAttentionMaxDistance: 16, ...overrides,
  });
}

/** Deterministic pseudo-random ints/floats (mulberry32) for hand-made inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomIds(shape: [number, number], vocab: number, seed: number, low = 2): number[][] {
  const r = rng(seed);
  return Array.from({ length: shape[0] }, () => Array.from({ length: shape[1] }, () => low + Math.floor(r() * (vocab - low))));
}

export function randomBatch(model: AutoUiModel, b: number, l: number, t: number, p: number, seed: number): AutoUiBatch {
  const r = rng(seed + 1);
  return {
    inputIds: tf.tensor2d(randomIds([b, l], model.config.vocabSize, seed), [b, l], 'int32'),
    inputMask: tf.ones([b, l], 'int32'),
    screen: tf.tensor3d(Array.from({ length: b * p * model.config.screenDim }, () => r() * 2 - 1), [b, p, model.config.screenDim]),
    labels: tf.tensor2d(randomIds([b, t], model.config.vocabSize, seed + 2), [b, t], 'int32'),
  };
}

export function disposeBatch(batch: AutoUiBatch): void {
  tf.dispose([batch.inputIds, batch.inputMask, batch.screen, batch.labels, ...(batch.screenMask ? [batch.screenMask] : [])]);
}

export function maxAbsDiff(a: tf.Tensor, b: tf.Tensor): number {
  return tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]!);
}
