import { Command } from 'commander';
import fc from 'fast-check';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerDataPrepare } from '../src/cli/data-prepare.js';
import { exampleFromStep } from '../src/data/aitw.js';
import { readManifest } from '../src/data/manifest.js';
import { prepareFromFiles } from '../src/data/prepare.js';
import { readShardDir, type ShardRow } from '../src/data/shards.js';
import { TfRecordWriter } from '../src/data/tfrecord.js';
import { ActionType, type AitwStep } from '../src/data/types.js';
import { mergeWorkerOutputs, parseWorkerSlot, workerFiles } from '../src/data/workers.js';
import { InputError } from '../src/util/errors.js';
import { captureStdout } from './helpers/stdout.js';
import { bytesOf } from './helpers/bytes.js';

const id = (ep: number) => `2${String(ep).padStart(18, '0')}`;

function episode(ep: number): AitwStep[] {
  const length = 1 + (ep % 3);
  return Array.from({ length }, (_, step) => {
    const data = new Uint8Array(24 * 48 * 3).fill(30 + ep * 20);
    data.fill(250, step * 300, step * 300 + 200);
    return {
      episodeId: id(ep),
      episodeLength: length,
      stepId: step,
      goal: `goal ${ep}`,
      image: { width: 24, height: 48, channels: 3, data },
      annotations: { positions: [], text: [], types: [] },
      texts: [],
      action: { action_type: ActionType.PRESS_BACK, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' },
      currentActivity: '',
      deviceType: '',
      androidApiLevel: 30,
    };
  });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-workers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** 10 episodes over 5 files (2 per file). */
async function writeInputs(): Promise<string> {
  for (let f = 0; f < 5; f++) {
    const w = await TfRecordWriter.open(join(dir, 'in', `part-${f}.tfrecord.gz`));
    for (const ep of [2 * f, 2 * f + 1]) for (const step of episode(ep)) await w.write(await exampleFromStep(step));
    await w.close();
  }
  const splits = join(dir, 'splits.json');
  await writeFile(splits, JSON.stringify({ train: [0, 1, 2, 4, 5, 7, 8].map(id), val: [3, 9].map(id), test: [6].map(id) }));
  return splits;
}

async function rows(out: string): Promise<ShardRow[]> {
  const all: ShardRow[] = [];
  for await (const r of readShardDir(out)) all.push(r);
  return all;
}

describe('data prepare --worker i/N and data merge', () => {
  it('workerFiles: contiguous blocks that cover every file once, sizes within one', () => {
    fc.assert(
      fc.property(fc.nat(40), fc.integer({ min: 1, max: 12 }), (files, count) => {
        const all = [...Array(files).keys()];
        const blocks = [...Array(count).keys()].map((index) => workerFiles(all, { index, count }));
        expect(blocks.flat()).toEqual(all);
        const sizes = blocks.map((b) => b.length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('parses i/N and rejects the rest naming --worker', () => {
    expect(parseWorkerSlot('2/16')).toEqual({ index: 2, count: 16 });
    for (const bad of ['16/16', '1', '-1/4', 'a/b', '0/0']) expect(() => parseWorkerSlot(bad)).toThrow(/--worker/);
  });

  it('three workers in separate --out dirs, merged, give the one-machine rows in the same order', async () => {
    const splits = await writeInputs();
    const input = [join(dir, 'in')];
    const single = join(dir, 'single');
    await prepareFromFiles({ inputs: input, splits, subset: 'general', out: single, rowsPerShard: 3 });
    const parts = [2, 0, 1].map((i) => join(dir, 'out', `worker-${i}`)); // any order: merge sorts by worker
    for (const [k, part] of parts.entries()) {
      const index = [2, 0, 1][k]!;
      const s = await prepareFromFiles({ inputs: input, splits, subset: 'general', out: part, rowsPerShard: 3, worker: { index, count: 3 } });
      expect(s.shards.total).toBeGreaterThan(0);
      const names = await readdir(join(part, 'general'));
      expect(names.every((n) => n.includes(`-w00${index}of003-`))).toBe(true);
      const m = (await readManifest(part))!;
      expect(m.subsets.general!.inputs.length).toBe(index === 0 ? 1 : 2); // 5 files: blocks of 1, 2, 2
    }
    const merged = join(dir, 'out');
    const summary = await mergeWorkerOutputs(merged, parts);
    expect(summary.subsets.general!.workers).toBe(3);
    const want = await rows(single);
    const got = await rows(merged);
    expect(got.map((r) => `${r.split}:${r.episodeId}:${r.stepId}`)).toEqual(want.map((r) => `${r.split}:${r.episodeId}:${r.stepId}`));
    got.forEach((r, i) => expect(bytesOf(r.screen).equals(bytesOf(want[i]!.screen))).toBe(true));
    const m = (await readManifest(merged))!;
    const one = (await readManifest(single))!;
    expect(m.subsets.general!.screens).toEqual(one.subsets.general!.screens);
    expect(m.subsets.general!.episodes).toEqual(one.subsets.general!.episodes);
    expect(m.subsets.general!.inputs.map((f) => f.path)).toEqual(one.subsets.general!.inputs.map((f) => f.path));
    expect(m.subsets.general!.shards.every((e) => e.file.startsWith('worker-'))).toBe(true);

    // Re-running a worker resumes it (same slot), a different slot into its dir is refused.
    const again = await prepareFromFiles({ inputs: input, splits, subset: 'general', out: parts[1]!, rowsPerShard: 3, worker: { index: 0, count: 3 } });
    expect(again.upToDate).toBe(true);
    await expect(prepareFromFiles({ inputs: input, splits, subset: 'general', out: parts[1]!, rowsPerShard: 3, worker: { index: 1, count: 3 } })).rejects.toThrow(/--worker \(0\/3 → 1\/3\)/);
  });

  it('merge refuses a missing worker, a missing shard file and the target as a part', async () => {
    const splits = await writeInputs();
    const parts = [0, 1].map((i) => join(dir, `w${i}`));
    for (const [index, part] of parts.entries()) {
      await prepareFromFiles({ inputs: [join(dir, 'in')], splits, subset: 'general', out: part, worker: { index, count: 3 } });
    }
    await expect(mergeWorkerOutputs(join(dir, 'm'), parts)).rejects.toThrow(/workers 2 of 3 are missing/);
    await expect(mergeWorkerOutputs(parts[0]!, parts)).rejects.toThrow(InputError);
    const third = join(dir, 'w2');
    await prepareFromFiles({ inputs: [join(dir, 'in')], splits, subset: 'general', out: third, worker: { index: 2, count: 3 } });
    const m = (await readManifest(third))!;
    await rm(join(third, m.subsets.general!.shards[0]!.file));
    await expect(mergeWorkerOutputs(join(dir, 'm'), [...parts, third])).rejects.toThrow(/shard file is missing/);
  });

  it('the CLI takes --worker and runs data merge with --json', async () => {
    const splits = await writeInputs();
    const program = new Command().exitOverride();
    registerDataPrepare(program.command('data'));
    const chunks = await captureStdout(async () => {
      for (const i of [0, 1]) {
        await program.parseAsync(['data', 'prepare', '--input', join(dir, 'in'), '--splits', splits, '--subset', 'single', '--out', join(dir, 'o', `w${i}`), '--worker', `${i}/2`, '--json'], { from: 'user' });
      }
      await program.parseAsync(['data', 'merge', '--out', join(dir, 'o'), join(dir, 'o', 'w0'), join(dir, 'o', 'w1'), '--json'], { from: 'user' });
    });
    const merged = JSON.parse(chunks[2]!);
    expect(merged.subsets.single).toMatchObject({ workers: 2 });
    expect(merged.subsets.single.screens).toBe(JSON.parse(chunks[0]!).screens.train + JSON.parse(chunks[0]!).screens.val + JSON.parse(chunks[0]!).screens.test + JSON.parse(chunks[1]!).screens.train + JSON.parse(chunks[1]!).screens.val + JSON.parse(chunks[1]!).screens.test);
    const manifest = JSON.parse(await readFile(join(dir, 'o', 'manifest.json'), 'utf8'));
    expect(Object.keys(manifest.subsets)).toEqual(['single']);
    await expect(program.parseAsync(['data', 'prepare', '--input', 'x', '--splits', splits, '--subset', 's', '--out', 'o', '--worker', '3/2'], { from: 'user' })).rejects.toThrow(/--worker/);
  });
});
