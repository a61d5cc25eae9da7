import { Command } from 'commander';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerDataSynth } from '../src/cli/data-synth.js';
import { readAitwEpisodes } from '../src/data/aitw.js';
import { APPS, UNSEEN_APP_IDS, appById, inAppSplit, type AppInfo, type AppSplit } from '../src/data/synth/apps.js';
import { generateTrace, subsetsFor, type EpisodeTrace } from '../src/data/synth/episode.js';
import { layoutScreen } from '../src/data/synth/screens.js';
import type { UiState } from '../src/data/synth/state.js';
import { synthesize } from '../src/data/synth/writer.js';
import { SUBSETS, type Splits, type Subset } from '../src/data/types.js';
import { InputError } from '../src/util/errors.js';
import { captureStdout } from './helpers/stdout.js';

const size = { width: 160, height: 320 };
const N = 40;
const unseen = UNSEEN_APP_IDS.map(appById);

function traces(apps: AppSplit, subsets: readonly Subset[]): EpisodeTrace[] {
  return subsets.flatMap((s) => Array.from({ length: N }, (_, i) => generateTrace(7, s, i, size, subsets, apps)));
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Matches an app's id, name or package as a whole word, in any case. */
const mentions = (a: AppInfo): RegExp => new RegExp(`(^|\\W)(${[a.id, a.name, a.package].map(escape).join('|')})($|\\W)`, 'i');
const unseenPatterns = unseen.map((a) => [a, mentions(a)] as const);
const unseenMention = (text: string): AppInfo | undefined => unseenPatterns.find(([, re]) => re.test(text))?.[0];
const iconKey = (a: AppInfo): string => `${a.icon.shape}|${a.icon.background}|${a.icon.glyph}`;
const unseenIcons = new Set(unseen.map(iconKey));

/** Every app id the world lists anywhere: installed, home grid, dock, drawer, the Play Store. */
function worldApps(s: UiState): string[] {
  const w = s.world;
  const sc = s.screen;
  const onScreen = sc.kind === 'app' || sc.kind === 'store_app' ? [sc.app] : sc.kind === 'store_results' ? sc.apps : [];
  return [...w.installed, ...w.home.filter((x): x is string => x !== null), ...w.dock, ...w.drawer, ...w.store, ...w.storeFeatured, ...onScreen, ...s.installing];
}

/** What a screen shows that could name or depict an app: texts, annotation texts, element ids, icons. */
function screenLeaks(s: UiState): string[] {
  const out: string[] = [];
  for (const el of layoutScreen(s, size)) {
    const texts = [el.ann?.text ?? '', el.paint.kind === 'text' ? el.paint.text : '', el.id ?? ''];
    for (const t of texts) {
      const hit = unseenMention(t.replace(/:/g, ' '));
      if (hit) out.push(`${s.screen.kind}: '${t}' names ${hit.id}`);
    }
    if (el.paint.kind === 'appIcon' && unseenIcons.has(`${el.paint.icon.shape}|${el.paint.icon.background}|${el.paint.icon.glyph}`))
      out.push(`${s.screen.kind}: an unseen app's icon`);
  }
  return out;
}

describe('the seen/unseen app partition', () => {
  it('holds out 14 known apps, none the oracle routes through, leaving 54 seen', () => {
    expect(UNSEEN_APP_IDS.length).toBe(14);
    expect(new Set(UNSEEN_APP_IDS).size).toBe(14);
    for (const id of UNSEEN_APP_IDS) expect(() => appById(id)).not.toThrow();
    for (const id of ['settings', 'chrome', 'playstore', 'google']) expect(UNSEEN_APP_IDS).not.toContain(id);
    expect(unseen.filter((a) => a.kind === 'third_party').length).toBe(10);
    expect(APPS.filter((a) => inAppSplit(a, 'seen')).length).toBe(54);
    for (const a of APPS) expect(inAppSplit(a, 'seen')).toBe(!inAppSplit(a, 'unseen'));
  });
});

describe('seen sets', () => {
  const all = traces('seen', SUBSETS);

  it('never list, name or draw an unseen app: worlds, goals, screen texts, annotations, ids, icons', () => {
    const leaks: string[] = [];
    for (const t of all) {
      const inGoal = unseenMention(t.goal);
      if (inGoal) leaks.push(`goal '${t.goal}' names ${inGoal.id}`);
      for (const st of t.steps) {
        for (const id of worldApps(st.state)) if (UNSEEN_APP_IDS.includes(id)) leaks.push(`world lists ${id}`);
        leaks.push(...screenLeaks(st.state));
      }
    }
    expect(leaks.slice(0, 5)).toEqual([]);
  });

  it('the leak check itself fires on an unseen-app set', () => {
    const t = traces('unseen', ['install'])[0]!;
    expect(unseenMention(t.goal)).toBeDefined();
    expect(t.steps.some((st) => screenLeaks(st.state).length > 0)).toBe(true);
  });

  it('the written records name no unseen app either', async () => {
    const out = await mkdtemp(join(tmpdir(), 'synth-unseen-'));
    const { summary } = await synthesize({ out, episodes: 10, seed: 2, subsets: ['general', 'install'], size, shardEpisodes: 10 });
    expect(summary.apps).toBe('seen');
    let steps = 0;
    for (const subset of ['general', 'install'] as const)
      for await (const ep of readAitwEpisodes(summary.counts[subset]!.files.map((f) => join(out, subset, f))))
        for (const s of ep.steps) {
          steps++;
          for (const text of [s.goal, ...s.annotations.text]) expect(unseenMention(text), text).toBeUndefined();
        }
    expect(steps).toBe(summary.totals.steps);
  }, 60_000);
});

describe('unseen sets', () => {
  const subsets = subsetsFor('unseen');
  const all = traces('unseen', subsets);

  it('hold general, install and google_apps: the subsets whose tasks name an app', () => {
    expect(subsets).toEqual(['general', 'install', 'google_apps']);
    expect(subsetsFor('seen')).toEqual([...SUBSETS]);
    expect(() => generateTrace(7, 'single', 0, size, SUBSETS, 'unseen')).toThrow(/no single subset/);
  });

  it('every goal names an unseen app, the one the episode acts on; every unseen app is a target', () => {
    const targets = new Set<string>();
    for (const t of all) {
      const app = unseenMention(t.goal);
      expect(app, t.goal).toBeDefined();
      targets.add(app!.id);
      const taps = t.steps.flatMap((s) => (s.event?.kind === 'tap' ? [s.event.target] : []));
      expect(taps.some((x) => x === `app:${app!.id}` || x === `install:${app!.id}`), t.goal).toBe(true);
    }
    expect([...targets].sort()).toEqual([...UNSEEN_APP_IDS].sort());
  });

  it('phones still show seen apps as distractors', () => {
    const seenThirdParty = (t: EpisodeTrace) => t.steps[0]!.state.world.installed.some((id) => appById(id).kind === 'third_party' && !UNSEEN_APP_IDS.includes(id));
    expect(all.filter(seenThirdParty).length).toBeGreaterThan(all.length / 2);
  });

  it('synthesize: every episode in test, the split recorded; another split over it needs --force', async () => {
    const out = await mkdtemp(join(tmpdir(), 'synth-unseen-'));
    const o = { out, episodes: 6, seed: 1, subsets, size, apps: 'unseen' as const };
    const { summary } = await synthesize(o);
    expect(summary.apps).toBe('unseen');
    expect(JSON.parse(await readFile(join(out, 'synth.json'), 'utf8'))).toMatchObject({ apps: 'unseen' });
    for (const s of subsets) {
      const split = JSON.parse(await readFile(join(out, s, 'split.json'), 'utf8')) as Splits;
      expect(split.train).toEqual([]);
      expect(split.val).toEqual([]);
      expect(split.test.length).toBe(2);
      expect(summary.counts[s]!.splits).toEqual({ train: 0, val: 0, test: 2 });
    }
    expect((await synthesize(o)).unchanged).toBe(true);
    await expect(synthesize({ ...o, apps: 'seen' })).rejects.toThrow(/unseen apps/);
    await expect(synthesize({ ...o, subsets: ['web_shopping'] })).rejects.toThrow(InputError);
  }, 60_000);

  it('CLI: --apps unseen defaults to the subsets it can hold', async () => {
    const out = await mkdtemp(join(tmpdir(), 'synth-unseen-'));
    const program = new Command().exitOverride();
    registerDataSynth(program.command('data'));
    const writes = await captureStdout(() => program.parseAsync(['node', 'autoui', 'data', 'synth', '--out', out, '--episodes', '3', '--apps', 'unseen', '--json']));
    const summary = JSON.parse(writes.join('')) as { apps: string; subsets: string[]; totals: { episodes: number } };
    expect(summary).toMatchObject({ apps: 'unseen', subsets: ['general', 'install', 'google_apps'], totals: { episodes: 3 } });
    const bad = new Command().exitOverride();
    registerDataSynth(bad.command('data'));
    await expect(bad.parseAsync(['node', 'autoui', 'data', 'synth', '--out', out, '--apps', 'some'])).rejects.toThrow(/some/);
  }, 60_000);
});
