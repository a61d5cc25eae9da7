import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSuite } from '../src/data/suite.js';
import { ActionType } from '../src/data/types.js';
import { readScriptFile } from '../src/eval/tasks/agents.js';
import { demoPaths, runDemo } from '../src/pipeline/demo.js';

const REPORT_KEYS = ['n', 'action_match', 'type_acc', 'text_acc', 'text_exact', 'click_acc', 'scroll_acc', 'tap_in_box', 'invalid', 'subsets'];

describe('demo', () => {
  it('runs every stage end to end under --out — synthetic, unseen apps, web sites (read by OCR, one held out), training, evaluation, live tasks — and a re-run resumes every stage', async () => {
    const out = mkdtempSync(join(tmpdir(), 'autoui-demo-'));
    const o = { out, episodes: 50, unseenEpisodes: 6, webEpisodes: 2, linkScreens: 1, sites: ['app-aurora', 'app-quartz'], runTasks: 2, seed: 3, maxSteps: 2, recipe: { epochs: 1, lr: 3e-3 }, quiet: true };
    const r = await runDemo(o);
    expect(r.data).toBe(join(out, 'shards'));
    expect(r.checkpoint.startsWith(join(out, 'checkpoints'))).toBe(true);
    expect(existsSync(join(r.checkpoint, 'model.safetensors'))).toBe(true);
    expect(Object.keys(r.metrics)).toEqual(REPORT_KEYS);
    expect(Object.keys(r.metrics.subsets)).not.toContain('web');
    const manifest = JSON.parse(readFileSync(join(out, 'shards', 'manifest.json'), 'utf8')) as { subsets: Record<string, { screenText: string }> };
    expect(manifest.subsets.web!.screenText).toMatch(/^ocr:/);
    expect(manifest.subsets.general!.screenText).toBe('annotations');
    expect(Object.keys(r.unseenApps.subsets).sort()).toEqual(['general', 'google_apps', 'install']);
    expect(Object.keys(r.heldOutSites!.report.subsets)).toEqual(['app-quartz']);
    expect(Object.keys(r.heldOutSites!.namedLinks!.bySite)).toEqual(['app-quartz-links']);
    expect(r.heldOutSites!.namedLinks!.all.n).toBeGreaterThan(0);
    expect(r.closedLoop).toMatchObject({ tasks: 2 });
    expect(existsSync(r.closedLoop!.report)).toBe(true);
    // Typed text is scored against the held-out site's gold, over the tasks run whose gold types.
    const site = join(out, 'web', 'app-quartz');
    const gold = await readScriptFile(join(site, 'gold-test.jsonl'), 'the gold');
    const ran = (await readSuite(join(site, 'suite-test.jsonl'))).slice(0, 2).map((t) => t.id);
    const typing = new Set([...gold].filter(([, actions]) => actions.some((a) => a.action_type === ActionType.TYPE)).map(([id]) => id));
    const t = r.closedLoop!.typed_text;
    expect(t.tasks).toBe(ran.filter((id) => typing.has(id)).length);
    expect(t.equal).toBeLessThanOrEqual(t.equal_ignoring_case);
    expect(t.equal_ignoring_case).toBeLessThanOrEqual(t.typed);
    expect(t.typed).toBeLessThanOrEqual(t.tasks);
    const again = await runDemo(o);
    expect(again.metrics).toEqual(r.metrics);
    expect(again.heldOutSites!.report).toEqual(r.heldOutSites!.report);
    expect(again.heldOutSites!.namedLinks).toEqual(r.heldOutSites!.namedLinks);
    expect(again.closedLoop!.success_rate).toBe(r.closedLoop!.success_rate);
  }, 600_000);

  it('keeps data in runs/demo and the checkpoint in checkpoints/demo by default, and everything under --out when given', () => {
    expect(demoPaths({})).toMatchObject({ synth: join('runs', 'demo', 'synth'), shards: join('runs', 'demo', 'shards'), checkpoint: join('checkpoints', 'demo') });
    expect(demoPaths({ out: 'x' })).toMatchObject({ synth: join('x', 'synth'), shards: join('x', 'shards'), heldOutShards: join('x', 'heldout-shards'), checkpoint: join('x', 'checkpoints', 'demo') });
    expect(demoPaths({ out: 'x', checkpoint: 'c' }).checkpoint).toBe('c');
    expect(demoPaths({ checkpoint: 'c' })).toMatchObject({ shards: join('runs', 'demo', 'shards'), checkpoint: 'c' });
  });
});
