import { Command } from 'commander';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerDataSynth } from '../src/cli/data-synth.js';
import { readAitwEpisodes } from '../src/data/aitw.js';
import { episodeSize, synthesize, type SynthOptions } from '../src/data/synth/writer.js';
import { ActionType, type Splits } from '../src/data/types.js';
import { InputError } from '../src/util/errors.js';
import { captureStdout } from './helpers/stdout.js';

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'synth-test-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const base = (out: string): SynthOptions => ({
  out,
  episodes: 12,
  seed: 5,
  subsets: ['general', 'web_shopping'],
  size: { width: 160, height: 320 },
  shardEpisodes: 4,
});

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join(e.parentPath, e.name).slice(dir.length));
  return out.sort();
}

describe('synth writer', () => {
  it('writes shards, splits and synth.json; same args give byte-identical files', async () => {
    const [a, b] = [await tmp(), await tmp()];
    const ra = await synthesize(base(a));
    await synthesize(base(b));
    expect(ra.unchanged).toBe(false);
    const fa = await files(a);
    expect(fa).toEqual(await files(b));
    expect(fa).toEqual([
      '/general/general-00000.tfrecord.gz',
      '/general/general-00001.tfrecord.gz',
      '/general/split.json',
      '/synth.json',
      '/web_shopping/split.json',
      '/web_shopping/web_shopping-00000.tfrecord.gz',
      '/web_shopping/web_shopping-00001.tfrecord.gz',
    ]);
    for (const f of fa) expect(Buffer.compare(await readFile(join(a, f)), await readFile(join(b, f))), f).toBe(0);
    expect(ra.summary.counts.general?.episodes).toBe(6);
    expect(ra.summary.totals.episodes).toBe(12);
  }, 60_000);

  it('every step decodes back with consistent ids, lengths, order, splits', async () => {
    const out = await tmp();
    const { summary } = await synthesize({ ...base(out), episodes: 10, subsets: ['install', 'single'] });
    for (const subset of ['install', 'single'] as const) {
      const paths = summary.counts[subset]!.files.map((f) => join(out, subset, f));
      const ids: string[] = [];
      let steps = 0;
      for await (const ep of readAitwEpisodes(paths)) {
        ids.push(ep.episodeId);
        ep.steps.forEach((s, i) => {
          expect(s.stepId).toBe(i);
          expect(s.episodeLength).toBe(ep.steps.length);
          expect(s.image).toMatchObject({ width: 160, height: 320, channels: 3 });
          expect(s.deviceType).toMatch(/^Pixel/);
          expect(s.currentActivity).toContain('/');
          expect(s.annotations.positions.length).toBe(s.annotations.text.length);
        });
        expect(ep.steps.at(-1)!.action.action_type).toBe(ActionType.STATUS_TASK_COMPLETE);
        steps += ep.steps.length;
      }
      expect(ids.length).toBe(5);
      expect(steps).toBe(summary.counts[subset]!.steps);
      const split = JSON.parse(await readFile(join(out, subset, 'split.json'), 'utf8')) as Splits;
      expect([...split.train, ...split.val, ...split.test].sort()).toEqual([...ids].sort());
    }
  }, 60_000);

  it('with aspects, each episode draws one screen shape (seeded) at the base height; the summary records them', async () => {
    const out = await tmp();
    const aspects = [0.45, 0.5625];
    const { summary } = await synthesize({ ...base(out), aspects });
    expect(summary.aspects).toEqual(aspects);
    const widths = new Set<number>();
    for (const subset of ['general', 'web_shopping'] as const) {
      const paths = summary.counts[subset]!.files.map((f) => join(out, subset, f));
      for await (const ep of readAitwEpisodes(paths)) {
        const shapes = new Set(ep.steps.map((s) => `${s.image.width}×${s.image.height}`));
        expect(shapes.size, ep.episodeId).toBe(1);
        widths.add(ep.steps[0]!.image.width);
      }
    }
    expect([...widths].sort()).toEqual([144, 180]);
    expect(episodeSize({ ...base(out), aspects }, 'general', 3)).toEqual(episodeSize({ ...base(out), aspects }, 'general', 3));
    expect(episodeSize(base(out), 'general', 3)).toEqual({ width: 160, height: 320 });
    await expect(synthesize({ ...base(out), aspects: [0.5] })).rejects.toThrow(/other arguments/);
    await expect(synthesize({ ...base(await tmp()), aspects: [2] })).rejects.toThrow(/--aspects.*\[0.25, 1\]|\[0.25, 1\]/);
  }, 60_000);

  it('re-running over a complete DIR is a no-op; other args need --force', async () => {
    const out = await tmp();
    const o = { ...base(out), episodes: 3, subsets: ['single' as const] };
    await synthesize(o);
    const before = await readFile(join(out, 'synth.json'));
    const again = await synthesize(o);
    expect(again.unchanged).toBe(true);
    expect(Buffer.compare(before, await readFile(join(out, 'synth.json')))).toBe(0);
    await expect(synthesize({ ...o, seed: 6 })).rejects.toThrow(InputError);
    const forced = await synthesize({ ...o, seed: 6, force: true });
    expect(forced.unchanged).toBe(false);
    expect(forced.summary.seed).toBe(6);
  }, 60_000);

  it('CLI: data synth --json prints the summary; bad subsets are input errors', async () => {
    const out = await tmp();
    const program = new Command().exitOverride();
    registerDataSynth(program.command('data'));
    const writes = await captureStdout(() => program.parseAsync(['node', 'autoui', 'data', 'synth', '--out', out, '--episodes', '5', '--subsets', 'single,general', '--json']));
    const summary = JSON.parse(writes.join('')) as { totals: { episodes: number }; subsets: string[] };
    expect(summary.totals.episodes).toBe(5);
    expect(summary.subsets).toEqual(['single', 'general']);
    const bad = new Command().exitOverride();
    registerDataSynth(bad.command('data'));
    await expect(bad.parseAsync(['node', 'autoui', 'data', 'synth', '--out', out, '--subsets', 'general,nope'])).rejects.toThrow(/nope/);
  }, 60_000);
});
