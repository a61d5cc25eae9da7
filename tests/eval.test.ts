import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { predictionsJsonl } from '../src/cli/eval.js';
import { parseScoreFile } from '../src/eval/score_input.js';
import { scoreItems } from '../src/eval/metrics.js';
import { evaluateCheckpoint } from '../src/eval/run.js';
import { isTapAction } from '../src/data/geometry.js';
import { patchCentre } from '../src/model/pointer.js';
import { OFFSET_RANGE } from '../src/model/tap_offset.js';
import { patchLayout } from '../src/screen/vision/encoder.js';
import { train } from '../src/pipeline/train.js';
import { DEFAULT_TRAIN } from '../src/train/trainer.js';
import { tinyShards } from './helpers/tiny_data.js';

describe('eval', () => {
  let shards: string;
  let ckpt: string;
  beforeAll(async () => {
    const d = await tinyShards(25, 5);
    shards = d.shards;
    const r = await train({
      ...DEFAULT_TRAIN,
      data: shards,
      out: join(d.root, 'ckpt'),
      modelOverrides: { dModel: 32, dKv: 8, numHeads: 2, dFf: 64, numLayers: 1, numDecoderLayers: 1 },
      epochs: 1,
      batchSize: 8,
      lr: 3e-3,
      // These tests check eval's mechanics; one toy epoch that also spends effort on the
      // referring objective has not learnt to tap yet, and the tap tests need taps.
      referWeight: 0,
      // Auto-UI's finer grid and sampling; the tap tests below need a toy model that taps.
      coordBins: 100,
      subsetFraction: { google_apps: 0.1 },
      // Patches only, so every tap read off the attention lands on a patch centre.
      screenText: false,
      // The tap offset (off in the recipes), so that the pointer's taps may leave the patch centres.
      offsetWeight: 0.01,
      valRows: 8,
      quiet: true,
      log: () => {},
    });
    ckpt = join(d.root, 'ckpt');
    expect(r.checkpoint).toBe(join(ckpt, 'best'));
  });

  it('writes predictions that `autoui score` scores to the same report', async () => {
    const { report, predictions } = await evaluateCheckpoint({ checkpoint: ckpt, data: shards, split: 'test', quiet: true });
    expect(report.n).toBe(predictions.length);
    expect(Object.keys(report.subsets).length).toBeGreaterThan(1);
    const text = predictionsJsonl(predictions);
    const file = join(ckpt, 'preds.jsonl');
    writeFileSync(file, text);
    const rescored = scoreItems(parseScoreFile(readFileSync(file, 'utf8'), file)).report;
    expect(rescored).toEqual(report);
    // Every prediction is a well-formed AITW action or an explicit invalid with a reason.
    for (const p of predictions) {
      if (p.pred === null) expect(p.error).toBeTruthy();
      else expect([3, 4, 5, 6, 7, 10, 11]).toContain(p.pred.action_type);
    }
  });

  it('a checkpoint answering with itself (--ensemble) predicts as it does alone', async () => {
    const alone = await evaluateCheckpoint({ checkpoint: ckpt, data: shards, split: 'test', quiet: true });
    const twice = await evaluateCheckpoint({ checkpoint: [ckpt, ckpt], data: shards, split: 'test', quiet: true });
    expect(twice.predictions).toEqual(alone.predictions);
  });

  it('--blind zeroes the screen (and so changes what the model predicts)', async () => {
    const seeing = await evaluateCheckpoint({ checkpoint: ckpt, data: shards, split: 'test', quiet: true });
    const blind = await evaluateCheckpoint({ checkpoint: ckpt, data: shards, split: 'test', quiet: true, blind: 'screen' });
    expect(blind.report.n).toBe(seeing.report.n);
    const differ = blind.predictions.some((p, i) => JSON.stringify(p.pred) !== JSON.stringify(seeing.predictions[i]!.pred));
    expect(differ).toBe(true);
  });

  it('a grounded checkpoint reads taps off its pointer by default, or off the attention when asked: same actions, taps moved to patch centres, or near them by the offset head', async () => {
    const run = (tapFrom: 'auto' | 'pointer' | 'pointer-centre' | 'attention' | 'tokens') => evaluateCheckpoint({ checkpoint: ckpt, data: shards, split: 'test', quiet: true, tapFrom });
    const [auto, pointer, centre, attention, tokens] = [await run('auto'), await run('pointer'), await run('pointer-centre'), await run('attention'), await run('tokens')];
    expect(auto.predictions).toEqual(pointer.predictions);
    const manifest = JSON.parse(readFileSync(join(shards, 'manifest.json'), 'utf8'));
    // The synthetic screens are 160×320; the encoder's layout says where each patch of such a screen lies.
    const layout = patchLayout(manifest.encoder, { width: 160, height: 320 })!;
    const centres = Array.from({ length: manifest.encoder.patches }, (_, p) => patchCentre(p, layout));
    let offCentre = 0;
    for (const moved of [pointer, centre, attention]) {
      let taps = 0;
      moved.predictions.forEach((p, i) => {
        const t = tokens.predictions[i]!;
        expect(p.pred?.action_type).toBe(t.pred?.action_type);
        if (p.pred && isTapAction(p.pred)) {
          taps++;
          const [y, x] = p.pred.touch_yx;
          const at = centres.findIndex((c) => c[0] === y && c[1] === x);
          if (moved !== pointer) expect(at).toBeGreaterThanOrEqual(0);
          else {
            // The offset head moves the pointed patch's centre by at most OFFSET_RANGE patches.
            const [cy, cx] = centre.predictions[i]!.pred!.touch_yx;
            expect(Math.abs(y - cy)).toBeLessThanOrEqual(OFFSET_RANGE * layout.rowHeight + 1e-9);
            expect(Math.abs(x - cx)).toBeLessThanOrEqual(OFFSET_RANGE * layout.colWidth + 1e-9);
            if (at < 0) offCentre++;
          }
          expect(p.pred.lift_yx).toEqual(p.pred.touch_yx);
        } else expect(p.pred).toEqual(t.pred);
      });
      expect(taps).toBeGreaterThan(0);
    }
    expect(offCentre).toBeGreaterThan(0);
  });

  it('refuses shards made by another encoder', async () => {
    const cfgFile = join(ckpt, 'best', 'config.json');
    const cfg = JSON.parse(readFileSync(cfgFile, 'utf8'));
    const saved = JSON.stringify(cfg, null, 2);
    cfg.encoder.id = 'clip:deadbeef';
    writeFileSync(cfgFile, JSON.stringify(cfg));
    try {
      await expect(evaluateCheckpoint({ checkpoint: ckpt, data: shards, split: 'test', quiet: true })).rejects.toThrow(/encoder 'clip:deadbeef'.*'builtin-v6'/);
    } finally {
      writeFileSync(cfgFile, saved);
    }
  });
});
