import type { Command } from 'commander';
import { ALL_SITES, buildWebDataset, DEFAULT_HELD_OUT, LINKS_DIR, LINKS_PER_SCREEN, type WebResult } from '../data/web/writer.js';
import { DEFAULT_MANUAL_CACHE } from '../data/web/sites.js';
import { DEFAULT_CHROMIUM } from '../data/web/browser.js';
import { InputError } from '../util/errors.js';
import { progress, type Progress } from '../util/progress.js';
import { intOption, printJson } from './common.js';

interface WebCliOptions {
  out: string;
  sites?: string[];
  heldOut?: string[];
  episodes: number;
  seed: number;
  dpr?: number;
  testDpr?: number;
  suite?: boolean;
  manualCache: string;
  chromium?: string;
  concurrency: number;
  shardEpisodes: number;
  linkScreens: number;
  json?: boolean;
  verbose?: boolean;
}

function siteList(flag: string): (v: string) => string[] {
  return (v: string) => {
    const names = [...new Set(v.split(',').map((s) => s.trim()).filter(Boolean))];
    for (const n of names) if (!ALL_SITES.includes(n)) throw new InputError(`unknown site '${n}' (known: ${ALL_SITES.join(', ')})`, flag);
    return names;
  };
}

function dprOption(flag: string): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!(n >= 0.25 && n <= 4)) throw new InputError(`expected a pixel ratio between 0.25 and 4, got '${v}'`, flag);
    return n;
  };
}

function report(opts: WebCliOptions, r: WebResult): void {
  const t = r.summary.totals;
  for (const s of r.summary.sites)
    process.stderr.write(`  ${s.site.padEnd(18)} ${s.kind.padEnd(6)} ${String(s.pages).padStart(5)} pages ${String(s.episodes).padStart(4)} episodes ${String(s.steps).padStart(5)} screens${s.heldOut ? '  (held out)' : ''}${s.links ? `  + ${s.links.tasks} named-link tasks on ${s.links.screens} screens` : ''}${r.skipped.includes(s.site) ? '  (already built)' : ''}\n`);
  process.stderr.write(
    `${opts.out}: ${t.episodes} episodes, ${t.steps} screens (${t.trainSteps} on training sites, ${t.heldOutSteps} held out) in ${r.seconds.toFixed(1)} s\n`,
  );
}

export function registerDataWeb(data: Command): void {
  data
    .command('web')
    .description(
      'render real screens in headless Chromium (Debian HTML manuals and generated Material 3 phone apps, at phone viewports) ' +
        'and write them as AITW records, with gold episodes executed in the browser (tap, scroll, search, back, toggle, type). ' +
        'Writes DIR/<site>/<site>-NNNNN.tfrecord.gz (PNG screens), DIR/<site>/split.json, DIR/<site>/pages/ and DIR/sites.json; ' +
        'with --suite also task suites (JSON Lines) and their gold actions (gold-{split}.jsonl, for `autoui run --script`) per split. Held-out sites go to test only. Same arguments give the same episodes; ' +
        'a re-run skips finished sites. Needs Debian chromium-headless-shell (or chromium); manuals that are not installed are fetched by scripts/fetch-manuals.sh.',
    )
    .requiredOption('--out <dir>', 'output directory')
    .option('--sites <list>', `comma-separated sites (default: all: ${ALL_SITES.join(',')})`, siteList('--sites'))
    .option('--held-out <list>', `sites kept for test only (default: ${DEFAULT_HELD_OUT.join(',')})`, siteList('--held-out'))
    .option('--episodes <n>', 'episodes per site', intOption('--episodes', 1), 40)
    .option('--seed <n>', 'random seed', intOption('--seed', 0), 0)
    .option('--dpr <ratio>', "pixel ratio of training sites' screenshots (default: each phone's own, 2.625 or 3; 1 captures ~2× faster)", dprOption('--dpr'))
    .option('--test-dpr <ratio>', "pixel ratio of held-out sites' screenshots (default: each phone's own)", dprOption('--test-dpr'))
    .option('--suite', 'also write task suites (suite-{train,val,test}.jsonl) with one task per episode, and their gold actions (gold-{train,val,test}.jsonl)')
    .option('--manual-cache <dir>', 'where scripts/fetch-manuals.sh unpacked manuals that are not installed', DEFAULT_MANUAL_CACHE)
    .option('--chromium <path>', `Chromium executable (default: $CHROMIUM_PATH or ${DEFAULT_CHROMIUM})`)
    .option('--concurrency <n>', 'sites rendered at once', intOption('--concurrency', 1), 2)
    .option('--shard-episodes <n>', 'episodes per TFRecord file', intOption('--shard-episodes', 1), 100)
    .option('--link-screens <n>', `held-out sites: also render this many screens for the named-link set (DIR/<site>/${LINKS_DIR}/: up to ${LINKS_PER_SCREEN} one-step "tap X" tasks on visible links per screen, test only)`, intOption('--link-screens', 0), 0)
    .option('--json', 'print the sites.json summary on stdout')
    .option('--verbose', 'log every task draw (kind, outcome, time) on stderr')
    .action(async (opts: WebCliOptions) => {
      let bar: Progress | undefined;
      let result: WebResult;
      try {
        result = await buildWebDataset({
          out: opts.out,
          sites: opts.sites,
          heldOut: opts.heldOut,
          episodes: opts.episodes,
          seed: opts.seed,
          dpr: opts.dpr,
          testDpr: opts.testDpr,
          suite: opts.suite,
          manualCache: opts.manualCache,
          chromium: opts.chromium,
          concurrency: opts.concurrency,
          shardEpisodes: opts.shardEpisodes,
          linkScreens: opts.linkScreens,
          onStart: (total) => {
            if (total > 0) bar = progress({ label: 'web', total, unit: 'episodes', quiet: opts.json });
          },
          onEpisode: () => bar?.tick(),
          onAttempt: opts.verbose
            ? (e) => process.stderr.write(`[${e.site} ${e.episode}/${e.attempt}] ${e.kind} ${e.outcome} (${Math.round(e.ms)} ms)\n`)
            : undefined,
        });
      } finally {
        bar?.stop();
      }
      if (opts.json) printJson({ ...result.summary, skipped: result.skipped, seconds: Math.round(result.seconds * 100) / 100 });
      else report(opts, result);
    });
}
