import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateSubset, zeroCounts, type SubsetEntry } from '../src/data/manifest.js';
import {
  actionAt,
  encodeShard,
  loadShards,
  readShardDir,
  ReadBuffer,
  readShardFile,
  ROWS_PER_RECORD_BATCH,
  screenAt,
  shardRows,
  ShardWriter,
  type ShardRow,
  type WrittenShard,
} from '../src/data/shards.js';
import { ActionType, type AitwAction } from '../src/data/types.js';
import type { EncoderInfo } from '../src/screen/vision/encoder.js';
import { InputError } from '../src/util/errors.js';

const ENC: EncoderInfo = { id: 'test-enc', patches: 3, dim: 4, grid: [3, 1], pooled: false };

const tap = (y: number, x: number): AitwAction => ({ action_type: ActionType.DUAL_POINT, touch_yx: [y, x], lift_yx: [y, x], typed_text: '' });
const type = (t: string): AitwAction => ({ action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: t });
const back: AitwAction = { action_type: ActionType.PRESS_BACK, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' };
const done: AitwAction = { action_type: ActionType.STATUS_TASK_COMPLETE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' };

/** Rows of one episode whose features encode (episode, step, k) so mix-ups show. */
function episodeRows(id: string, actions: AitwAction[], seed: number): ShardRow[] {
  return actions.map((action, step) => ({
    episodeId: id,
    subset: 'general',
    split: 'train',
    stepId: step,
    episodeLength: actions.length,
    goal: `goal of ${id}: "ünïcödé" ✓`,
    imageHeight: 2400,
    imageWidth: 1080,
    screen: Float32Array.from({ length: ENC.patches * ENC.dim }, (_, k) => seed * 1000 + step * 100 + k + 0.25),
    action,
    annotations: {
      positions: step % 2 === 0 ? [[0.1, 0.2, 0.05, 0.3], [0.5, 0.5, 0.1, 0.1]] : [],
      text: step % 2 === 0 ? ['Settings', ''] : [],
      types: step % 2 === 0 ? ['TEXT', 'ICON_SETTINGS'] : [],
    },
    texts: step % 2 === 1 ? [{ text: 'Wi‑Fi', box: [0.25, 0.1, 0.03, 0.2], score: 0.875 }] : [],
    episodeActions: actions,
  }));
}

const f32 = (x: number) => Math.fround(x);
function expectSameRow(got: ShardRow, want: ShardRow): void {
  expect({ ...got, screen: Array.from(got.screen) }).toEqual({
    ...want,
    screen: Array.from(want.screen).map(f32),
    action: { ...want.action, touch_yx: want.action.touch_yx.map(f32), lift_yx: want.action.lift_yx.map(f32) },
    annotations: { ...want.annotations, positions: want.annotations.positions.map((b) => b.map(f32)) },
    texts: want.texts.map((t) => ({ ...t, box: t.box.map(f32), score: f32(t.score) })),
    episodeActions: want.episodeActions.map((a) => ({ ...a, touch_yx: a.touch_yx.map(f32), lift_yx: a.lift_yx.map(f32) })),
  });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-shards-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ROWS = [
  ...episodeRows('ep-1', [tap(0.123, 0.456), type('hello wörld'), back, done], 1),
  ...episodeRows('ep-2', [tap(0.9, 0.1), done], 2),
  ...episodeRows('ep-3', [back, back, tap(0.3, 0.3), done], 3),
];

describe('shard files', () => {
  it('round-trip every field of every row', async () => {
    const path = join(dir, 'x.arrow');
    await writeFile(path, encodeShard(ROWS, ENC));
    const file = await readShardFile(path, ENC);
    expect(file.rows).toBe(ROWS.length);
    expect(file.encoder).toEqual(ENC);
    const back = [...shardRows(file)];
    expect(back).toHaveLength(ROWS.length);
    back.forEach((r, i) => expectSameRow(r, ROWS[i]!));
  });

  it('round-trip arbitrary strings, annotations and actions (property)', async () => {
    const action = fc.record({
      action_type: fc.constantFrom(...Object.values(ActionType)),
      touch_yx: fc.tuple(fc.float({ min: -1, max: 1, noNaN: true }), fc.float({ min: -1, max: 1, noNaN: true })),
      lift_yx: fc.tuple(fc.float({ min: -1, max: 1, noNaN: true }), fc.float({ min: -1, max: 1, noNaN: true })),
      typed_text: fc.string({ unit: 'grapheme' }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 6 }), fc.string(), fc.array(fc.string(), { maxLength: 4 }), async (actions, goal, texts) => {
        const rows = episodeRows('e', actions as AitwAction[], 7).map((r) => ({
          ...r,
          goal,
          annotations: { positions: texts.map((_, j) => [j / 10, 0.5, 0.1, 0.2] as [number, number, number, number]), text: texts, types: texts.map(() => 'TEXT') },
        }));
        const path = join(dir, 'p.arrow');
        await writeFile(path, encodeShard(rows, ENC));
        const back = [...shardRows(await readShardFile(path, ENC))];
        back.forEach((r, i) => expectSameRow(r, rows[i]!));
      }),
      { numRuns: 30 },
    );
  });

  it('rolls a new shard every N rows, atomically, and reports sha256 and sizes', async () => {
    const written: WrittenShard[] = [];
    const w = new ShardWriter({ encoder: ENC, rowsPerShard: 4, pathFor: (k) => join(dir, `s-${k}.arrow`), onShard: (s) => void written.push(s) });
    for (const r of ROWS) await w.add(r);
    await w.close();
    expect(written.map((s) => [s.index, s.rows])).toEqual([[0, 4], [1, 4], [2, 2]]);
    const again = [];
    for (const s of written) again.push(...shardRows(await readShardFile(s.path)));
    again.forEach((r, i) => expectSameRow(r, ROWS[i]!));
    expect(written[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('streams a shard of several record batches: the bytes of encodeShard, its sha256, no temp file left', async () => {
    const rows = Array.from({ length: 40 }, (_, e) => episodeRows(`long-${e}`, [tap(e / 40, 0.5), back, type(`q${e}`), done], e)).flat();
    const written: WrittenShard[] = [];
    const w = new ShardWriter({ encoder: ENC, rowsPerShard: 150, pathFor: (k) => join(dir, `s-${k}.arrow`), onShard: (s) => void written.push(s) });
    for (const r of rows) await w.add(r);
    await w.close();
    expect(written.map((s) => [s.index, s.rows])).toEqual([[0, 150], [1, 10]]);
    const file = await readShardFile(written[0]!.path, ENC);
    expect(file.batches.map((b) => b.numRows)).toEqual([ROWS_PER_RECORD_BATCH, ROWS_PER_RECORD_BATCH, 150 - 2 * ROWS_PER_RECORD_BATCH]);
    [...shardRows(file)].forEach((r, i) => expectSameRow(r, rows[i]!));
    const bytes = await readFile(written[0]!.path);
    expect(Buffer.compare(bytes, encodeShard(rows.slice(0, 150), ENC))).toBe(0);
    expect(written[0]!).toMatchObject({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    expect((await readdir(dir)).sort()).toEqual(['s-0.arrow', 's-1.arrow']);
  });

  it('screen arrays go round again only once a file has taken them: three writers interleaved, every row back as written', async () => {
    // Many record batches across three writers (as data prepare's splits) reuse the few kept arrays;
    // one handed back before its file had taken it would be overwritten by a later batch's screens.
    const rows = Array.from({ length: 120 }, (_, e) => episodeRows(`mix-${e}`, [tap(e / 120, 0.5), back, type(`q${e}`), done], e)).flat();
    const writers = [0, 1, 2].map((w) => new ShardWriter({ encoder: ENC, rowsPerShard: 100, pathFor: (k) => join(dir, `w${w}-${k}.arrow`) }));
    for (let i = 0; i < rows.length; i++) await writers[i % 3]!.add(rows[i]!);
    for (const [w, writer] of writers.entries()) {
      const back = [];
      for (const s of await writer.close()) back.push(...shardRows(await readShardFile(s.path, ENC)));
      const want = rows.filter((_, i) => i % 3 === w);
      expect(back).toHaveLength(want.length);
      back.forEach((r, i) => expectSameRow(r, want[i]!));
    }
  });

  it('places rows by stream index so finished shards can be skipped, and refuses disorder', async () => {
    const w = new ShardWriter({ encoder: ENC, rowsPerShard: 2, pathFor: (k) => join(dir, `s-${k}.arrow`) });
    await w.put(0, ROWS[0]!);
    await w.put(1, ROWS[1]!);
    await w.put(4, ROWS[4]!); // shard 1 (rows 2, 3) kept from an earlier run
    await expect(w.put(6, ROWS[6]!)).rejects.toThrow(/left with 1\/2 rows/);
    const w2 = new ShardWriter({ encoder: ENC, rowsPerShard: 4, pathFor: (k) => join(dir, `t-${k}.arrow`) });
    await w2.put(0, ROWS[0]!);
    await expect(w2.put(2, ROWS[2]!)).rejects.toThrow(/out of order/);
    expect(w.written.map((s) => s.index)).toEqual([0]);
  });

  it('ReadBuffer reads files of any size one after another into one buffer, each whole', async () => {
    const buf = new ReadBuffer();
    const sizes = [5, 4_000, 17, 70_000, 0];
    for (const [k, n] of sizes.entries()) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 31 + k) % 251);
      await writeFile(join(dir, `f${k}`), bytes);
      expect(Buffer.compare(await buf.read(join(dir, `f${k}`)), bytes)).toBe(0);
    }
    await expect(buf.read(join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses files that are not shards, or come from another encoder, naming the file', async () => {
    const path = join(dir, 'x.arrow');
    await writeFile(path, encodeShard(ROWS.slice(0, 2), ENC));
    await expect(readShardFile(path, { ...ENC, id: 'other' })).rejects.toThrow(new RegExp(`${path}.*encoder test-enc`));
    const plain = join(dir, 'plain.arrow');
    await writeFile(plain, tableToIPC(tableFromArrays({ a: Float32Array.from([1, 2]) }), 'file'));
    await expect(readShardFile(plain)).rejects.toThrow(/not an autoui shard/);
    const junk = join(dir, 'junk.arrow');
    await writeFile(junk, 'definitely not arrow');
    await expect(readShardFile(junk)).rejects.toBeInstanceOf(InputError);
    await expect(readShardFile(join(dir, 'missing.arrow'))).rejects.toThrow(/missing/);
  });
});

/** A shard dir with a manifest, as `data prepare` leaves it. */
async function makeDir(rowsBySplit: Partial<Record<'train' | 'val' | 'test', ShardRow[]>>, complete = true): Promise<void> {
  const entry: SubsetEntry = {
    inputs: [],
    splitsFile: { path: 's.json', sha256: '0' },
    rowsPerShard: 3,
    skipCorrupt: false,
    complete,
    started: '',
    finished: null,
    screens: zeroCounts(),
    episodes: zeroCounts(),
    unassigned: { episodes: 0, screens: 0, examples: [] },
    records: { read: 0, skipped: 0 },
    shards: [],
  };
  for (const [split, rows] of Object.entries(rowsBySplit) as Array<['train' | 'val' | 'test', ShardRow[]]>) {
    const w = new ShardWriter({
      encoder: ENC,
      rowsPerShard: 3,
      pathFor: (k) => join(dir, 'general', `${split}-${k}.arrow`),
      onShard: (s) => void entry.shards.push({ file: `general/${split}-${s.index}.arrow`, split, index: s.index, rows: s.rows, bytes: s.bytes, sha256: s.sha256 }),
    });
    for (const r of rows) await w.add({ ...r, split });
    await w.close();
    entry.screens[split] = rows.length;
  }
  await updateSubset(dir, ENC, 'general', entry);
}

describe('reading a shard directory', () => {
  it('readShardDir streams one split in order; loadShards gives the same rows as typed arrays', async () => {
    const train = ROWS.slice(0, 7);
    const test = ROWS.slice(7);
    await makeDir({ train, test });
    const streamed: ShardRow[] = [];
    for await (const r of readShardDir(dir, { split: 'train' })) streamed.push(r);
    streamed.forEach((r, i) => expectSameRow(r, { ...train[i]!, split: 'train' }));
    expect(streamed).toHaveLength(7);

    const t = await loadShards(dir, { split: 'train' });
    expect(t.rows).toBe(7);
    expect(t.screens.length).toBe(7 * ENC.patches * ENC.dim);
    for (let i = 0; i < t.rows; i++) {
      expect(Array.from(screenAt(t, i))).toEqual(Array.from(streamed[i]!.screen));
      expect(actionAt(t, i)).toEqual(streamed[i]!.action);
      expect(t.episodeActions[i]).toEqual(streamed[i]!.episodeActions);
      expect(t.annotations![i]).toEqual(streamed[i]!.annotations);
      expect([t.episodeId[i], t.subset[i], t.stepId[i], t.episodeLength[i], t.goal[i], t.imageHeight[i], t.imageWidth[i]]).toEqual([
        streamed[i]!.episodeId, 'general', streamed[i]!.stepId, streamed[i]!.episodeLength, streamed[i]!.goal, 2400, 1080,
      ]);
    }
    // Rows of one episode share one action list.
    expect(t.episodeActions[0]).toBe(t.episodeActions[3]);
    expect((await loadShards(dir, { split: 'test', annotations: false })).annotations).toBeNull();
    expect((await loadShards(dir, { split: 'val' })).rows).toBe(0);
  });

  it('names what is wrong: no manifest, unknown subset, unfinished subset, row-count mismatch', async () => {
    await expect(loadShards(dir, { split: 'train' })).rejects.toThrow(/no manifest\.json here/);
    await makeDir({ train: ROWS.slice(0, 4) }, false);
    await expect(loadShards(dir, { split: 'train', subsets: ['install'] })).rejects.toThrow(/subset 'install' is not in this shard directory \(it has: general\)/);
    await expect(loadShards(dir, { split: 'train' })).rejects.toThrow(/general not fully prepared/);
    expect((await loadShards(dir, { split: 'train', allowIncomplete: true })).rows).toBe(4);
    // A shard replaced behind the manifest's back.
    await writeFile(join(dir, 'general', 'train-1.arrow'), encodeShard(ROWS.slice(0, 2), ENC));
    await expect(loadShards(dir, { split: 'train', allowIncomplete: true })).rejects.toThrow(/train-1\.arrow.*2 rows but the manifest says 1/);
  });
});
