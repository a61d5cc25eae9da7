import { test } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { Predictor } from '../src/infer/predict.js';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';
import { makeScreenshot } from './helpers/screens.js';
test('scratch', async () => {
  await makeTinyCheckpoint('/tmp/infer_ck');
  const p = await Predictor.load('/tmp/infer_ck');
  const shot = await makeScreenshot();
  for (let i = 0; i < 6; i++) {
    const goal = i < 3 ? 'open the settings app' : 'type hello world and more words here';
    const t = performance.now();
    const r = await p.predict({ image: shot, goal });
    console.log(i, tf.memory().numTensors, (performance.now() - t).toFixed(1), JSON.stringify(r.timings));
  }
  const prep = await p.prepare({ image: shot, goal: 'x' });
  for (let i = 0; i < 3; i++) { await p.predictBatch([prep, prep, prep]); console.log('b', tf.memory().numTensors); }
});
