/**
 * `data web` end to end on a tiny manual and one generated app: records read back through the AITW
 * reader, splits keep held-out sites in test, suites parse, output is deterministic, re-runs resume.
 */
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readAitwEpisodes } from '../src/data/aitw.js';
import { readSuite } from '../src/data/suite.js';
import { parseScript } from '../src/eval/tasks/agents.js';
import { parseJsonLines } from '../src/util/json.js';
import { loadSplits } from '../src/data/splits.js';
import { APP_SITES } from '../src/data/web/app_model.js';
import { buildWebDataset, type Catalogue, type WebOptions } from '../src/data/web/writer.js';
import { ActionType } from '../src/data/types.js';
import { InputError } from '../src/util/errors.js';

const page = (title: string, links: string): string =>
  `<!doctype html><html><head><title>${title} — Tiny Docs</title></head><body><h1>${title}</h1><p>Some words about ${title}.</p>${links}</body></html>`;

async function tinyManual(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'autoui-web-manual-'));
  await writeFile(join(d, 'index.html'), page('Welcome', '<a href="alpha.html">Alpha topic</a> <a href="beta.html">Beta topic</a>'));
  await writeFile(join(d, 'alpha.html'), page('Alpha', '<a href="gamma.html">Gamma topic</a> <a href="index.html">Home</a>'));
  await writeFile(join(d, 'beta.html'), page('Beta', '<a href="gamma.html">Gamma topic</a>'));
  await writeFile(join(d, 'gamma.html'), page('Gamma', '<a href="delta.html">Delta topic</a>'));
  await writeFile(join(d, 'delta.html'), page('Delta', '<a href="index.html">Home</a>'));
  return d;
}

async function catalogue(): Promise<Catalogue> {
  const d = await tinyManual();
  return {
    manuals: [{ site: 'tiny', pkg: 'tiny-doc', htmlDir: relative('/', d), start: 'index.html', sphinx: false, label: 'Tiny' }],
    apps: [APP_SITES[0]!],
  };
}

async function allFiles(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile() && !/\.json$/.test(e.name)) out.set(relative(dir, join(e.parentPath, e.name)), await readFile(join(e.parentPath, e.name)));
  return out;
}

describe('data web writer', () => {
  it('writes AITW records, splits, suites and sites.json; same seed gives identical files; a re-run resumes', async () => {
    const c = await catalogue();
    const app = APP_SITES[0]!.site;
    const opts = (out: string): WebOptions => ({ out, catalogue: c, heldOut: [app], episodes: 4, seed: 3, dpr: 0.5, testDpr: 0.5, suite: true, concurrency: 2, linkScreens: 2 });
    const a = await mkdtemp(join(tmpdir(), 'autoui-web-a-'));
    const r = await buildWebDataset(opts(a));
    expect(r.summary.sites.map((s) => [s.site, s.kind, s.heldOut])).toEqual([
      ['tiny', 'manual', false],
      [app, 'app', true],
    ]);

    // Records read back through the AITW reader with every documented feature.
    for (const site of ['tiny', app]) {
      const eps = [];
      for await (const ep of readAitwEpisodes([join(a, site, `${site}-00000.tfrecord.gz`)])) eps.push(ep);
      expect(eps.length).toBe(r.summary.sites.find((s) => s.site === site)!.episodes);
      for (const ep of eps) {
        expect(ep.steps.at(-1)!.action.action_type).toBe(ActionType.STATUS_TASK_COMPLETE);
        for (const s of ep.steps) {
          expect(s.image.channels).toBe(3);
          expect(s.image.height).toBeGreaterThan(s.image.width);
          expect(s.annotations.positions.length).toBeGreaterThan(0);
          for (const b of s.annotations.positions) for (const v of b) expect(v >= 0 && v <= 1).toBe(true);
          expect(s.currentActivity.startsWith(`${site}/`)).toBe(true);
        }
      }
      // Held-out sites only in test; every episode in exactly one split.
      const splits = await loadSplits(join(a, site, 'split.json'));
      const ids = eps.map((e) => e.episodeId).sort();
      expect([...splits.train, ...splits.val, ...splits.test].sort()).toEqual(ids);
      if (site === app) expect(splits.train.length + splits.val.length).toBe(0);

      // Suites: one task per episode, same ids, relative URLs that resolve to shipped pages; HOME opens the site's entry page.
      const tasks = (await Promise.all(['train', 'val', 'test'].map((x) => readSuite(join(a, site, `suite-${x}.jsonl`))))).flat();
      expect(tasks.map((t) => t.id).sort()).toEqual(ids);
      for (const t of tasks) {
        expect(existsSync(new URL(t.start_url))).toBe(true);
        expect(t.home_url).toBe(new URL('pages/index.html', pathToFileURL(join(a, site) + '/')).href);
        expect(t.meta?.site).toBe(site);
      }
    }
    // The held-out site's named-link set: one-step "tap X" episodes, several per screen, each naming a text of its screen, test only.
    const held = r.summary.sites.find((x) => x.site === app)!;
    expect(r.summary.sites.find((x) => x.site === 'tiny')!.links).toBeNull();
    expect(held.links!.screens).toBeGreaterThan(0);
    const linkEps = [];
    for await (const ep of readAitwEpisodes([join(a, app, 'links', `${app}-links-00000.tfrecord.gz`)])) linkEps.push(ep);
    expect(linkEps.length).toBe(held.links!.tasks);
    expect(linkEps.length).toBeGreaterThan(held.links!.screens);
    for (const ep of linkEps) {
      expect(ep.steps.length).toBe(1);
      const { action, annotations } = ep.steps[0]!;
      expect(action.action_type).toBe(ActionType.DUAL_POINT);
      expect(action.touch_yx).toEqual(action.lift_yx);
      expect(annotations.text.some((t) => t.trim() !== '' && ep.goal.toLowerCase().includes(t.trim().toLowerCase()))).toBe(true);
    }
    const linkSplits = await loadSplits(join(a, app, 'links', 'split.json'));
    expect(linkSplits.test.sort()).toEqual(linkEps.map((e) => e.episodeId).sort());
    expect(linkSplits.train.length + linkSplits.val.length).toBe(0);

    const combined = await readSuite(join(a, 'suite-test.jsonl'));
    for (const t of combined) expect([t.start_url, t.home_url!].every((u) => existsSync(new URL(u)))).toBe(true);
    // Gold scripts: the same tasks, each with its recorded actions, readable by `autoui run --script`.
    const goldText = await readFile(join(a, 'gold-test.jsonl'), 'utf8');
    const gold = parseScript(parseJsonLines(goldText, 'gold-test.jsonl'));
    expect([...gold.keys()].sort()).toEqual(combined.map((t) => t.id).sort());
    for (const t of combined) expect(gold.get(t.id)!.length).toBe(t.meta?.gold_steps);

    // Same seed, another folder: byte-identical records, splits, suites and pages.
    const b = await mkdtemp(join(tmpdir(), 'autoui-web-b-'));
    await buildWebDataset(opts(b));
    const [fa, fb] = [await allFiles(a), await allFiles(b)];
    expect([...fb.keys()].sort()).toEqual([...fa.keys()].sort());
    for (const [k, v] of fa) expect(fb.get(k)!.equals(v), k).toBe(true);

    // Nothing to do the second time.
    const again = await buildWebDataset(opts(a));
    expect(again.skipped).toEqual(['tiny', app]);
  });

  it('names the bad option or missing tool', async () => {
    const c = await catalogue();
    const out = await mkdtemp(join(tmpdir(), 'autoui-web-err-'));
    await expect(buildWebDataset({ out, catalogue: c, sites: ['nope'], episodes: 1, seed: 0 })).rejects.toThrow(/unknown site 'nope'/);
    await expect(buildWebDataset({ out, catalogue: c, sites: ['tiny'], heldOut: ['app-aurora'], episodes: 1, seed: 0 })).rejects.toThrow(/--held-out/);
    const missing: Catalogue = { manuals: [{ ...c.manuals[0]!, htmlDir: 'no/such/dir' }], apps: [] };
    await expect(buildWebDataset({ out, catalogue: missing, episodes: 1, seed: 0 })).rejects.toThrow(/fetch-manuals\.sh/);
    const err = await buildWebDataset({ out, catalogue: c, sites: ['tiny'], episodes: 1, seed: 0, chromium: '/no/chromium' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/install Debian's chromium-headless-shell/);
  });
});
