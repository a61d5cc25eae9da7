/** `data prepare` in a low-priority child (what the demo runs beside training): the same shards as in-process, and its errors. */
import { existsSync, mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareFromFiles, type PrepareSummary } from '../src/data/prepare.js';
import { synthesize } from '../src/data/synth/writer.js';
import { prepareArgs, prepareInBackground, type BackgroundRequest } from '../src/pipeline/background_prepare.js';

const CLI = join(process.cwd(), 'dist', 'src', 'cli.js');

describe('prepareArgs', () => {
  it('passes every setting a request gives, and none it leaves to the defaults', () => {
    const base = { inputs: ['a.tfrecord.gz', 'b.tfrecord.gz'], splits: 's.json', subset: 'clang', out: 'o' };
    expect(prepareArgs(base)).toEqual(['data', 'prepare', '--input', 'a.tfrecord.gz', 'b.tfrecord.gz', '--splits', 's.json', '--subset', 'clang', '--out', 'o', '--json']);
    const all: BackgroundRequest = { ...base, encoder: 'builtin', screenText: 'ocr', rowsPerShard: 64, batch: 8, skipCorrupt: true, overwrite: true };
    expect(prepareArgs(all).slice(12)).toEqual(['--encoder', 'builtin', '--screen-text', 'ocr', '--rows-per-shard', '64', '--batch', '8', '--skip-corrupt', '--overwrite']);
  });
});

describe.runIf(existsSync(CLI))('prepareInBackground (the built CLI)', () => {
  let req: Omit<BackgroundRequest, 'out'>;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'autoui-bg-'));
    const r = await synthesize({ out: join(root, 'synth'), episodes: 12, seed: 5, subsets: ['general'], size: { width: 160, height: 320 } });
    req = { inputs: r.summary.counts.general!.files.map((f) => join(root, 'synth', 'general', f)), splits: join(root, 'synth', 'general', 'split.json'), subset: 'general', rowsPerShard: 16 };
  });

  it('writes the shards an in-process prepare writes, and reports its summary', async () => {
    const summaries: PrepareSummary[] = [];
    await prepareInBackground([{ ...req, out: join(root, 'bg') }], (s) => summaries.push(s), { cli: CLI });
    const here = await prepareFromFiles({ ...req, out: join(root, 'fg') });
    expect(summaries.map((s) => [s.subset, s.encoded, s.screens])).toEqual([['general', here.encoded, here.screens]]);
    const shardsOf = async (dir: string) => (JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { subsets: Record<string, { shards: unknown }> }).subsets.general!.shards;
    expect(await shardsOf(join(root, 'bg'))).toEqual(await shardsOf(join(root, 'fg')));
  }, 60_000);

  it("rejects with the child's own error, naming the file at fault", async () => {
    const missing = join(root, 'no-such-split.json');
    await expect(prepareInBackground([{ ...req, splits: missing, out: join(root, 'bad') }], () => {}, { cli: CLI })).rejects.toThrow(/general.*failed: .*no-such-split\.json/s);
  }, 60_000);

  it('stops the child when aborted', async () => {
    const ac = new AbortController();
    const run = prepareInBackground([{ ...req, out: join(root, 'aborted') }], () => {}, { cli: CLI, signal: ac.signal });
    ac.abort();
    await expect(run).rejects.toThrow(/abort/i);
  });
});
