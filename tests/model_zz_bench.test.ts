import * as tf from '@tensorflow/tfjs-core';
import { test } from 'vitest';
import { initBackend } from '../src/backend.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { modelConfig } from '../src/model/config.js';

test('bench', async () => {
  await initBackend((process.env.BENCH_BACKEND as 'wasm') ?? 'wasm');
  const V = Number(process.env.BENCH_VOCAB ?? 32128);
  const [B, L, T, P, S] = [32, 64, 24, 128, 64];
  const model = new AutoUiModel(modelConfig('tiny', { vocabSize: V, screenDim: S }), 1);
  console.log('params', model.parameterCount());
  const batch = {
    inputIds: tf.randomUniform([B, L], 0, V, 'int32') as tf.Tensor2D,
    inputMask: tf.ones([B, L], 'int32') as tf.Tensor2D,
    screen: tf.randomNormal([B, P, S]) as tf.Tensor3D,
    labels: tf.randomUniform([B, T], 0, V, 'int32') as tf.Tensor2D,
  };
  const vars = model.trainableVariables();
  const step = (training: boolean) => {
    const { value, grads } = tf.variableGrads(() => model.loss(batch, training), vars);
    const l = value.dataSync()[0];
    tf.dispose(grads); value.dispose();
    return l;
  };
  step(true);
  const before = tf.memory().numTensors;
  const n = 3;
  let t0 = performance.now();
  for (let i = 0; i < n; i++) step(true);
  console.log('fwd+bwd ms', ((performance.now() - t0) / n).toFixed(1), 'tensors', before, tf.memory().numTensors);
  t0 = performance.now();
  for (let i = 0; i < n; i++) { const l = model.loss(batch, false); l.dataSync(); l.dispose(); }
  console.log('fwd ms', ((performance.now() - t0) / n).toFixed(1));
  if (process.env.PROFILE) {
    const prof = await tf.profile(() => { step(true); });
    const agg = new Map<string, number>();
    for (const k of prof.kernels) agg.set(k.name, (agg.get(k.name) ?? 0) + (k.kernelTimeMs as number));
    const mm = prof.kernels.filter((k) => k.name === 'BatchMatMul' || k.name === 'Exp' || k.name === 'Transpose').sort((a, b) => (b.kernelTimeMs as number) - (a.kernelTimeMs as number)).slice(0, 30);
    for (const k of mm) console.log(k.name, (k.kernelTimeMs as number).toFixed(1), JSON.stringify(k.inputShapes), JSON.stringify(k.outputShapes));
    console.log([...agg].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${k}:${v.toFixed(1)}`).join(' '));
  }
});
