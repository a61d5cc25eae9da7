import { Option, type Command } from 'commander';
import { APP_SPLITS, UNSEEN_APP_IDS, type AppSplit } from '../data/synth/apps.js';
import { subsetsFor } from '../data/synth/episode.js';
import { synthesize } from '../data/synth/writer.js';
import { SUBSETS, type Subset } from '../data/types.js';
import { InputError } from '../util/errors.js';
import { progress, type Progress } from '../util/progress.js';
import { aspectList, intOption, printJson } from './common.js';

interface SynthCliOptions {
  out: string;
  episodes: number;
  seed: number;
  /** Absent: every subset the app split can hold. */
  subsets?: Subset[];
  apps: AppSplit;
  width: number;
  height: number;
  aspects?: number[];
  shardEpisodes: number;
  force?: boolean;
  json?: boolean;
}

function subsetList(v: string): Subset[] {
  const names = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new InputError('expected a comma-separated list of subsets', '--subsets');
  for (const n of names)
    if (!(SUBSETS as readonly string[]).includes(n)) throw new InputError(`unknown subset '${n}' (known: ${SUBSETS.join(', ')})`, '--subsets');
  return [...new Set(names)] as Subset[];
}

export function registerDataSynth(data: Command): void {
  data
    .command('synth')
    .description(
      'generate the built-in synthetic AITW set: phone screens rendered from a simulated UI, gold actions from oracle policies.\n' +
        'Writes DIR/<subset>/<subset>-NNNNN.tfrecord.gz (GZIP TFRecords of tf.train.Example, AITW features, raw RGB screens),\n' +
        'DIR/<subset>/split.json (~80/10/10 train/val/test episode ids) and DIR/synth.json (arguments and counts).\n' +
        `--apps unseen makes a held-out test set: every goal names one of ${UNSEEN_APP_IDS.length} apps that --apps seen sets (the default) never show.\n` +
        'Same arguments → byte-identical files; re-running over a complete DIR is a no-op.',
    )
    .requiredOption('--out <dir>', 'output directory')
    .option('--episodes <n>', 'total episodes, split evenly over the subsets', intOption('--episodes', 1), 1000)
    .option('--seed <n>', 'random seed', intOption('--seed', 0), 0)
    .option('--subsets <list>', `comma-separated subsets (default: ${SUBSETS.join(',')}; with --apps unseen: ${subsetsFor('unseen').join(',')})`, subsetList)
    .addOption(
      new Option('--apps <split>', "seen: no held-out app appears anywhere; unseen: every goal's target app is held out, all episodes in the test split")
        .choices(APP_SPLITS)
        .default('seen'),
    )
    .option('--width <px>', 'screen width in pixels', intOption('--width', 80), 160)
    .option('--height <px>', 'screen height in pixels', intOption('--height', 160), 320)
    .option('--aspects <list>', 'comma-separated width ÷ height ratios; each episode draws one and keeps --height (e.g. 0.45,0.5,0.5625; default: --width × --height alone)', aspectList('--aspects'))
    .option('--shard-episodes <n>', 'episodes per TFRecord file', intOption('--shard-episodes', 1), 200)
    .option('--force', 'replace a set in DIR made with other arguments')
    .option('--json', 'print the synth.json summary on stdout')
    .action(async (opts: SynthCliOptions) => {
      if (opts.height < opts.width) throw new InputError(`a phone screen is taller than wide (got ${opts.width}×${opts.height})`, '--height');
      let bar: Progress | undefined;
      let result;
      try {
        result = await synthesize({
          out: opts.out,
          episodes: opts.episodes,
          seed: opts.seed,
          subsets: opts.subsets ?? subsetsFor(opts.apps),
          apps: opts.apps,
          size: { width: opts.width, height: opts.height },
          aspects: opts.aspects,
          shardEpisodes: opts.shardEpisodes,
          force: opts.force,
          onStart: (total) => {
            bar = progress({ label: 'synth', total, unit: 'episodes', quiet: opts.json });
          },
          onEpisode: () => bar?.tick(),
        });
      } finally {
        bar?.stop();
      }
      if (opts.json) {
        printJson({ ...result.summary, unchanged: result.unchanged, seconds: Math.round(result.seconds * 100) / 100 });
        return;
      }
      const t = result.summary.totals;
      if (result.unchanged) process.stderr.write(`${opts.out} already holds this synthetic set (${t.episodes} episodes, ${t.steps} steps); nothing to do\n`);
      else
        process.stderr.write(
          `wrote ${t.episodes} episodes / ${t.steps} steps to ${opts.out} in ${result.seconds.toFixed(1)} s (${(t.episodes / result.seconds).toFixed(1)} episodes/s, ${(t.steps / result.seconds).toFixed(0)} screens/s)\n`,
        );
    });
}
