import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskedCrc32c } from '../src/data/crc32c.js';
import { decodeExample, encodeExample, type Features } from '../src/data/example.js';
import { readTfRecords, TfRecordWriter, type TfRecord } from '../src/data/tfrecord.js';
import { InputError } from '../src/util/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-tfrecord-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect(path: string, opts?: Parameters<typeof readTfRecords>[1]): Promise<TfRecord[]> {
  const out: TfRecord[] = [];
  for await (const r of readTfRecords(path, opts)) out.push({ index: r.index, data: Uint8Array.from(r.data) });
  return out;
}

async function writeAll(path: string, records: Uint8Array[], gzip: boolean): Promise<void> {
  const w = await TfRecordWriter.open(path, { gzip });
  for (const r of records) await w.write(r);
  await w.close();
}

/** Bit-level framing written by hand here, independently of TfRecordWriter. */
function frame(data: Uint8Array): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(data.length, 0);
  head.writeUInt32LE(maskedCrc32c(head.subarray(0, 8)), 8);
  const foot = Buffer.alloc(4);
  foot.writeUInt32LE(maskedCrc32c(data), 0);
  return Buffer.concat([head, data, foot]);
}

describe('maskedCrc32c', () => {
  it('matches the published CRC-32C check value before masking', () => {
    // CRC-32C("123456789") = 0xE3069283 (RFC 3720); masked by hand: rotr15 + 0xa282ead8.
    const crc = 0xe3069283;
    const masked = ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
    expect(maskedCrc32c(Buffer.from('123456789'))).toBe(masked);
  });
  it('matches the masked length CRC of a zero-length record', () => {
    // Bytes 8..11 of a TFRecord frame for an empty record are 29 03 98 07 (bitwise CRC-32C in Python).
    expect(maskedCrc32c(Buffer.alloc(8))).toBe(0x07980329);
  });
});

describe('TfRecordWriter → readTfRecords', () => {
  it.each([true, false])('round-trips records (gzip=%s), including empty and large ones', async (gzip) => {
    const recs = [new Uint8Array(0), Buffer.from('hello'), Buffer.alloc(3_000_000, 7), Buffer.from([0, 1, 2, 255])];
    const p = join(dir, `rt-${gzip}.tfrecord${gzip ? '.gz' : ''}`);
    await writeAll(p, recs, gzip);
    const raw = await readFile(p);
    expect(raw[0] === 0x1f && raw[1] === 0x8b).toBe(gzip);
    const got = await collect(p);
    expect(got.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    got.forEach((r, i) => expect(Buffer.from(r.data).equals(Buffer.from(recs[i]!))).toBe(true));
  });

  it('round-trips arbitrary records (property)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 12 }), fc.boolean(), async (recs, gzip) => {
        const p = join(dir, `prop-${n++}.tfrecord`);
        await writeAll(p, recs, gzip);
        const got = await collect(p);
        expect(got.map((r) => Array.from(r.data))).toEqual(recs.map((r) => Array.from(r)));
      }),
      { numRuns: 40 },
    );
  });

  it('reads frames that straddle stream chunks (large file, tiny and huge records interleaved)', async () => {
    const recs: Uint8Array[] = [];
    for (let i = 0; i < 400; i++) recs.push(Buffer.alloc(i % 7 === 0 ? 50_000 + i : i, i & 0xff));
    const p = join(dir, 'many.tfrecord');
    await writeAll(p, recs, false);
    const got = await collect(p);
    expect(got.length).toBe(400);
    got.forEach((r, i) => expect(Buffer.from(r.data).equals(Buffer.from(recs[i]!))).toBe(true));
  });

  it('reads hand-framed data identical to what the writer produced', async () => {
    const recs = [Buffer.from('a'), Buffer.from('bcd')];
    const p = join(dir, 'plain.tfrecord');
    await writeAll(p, recs, false);
    expect((await readFile(p)).equals(Buffer.concat(recs.map(frame)))).toBe(true);
  });

  it('is atomic: nothing at the path until close(), and abort() leaves nothing', async () => {
    const p = join(dir, 'atomic', 'x.tfrecord.gz');
    const w = await TfRecordWriter.open(p);
    await w.write(Buffer.from('x'));
    await expect(readFile(p)).rejects.toThrow();
    await w.abort();
    expect(await readdir(join(dir, 'atomic'))).toEqual([]);
    const w2 = await TfRecordWriter.open(p);
    await w2.write(Buffer.from('y'));
    await w2.close();
    expect((await collect(p)).length).toBe(1);
    expect(await readdir(join(dir, 'atomic'))).toEqual(['x.tfrecord.gz']);
  });
});

describe('corrupt TFRecord input', () => {
  const recs = [Buffer.from('first record'), Buffer.from('second record'), Buffer.from('third record')];
  const plain = Buffer.concat(recs.map(frame));
  // Offset of record 1's data: frame 0 is 12 + 12 + 4 bytes.
  const rec1Data = 28 + 12;

  async function fileWith(name: string, bytes: Buffer): Promise<string> {
    const p = join(dir, name);
    await writeFile(p, bytes);
    return p;
  }

  it('bad data CRC: error names file and record; skipCorrupt skips just that record', async () => {
    const bytes = Buffer.from(plain);
    bytes[rec1Data + 2] ^= 0x01;
    const p = await fileWith('badcrc.tfrecord.gz', gzipSync(bytes));
    await expect(collect(p)).rejects.toThrow(new RegExp(`${p}#record 1: .*data CRC`));
    const skips: { index: number; reason: string }[] = [];
    const got = await collect(p, { skipCorrupt: true, onSkip: (e) => skips.push(e) });
    expect(got.map((r) => [r.index, Buffer.from(r.data).toString()])).toEqual([
      [0, 'first record'],
      [2, 'third record'],
    ]);
    expect(skips).toEqual([{ file: p, index: 1, reason: expect.stringContaining('data CRC') }]);
  });

  it('bad length CRC: error at that record; skipCorrupt drops the unreadable rest as one skip', async () => {
    const bytes = Buffer.from(plain);
    bytes[28 + 9] ^= 0x80; // record 1's length CRC
    const p = await fileWith('badlen.tfrecord', bytes);
    await expect(collect(p)).rejects.toThrow(new RegExp(`${p}#record 1: .*length CRC`));
    const skips: unknown[] = [];
    const got = await collect(p, { skipCorrupt: true, onSkip: (e) => skips.push(e) });
    expect(got.map((r) => r.index)).toEqual([0]);
    expect(skips).toHaveLength(1);
  });

  it('truncated record in a plain file', async () => {
    const p = await fileWith('trunc.tfrecord', plain.subarray(0, plain.length - 5));
    await expect(collect(p)).rejects.toThrow(new RegExp(`${p}#record 2: truncated record`));
    const skips: unknown[] = [];
    expect((await collect(p, { skipCorrupt: true, onSkip: (e) => skips.push(e) })).length).toBe(2);
    expect(skips).toHaveLength(1);
  });

  it('truncated gzip stream: records before the cut are read, then an error naming the file', async () => {
    const big = Buffer.concat([frame(Buffer.alloc(100_000, 1)), frame(randomish(200_000)), frame(Buffer.from('z'))]);
    const gz = gzipSync(big);
    const p = await fileWith('trunc.tfrecord.gz', gz.subarray(0, Math.floor(gz.length * 0.8)));
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const r of readTfRecords(p)) seen.push(r.index);
      })(),
    ).rejects.toThrow(new RegExp(`${p}#record \\d: .*gzip`));
    expect(seen).toEqual([0]);
    const skips: { reason: string }[] = [];
    expect((await collect(p, { skipCorrupt: true, onSkip: (e) => skips.push(e) })).map((r) => r.index)).toEqual([0]);
    expect(skips).toHaveLength(1);
    expect(skips[0]!.reason).toMatch(/rest of the file/);
  });

  it('missing file is an InputError naming it', async () => {
    const p = join(dir, 'nope.tfrecord');
    await expect(collect(p)).rejects.toBeInstanceOf(InputError);
    await expect(collect(p)).rejects.toThrow(p);
  });
});

describe('tf.train.Example', () => {
  it('round-trips all three kinds and keeps UTF-8 bytes', () => {
    const f: Features = new Map([
      ['b', { kind: 'bytes', value: [Buffer.from('Réserve ☕ 東京'), new Uint8Array([0, 255])] }],
      ['f', { kind: 'float', value: [0.5, -1, 1e-3] }],
      ['i', { kind: 'int64', value: [0, -5, 2 ** 53 - 1] }],
      ['empty', { kind: 'float', value: [] }],
    ]);
    const back = decodeExample(encodeExample(f));
    expect(back.get('b')!.kind).toBe('bytes');
    expect((back.get('b')!.value as Uint8Array[]).map((b) => Buffer.from(b).toString('hex'))).toEqual(
      (f.get('b')!.value as Uint8Array[]).map((b) => Buffer.from(b).toString('hex')),
    );
    expect(back.get('f')).toEqual({ kind: 'float', value: [0.5, -1, Math.fround(1e-3)] });
    expect(back.get('i')).toEqual({ kind: 'int64', value: [0, -5, 2 ** 53 - 1] });
    expect(back.get('empty')).toEqual({ kind: 'float', value: [] });
  });

  it('rejects unsafe int64 on encode and decode', () => {
    expect(() => encodeExample(new Map([['i', { kind: 'int64', value: [2 ** 53] }]]))).toThrow(/safe integer/);
    // Hand-encoded: Example{features{feature{"i": Feature{int64_list{value: [2^60]}}}}}.
    const big = varint(2n ** 60n);
    const int64List = Buffer.concat([Buffer.from([0x0a, big.length]), big]);
    const feature = Buffer.concat([Buffer.from([0x1a, int64List.length]), int64List]);
    const entry = Buffer.concat([Buffer.from([0x0a, 1, 0x69, 0x12, feature.length]), feature]);
    const features = Buffer.concat([Buffer.from([0x0a, entry.length]), entry]);
    const example = Buffer.concat([Buffer.from([0x0a, features.length]), features]);
    expect(() => decodeExample(example)).toThrow(/safe integer/);
  });

  it('rejects bytes that are not a protobuf', () => {
    expect(() => decodeExample(Buffer.from([0x0a, 0x50, 1, 2]))).toThrow(InputError);
  });
});

function varint(n: bigint): Buffer {
  const out: number[] = [];
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
  return Buffer.from(out);
}

function randomish(n: number): Buffer {
  const b = Buffer.alloc(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}
