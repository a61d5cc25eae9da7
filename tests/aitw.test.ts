import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleFromStep,
  expandInputs,
  readAitwEpisodes,
  readAitwSteps,
  type ReadStats,
  type SourcedStep,
} from '../src/data/aitw.js';
import { decodeExample, encodeExample, type Features } from '../src/data/example.js';
import { decodeScreen, encodePng, rawSha256 } from '../src/data/image.js';
import { readTfRecords, TfRecordWriter } from '../src/data/tfrecord.js';
import { ACTION_TYPE_IDS, type AitwStep } from '../src/data/types.js';
import { inspectRow } from '../src/cli/data-inspect.js';
import { InputError } from '../src/util/errors.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'aitw');
const GZ = join(FIXTURE, 'episodes.tfrecord.gz');
const PLAIN = join(FIXTURE, 'single.tfrecord');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-aitw-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function expected(): Promise<Record<string, unknown>[]> {
  return (await readFile(join(FIXTURE, 'expected.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function steps(paths: string[], opts: Parameters<typeof readAitwSteps>[1] = {}): Promise<SourcedStep[]> {
  const out: SourcedStep[] = [];
  for await (const s of readAitwSteps(paths, opts)) out.push(s);
  return out;
}

async function fixtureFeatures(path = GZ): Promise<Features[]> {
  const out: Features[] = [];
  for await (const r of readTfRecords(path)) out.push(decodeExample(r.data));
  return out;
}

/** Writes records made from (possibly edited) fixture features. */
async function writeRecords(name: string, records: Uint8Array[], gzip = true): Promise<string> {
  const p = join(dir, name);
  const w = await TfRecordWriter.open(p, { gzip });
  for (const r of records) await w.write(r);
  await w.close();
  return p;
}

function edited(f: Features, edit: (m: Features) => void): Uint8Array {
  const m = new Map(f);
  edit(m);
  return encodeExample(m);
}

describe('Python-made fixture', () => {
  it('decodes field for field as expected.jsonl says', async () => {
    const files = await expandInputs([FIXTURE]);
    expect(files).toEqual([GZ, PLAIN]);
    const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
    const got = (await steps(files, { stats })).map(inspectRow);
    expect(got).toEqual(await expected());
    expect(stats).toEqual({ records: 6, skipped: 0, files: 2 });
  });

  it('keeps the step source (file, record)', async () => {
    const got = await steps([GZ, PLAIN]);
    expect(got.map((s) => `${s.source.file}#${s.source.record}`)).toEqual([
      ...[0, 1, 2, 3, 4].map((i) => `${GZ}#${i}`),
      `${PLAIN}#0`,
    ]);
    expect(got[0]!.currentActivity).toBe('com.example.app/.MainActivity');
    expect(got[0]!.deviceType).toBe('Pixel 6');
    expect(got[0]!.androidApiLevel).toBe(33);
  });

  it('groups episodes', async () => {
    const eps = [];
    for await (const e of readAitwEpisodes([GZ, PLAIN])) eps.push(e);
    expect(eps.map((e) => [e.episodeId, e.goal, e.steps.map((s) => s.stepId)])).toEqual([
      ['16150593985172894737', 'Réserve un café ☕ à 東京', [0, 1, 2]],
      ['9876543210987654321', 'Search for "noise-cancelling headphones" on ebay', [0, 1]],
      ['42', 'Öffne die Einstellungen — 设置', [0]],
    ]);
  });

  it('survives re-encoding by our writer, raw and PNG', async () => {
    const orig = await steps([GZ, PLAIN]);
    for (const imageFormat of ['raw', 'png'] as const) {
      const recs = await Promise.all(orig.map((s) => exampleFromStep(s, { imageFormat })));
      const p = await writeRecords(`reencode-${imageFormat}.tfrecord.gz`, recs);
      const back = await steps([p]);
      expect(back.map(inspectRow)).toEqual(orig.map(inspectRow));
      expect(back.map(({ source: _s, ...rest }) => rest)).toEqual(orig.map(({ source: _s, ...rest }) => rest));
    }
  });
});

const f32 = fc.float({ min: Math.fround(-1), max: 1, noNaN: true, noDefaultInfinity: true });
const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const stepArb: fc.Arbitrary<AitwStep> = fc
  .record({
    h: fc.integer({ min: 1, max: 5 }),
    w: fc.integer({ min: 1, max: 5 }),
    episodeId: text,
    goal: text,
    n: fc.integer({ min: 0, max: 3 }),
    action: fc.constantFrom(...ACTION_TYPE_IDS),
    touch: fc.tuple(f32, f32),
    lift: fc.tuple(f32, f32),
    typed: text,
    api: fc.integer({ min: 0, max: 40 }),
    seed: fc.integer({ min: 0, max: 255 }),
    stepId: fc.integer({ min: 0, max: 9 }),
  })
  .chain((r) =>
    fc.record({
      boxes: fc.array(fc.tuple(f32, f32, f32, f32), { minLength: r.n, maxLength: r.n }),
      texts: fc.array(text, { minLength: r.n, maxLength: r.n }),
      types: fc.array(fc.constantFrom('TEXT', 'ICON_HOME', 'ICON_STAR'), { minLength: r.n, maxLength: r.n }),
      r: fc.constant(r),
    }),
  )
  .map(({ boxes, texts, types, r }) => ({
    episodeId: r.episodeId,
    episodeLength: r.stepId + 1,
    stepId: r.stepId,
    goal: r.goal,
    image: {
      height: r.h,
      width: r.w,
      channels: 3,
      data: Uint8Array.from({ length: r.h * r.w * 3 }, (_, i) => (i * 31 + r.seed) & 0xff),
    },
    annotations: { positions: boxes, text: texts, types },
    action: { action_type: r.action, touch_yx: r.touch, lift_yx: r.lift, typed_text: r.typed },
    currentActivity: 'a/.B',
    deviceType: 'Pixel 4',
    androidApiLevel: r.api,
  }));

describe('writer → reader round trip', () => {
  it('round-trips arbitrary steps (property, raw and PNG screens)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 4 }), fc.boolean(), async (input, png) => {
        const recs = await Promise.all(input.map((s) => exampleFromStep(s, { imageFormat: png ? 'png' : 'raw' })));
        const p = await writeRecords(`prop-${n++}.tfrecord.gz`, recs, n % 2 === 0);
        const back = (await steps([p])).map(({ source: _s, ...rest }) => rest);
        expect(back).toEqual(input);
      }),
      { numRuns: 30 },
    );
  });
});

describe('corrupt AITW input names file and record', () => {
  it('flipped byte in a data CRC', async () => {
    const framed = gunzipSync(await readFile(GZ));
    // Walk the frames to record 2's data CRC.
    let off = 0;
    for (let i = 0; i < 2; i++) off += 12 + framed.readUInt32LE(off) + 4;
    const crcAt = off + 12 + framed.readUInt32LE(off);
    framed[crcAt] ^= 0xff;
    const p = join(dir, 'badcrc.tfrecord.gz');
    await writeFile(p, gzipSync(framed));
    await expect(steps([p])).rejects.toThrow(`${p}#record 2: corrupt record: data CRC mismatch`);
    const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
    const got = await steps([p], { skipCorrupt: true, stats });
    expect(got.map((s) => s.source.record)).toEqual([0, 1, 3, 4]);
    expect(stats).toEqual({ records: 4, skipped: 1, files: 1 });
  });

  it('truncated gzip', async () => {
    const gz = await readFile(GZ);
    const p = join(dir, 'trunc.tfrecord.gz');
    await writeFile(p, gz.subarray(0, gz.length - 30));
    await expect(steps([p])).rejects.toThrow(new RegExp(`^${p}#record \\d: gzip stream is corrupt or truncated`));
    const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
    const got = await steps([p, PLAIN], { skipCorrupt: true, stats });
    expect(stats.skipped).toBe(1);
    expect(stats.records).toBe(got.length);
    expect(got.at(-1)!.source.file).toBe(PLAIN); // the next file is still read
  });

  const cases: [string, (m: Features) => void, RegExp][] = [
    ['missing feature', (m) => m.delete('goal_info'), /missing feature 'goal_info'/],
    [
      'mistyped feature',
      (m) => m.set('step_id', { kind: 'float', value: [1] }),
      /feature 'step_id' is a float list, expected a int64 list/,
    ],
    [
      'wrong value count',
      (m) => m.set('results/yx_touch', { kind: 'float', value: [0.5] }),
      /feature 'results\/yx_touch' has 1 values, expected 2/,
    ],
    [
      'image size not matching height×width×channels',
      (m) => m.set('image/height', { kind: 'int64', value: [7] }),
      /feature 'image\/encoded'.* has 72 bytes.*7×4×3 need 84/,
    ],
    [
      'annotation counts disagree',
      (m) => m.set('image/ui_annotations_text', { kind: 'bytes', value: [Buffer.from('extra')] }),
      /UI annotation counts disagree/,
    ],
    [
      'positions not a multiple of 4',
      (m) => m.set('image/ui_annotations_positions', { kind: 'float', value: [0.1, 0.2, 0.3] }),
      /not a multiple of 4/,
    ],
    ['unknown action type', (m) => m.set('results/action_type', { kind: 'int64', value: [2] }), /not a known AITW action type/],
    [
      'invalid UTF-8',
      (m) => m.set('goal_info', { kind: 'bytes', value: [new Uint8Array([0xc3, 0x28])] }),
      /feature 'goal_info' is not valid UTF-8/,
    ],
  ];
  it.each(cases)('%s', async (name, edit, re) => {
    const feats = await fixtureFeatures();
    const recs = feats.map((f, i) => (i === 1 ? edited(f, edit) : encodeExample(f)));
    const p = await writeRecords(`${name.replace(/\W+/g, '-')}.tfrecord.gz`, recs);
    const err = await steps([p]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message.startsWith(`${p}#record 1`)).toBe(true);
    expect((err as Error).message).toMatch(re);
    const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
    const skips: { index: number; reason: string }[] = [];
    const got = await steps([p], { skipCorrupt: true, stats, onSkip: (e) => skips.push(e) });
    expect(got.map((s) => s.source.record)).toEqual([0, 2, 3, 4]);
    expect(stats.skipped).toBe(1);
    expect(skips[0]!.index).toBe(1);
    expect(skips[0]!.reason).toMatch(re);
  });

  it('undecodable protobuf', async () => {
    const feats = await fixtureFeatures();
    const p = await writeRecords('garbage.tfrecord', [encodeExample(feats[0]!), Buffer.from([0x0a, 0xff, 0xff, 0x01])], false);
    await expect(steps([p])).rejects.toThrow(new RegExp(`^${p}#record 1: not a valid tf.train.Example`));
  });

  it('PNG whose size disagrees with image/height', async () => {
    const feats = await fixtureFeatures();
    const png = feats[3]!; // the PNG-encoded step, 5×3
    const recs = [edited(png, (m) => m.set('image/width', { kind: 'int64', value: [4] }))];
    const p = await writeRecords('pngsize.tfrecord.gz', recs);
    await expect(steps([p])).rejects.toThrow(/#record 0 feature 'image\/encoded': PNG is 5×3 but image\/height×image\/width say 5×4/);
  });
});

describe('episode consistency', () => {
  async function episodes(p: string, opts: Parameters<typeof readAitwEpisodes>[1] = {}) {
    const out = [];
    for await (const e of readAitwEpisodes([p], opts)) out.push(e.episodeId);
    return out;
  }

  it('a missing step fails the episode, naming file and record; skipCorrupt drops and counts its steps', async () => {
    const feats = await fixtureFeatures();
    const p = await writeRecords('gap.tfrecord.gz', [0, 2, 3, 4].map((i) => encodeExample(feats[i]!)));
    await expect(episodes(p)).rejects.toThrow(
      `${p}#record 1: episode '16150593985172894737' (starting at ${p}#record 0): step_id 2 where 1 was expected`,
    );
    const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
    expect(await episodes(p, { skipCorrupt: true, stats })).toEqual(['9876543210987654321']);
    expect(stats).toMatchObject({ records: 4, skipped: 2 });
  });

  it('a short episode, a wrong episode_length, a late start and a repeated id are errors', async () => {
    const feats = await fixtureFeatures();
    const enc = (i: number) => encodeExample(feats[i]!);
    const short = await writeRecords('short.tfrecord.gz', [enc(0), enc(1), enc(3), enc(4)]);
    await expect(episodes(short)).rejects.toThrow(`${short}#record 1: episode '16150593985172894737' (starting at ${short}#record 0): ends after 2 steps but episode_length is 3`);
    const late = await writeRecords('late.tfrecord.gz', [enc(1), enc(2)]);
    await expect(episodes(late)).rejects.toThrow(/#record 0: .*starts with step_id 1 instead of 0/);
    const again = await writeRecords('again.tfrecord.gz', [enc(3), enc(4), enc(0), enc(1), enc(2), enc(3), enc(4)]);
    await expect(episodes(again)).rejects.toThrow(/#record 5: .*appears again/);
    const len = await writeRecords('len.tfrecord.gz', [
      enc(0),
      edited(feats[1]!, (m) => m.set('episode_length', { kind: 'int64', value: [4] })),
      enc(2),
    ]);
    await expect(episodes(len)).rejects.toThrow(/#record 1: .*episode_length 4 differs from 3/);
  });
});

describe('expandInputs', () => {
  it('expands directories and globs, ignores temp files, sorts and de-duplicates', async () => {
    const d = join(dir, 'inputs');
    await mkdir(join(d, 'sub'), { recursive: true });
    for (const f of ['b.tfrecord.gz', 'a.tfrecord', 'sub/c.gz', 'notes.txt', 'x.tfrecord.gz.tmp-1-abcd'])
      await writeFile(join(d, f), '');
    expect(await expandInputs([d])).toEqual(['a.tfrecord', 'b.tfrecord.gz', 'sub/c.gz'].map((f) => join(d, f)));
    expect(await expandInputs([`${d}/*.tfrecord*`, join(d, 'a.tfrecord')])).toEqual(
      ['a.tfrecord', 'b.tfrecord.gz'].map((f) => join(d, f)),
    );
    await expect(expandInputs([join(d, 'missing.tfrecord')])).rejects.toThrow(/missing.tfrecord: no such file/);
    await expect(expandInputs([`${d}/*.nothing`])).rejects.toThrow(/pattern matches no files/);
    await expect(expandInputs([join(d, 'sub', 'empty-dir-does-not-exist')])).rejects.toThrow(InputError);
  });
});

describe('decodeScreen', () => {
  const rgb = Uint8Array.from({ length: 2 * 3 * 3 }, (_, i) => i * 7);
  it('expands gray and drops alpha for raw pixels', async () => {
    const gray = await decodeScreen(Uint8Array.from([1, 2, 3, 4, 5, 6]), 2, 3, 1, 'x');
    expect(Array.from(gray.data.subarray(0, 6))).toEqual([1, 1, 1, 2, 2, 2]);
    const rgba = Uint8Array.from({ length: 24 }, (_, i) => i);
    const out = await decodeScreen(rgba, 2, 3, 4, 'x');
    expect(out.channels).toBe(3);
    expect(Array.from(out.data.subarray(0, 6))).toEqual([0, 1, 2, 4, 5, 6]);
  });
  it('decodes PNG (RGBA → RGB) and JPEG, checking the size', async () => {
    const png = await encodePng({ height: 2, width: 3, channels: 3, data: rgb });
    const back = await decodeScreen(png, 2, 3, 3, 'x');
    expect(Buffer.from(back.data).equals(Buffer.from(rgb))).toBe(true);
    const rgba = await sharp(Buffer.from(rgb), { raw: { height: 2, width: 3, channels: 3 } }).ensureAlpha().png().toBuffer();
    expect(rawSha256(await decodeScreen(rgba, 2, 3, 4, 'x'))).toBe(rawSha256({ height: 2, width: 3, channels: 3, data: rgb }));
    const jpg = await sharp(Buffer.from(rgb), { raw: { height: 2, width: 3, channels: 3 } }).jpeg().toBuffer();
    expect((await decodeScreen(jpg, 2, 3, 3, 'x')).data.length).toBe(18);
    await expect(decodeScreen(jpg, 3, 3, 3, 'f#record 9')).rejects.toThrow(/^f#record 9 feature 'image\/encoded': JPEG is 2×3/);
  });
});

describe('random damage (property)', () => {
  it('any flipped byte or cut gives an InputError naming file and record, and skipCorrupt never throws', async () => {
    const framed = gunzipSync(await readFile(GZ));
    // A cut exactly between frames leaves a shorter but valid file: TFRecord has no end marker.
    const boundaries = [0];
    while (boundaries.at(-1)! < framed.length) boundaries.push(boundaries.at(-1)! + 16 + framed.readUInt32LE(boundaries.at(-1)!));
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 0, max: framed.length - 1 }), fc.constantFrom(...boundaries.slice(0, -1))),
        fc.integer({ min: 1, max: 255 }),
        fc.boolean(),
        fc.boolean(),
        async (at, xor, cut, gz) => {
          const bytes = Buffer.from(framed);
          const damaged = cut ? bytes.subarray(0, at) : ((bytes[at] ^= xor), bytes);
          const p = join(dir, `damage-${n++}.tfrecord${gz ? '.gz' : ''}`);
          await writeFile(p, gz ? gzipSync(damaged) : damaged);
          const err = await steps([p]).then(
            () => undefined,
            (e: unknown) => e,
          );
          const clean = cut ? boundaries.indexOf(at) : -1;
          if (clean >= 0) {
            expect(err).toBeUndefined();
            expect((await steps([p], { skipCorrupt: true })).length).toBe(clean);
            return;
          }
          expect(err).toBeInstanceOf(InputError);
          expect((err as Error).message).toMatch(new RegExp(`^${p}#record [0-4]: `));
          const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
          const got = await steps([p], { skipCorrupt: true, stats });
          expect(stats.skipped).toBe(1);
          expect(got.length).toBe(stats.records);
          expect(got.length).toBeLessThan(5);
        },
      ),
      { numRuns: 150 },
    );
  });
});
