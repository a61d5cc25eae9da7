/** The built CLI as a user runs it (dist/ is built by `npm ci`'s prepare step), each command in a fresh process. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { train } from '../src/pipeline/train.js';
import { pixelKernels } from '../src/screen/vision/builtin/native.js';
import { DEFAULT_TRAIN } from '../src/train/trainer.js';
import { tinyShards } from './helpers/tiny_data.js';

const run = promisify(execFile);
const CLI = join(process.cwd(), 'dist', 'src', 'cli.js');
const autoui = (...args: string[]) => run('node', [CLI, ...args], { maxBuffer: 64 << 20 });

describe.runIf(existsSync(CLI))('autoui CLI', () => {
  let shards: string;
  let ckpt: string;
  beforeAll(async () => {
    const d = await tinyShards(50, 21);
    shards = d.shards;
    ckpt = join(d.root, 'ckpt');
    await train({
      ...DEFAULT_TRAIN,
      data: shards,
      out: ckpt,
      modelOverrides: { dModel: 32, dKv: 8, numHeads: 2, dFf: 64, numLayers: 1, numDecoderLayers: 1 },
      epochs: 1,
      batchSize: 8,
      valRows: 0,
      quiet: true,
      log: () => {},
    });
  });

  it('info --json names the backend and the built-in encoder\'s code', async () => {
    const { stdout } = await autoui('info', '--json');
    expect(JSON.parse(stdout)).toMatchObject({ backend: expect.stringMatching(/wasm|cpu|tensorflow/), cpus: expect.any(Number) });
    expect(JSON.parse(stdout).builtinEncoder).toBe(pixelKernels() ? 'C++ (autoui_pixels)' : 'JavaScript');
    const plain = await run('node', [CLI, 'info', '--json'], { env: { ...process.env, AUTOUI_NATIVE: '0' } });
    expect(JSON.parse(plain.stdout).builtinEncoder).toBe('JavaScript');
  });

  it('eval --json in a fresh process (backend initialised by the command itself), then score reproduces it', async () => {
    const preds = join(ckpt, 'cli-preds.jsonl');
    const { stdout } = await autoui('eval', '--checkpoint', ckpt, '--data', shards, '--split', 'test', '--out', preds, '--json');
    const report = JSON.parse(stdout);
    expect(Object.keys(report)).toEqual(['n', 'action_match', 'type_acc', 'text_acc', 'text_exact', 'click_acc', 'scroll_acc', 'tap_in_box', 'invalid', 'subsets']);
    const scored = JSON.parse((await autoui('score', preds, '--json')).stdout);
    expect(scored).toEqual(report);
  });

  it('predict prints the action, its plan and the most probable next action types; --json gives all of them', async () => {
    const shot = join(ckpt, 'shot-ok.png');
    await sharp({ create: { width: 160, height: 320, channels: 3, background: '#ffffff' } }).png().toFile(shot);
    const { stdout } = await autoui('predict', '--checkpoint', ckpt, '--image', shot, '--goal', 'open Clock');
    expect(stdout).toMatch(/^action: {4}[A-Z_]+ \(\d+\)/);
    expect(stdout).toMatch(/\nnext: {6}[A-Z_]+ \d+ %(, [A-Z_]+ \d+ %){0,2} \(the model's probability of each action type\)\n/);
    const json = JSON.parse((await autoui('predict', '--checkpoint', ckpt, '--image', shot, '--goal', 'open Clock', '--json')).stdout) as { type_probs: Record<string, number>; typed_text_choices: unknown };
    expect(Object.values(json.type_probs).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
    expect(Array.isArray(json.typed_text_choices)).toBe(true);
  });

  it('run: a device runs one task at a time, so --env adb refuses --concurrency 2, naming the option', async () => {
    const suite = join(ckpt, 'one-task.jsonl');
    await writeFile(suite, JSON.stringify({ id: 't', goal: 'open Clock', start_url: 'file:///dev/null', success: { url: 'file:///dev/null' } }) + '\n');
    await expect(autoui('run', '--suite', suite, '--script', suite, '--env', 'adb', '--concurrency', '2')).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/--concurrency.*one task at a time/) });
  });

  it('--ensemble adds to --checkpoint: alone it is refused, and a missing member is named', async () => {
    const suite = join(ckpt, 'one-task.jsonl');
    await writeFile(suite, JSON.stringify({ id: 't', goal: 'open Clock', start_url: 'file:///dev/null', success: { url: 'file:///dev/null' } }) + '\n');
    await expect(autoui('run', '--suite', suite, '--script', suite, '--ensemble', ckpt)).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/--ensemble.*give --checkpoint too/) });
    await expect(autoui('eval', '--checkpoint', ckpt, '--ensemble', '/nonexistent/member', '--data', shards)).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('/nonexistent/member') });
  });

  it('bad input exits 2 with the file named', async () => {
    await expect(autoui('eval', '--checkpoint', '/nonexistent/ckpt', '--data', shards)).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('/nonexistent/ckpt') });
    const shot = join(ckpt, 'shot.png');
    await sharp({ create: { width: 160, height: 320, channels: 3, background: '#ffffff' } }).png().toFile(shot);
    const texts = join(ckpt, 'texts.json');
    await writeFile(texts, JSON.stringify([{ text: 'Clock', box: [0.2, 0.1, 2, 0.3] }]));
    await expect(autoui('predict', '--checkpoint', ckpt, '--image', shot, '--goal', 'open Clock', '--texts', texts)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(new RegExp(`${texts}.*box`)),
    });
  });
});
