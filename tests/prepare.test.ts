import { Command } from 'commander';
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { exampleFromStep } from '../src/data/aitw.js';
import { readManifest, sha256File } from '../src/data/manifest.js';
import { prepareFromFiles, prepareShards } from '../src/data/prepare.js';
import { readShardDir, type ShardRow } from '../src/data/shards.js';
import { TfRecordWriter } from '../src/data/tfrecord.js';
import { ActionType, type AitwAction, type AitwStep, type RawImage } from '../src/data/types.js';
import { registerDataPrepare } from '../src/cli/data-prepare.js';
import { BuiltinEncoder } from '../src/screen/vision/builtin.js';
import type { VisionEncoder } from '../src/screen/vision/encoder.js';
import { InputError } from '../src/util/errors.js';
import { captureStdout } from './helpers/stdout.js';
import { bytesOf } from './helpers/bytes.js';

/** A small screen whose pixels depend on (episode, step), so any mix-up of rows changes features. */
function screenFor(ep: number, step: number): RawImage {
  const width = 40, height = 80;
  const data = new Uint8Array(width * height * 3).fill(240);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const inIcon = Math.abs(x - 5 - step * 6) < 4 && Math.abs(y - 10 - ep * 9) < 4;
      if (inIcon) data.set([(ep * 70) % 256, (step * 50) % 256, 200], (y * width + x) * 3);
    }
  return { width, height, channels: 3, data };
}

const ACTIONS: AitwAction[] = [
  { action_type: ActionType.DUAL_POINT, touch_yx: [0.25, 0.5], lift_yx: [0.25, 0.5], typed_text: '' },
  { action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: 'coffee near me' },
  { action_type: ActionType.DUAL_POINT, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' },
  { action_type: ActionType.PRESS_ENTER, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' },
  { action_type: ActionType.STATUS_TASK_COMPLETE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' },
];

function episode(ep: number, length: number): AitwStep[] {
  const id = `1${String(ep).padStart(18, '0')}`; // AITW ids are 19-digit strings
  return Array.from({ length }, (_, step) => ({
    episodeId: id,
    episodeLength: length,
    stepId: step,
    goal: `goal ${ep}: search for cafés`,
    image: screenFor(ep, step),
    annotations: {
      positions: [[0.1 * (step + 1), 0.2, 0.05, 0.3]],
      text: [`label ${ep}.${step}`],
      types: ['TEXT'],
    },
    action: step === length - 1 ? ACTIONS[4]! : ACTIONS[(ep + step) % 4]!,
    currentActivity: 'com.example/.Main',
    deviceType: 'pixel',
    androidApiLevel: 30,
  }));
}

const f32Action = (a: AitwAction): AitwAction => ({
  ...a,
  touch_yx: [Math.fround(a.touch_yx[0]), Math.fround(a.touch_yx[1])],
  lift_yx: [Math.fround(a.lift_yx[0]), Math.fround(a.lift_yx[1])],
});

let dir: string;
let out: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-prepare-'));
  out = join(dir, 'shards');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Episodes 0..n-1 over two TFRecord files; returns all steps by episode. */
async function writeAitw(n: number, lengthOf = (ep: number) => 2 + (ep % 4)): Promise<AitwStep[][]> {
  const episodes = Array.from({ length: n }, (_, ep) => episode(ep, lengthOf(ep)));
  const half = Math.ceil(n / 2);
  for (const [name, eps] of [['a.tfrecord.gz', episodes.slice(0, half)], ['b.tfrecord.gz', episodes.slice(half)]] as const) {
    const w = await TfRecordWriter.open(join(dir, 'in', name));
    for (const ep of eps) for (const step of ep) await w.write(await exampleFromStep(step));
    await w.close();
  }
  return episodes;
}

async function writeSplits(split: Record<'train' | 'val' | 'test', number[]>, name = 'splits.json'): Promise<string> {
  const id = (ep: number) => `1${String(ep).padStart(18, '0')}`;
  const path = join(dir, name);
  await writeFile(path, JSON.stringify({ train: split.train.map(id), val: split.val.map(id), test: split.test.map(id) }));
  return path;
}

async function readAll(split?: 'train' | 'val' | 'test', subset?: string): Promise<ShardRow[]> {
  const rows: ShardRow[] = [];
  for await (const r of readShardDir(out, { split, subset })) rows.push(r);
  return rows;
}

const SPLIT = { train: [0, 1, 2, 3, 4, 5, 6], val: [7, 8], test: [9] };

describe('data prepare', () => {
  it('writes shards whose rows match the AITW steps field by field, and counts episodes missing from the split file', async () => {
    const episodes = await writeAitw(11); // episode 10 is in no split
    const splits = await writeSplits(SPLIT);
    const summary = await prepareFromFiles({ inputs: [join(dir, 'in')], splits, subset: 'general', out, rowsPerShard: 4, batch: 3 });

    const steps = (eps: number[]) => eps.flatMap((e) => episodes[e]!);
    expect(summary.screens).toEqual({ train: steps(SPLIT.train).length, val: steps(SPLIT.val).length, test: steps(SPLIT.test).length });
    expect(summary.episodes).toEqual({ train: 7, val: 2, test: 1 });
    expect(summary.unassigned).toEqual({ episodes: 1, screens: episodes[10]!.length, examples: [episodes[10]![0]!.episodeId] });
    expect(summary.records).toEqual({ read: steps([...Array(11).keys()]).length, skipped: 0 });

    const enc = new BuiltinEncoder();
    for (const split of ['train', 'val', 'test'] as const) {
      const want = steps(SPLIT[split]);
      const got = await readAll(split);
      expect(got).toHaveLength(want.length);
      const feats = await enc.encode(want.map((s) => s.image));
      got.forEach((r, i) => {
        const s = want[i]!;
        expect(r.episodeId).toBe(s.episodeId);
        expect(r.subset).toBe('general');
        expect(r.split).toBe(split);
        expect(r.stepId).toBe(s.stepId);
        expect(r.episodeLength).toBe(s.episodeLength);
        expect(r.goal).toBe(s.goal);
        expect([r.imageHeight, r.imageWidth]).toEqual([80, 40]);
        expect(r.action).toEqual(f32Action(s.action)); // AITW stores points as float32
        expect(r.annotations.text).toEqual(s.annotations.text);
        expect(r.annotations.types).toEqual(s.annotations.types);
        r.annotations.positions.forEach((b, j) => b.forEach((v, k) => expect(v).toBe(Math.fround(s.annotations.positions[j]![k]!))));
        expect(r.episodeActions).toEqual(episodes.find((e) => e[0]!.episodeId === s.episodeId)!.map((x) => f32Action(x.action)));
        expect(bytesOf(r.screen).equals(bytesOf(feats[i]!))).toBe(true);
      });
    }

    const m = (await readManifest(out))!;
    expect(m.encoder).toEqual(enc.info);
    const sub = m.subsets.general!;
    expect(sub.complete).toBe(true);
    expect(sub.inputs.map((f) => f.path.split('/').pop())).toEqual(['a.tfrecord.gz', 'b.tfrecord.gz']);
    expect(sub.shards.map((s) => `${s.file}:${s.rows}`)).toEqual(
      [...Array(Math.ceil(summary.screens.train / 4)).keys()].map((k) => `general/train-${String(k).padStart(5, '0')}.arrow:${Math.min(4, summary.screens.train - 4 * k)}`)
        .concat([`general/val-00000.arrow:4`, `general/val-00001.arrow:${summary.screens.val - 4}`, `general/test-00000.arrow:${summary.screens.test}`]),
    );
    for (const s of sub.shards) expect(await sha256File(join(out, s.file))).toBe(s.sha256);
  });

  it('resumes: re-encodes only the deleted shard, restores it byte for byte, and then has nothing to do', async () => {
    await writeAitw(10);
    const splits = await writeSplits(SPLIT);
    const req = { inputs: [join(dir, 'in', '*.tfrecord.gz')], splits, subset: 'general', out, rowsPerShard: 4, batch: 5 };
    await prepareFromFiles(req);
    const before = (await readManifest(out))!.subsets.general!;
    const victim = before.shards.find((s) => s.split === 'train' && s.index === 1)!;
    const keptMtime = (await stat(join(out, before.shards[0]!.file))).mtimeMs;
    await unlink(join(out, victim.file));

    const again = await prepareFromFiles(req);
    expect(again.encoded).toBe(victim.rows);
    expect(again.shards).toEqual({ written: 1, reused: before.shards.length - 1, total: before.shards.length });
    expect(await sha256File(join(out, victim.file))).toBe(victim.sha256);
    expect((await stat(join(out, before.shards[0]!.file))).mtimeMs).toBe(keptMtime);
    const after = (await readManifest(out))!.subsets.general!;
    expect(after.shards).toEqual(before.shards);
    expect(after.screens).toEqual(before.screens);

    // A corrupted shard is detected by its sha256 and rebuilt too.
    const other = before.shards.find((s) => s.split === 'val')!;
    const bytes = await readFile(join(out, other.file));
    bytes[bytes.length - 100] ^= 0xff;
    await writeFile(join(out, other.file), bytes);
    expect((await prepareFromFiles(req)).encoded).toBe(other.rows);
    expect(await sha256File(join(out, other.file))).toBe(other.sha256);

    const third = await prepareFromFiles(req);
    expect(third.upToDate).toBe(true);
    expect(third.encoded).toBe(0);
  });

  it('a crash mid-run leaves finished shards that the next run keeps', async () => {
    const episodes = await writeAitw(8);
    const splits = await writeSplits({ train: [0, 1, 2, 3, 4, 5, 6, 7], val: [], test: [] });
    const enc = new BuiltinEncoder();
    let calls = 0;
    const crashing: VisionEncoder = {
      info: enc.info,
      encode: async (imgs) => {
        if (++calls === 4) throw new Error('simulated crash');
        return enc.encode(imgs);
      },
    };
    const settings = {
      out, subset: 'general', rowsPerShard: 3, batch: 2,
      inputs: [{ path: 'x', bytes: 1 }], splitsFile: { path: splits, sha256: 'abc' },
    };
    async function* eps() {
      for (const e of episodes) yield { episodeId: e[0]!.episodeId, goal: e[0]!.goal, steps: e };
    }
    const lookup = (id: string) => (episodes.some((e) => e[0]!.episodeId === id) ? ('train' as const) : undefined);
    await expect(prepareShards(eps(), lookup, { ...settings, encoder: crashing })).rejects.toThrow(/simulated crash/);
    const partial = (await readManifest(out))!.subsets.general!;
    expect(partial.complete).toBe(false);
    expect(partial.shards.map((s) => s.index)).toEqual([0, 1]); // 6 rows encoded in 3 batches
    const counting = { info: enc.info, encode: vi.fn((imgs: RawImage[]) => enc.encode(imgs)) };
    const done = await prepareShards(eps(), lookup, { ...settings, encoder: counting });
    const total = episodes.flat().length;
    expect(done.encoded).toBe(total - 6);
    expect(done.reused).toBe(6);
    const rows = await readAll('train');
    expect(rows.map((r) => `${r.episodeId}/${r.stepId}`)).toEqual(episodes.flat().map((s) => `${s.episodeId}/${s.stepId}`));
  });

  it('refuses a bad split file, naming it', async () => {
    await writeAitw(2);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"train": [1, 2], "val": [], "test": []}');
    const req = { inputs: [join(dir, 'in')], splits: bad, subset: 'general', out };
    await expect(prepareFromFiles(req)).rejects.toThrow(InputError);
    await expect(prepareFromFiles(req)).rejects.toThrow(/bad\.json/);
    await writeFile(bad, '{"train": ');
    await expect(prepareFromFiles(req)).rejects.toThrow(/bad\.json.*not valid JSON/);
    await expect(prepareFromFiles({ ...req, splits: join(dir, 'nope.json') })).rejects.toThrow(/nope\.json/);
    expect(await readManifest(out)).toBeUndefined();
  });

  it('refuses to mix encoders in one --out, and mismatched inputs without --overwrite', async () => {
    const episodes = await writeAitw(4);
    const splits = await writeSplits({ train: [0, 1], val: [2], test: [3] });
    const other: VisionEncoder = {
      info: { id: 'other-v9', patches: 2, dim: 3, grid: null, pooled: false },
      encode: async (imgs) => imgs.map(() => new Float32Array(6)),
    };
    async function* eps() {
      for (const e of episodes) yield { episodeId: e[0]!.episodeId, goal: e[0]!.goal, steps: e };
    }
    await prepareShards(eps(), () => 'train', {
      out, subset: 'install', encoder: other, inputs: [], splitsFile: { path: splits, sha256: 'x' },
    });
    const req = { inputs: [join(dir, 'in')], splits, subset: 'general', out };
    await expect(prepareFromFiles(req)).rejects.toThrow(/encoder 'other-v9'.*this run uses 'builtin-v6'.*another --out/);

    // Same encoder, two subsets, one --out: the manifest holds both.
    const out2 = join(dir, 'shards2');
    await prepareFromFiles({ ...req, out: out2 });
    await prepareFromFiles({ ...req, out: out2, subset: 'install' });
    expect(Object.keys((await readManifest(out2))!.subsets).sort()).toEqual(['general', 'install']);
    const rows: ShardRow[] = [];
    for await (const r of readShardDir(out2, { subset: 'install', split: 'train' })) rows.push(r);
    expect(rows.map((r) => r.subset)).toEqual(episodes[0]!.concat(episodes[1]!).map(() => 'install'));

    // Different rows per shard would put rows in other shards: refused, then rebuilt with overwrite.
    await expect(prepareFromFiles({ ...req, out: out2, rowsPerShard: 2 })).rejects.toThrow(/--rows-per-shard \(2048 → 2\).*--overwrite/);
    const rebuilt = await prepareFromFiles({ ...req, out: out2, rowsPerShard: 2, overwrite: true });
    expect(rebuilt.shards.reused).toBe(0);
    const m = (await readManifest(out2))!.subsets.general!;
    expect(m.shards.every((s) => s.rows <= 2)).toBe(true);
    expect(m.rowsPerShard).toBe(2);
  });

  it('rejects a subset name that is not a plain directory name', async () => {
    await writeAitw(1);
    const splits = await writeSplits({ train: [0], val: [], test: [] });
    await expect(prepareFromFiles({ inputs: [join(dir, 'in')], splits, subset: '../x', out })).rejects.toThrow(/--subset/);
  });

  it('the CLI prints a JSON summary with --json', async () => {
    await writeAitw(3);
    const splits = await writeSplits({ train: [0, 1], val: [2], test: [] });
    const program = new Command().exitOverride();
    registerDataPrepare(program.command('data'));
    const chunks = await captureStdout(() =>
      program.parseAsync(['data', 'prepare', '--input', join(dir, 'in'), '--splits', splits, '--subset', 'single', '--out', out, '--rows-per-shard', '2', '--json'], { from: 'user' }),
    );
    expect(chunks).toHaveLength(1);
    const printed = JSON.parse(chunks[0]!);
    expect(printed).toMatchObject({ subset: 'single', encoder: 'builtin-v6', episodes: { train: 2, val: 1, test: 0 }, upToDate: false });
    expect(printed.shards.total).toBe(Math.ceil(printed.screens.train / 2) + Math.ceil(printed.screens.val / 2));
  });
});
