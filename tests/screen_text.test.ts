/**
 * Screen text as screen tokens: from annotations and request JSON to text items, tokens, boxes and
 * layouts, and through the model (screen_text.ts, model/batch.ts, model/autoui.ts).
 */
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { annotationTexts } from '../src/data/annotations.js';
import type { Box } from '../src/data/types.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { validateConfig } from '../src/model/config.js';
import { encodeTexts, screenBatch, screenTokenCount, tapTargets, textItemsBatch, disposeScreenBatch, withGoal } from '../src/model/batch.js';
import { gridLayout } from '../src/model/pointer.js';
import { BOX_CODE_DIM, boxCode, textTokens } from '../src/model/screen_text.js';
import { MATCH_DIM, matchFeatures } from '../src/model/text_match.js';
import '../src/model/register_gradients.js';
import { parseScreenTexts } from '../src/screen/text/parse.js';
import { patchBox, patchIsReal, patchLayout, type EncoderInfo } from '../src/screen/vision/encoder.js';
import { disposeBatch, microConfig, randomBatch } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

const box = (y: number, x: number, h = 0.05, w = 0.2): Box => [y, x, h, w];

describe('text items', () => {
  it('annotations give one item per texted box; untexted icons give none', () => {
    const t = annotationTexts({ positions: [box(0.1, 0.1), box(0.2, 0.1), box(0.3, 0.1)], text: [' Wi-Fi ', '', 'Bluetooth'], types: ['TEXT', 'ICON_WIFI', 'TEXT'] });
    expect(t).toEqual([{ text: 'Wi-Fi', box: box(0.1, 0.1), score: 1 }, { text: 'Bluetooth', box: box(0.3, 0.1), score: 1 }]);
  });

  it('encodeTexts keeps reading order, caps items and tokens', () => {
    const encode = (s: string) => [...s].map((c) => c.charCodeAt(0));
    const items = [{ text: 'below', box: box(0.5, 0.1), score: 1 }, { text: 'right', box: box(0.1, 0.6), score: 1 }, { text: 'left', box: box(0.1, 0.1), score: 1 }, { text: '  ', box: box(0, 0), score: 1 }];
    const e = encodeTexts(items, encode, { maxItems: 2, maxTokens: 3 });
    expect(e.boxes).toEqual([box(0.1, 0.1), box(0.1, 0.6)]);
    expect(e.ids).toEqual([encode('lef'), encode('rig')]);
  });

  it('request texts are validated, naming the item and field', () => {
    expect(parseScreenTexts([{ text: 'OK', box: [0.1, 0.2, 0.05, 0.1] }, { text: ' ', box: [0, 0, 0, 0] }], 'texts')).toEqual([{ text: 'OK', box: [0.1, 0.2, 0.05, 0.1], score: 1 }]);
    expect(() => parseScreenTexts([{ text: 'OK', box: [0.1, 2, 0.05, 0.1] }], 'texts')).toThrow(/texts: \[0\]\.box\.1/);
    expect(() => parseScreenTexts({ text: 'OK' }, 'texts')).toThrow(/texts: .*array/);
  });

  it('the box code is the centre, the size and sinusoids of the centre', () => {
    const c = boxCode([0.2, 0.4, 0.1, 0.2]);
    expect(c).toHaveLength(BOX_CODE_DIM);
    expect(Array.from(c.slice(0, 4)).map((v) => +v.toFixed(6))).toEqual([0.25, 0.5, 0.1, 0.2]);
    expect(c[4]).toBeCloseTo(Math.sin(2 * Math.PI * 0.25));
  });
});

describe('square patch layouts', () => {
  const info: EncoderInfo = { id: 'sq', patches: 20 * 8, dim: 4, grid: [20, 8], pooled: false, layout: 'square' };

  it('a tall phone screen fills more rows than a 1:2 one; patches stay square in pixels', () => {
    const half = patchLayout(info, { width: 160, height: 320 })!;
    const phone = patchLayout(info, { width: 1080, height: 2400 })!;
    expect([half.rows, half.cols]).toEqual([16, 8]);
    expect([phone.rows, phone.cols]).toEqual([18, 8]);
    expect(phone.rowHeight * 2400).toBeCloseTo(phone.colWidth * 1080);
    expect(patchIsReal(phone, 17 * 8 + 7)).toBe(true);
    expect(patchIsReal(phone, 18 * 8)).toBe(false);
  });

  it('every point of the screen lies in exactly one real patch', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 2000 }), fc.integer({ min: 100, max: 3000 }), fc.double({ min: 0, max: 0.999, noNaN: true }), fc.double({ min: 0, max: 0.999, noNaN: true }), (w, h, y, x) => {
        const l = patchLayout(info, { width: w, height: h })!;
        const hits = Array.from({ length: info.patches }, (_, p) => p).filter((p) => {
          if (!patchIsReal(l, p)) return false;
          const [by, bx, bh, bw] = patchBox(l, p);
          return y >= by && y < by + bh && x >= bx && x < bx + bw;
        });
        expect(hits).toHaveLength(1);
      }),
    );
  });

  it('screenBatch masks the padding patches and counts text slots as screen tokens', () => {
    const rows = [
      { features: new Float32Array(info.patches * 4).fill(1), width: 1080, height: 2400, texts: { ids: [[5, 6], [7]], boxes: [box(0.1, 0.1), box(0.5, 0.5)], strings: ['a', 'b'] } },
      { features: new Float32Array(info.patches * 4).fill(2), width: 160, height: 320, texts: null },
    ];
    const s = screenBatch(rows, info, 0);
    expect(s.screenMask!.sum(1).arraySync()).toEqual([18 * 8, 16 * 8]);
    expect(s.texts!.mask.arraySync()).toEqual([[1, 1], [0, 0]]);
    expect(s.texts!.ids.arraySync()[0]).toEqual([[5, 6], [7, 0]]);
    expect(screenTokenCount(s)).toBe(info.patches + 2);
    expect(s.layouts![0]!.texts).toEqual(rows[0]!.texts!.boxes);
    const pixels = screenBatch(rows, info, 0, 'pixels');
    expect(pixels.screen.sum().dataSync()[0]).toBe(0);
    expect(pixels.texts!.mask.sum().dataSync()[0]).toBe(2);
    expect(pixels.layouts![0]!.texts).toEqual(rows[0]!.texts!.boxes);
    const blind = screenBatch(rows, info, 0, 'screen');
    expect(blind.screen.sum().dataSync()[0]).toBe(0);
    expect(blind.texts!.mask.sum().dataSync()[0]).toBe(0);
    expect(blind.layouts![0]!.texts).toEqual([]);
    expect(blind.screenMask!.arraySync()).toEqual(s.screenMask!.arraySync());
    for (const b of [s, pixels, blind]) disposeScreenBatch(b);
  });

  it('a tap targets the patches around it and the text item under it', () => {
    const layout = { patches: gridLayout([4, 2]), texts: [box(0.3, 0.1, 0.1, 0.3), box(0.9, 0.1)] };
    const tap = { action_type: 4 as const, touch_yx: [0.375, 0.25] as [number, number], lift_yx: [0.375, 0.25] as [number, number], typed_text: '' };
    expect(tapTargets(tap, layout).sort((a, b) => a - b)).toEqual([0, 2, 3, 4, 8]);
    expect(tapTargets({ ...tap, action_type: 3 }, layout)).toEqual([]);
  });
});

describe('the model with screen text', () => {
  it('text items become extra screen tokens the attention covers, and their weights learn', () => {
    const model = new AutoUiModel(microConfig({ screenText: true }), 3);
    expect(model.namedWeights().has('text_proj.weight')).toBe(true);
    const batch = randomBatch(model, 2, 5, 4, 6, 7);
    const texts = textItemsBatch([{ ids: [[3, 4], [5]], boxes: [box(0.1, 0.1), box(0.6, 0.2)], strings: ['a', 'b'] }, { ids: [], boxes: [], strings: [] }], 0);
    const fusion = model.encodeFull(batch.inputIds, batch.inputMask, batch.screen, undefined, false, texts);
    expect(fusion.attention.shape).toEqual([2, 5, 6 + 2]);
    // Row 1 has no items: its two text slots get no attention.
    const a = fusion.attention.arraySync();
    for (const row of a[1]!) expect(row[6]! + row[7]!).toBeLessThan(1e-6);
    const { grads } = tf.variableGrads(() => model.loss({ ...batch, texts }), [model.namedWeights().get('text_proj.weight')!]);
    expect(tf.abs(Object.values(grads)[0]!).sum().dataSync()[0]).toBeGreaterThan(0);
    expect(() => new AutoUiModel(microConfig(), 3).encodeFull(batch.inputIds, batch.inputMask, batch.screen, undefined, false, texts)).toThrow(/does not read screen text/);
    tf.dispose([fusion.fused, fusion.gate, fusion.attention, ...Object.values(texts), ...Object.values(grads)]);
    model.dispose();
  });
});

describe('textTokens', () => {
  it("an item's token is the mean of its real tokens' embeddings (zero for an item without any), then W_t·[ē ; c(box)] + b_t", () => {
    const d = 2;
    const embeddings = tf.tensor2d([[0, 0], [1, 2], [3, 6], [-4, 8], [5, 5]]);
    // W_t = [I | 0]: the projection passes ē through and drops the box code.
    const weight = tf.concat([tf.eye(d), tf.zeros([d, BOX_CODE_DIM])], 1) as tf.Tensor2D;
    const items = {
      ids: tf.tensor3d([[[1, 2], [3, 0]], [[4, 0], [0, 0]]], [2, 2, 2], 'int32'),
      tokenMask: tf.tensor3d([[[1, 1], [1, 0]], [[1, 0], [0, 0]]], [2, 2, 2], 'int32'),
      mask: tf.tensor2d([[1, 1], [1, 0]], [2, 2], 'int32'),
      boxes: tf.zeros([2, 2, BOX_CODE_DIM]) as tf.Tensor3D,
    };
    const out = textTokens(items, { embeddings, weight, bias: tf.tensor1d([0.5, 0]) });
    expect(out.shape).toEqual([2, 2, d]);
    const got = out.arraySync().flat(2);
    [2.5, 4, -3.5, 8, 5.5, 5, 0.5, 0].forEach((v, i) => expect(got[i]).toBeCloseTo(v, 6));
    tf.dispose([embeddings, weight, out, ...Object.values(items)]);
  });
});

describe('the lexical match in the model', () => {
  const items = [{ ids: [[3, 4], [5]], boxes: [box(0.1, 0.1), box(0.6, 0.2)], strings: ['Wi-Fi', 'Bluetooth'] }, { ids: [[6]], boxes: [box(0.2, 0.2)], strings: ['Display'] }];

  it('a textMatch model learns W_m from the items\' match with the goal; the match moves the keys; it needs screenText and match features', () => {
    const model = new AutoUiModel(microConfig({ screenText: true, textMatch: true }), 3);
    expect(model.namedWeights().get('text_match.weight')!.shape).toEqual([16, MATCH_DIM]);
    const batch = randomBatch(model, 2, 5, 4, 6, 7);
    const matched = textItemsBatch([withGoal(items[0]!, 'turn on bluetooth'), withGoal(items[1]!, 'open display')], 0);
    const unmatched = textItemsBatch([withGoal(items[0]!, 'open maps'), withGoal(items[1]!, 'open maps')], 0);
    const wm = model.namedWeights().get('text_match.weight')!;
    const { grads } = tf.variableGrads(() => model.loss({ ...batch, texts: matched }), [wm]);
    expect(tf.abs(Object.values(grads)[0]!).sum().dataSync()[0]).toBeGreaterThan(0);
    const a = model.encodeFull(batch.inputIds, batch.inputMask, batch.screen, undefined, false, matched);
    const b = model.encodeFull(batch.inputIds, batch.inputMask, batch.screen, undefined, false, unmatched);
    expect(tf.abs(tf.sub(a.attention, b.attention)).max().dataSync()[0]).toBeGreaterThan(1e-6);
    const bare = textItemsBatch(items, 0);
    expect(bare.match).toBeUndefined();
    expect(() => model.encodeFull(batch.inputIds, batch.inputMask, batch.screen, undefined, false, bare)).toThrow(/no match features/);
    expect(() => validateConfig(microConfig({ textMatch: true }))).toThrow(/textMatch needs screenText/);
    tf.dispose([...Object.values(matched), ...Object.values(unmatched), ...Object.values(bare), ...Object.values(grads), a.fused, a.gate, a.attention, b.fused, b.gate, b.attention]);
    model.dispose();
  });

  it('K referring phrases per screen each read their own screen with their own match: the loss is the mean of the K one-phrase losses', () => {
    const model = new AutoUiModel(microConfig({ screenText: true, textMatch: true }), 5);
    const batch = { ...randomBatch(model, 2, 5, 4, 6, 9), texts: textItemsBatch(items.map((t) => withGoal(t, 'open display')), 0) };
    const [B, K, S] = [2, 3, 6 + 2];
    const r = (i: number) => ((i * 7919) % 101) / 101;
    const rows = Array.from({ length: B * K }, (_, i) => ({
      ids: [3 + (i % 5), 4 + ((i * 3) % 7)],
      target: Array.from({ length: S }, (_, s) => (s === (i * 5) % S || s === 6 + (i % 2) ? 1 : 0)),
      match: Array.from({ length: 2 * MATCH_DIM }, (_, j) => r(i * 31 + j)),
    }));
    const refer = (list: typeof rows) => ({
      inputIds: tf.tensor2d(list.map((x) => x.ids), undefined, 'int32'),
      inputMask: tf.ones([list.length, 2], 'int32') as tf.Tensor2D,
      targets: tf.tensor2d(list.map((x) => x.target)),
      match: tf.tensor3d(list.flatMap((x) => x.match), [list.length, 2, MATCH_DIM]),
    });
    const referLoss = (list: typeof rows) => {
      const rr = refer(list);
      const v = model.loss({ ...batch, refer: rr }, false, { ground: 0, refer: 1 }).dataSync()[0]! - model.loss(batch, false, { ground: 0, refer: 0 }).dataSync()[0]!;
      tf.dispose(Object.values(rr));
      return v;
    };
    // Phrase k of screen b is row b·K + k; alone (K = 1) the rows of slot k are [k, K + k].
    const slots = Array.from({ length: K }, (_, k) => referLoss(Array.from({ length: B }, (_, b) => rows[b * K + k]!)));
    expect(referLoss(rows)).toBeCloseTo(slots.reduce((a, b) => a + b, 0) / K, 5);
    expect(Math.max(...slots) - Math.min(...slots)).toBeGreaterThan(1e-3);
    tf.dispose(Object.values(batch.texts));
    disposeBatch(batch);
    model.dispose();
  });

  it('encodeTexts matches every item with the goal it is given', () => {
    const e = encodeTexts([{ text: 'Bluetooth', box: box(0.1, 0.1), score: 1 }, { text: 'Wi-Fi', box: box(0.2, 0.1), score: 1 }], (s) => [...s].map((c) => c.charCodeAt(0)), { maxItems: 4, maxTokens: 2 }, 'turn on Bluetooth');
    expect(e.strings).toEqual(['Bluetooth', 'Wi-Fi']);
    expect(Array.from(e.match!)).toEqual([...matchFeatures('turn on Bluetooth', ['Bluetooth', 'Wi-Fi'])]);
  });
});
