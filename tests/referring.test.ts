import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import type { UiAnnotations } from '../src/data/types.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { projectScreen, screenAttentionWeights } from '../src/model/fusion.js';
import { groundingLoss, groundingPatches } from '../src/model/grounding.js';
import { gridLayout } from '../src/model/pointer.js';
import { encoderStack } from '../src/model/t5.js';
import { labelledIcon, referringBatch, referringPhrases, type ReferringPhrase } from '../src/train/referring.js';
import { Rng } from '../src/util/rng.js';
import '../src/model/register_gradients.js';
import { disposeBatch, microConfig, randomBatch } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

/** One id per character, so lengths are easy to read off. */
const encode = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));
const GRID = { patches: gridLayout([4, 2]), texts: [] };

describe('referringPhrases', () => {
  const ann: UiAnnotations = {
    // [y, x, h, w]: "Clock" twice (once lower-case) → one phrase at both places.
    positions: [
      [0.25, 0, 0.25, 0.5],
      [0, 0.5, 0.25, 0.5],
      [0.5, 0, 0.25, 0.5],
      [0.75, 0.5, 0.25, 0.5],
      [0.75, 0, 0.25, 0.5],
      [0, 0, 0.1, 0.1],
      [0.5, 0.5, 0.25, 0.5],
    ],
    text: ['Clock', '3:27', ' clock ', '', 'A very long label', '51%', 'Go'],
    types: ['TEXT', 'TEXT', 'TEXT', 'ICON_PLAY', 'TEXT', 'TEXT', 'TEXT'],
  };

  it('keeps naming texts, merges repeats case-insensitively and targets every box of the text', () => {
    const got = referringPhrases(ann, encode, GRID, { maxTokens: 6 });
    expect(got.map((p) => [p.key, String.fromCharCode(...p.ids)])).toEqual([['clock', 'Clock'], ['go', 'Go']]);
    const clock = new Set([...groundingPatches([0.375, 0.25], GRID.patches), ...groundingPatches([0.625, 0.25], GRID.patches)]);
    expect(got[0]!.targets).toEqual([...clock].sort((a, b) => a - b));
    expect(got[1]!.targets).toEqual([...groundingPatches([0.625, 0.75], GRID.patches)].sort((a, b) => a - b));
  });

  it('adds the icon a label names: an untexted box right above it and centred on it', () => {
    const grid = { patches: gridLayout([10, 10]), texts: [] };
    const launcher: UiAnnotations = {
      positions: [
        [0.1, 0.1, 0.1, 0.1], // icon of "Maps"
        [0.21, 0.08, 0.03, 0.14], // "Maps", 0.01 under it, same centre
        [0.5, 0.5, 0.1, 0.1], // an icon with no label under it
        [0.65, 0.5, 0.03, 0.1], // "Far": 0.05 under that icon, too far to be its label
        [0.3, 0.6, 0.1, 0.1], // icon, but "Off" below is not centred on it
        [0.41, 0.7, 0.03, 0.1],
      ],
      text: ['', 'Maps', '', 'Far', '', 'Off'],
      types: ['ICON_MAP', 'TEXT', 'ICON_STAR', 'TEXT', 'ICON_STAR', 'TEXT'],
    };
    expect(labelledIcon(launcher, 1)).toEqual(launcher.positions[0]);
    expect(labelledIcon(launcher, 3)).toBeUndefined();
    expect(labelledIcon(launcher, 5)).toBeUndefined();
    const [maps, far] = referringPhrases(launcher, encode, grid);
    const around = (box: number[]) => groundingPatches([box[0]! + box[2]! / 2, box[1]! + box[3]! / 2], grid.patches);
    expect(maps!.targets).toEqual([...new Set([...around(launcher.positions[1]!), ...around(launcher.positions[0]!)])].sort((a, b) => a - b));
    expect(far!.targets).toEqual([...around(launcher.positions[3]!)].sort((a, b) => a - b));
  });

  it('with text items on the screen, also targets the items under the phrase\'s boxes', () => {
    const ann: UiAnnotations = { positions: [[0.3, 0.1, 0.1, 0.3]], text: ['Clock'], types: ['TEXT'] };
    const layout = { patches: gridLayout([4, 2]), texts: [[0.9, 0.1, 0.05, 0.3], [0.3, 0.1, 0.1, 0.3]] as [number, number, number, number][] };
    const [clock] = referringPhrases(ann, encode, layout);
    expect(clock!.targets).toContain(8 + 1);
    expect(clock!.targets).not.toContain(8);
  });

  it('drops phrases over maxTokens (here every text of more than 4 ids)', () => {
    expect(referringPhrases(ann, encode, GRID, { maxTokens: 4 }).map((p) => p.key)).toEqual(['go']);
  });
});

describe('referringBatch', () => {
  const P = 8;
  const phrase = (key: string, patch: number): ReferringPhrase => ({ key, ids: [...key].map((c) => c.charCodeAt(0)), targets: [patch] });

  it('lays phrase k of screen b at b·K + k, distinct per screen, leaving rows empty when a screen runs out', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 4 }), fc.nat(), (counts, k, seed) => {
        const lists = counts.map((n, s) => Array.from({ length: n }, (_, j) => phrase(`${s}-${j}`, (s + j) % P)));
        const batch = referringBatch(lists, k, P, 0, Rng.from(seed));
        const ids = batch.inputIds.arraySync();
        const mask = batch.inputMask.arraySync();
        const targets = batch.targets.arraySync();
        expect(ids.length).toBe(counts.length * k);
        counts.forEach((n, b) => {
          const own = new Map(lists[b]!.map((p) => [p.key, p]));
          const seen = new Set<string>();
          for (let j = 0; j < k; j++) {
            const i = b * k + j;
            const real = mask[i]!.reduce((a, c) => a + c, 0);
            const hot = targets[i]!.flatMap((t, p) => (t === 1 ? [p] : []));
            if (j >= n) {
              expect(real).toBe(0);
              expect(hot).toEqual([]);
              continue;
            }
            const key = String.fromCharCode(...ids[i]!.slice(0, real));
            expect(own.get(key)?.targets).toEqual(hot);
            seen.add(key);
          }
          expect(seen.size).toBe(Math.min(n, k));
        });
        tf.dispose(Object.values(batch));
        const again = referringBatch(lists, k, P, 0, Rng.from(seed));
        expect(again.inputIds.arraySync()).toEqual(ids);
        tf.dispose(Object.values(again));
      }),
      { numRuns: 40 },
    );
  });
});

describe('referring loss', () => {
  it('equals each phrase encoded alone and attending to its own screen', () => {
    const model = new AutoUiModel(microConfig({ dropoutRate: 0 }), 7);
    const batch = randomBatch(model, 3, 5, 4, 6, 11);
    const K = 2;
    const hot = (...ps: number[]) => Array.from({ length: 6 }, (_, p) => (ps.includes(p) ? 1 : 0));
    const refer = {
      inputIds: tf.tensor2d([[3, 4, 0], [5, 0, 0], [6, 7, 8], [9, 0, 0], [0, 0, 0], [10, 11, 0]], undefined, 'int32'),
      inputMask: tf.tensor2d([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 0, 0], [0, 0, 0], [1, 1, 0]], undefined, 'int32'),
      targets: tf.tensor2d([hot(0), hot(1, 2), hot(3), hot(0, 1, 2, 3, 4), hot(), hot(5)]),
    };
    const base = model.loss(batch, false, { ground: 0, refer: 0 }).dataSync()[0]!;
    const withRefer = model.loss({ ...batch, refer }, false, { ground: 0, refer: 1 }).dataSync()[0]!;
    const expected = tf.tidy(() => {
      const p = model.params;
      const noDropout = { rate: 0, training: false, nextSeed: () => 0 };
      const projected = projectScreen(batch.screen, p.get('screen_proj.weight'), p.get('screen_proj.bias'));
      const losses: number[] = [];
      const ids = refer.inputIds.arraySync();
      const mask = refer.inputMask.arraySync();
      const targets = refer.targets.arraySync();
      ids.forEach((row, i) => {
        if (mask[i]!.every((m) => m === 0)) return;
        const len = mask[i]!.reduce((a, b) => a + b, 0);
        const phrase = encoderStack(p, model.config, tf.tensor2d([row.slice(0, len)], undefined, 'int32'), tf.ones([1, len], 'int32'), noDropout);
        const screen = tf.slice(projected, [Math.floor(i / K), 0, 0], [1, -1, -1]);
        const attention = screenAttentionWeights(phrase, screen);
        losses.push(groundingLoss(attention, tf.ones([1, len], 'int32'), tf.tensor2d([targets[i]!])).dataSync()[0]!);
      });
      return losses.reduce((a, b) => a + b, 0) / losses.length;
    });
    expect(withRefer - base).toBeCloseTo(expected, 5);
    expect(expected).toBeGreaterThan(0.1);
    expect(model.loss({ ...batch, refer }, false, { ground: 0, refer: 0 }).dataSync()[0]).toBe(base);
    tf.dispose(Object.values(refer));
    disposeBatch(batch);
    model.dispose();
  });

  it('rejects referring rows that do not come K to a screen', () => {
    const model = new AutoUiModel(microConfig(), 1);
    const batch = randomBatch(model, 2, 4, 3, 5, 3);
    const refer = { inputIds: tf.zeros([3, 2], 'int32') as tf.Tensor2D, inputMask: tf.ones([3, 2], 'int32') as tf.Tensor2D, targets: tf.zeros([3, 5]) as tf.Tensor2D };
    expect(() => model.loss({ ...batch, refer }, false, { ground: 0, refer: 1 })).toThrow(/referring rows must be \[B·K, Lr\]/);
    tf.dispose(Object.values(refer));
    disposeBatch(batch);
    model.dispose();
  });
});
