import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ACTION_TYPE_NAMES, ActionType, type AitwAction, type Box, type RawImage } from '../src/data/types.js';
import { isTap, isTapAction } from '../src/data/geometry.js';
import { Predictor, describeAction, pixelAction, toPixel, type PredictionResult } from '../src/infer/predict.js';
import { LimitError, MAX_HISTORY_STEPS, decodeImageBytes, parseHistory } from '../src/infer/request.js';
import { BUILTIN_INFO } from '../src/screen/vision/index.js';
import { InputError } from '../src/util/errors.js';
import { makeScreenshot, pngHeaderOnly } from './helpers/screens.js';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';

let dir: string;
let predictor: Predictor;
let shot: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-predict-'));
  await makeTinyCheckpoint(join(dir, 'ck'));
  predictor = await Predictor.load(join(dir, 'ck'));
  shot = await makeScreenshot(540, 1200);
});

afterAll(async () => {
  predictor?.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('history parsing', () => {
  test('accepts ids or names, touch_yx or touch_point, and fills unused fields', () => {
    const h = parseHistory([
      { action_type: 'DUAL_POINT', touch_point: [0.2, 0.3], lift_point: [0.2, 0.3] },
      { action_type: 4, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5] },
      { action_type: 'type', typed_text: 'héllo 🌍' },
      { action_type: 5, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: 'ignored' },
    ]);
    expect(h).toEqual([
      { action_type: 4, touch_yx: [0.2, 0.3], lift_yx: [0.2, 0.3], typed_text: '' },
      { action_type: 4, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' },
      { action_type: 3, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: 'héllo 🌍' },
      { action_type: 5, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' },
    ]);
    expect(parseHistory(undefined)).toEqual([]);
    expect(parseHistory(null)).toEqual([]);
  });

  test.each([
    [{ history: 'x' }, /history: must be a list/],
    [[{ action_type: 9 }], /history\[0\]\.action_type: must be an action type/],
    [[{ action_type: 'SWIPE' }], /history\[0\]\.action_type/],
    [[{ action_type: 'DUAL_POINT' }], /history\[0\]: a DUAL_POINT action needs touch_yx/],
    [[{ action_type: 4, touch_yx: [0.5, 1.5], lift_yx: [0.5, 0.5] }], /history\[0\]\.touch_yx: must be \[y, x\]/],
    [[{ action_type: 4, touch_yx: [0.5, 0.5], lift_yx: ['a', 0.5] }], /history\[0\]\.lift_yx/],
    [[{ action_type: 4, touch_yx: [0.5, 0.5], touch_point: [0.5, 0.5], lift_yx: [0.5, 0.5] }], /not both/],
    [[{ action_type: 3, typed_text: 7 }], /history\[0\]\.typed_text: must be a string/],
    [[5], /history\[0\]: must be an action object/],
  ])('rejects %j naming the field', (v, re) => {
    const input = Array.isArray(v) ? v : (v as { history: unknown }).history;
    expect(() => parseHistory(input)).toThrow(InputError);
    expect(() => parseHistory(input)).toThrow(re);
  });

  test(`caps the history at ${MAX_HISTORY_STEPS} steps`, () => {
    const step = { action_type: 'PRESS_BACK' };
    expect(parseHistory(Array(MAX_HISTORY_STEPS).fill(step))).toHaveLength(MAX_HISTORY_STEPS);
    expect(() => parseHistory(Array(MAX_HISTORY_STEPS + 1).fill(step))).toThrow(/too many history steps/);
  });
});

describe('image decoding', () => {
  test.each(['png', 'jpeg', 'webp'] as const)('decodes %s of any size to RGB', async (format) => {
    const img = await decodeImageBytes(await makeScreenshot(333, 701, format, format !== 'jpeg'));
    expect([img.width, img.height, img.channels, img.data.length]).toEqual([333, 701, 3, 333 * 701 * 3]);
    // The top bar is blue (#1a73e8), the background white.
    const px = (x: number, y: number): number[] => [...img.data.subarray((y * 333 + x) * 3, (y * 333 + x) * 3 + 3)];
    expect(px(10, 10)[2]).toBeGreaterThan(200);
    expect(px(10, 10)[0]).toBeLessThan(60);
    expect(px(10, 650)).toEqual(format === 'png' ? [255, 255, 255] : expect.any(Array));
  });

  test('refuses non-images, truncated and empty data with InputError', async () => {
    await expect(decodeImageBytes(new Uint8Array(0))).rejects.toThrow(/image: is empty/);
    await expect(decodeImageBytes(Buffer.from('GIF89a........'))).rejects.toThrow(/not a PNG, JPEG or WebP/);
    const png = await makeScreenshot(200, 300);
    await expect(decodeImageBytes(png.subarray(0, Math.floor(png.length / 2)))).rejects.toThrow(InputError);
    await expect(decodeImageBytes(png.subarray(0, 20))).rejects.toThrow(InputError);
  });

  test('refuses a 50-megapixel header before decoding, and a 0×0 image', async () => {
    const bomb = pngHeaderOnly(10_000, 5_000);
    const t0 = performance.now();
    await expect(decodeImageBytes(bomb)).rejects.toThrow(LimitError);
    await expect(decodeImageBytes(bomb)).rejects.toThrow(/50\.0 MP, more than the limit/);
    expect(performance.now() - t0).toBeLessThan(1000);
    await expect(decodeImageBytes(pngHeaderOnly(0, 0))).rejects.toThrow(InputError);
  });
});

describe('output forms', () => {
  test('pixels stay on the image for every normalised point', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 5000 }), (y, x, w, h) => {
        const p = toPixel([y, x], w, h);
        return Number.isInteger(p.x) && Number.isInteger(p.y) && p.x >= 0 && p.x < w && p.y >= 0 && p.y < h && Math.abs(p.x - x * w) <= 1 && Math.abs(p.y - y * h) <= 1;
      }),
    );
  });

  test('describes taps, scrolls and other actions', () => {
    const tap: AitwAction = { action_type: 4, touch_yx: [0.25, 0.5], lift_yx: [0.25, 0.5], typed_text: '' };
    expect(describeAction(tap)).toMatchObject({ action_type: 'DUAL_POINT', action_type_id: 4, gesture: 'tap', touch_point: [0.25, 0.5] });
    expect(pixelAction(tap, 1080, 2400)).toEqual({ width: 1080, height: 2400, touch: { x: 540, y: 600 }, lift: { x: 540, y: 600 } });
    const up: AitwAction = { action_type: 4, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' };
    expect(describeAction(up)).toMatchObject({ gesture: 'scroll', scroll_direction: 'up' });
    const type: AitwAction = { action_type: 3, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: 'hi' };
    expect(describeAction(type)).toMatchObject({ action_type: 'TYPE', gesture: 'type', typed_text: 'hi' });
    expect(pixelAction(type, 10, 10)).toEqual({ width: 10, height: 10, touch: null, lift: null });
    expect(describeAction({ ...type, action_type: 10 }).gesture).toBe('status');
    expect(describeAction({ ...type, action_type: 5 }).gesture).toBe('key');
  });
});

describe('Predictor', () => {
  test('predicts a well-formed action, plan and pixels from screenshot bytes', async () => {
    const { result, timings } = await predictor.predict({ image: shot, goal: 'open the settings app', history: [{ action_type: 'PRESS_HOME' }] });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { action, plan, plan_ids, pixels, aitw } = result;
    expect(action.action_type).toBe(ACTION_TYPE_NAMES[action.action_type_id]);
    expect(plan.length).toBeGreaterThanOrEqual(1);
    expect(plan.length).toBeLessThanOrEqual(4);
    expect(plan).toEqual(plan_ids.map((t) => ACTION_TYPE_NAMES[t]));
    expect(pixels.width).toBe(540);
    expect(pixels.height).toBe(1200);
    if (aitw.action_type === ActionType.DUAL_POINT) {
      for (const p of [...action.touch_point, ...action.lift_point]) expect(p).toBeGreaterThanOrEqual(0);
      expect(pixels.touch).toEqual(toPixel(action.touch_point, 540, 1200));
      expect(action.gesture).toBe(isTap(aitw.touch_yx, aitw.lift_yx) ? 'tap' : 'scroll');
    } else {
      expect(action.touch_point).toEqual([-1, -1]);
      expect(pixels.touch).toBeNull();
    }
    expect(timings.batch_size).toBe(1);
    expect(timings.model_ms).toBeGreaterThan(0);
  });

  test('a batch gives the same answers as one request at a time, and leaks no tensors', async () => {
    const reqs = [
      { image: shot, goal: 'open the settings app' },
      { image: await makeScreenshot(300, 300, 'jpeg'), goal: 'search for hotels in paris', history: [{ action_type: 4, touch_yx: [0.1, 0.1], lift_yx: [0.9, 0.1] }] },
      { image: await makeScreenshot(720, 1600, 'webp'), goal: 'type hello world ünïcödé 🙂' },
    ];
    const singles = [];
    for (const r of reqs) singles.push((await predictor.predict(r)).result);
    const before = tf.memory().numTensors;
    const prepared = await Promise.all(reqs.map((r) => predictor.prepare(r)));
    const batched = await predictor.predictBatch(prepared);
    // The actions are the same; the probabilities agree to float rounding (padding changes the sums' order).
    const withoutProbs = (r: PredictionResult) => (r.ok ? { ...r, type_probs: undefined, typed_text_choices: r.typed_text_choices.map((c) => c.text) } : r);
    expect(batched.map((b) => withoutProbs(b.result))).toEqual(singles.map(withoutProbs));
    batched.forEach((b, i) => {
      const single = singles[i]!;
      if (!b.result.ok || !single.ok) return;
      for (const [type, p] of Object.entries(single.type_probs)) expect(b.result.type_probs[type as keyof typeof single.type_probs]).toBeCloseTo(p, 5);
    });
    expect(batched.every((b) => b.timings.batch_size === 3)).toBe(true);
    await predictor.predict(reqs[0]!);
    expect(tf.memory().numTensors).toBe(before);
  });

  test('bad requests fail alone with InputError naming the field', async () => {
    await expect(predictor.prepare({ image: shot, goal: '' })).rejects.toThrow(/goal: is empty/);
    await expect(predictor.prepare({ image: shot, goal: 42 })).rejects.toThrow(/goal: must be a string/);
    await expect(predictor.prepare({ image: shot, goal: 'x\ud800y' })).rejects.toThrow(/goal: .*lone surrogate/);
    await expect(predictor.prepare({ image: shot, goal: 'ok', history: [{ action_type: 'NOPE' }] })).rejects.toThrow(/history\[0\]\.action_type/);
    await expect(predictor.prepare({ image: Buffer.from('not an image'), goal: 'ok' })).rejects.toThrow(/image: is not a PNG/);
  });

  test('model info names the config, encoder and backend', () => {
    const info = predictor.info();
    expect(info.encoder.id).toBe(BUILTIN_INFO.id);
    expect(info.model.dModel).toBe(128);
    expect(info.parameters).toBeGreaterThan(0);
    expect(['wasm-blas', 'wasm', 'cpu-blas', 'cpu', 'tensorflow']).toContain(info.backend.backend);
    expect(info.limits.maxHistorySteps).toBe(MAX_HISTORY_STEPS);
    // The fixture was never trained with the grounding loss: taps come from the coordinate tokens.
    expect(info.tapFrom).toBe('tokens');
  });

  test('--tap-from attention is honoured and shows in the model info', async () => {
    const p = await Predictor.load(join(dir, 'ck'), { tapFrom: 'attention' });
    expect(p.info().tapFrom).toBe('attention');
    p.dispose();
  });

  test('a checkpoint trained with another encoder needs --encoder, and a mismatch is refused', async () => {
    const other = join(dir, 'other');
    await makeTinyCheckpoint(other, { encoder: { ...BUILTIN_INFO, id: 'clip-test' }, overrides: { numLayers: 1, numDecoderLayers: 1 } });
    await expect(Predictor.load(other)).rejects.toThrow(/trained with encoder 'clip-test'; pass --encoder/);
    await expect(Predictor.load(other, { encoder: 'builtin' })).rejects.toThrow(/differs from the one the checkpoint was trained with/);
  });
});

describe('Predictor with a text channel', () => {
  test('reads the request\'s texts or UI tree when given, and OCR of the screenshot otherwise', async () => {
    await makeTinyCheckpoint(join(dir, 'text'), { screenText: true, overrides: { numLayers: 1, numDecoderLayers: 1 } });
    const reads: number[] = [];
    const counting = { id: 'counting', read: async (images: RawImage[]) => (reads.push(images.length), images.map(() => [{ text: 'Settings', box: [0.1, 0.1, 0.05, 0.3] as Box, score: 1 }])) };
    const p = await Predictor.load(join(dir, 'text'), { textReader: counting });
    expect(p.info().screenText).toMatchObject({ source: 'annotations' });
    const given = await p.prepare({ image: shot, goal: 'open settings', texts: [{ text: 'Settings', box: [0.1, 0.1, 0.05, 0.3] }] });
    expect(given.texts).toHaveLength(1);
    const xml = '<hierarchy><node text="Wi-Fi" content-desc="" bounds="[0,120][540,240]"><node text="" content-desc="Back" bounds="[0,0][60,60]"/></node></hierarchy>';
    const tree = await p.prepare({ image: shot, goal: 'open settings', ui_tree: xml });
    expect(tree.texts!.map((t) => t.text).sort()).toEqual(['Back', 'Wi-Fi']);
    const plain = await p.prepare({ image: shot, goal: 'open settings' });
    const out = await p.predictBatch([given, tree, plain]);
    expect(out.every((o) => o.result.ok)).toBe(true);
    // Only the screenshot without texts was read from its pixels.
    expect(reads).toEqual([1]);
    await expect(p.prepare({ image: shot, goal: 'x', texts: [{ text: 'a', box: [0, 0, 2, 0] }] })).rejects.toThrow(/texts: \[0\]\.box\.2/);
    await expect(p.prepare({ image: shot, goal: 'x', texts: [], ui_tree: xml })).rejects.toThrow(/not both/);
    p.dispose();
  });

  test('with the built-in OCR, a screenshot of words is read and the prediction is well formed', async () => {
    const p = await Predictor.load(join(dir, 'text'));
    const { result } = await p.predict({ image: await makeScreenshot(540, 1200), goal: 'open settings' });
    expect(result.ok).toBe(true);
    p.dispose();
  });
});

describe('actions to avoid', () => {
  const key = (t: AitwAction['action_type'], typed_text = ''): AitwAction => ({ action_type: t, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text });
  const bins = (p: Predictor, a: AitwAction) => a.touch_yx.map((v) => p.codec.quantize(v)).join(',');

  test('the answer is none of them: no avoided type, no avoided touch (coordinate taps), no avoided screen token (attention taps)', async () => {
    const attention = await Predictor.load(join(dir, 'ck'), { tapFrom: 'attention' });
    try {
      for (const p of [predictor, attention]) {
        // Every type but DUAL_POINT and PRESS_BACK avoided; then each answer joins the avoided list.
        const avoid: AitwAction[] = [key(ActionType.TYPE, 'x'), key(ActionType.PRESS_HOME), key(ActionType.PRESS_ENTER), key(ActionType.STATUS_TASK_COMPLETE), key(ActionType.STATUS_TASK_IMPOSSIBLE)];
        for (let k = 0; k < 4; k++) {
          const { result } = await p.predict({ image: shot, goal: 'open the settings app', avoid });
          expect(result.ok).toBe(true);
          const a = result.ok ? result.aitw : null!;
          const types = avoid.filter((x) => x.action_type !== ActionType.DUAL_POINT).map((x) => x.action_type);
          expect(types).not.toContain(a.action_type);
          if (a.action_type === ActionType.DUAL_POINT) {
            const taps = avoid.filter((x) => x.action_type === ActionType.DUAL_POINT);
            if (p === predictor || !isTapAction(a)) expect(taps.map((x) => bins(p, x))).not.toContain(bins(p, a));
            else expect(taps.map((x) => x.touch_yx.join(','))).not.toContain(a.touch_yx.join(','));
          }
          avoid.push(a);
        }
        const answers = avoid.slice(5);
        expect(answers.some((a) => a.action_type === ActionType.DUAL_POINT || a.action_type === ActionType.PRESS_BACK)).toBe(true);
      }
    } finally {
      attention.dispose();
    }
  });

  test('a request whose history ends with a TYPE avoids typing again', async () => {
    const typed = { action_type: 'TYPE', typed_text: 'cats' };
    const after = await predictor.prepare({ image: shot, goal: 'search for cats', history: [typed] });
    expect(after.avoid.map((a) => a.action_type)).toEqual([ActionType.TYPE]);
    const before = await predictor.prepare({ image: shot, goal: 'search for cats', history: [typed, { action_type: 'PRESS_ENTER' }] });
    expect(before.avoid).toEqual([]);
  });

  test('a bad list is refused, naming the field', async () => {
    await expect(predictor.prepare({ image: shot, goal: 'x', avoid: 'BACK' })).rejects.toThrow(/avoid: must be a list of actions/);
    await expect(predictor.prepare({ image: shot, goal: 'x', avoid: [{ action_type: 99 }] })).rejects.toThrow(/avoid\[0\]/);
    await expect(predictor.prepare({ image: shot, goal: 'x', avoid: Array(MAX_HISTORY_STEPS + 1).fill({ action_type: 5 }) })).rejects.toThrow(/too many actions to avoid/);
  });
});

describe('the probability of each next action', () => {
  test('type_probs: every action type the grammar allows, summing to 1, the answer among the most probable', async () => {
    const { result } = await predictor.predict({ image: shot, goal: 'open the settings app' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const probs = Object.values(result.type_probs);
    expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
    expect(Object.keys(result.type_probs).every((k) => Object.values(ACTION_TYPE_NAMES).includes(k as never))).toBe(true);
    expect(result.type_probs[result.plan[0]!]).toBe(Math.max(...probs));
  });
});
