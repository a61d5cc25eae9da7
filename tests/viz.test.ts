import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { exampleFromStep } from '../src/data/aitw.js';
import { TfRecordWriter } from '../src/data/tfrecord.js';
import type { AitwAction, AitwStep, RawImage } from '../src/data/types.js';
import { GOLD_COLOUR, PRED_COLOUR, overlaySvg, renderEpisodes, safeName } from '../src/eval/viz.js';
import { InputError } from '../src/util/errors.js';
import { makeScreenshot } from './helpers/screens.js';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';

let dir: string;
let records: string;
const tap = (y: number, x: number): AitwAction => ({ action_type: 4, touch_yx: [y, x], lift_yx: [y, x], typed_text: '' });
const simple = (t: AitwAction['action_type'], text = ''): AitwAction => ({ action_type: t, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text });

async function rawShot(): Promise<RawImage> {
  const { data, info } = await sharp(await makeScreenshot(270, 600)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) };
}

function step(episodeId: string, stepId: number, n: number, image: RawImage, action: AitwAction, goal: string): AitwStep {
  return { episodeId, episodeLength: n, stepId, goal, image, annotations: { positions: [[0.45, 0.1, 0.1, 0.3]], text: ['OK'], types: ['TEXT'] }, action, currentActivity: 'a', deviceType: 'pixel', androidApiLevel: 30 };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-viz-'));
  const img = await rawShot();
  records = join(dir, 'eps.tfrecord.gz');
  const w = await TfRecordWriter.open(records);
  const a = ['ep/one', [tap(0.5, 0.25), simple(3, 'hi <there> & "you"'), simple(10)]] as const;
  const b = ['ep2', [{ action_type: 4, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' } as AitwAction]] as const;
  for (const [id, actions] of [a, b]) {
    for (const [i, act] of actions.entries()) await w.write(await exampleFromStep(step(id, i, actions.length, img, act, 'open <the> "settings" & more ☕'), { imageFormat: 'png' }));
  }
  await w.close();
});

afterAll(async () => {
  if (process.env.KEEP_VIZ) console.log('kept', dir);
  else await rm(dir, { recursive: true, force: true });
});

async function pixel(file: string, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const o = (y * info.width + x) * info.channels;
  return [data[o]!, data[o + 1]!, data[o + 2]!];
}
const rgb = (hex: string): number[] => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const near = (a: number[], b: number[], tol = 30): boolean => a.every((v, i) => Math.abs(v - b[i]!) <= tol);

describe('overlaySvg', () => {
  test('escapes text, draws gold and prediction, says match or miss', () => {
    const svg = overlaySvg({ goal: 'a <b> & "c"', title: 't', gold: tap(0.5, 0.5), prediction: { pred: tap(0.52, 0.5), plan: [4, 3] }, annotations: [[0, 0, 0.1, 0.1]] }, 200, 400);
    expect(svg).toContain('a &#60;b&#62; &#38; &#34;c&#34;');
    expect(svg).not.toContain('<b>');
    expect(svg.match(/<circle/g)).toHaveLength(4);
    expect(svg).toContain('>match<');
    expect(svg).toContain('plan: DUAL_POINT → TYPE');
    const miss = overlaySvg({ goal: 'g', title: 't', gold: tap(0.5, 0.5), prediction: { pred: simple(5) }, annotations: [[0, 0, 0.1, 0.1]] }, 200, 400);
    expect(miss).toContain('>miss<');
    expect(miss).toContain('PRESS_BACK');
    const invalid = overlaySvg({ goal: 'g', title: 't', gold: simple(5), prediction: { pred: null, error: 'x' } }, 200, 400);
    expect(invalid).toContain('invalid prediction');
  });

  test('safeName keeps ids readable and path-free', () => {
    expect(safeName('123')).toBe('123');
    expect(safeName('../a/b c')).toBe('__a_b_c');
    expect(safeName('')).toBe('_');
  });
});

describe('renderEpisodes', () => {
  test('draws gold (green) and predicted (red) actions from a predictions file', async () => {
    const preds = join(dir, 'preds.jsonl');
    const lines = [
      { id: 'ep/one/0', subset: 'general', pred: tap(0.3, 0.7), gold: tap(0.5, 0.25), annotations: [], plan: [4, 3, 10] },
      { id: 'ep/one/1', pred: simple(3, 'hi'), gold: simple(3, 'hi <there> & "you"'), annotations: [], plan: ['TYPE', 'STATUS_TASK_COMPLETE'] },
      { id: 'ep/one/2', pred: null, gold: simple(10), annotations: [], plan: null },
    ];
    await writeFile(preds, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const out = join(dir, 'frames');
    const { frames, episodes } = await renderEpisodes({ inputs: [records], out, predictions: preds, quiet: true });
    expect(episodes).toEqual(['ep/one']);
    expect(frames.map((f) => [f.stepId, f.match])).toEqual([[0, false], [1, true], [2, false]]);
    const f0 = frames[0]!.file;
    expect(f0).toBe(join(out, 'ep_one', 'step_000.png'));
    const meta = await sharp(f0).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 540, 1200]);
    // Centre dots: gold tap at (x 0.25, y 0.5), predicted at (x 0.7, y 0.3).
    expect(near(await pixel(f0, 135, 600), rgb(GOLD_COLOUR))).toBe(true);
    expect(near(await pixel(f0, 378, 360), rgb(PRED_COLOUR))).toBe(true);
    // Away from both, the screenshot's white background is untouched.
    expect(await pixel(f0, 500, 1000)).toEqual([255, 255, 255]);
  });

  test('draws a scroll as an arrow, with predictions made by a checkpoint', async () => {
    const ck = join(dir, 'ck');
    await makeTinyCheckpoint(ck, { overrides: { numLayers: 1, numDecoderLayers: 1 } });
    const out = join(dir, 'frames2');
    const { frames } = await renderEpisodes({ inputs: [records], out, checkpoint: ck, episodes: ['ep2'], width: 300, quiet: true });
    expect(frames).toHaveLength(1);
    expect(frames[0]!.pred).not.toBeUndefined();
    // Gold scroll up: an arrow along x = 0.5 from y 0.8 to 0.2; its shaft is green at mid-height.
    const f = frames[0]!.file;
    const { width, height } = await sharp(f).metadata();
    expect([width, height]).toEqual([300, 667]);
    expect(near(await pixel(f, 150, Math.round(667 * 0.6)), rgb(GOLD_COLOUR), 40) || near(await pixel(f, 150, Math.round(667 * 0.6)), rgb(PRED_COLOUR), 40)).toBe(true);
    expect((await readFile(f)).subarray(1, 4).toString()).toBe('PNG');
  });

  test('errors name the file, line or episode at fault', async () => {
    const bad = join(dir, 'bad.jsonl');
    await writeFile(bad, JSON.stringify({ id: 'ep2/0', pred: null, gold: simple(5), annotations: [] }) + '\n{"id": "x", "pred": {"action_type": 99}}\n');
    await expect(renderEpisodes({ inputs: [records], out: join(dir, 'x'), predictions: bad, quiet: true })).rejects.toThrow(/bad\.jsonl:2 pred\.action_type: must be an action type/);
    await expect(renderEpisodes({ inputs: [records], out: join(dir, 'x'), episodes: ['nope'], quiet: true })).rejects.toThrow(InputError);
    await expect(renderEpisodes({ inputs: [join(dir, 'missing.tfrecord')], out: join(dir, 'x'), quiet: true })).rejects.toThrow(/no such file/);
  });
});
