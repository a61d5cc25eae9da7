import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY_CLIP, TINY_SIGLIP, towerConfigs, writeVisionTower, type TowerSpec } from '../scripts/make_tiny_onnx.js';
import type { RawImage } from '../src/data/types.js';
import { sameEncoder } from '../src/screen/vision/encoder.js';
import { loadEncoder, parseEncoderSpec } from '../src/screen/vision/index.js';
import { InputError } from '../src/util/errors.js';

/*
 * Tiny CLIP / SigLIP towers written by scripts/make_tiny_onnx.ts (ONNX protobuf schema, random
 * weights), loaded through the real transformers.js path. Expected features come from running the
 * same ONNX file directly on onnxruntime with pixel values computed here from the folder's
 * preprocessor config: a screen of one colour stays that colour through any resize and crop, so
 * its input tensor is exactly (c/255 − mean)/std per channel.
 */

let dir: string;
let clipDir: string;
let siglipDir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-vision-'));
  clipDir = await writeVisionTower(join(dir, 'clip'), TINY_CLIP);
  siglipDir = await writeVisionTower(join(dir, 'siglip'), TINY_SIGLIP);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function solid(width: number, height: number, rgb: [number, number, number] | number): RawImage {
  const channels = typeof rgb === 'number' ? 1 : 3;
  const data = new Uint8Array(width * height * channels);
  for (let i = 0; i < width * height; i++) {
    if (typeof rgb === 'number') data[i] = rgb;
    else data.set(rgb, i * 3);
  }
  return { width, height, channels, data };
}

/** last_hidden_state and pooler_output of one solid screen, straight from onnxruntime. */
async function direct(spec: TowerSpec, folder: string, rgb: [number, number, number]): Promise<{ last: Float32Array; pooled: Float32Array }> {
  const pre = towerConfigs(spec).preprocessor as { image_mean: number[]; image_std: number[] };
  const S = spec.imageSize;
  const pixels = new Float32Array(3 * S * S);
  for (let c = 0; c < 3; c++) pixels.fill((rgb[c]! / 255 - pre.image_mean[c]!) / pre.image_std[c]!, c * S * S, (c + 1) * S * S);
  const session = await ort.InferenceSession.create(join(folder, 'onnx', 'model.onnx'));
  const out = await session.run({ pixel_values: new ort.Tensor('float32', pixels, [1, 3, S, S]) });
  await session.release();
  return { last: out['last_hidden_state']!.data as Float32Array, pooled: out['pooler_output']!.data as Float32Array };
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

const COLOURS: [number, number, number][] = [[200, 30, 90], [10, 240, 128], [77, 77, 77]];

describe('transformers.js vision encoders from local folders', () => {
  it('clip: patch tokens without the class token, grid and width from config.json, batch order kept', async () => {
    const enc = await loadEncoder(`clip:${clipDir}`);
    const side = TINY_CLIP.imageSize / TINY_CLIP.patchSize;
    expect(enc.info).toMatchObject({ patches: side * side, dim: TINY_CLIP.hiddenSize, grid: [side, side], pooled: false });
    expect(enc.info.id).toMatch(/^clip:[0-9a-f]{16}$/);
    // Different shapes, one grey (1 channel): each must equal its own direct run. Sizes whose short
    // side is already the model's keep the resize exact (a cubic kernel rings at a solid image's
    // border), so only the crop and the normalisation act.
    const S = TINY_CLIP.imageSize;
    const screens = [solid(S, 2 * S, COLOURS[0]!), solid(S + 9, S, COLOURS[1]!), solid(S, S, 77)];
    const feats = await enc.encode(screens);
    expect(feats).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      const { last } = await direct(TINY_CLIP, clipDir, COLOURS[i]!);
      expect(maxAbsDiff(feats[i]!, last.subarray(TINY_CLIP.hiddenSize))).toBeLessThan(1e-4);
    }
    expect(maxAbsDiff(feats[0]!, feats[1]!)).toBeGreaterThan(1e-2);
    // Any other size goes through the folder's resize: close to, not exactly, the solid input.
    const [resized] = await enc.encode([solid(50, 90, COLOURS[0]!)]);
    expect(maxAbsDiff(resized!, feats[0]!)).toBeLessThan(0.5);
    enc.dispose?.();
  });

  it('siglip: every token is a patch; #pooled and #patches+pooled give the pooled vector', async () => {
    const side = TINY_SIGLIP.imageSize / TINY_SIGLIP.patchSize;
    const D = TINY_SIGLIP.hiddenSize;
    const patches = await loadEncoder(`siglip:${siglipDir}`);
    const pooled = await loadEncoder(`siglip:${siglipDir}#pooled`);
    const both = await loadEncoder(`hf:${siglipDir}#patches+pooled`);
    expect(patches.info).toMatchObject({ patches: side * side, dim: D, grid: [side, side], pooled: false });
    expect(pooled.info).toMatchObject({ patches: 1, dim: D, grid: null, pooled: true });
    expect(both.info).toMatchObject({ patches: side * side + 1, dim: D, grid: null, pooled: false });
    expect(new Set([patches.info.id, pooled.info.id, both.info.id]).size).toBe(3);
    const screen = [solid(TINY_SIGLIP.imageSize, TINY_SIGLIP.imageSize, COLOURS[0]!)];
    const want = await direct(TINY_SIGLIP, siglipDir, COLOURS[0]!);
    const [p] = await patches.encode(screen);
    const [q] = await pooled.encode(screen);
    const [b] = await both.encode(screen);
    expect(maxAbsDiff(p!, want.last)).toBeLessThan(1e-4);
    expect(maxAbsDiff(q!, want.pooled)).toBeLessThan(1e-4);
    expect(maxAbsDiff(b!, Float32Array.from([...want.last, ...want.pooled]))).toBeLessThan(1e-4);
    for (const e of [patches, pooled, both]) e.dispose?.();
  });

  it('the identity follows the weights and the preprocessing, not the folder path', async () => {
    const a = await loadEncoder(`clip:${clipDir}`);
    const moved = join(dir, 'clip-copy');
    await cp(clipDir, moved, { recursive: true });
    const b = await loadEncoder(`clip:${moved}`);
    expect(sameEncoder(a.info, b.info)).toBe(true);
    const reseeded = await writeVisionTower(join(dir, 'clip-other'), { ...TINY_CLIP, seed: 99 });
    const c = await loadEncoder(`clip:${reseeded}`);
    expect(c.info.id).not.toBe(a.info.id);
    const pre = join(moved, 'preprocessor_config.json');
    const cfg = JSON.parse(await readFile(pre, 'utf8')) as { image_mean: number[] };
    cfg.image_mean = [0.5, 0.5, 0.5];
    await writeFile(pre, JSON.stringify(cfg));
    const d = await loadEncoder(`clip:${moved}`);
    expect(d.info.id).not.toBe(a.info.id);
    for (const e of [a, b, c, d]) e.dispose?.();
  });

  it('bad folders and specs are InputErrors naming the file or spec', async () => {
    await expect(loadEncoder(`clip:${join(dir, 'missing')}`)).rejects.toThrow(/no such folder/);
    const noOnnx = join(dir, 'no-onnx');
    await cp(clipDir, noOnnx, { recursive: true });
    await rm(join(noOnnx, 'onnx'), { recursive: true });
    await expect(loadEncoder(`clip:${noOnnx}`)).rejects.toThrow(/no onnx\/vision_model\.onnx or onnx\/model\.onnx/);
    const badJson = join(dir, 'bad-json');
    await cp(clipDir, badJson, { recursive: true });
    await writeFile(join(badJson, 'preprocessor_config.json'), '{ nope');
    const err = await loadEncoder(`clip:${badJson}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain(join(badJson, 'preprocessor_config.json'));
    const corrupt = join(dir, 'corrupt');
    await cp(clipDir, corrupt, { recursive: true });
    await writeFile(join(corrupt, 'onnx', 'model.onnx'), 'not onnx');
    await expect(loadEncoder(`clip:${corrupt}`)).rejects.toThrow(/transformers\.js cannot load this vision model/);
    await expect(loadEncoder(`clip:${clipDir}#cls`)).rejects.toThrow(/unknown feature mode '#cls'/);
    await expect(loadEncoder('blip2:/x')).rejects.toThrow(/hf:<dir>#pooled/);
    await expect(loadEncoder('resnet')).rejects.toThrow(/unknown encoder spec/);
    const enc = await loadEncoder(`clip:${clipDir}`);
    await expect(enc.encode([{ width: 4, height: 4, channels: 3, data: new Uint8Array(5) }])).rejects.toThrow(/image 0 of the batch/);
    enc.dispose?.();
  });

  it('parses specs', () => {
    expect(parseEncoderSpec('builtin')).toEqual({ kind: 'builtin' });
    expect(parseEncoderSpec(' clip:/m/clip ')).toEqual({ kind: 'clip', dir: '/m/clip', mode: 'patches' });
    expect(parseEncoderSpec('hf:/a#b/c#pooled')).toEqual({ kind: 'auto', dir: '/a#b/c', mode: 'pooled' });
    expect(parseEncoderSpec('hf:/a#b/c').dir).toBe('/a#b/c');
    expect(() => parseEncoderSpec('siglip:')).toThrow(InputError);
  });
});
