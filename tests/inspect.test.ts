import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDataInspect, type InspectIo } from '../src/cli/data-inspect.js';
import { decodeScreen, rawSha256 } from '../src/data/image.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'aitw');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-inspect-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `autoui data inspect ARGS` through commander, capturing stdout and stderr lines. */
async function run(args: string[]): Promise<{ out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: InspectIo = { out: (l) => void out.push(l), err: (l) => void err.push(l) };
  const program = new Command('autoui').exitOverride();
  const data = program.command('data');
  registerDataInspect(data, io);
  await program.parseAsync(['data', 'inspect', ...args], { from: 'user' });
  return { out, err };
}

describe('autoui data inspect', () => {
  it('--json prints exactly the expected rows, summary on stderr', async () => {
    const { out, err } = await run([FIXTURE, '--json']);
    const expected = (await readFile(join(FIXTURE, 'expected.jsonl'), 'utf8')).trim().split('\n');
    expect(out.map((l) => JSON.parse(l) as unknown)).toEqual(expected.map((l) => JSON.parse(l) as unknown));
    expect(Object.keys(JSON.parse(out[0]!) as object)).toEqual(Object.keys(JSON.parse(expected[0]!) as object));
    expect(err).toEqual(['read 6 records from 2 files, skipped 0']);
  });

  it('prints a readable line per step and the summary on stdout', async () => {
    const { out, err } = await run([join(FIXTURE, 'episodes.tfrecord.gz')]);
    expect(out).toHaveLength(6);
    expect(out[1]).toContain('episode 16150593985172894737 step 2/3');
    expect(out[1]).toContain('TYPE "café ☕ 東京 🍵"');
    expect(out[3]).toContain('DUAL_POINT (0.8000, 0.5000)→(0.2000, 0.5000)');
    expect(out[5]).toBe('read 5 records from 1 files, skipped 0');
    expect(err).toEqual([]);
  });

  it('--images writes one PNG per step, decoding to the same pixels', async () => {
    const imgDir = join(dir, 'screens');
    const { out } = await run([join(FIXTURE, 'single.tfrecord'), '--json', '--images', imgDir]);
    expect(await readdir(imgDir)).toEqual(['42_step000.png']);
    const png = await readFile(join(imgDir, '42_step000.png'));
    const row = JSON.parse(out[0]!) as { height: number; width: number; image_sha256: string };
    expect(rawSha256(await decodeScreen(png, row.height, row.width, 3, 'png'))).toBe(row.image_sha256);
  });

  it('--skip-corrupt reports each skip and counts it', async () => {
    const framed = gunzipSync(await readFile(join(FIXTURE, 'episodes.tfrecord.gz')));
    framed[framed.length - 1] ^= 1; // last record's data CRC
    const p = join(dir, 'bad.tfrecord.gz');
    await writeFile(p, gzipSync(framed));
    await expect(run([p, '--json'])).rejects.toThrow(`${p}#record 4: corrupt record: data CRC mismatch`);
    const { out, err } = await run([p, '--json', '--skip-corrupt']);
    expect(out).toHaveLength(4);
    expect(err).toEqual([
      `skipped ${p}#record 4: corrupt record: data CRC mismatch`,
      'read 4 records from 1 files, skipped 1',
    ]);
  });
});
