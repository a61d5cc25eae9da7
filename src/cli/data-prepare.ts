import { Option, type Command } from 'commander';
import { DEFAULT_BATCH, DEFAULT_ROWS_PER_SHARD, prepareFromFiles, type PrepareProgress, type PrepareSummary } from '../data/prepare.js';
import { mergeWorkerOutputs, parseWorkerSlot, workerTag, type MergeSummary, type WorkerSlot } from '../data/workers.js';
import { ENCODER_SPECS } from '../screen/vision/index.js';
import { progress, type Progress } from '../util/progress.js';
import { intOption, printJson } from './common.js';

interface PrepareOpts {
  input: string[];
  splits: string;
  subset: string;
  out: string;
  encoder: string;
  screenText: 'annotations' | 'ocr' | 'none';
  rowsPerShard: number;
  batch: number;
  skipCorrupt?: boolean;
  overwrite?: boolean;
  worker?: WorkerSlot;
  json?: boolean;
}

export function registerDataPrepare(data: Command): void {
  data
    .command('prepare')
    .description(
      'encode AITW screens with a frozen vision encoder into Arrow shards for training and evaluation: ' +
        'OUT/<subset>/<split>-NNNNN.arrow plus OUT/manifest.json. Re-running resumes: finished shards are verified (sha256) and kept.',
    )
    .requiredOption('--input <paths...>', 'TFRecord files, directories or glob patterns (read in sorted order)')
    .requiredOption('--splits <file>', 'split file {"train": [ids], "val": [ids], "test": [ids]}')
    .requiredOption('--subset <name>', 'subset name, e.g. general; several subsets can share one --out')
    .requiredOption('--out <dir>', 'shard directory')
    .option('--encoder <spec>', `vision encoder: ${ENCODER_SPECS}`, 'builtin')
    .addOption(
      new Option('--screen-text <source>', "screen texts stored with each screen, for models that read them: the records' UI annotations (AITW's OCR'd texts, a web page's DOM texts), OCR of the pixels (PP-OCRv4), or none")
        .choices(['annotations', 'ocr', 'none'])
        .default('annotations'),
    )
    .option('--rows-per-shard <n>', 'screens per shard file', intOption('--rows-per-shard', 1), DEFAULT_ROWS_PER_SHARD)
    .option('--batch <n>', 'screens per encoder call', intOption('--batch', 1), DEFAULT_BATCH)
    .option('--skip-corrupt', 'skip (and count) corrupt records and episodes instead of stopping')
    .option('--overwrite', 'rebuild the subset if it was prepared from other inputs or settings')
    .option(
      '--worker <i/N>',
      "process only worker i's share (0-based) of N: a contiguous block of the sorted input files. " +
        "Give each worker its own --out, then join them with 'autoui data merge'",
      (v: string) => parseWorkerSlot(v),
    )
    .option('--json', 'print a JSON summary on stdout (no progress bar)')
    .action(async (opts: PrepareOpts) => {
      // Created on the first report, so failures before any reading print no empty bar.
      let bar: Progress | undefined;
      let shown = 0;
      const onProgress = (p: PrepareProgress & { estimatedTotal: number }): void => {
        bar ??= progress({ label: `prepare ${opts.subset}${opts.worker ? ` ${workerTag(opts.worker)}` : ''}`, total: p.estimatedTotal, unit: 'screens', quiet: opts.json });
        bar.setTotal(p.estimatedTotal);
        bar.tick(p.screens - shown, { encoded: String(p.encoded), reused: String(p.reused) });
        shown = p.screens;
      };
      let summary: PrepareSummary;
      try {
        summary = await prepareFromFiles({
          inputs: opts.input,
          splits: opts.splits,
          subset: opts.subset,
          out: opts.out,
          encoder: opts.encoder,
          screenText: opts.screenText,
          rowsPerShard: opts.rowsPerShard,
          batch: opts.batch,
          skipCorrupt: opts.skipCorrupt,
          overwrite: opts.overwrite,
          worker: opts.worker,
          onProgress,
        });
      } finally {
        bar?.stop();
      }
      if (opts.json) return printJson(summary);
      printSummary(summary);
    });
  registerDataMerge(data);
}

/** `autoui data merge`: one manifest over the --out directories of `data prepare --worker` runs. */
export function registerDataMerge(data: Command): void {
  data
    .command('merge')
    .description(
      "write OUT/manifest.json listing the shards of several 'data prepare --worker i/N' outputs (nothing is copied: " +
        'keep the worker directories where they are, ideally inside OUT). Every worker of a subset must be present and finished.',
    )
    .requiredOption('--out <dir>', 'the merged shard directory (train and eval read this)')
    .argument('<parts...>', "the workers' --out directories")
    .option('--json', 'print a JSON summary on stdout')
    .action(async (parts: string[], opts: { out: string; json?: boolean }) => {
      const summary: MergeSummary = await mergeWorkerOutputs(opts.out, parts);
      if (opts.json) return printJson(summary);
      console.log(`merged ${summary.parts} worker outputs → ${summary.out}/manifest.json`);
      for (const [name, s] of Object.entries(summary.subsets))
        console.log(`  ${name.padEnd(12)} ${String(s.workers).padStart(4)} workers ${String(s.shards).padStart(7)} shards ${String(s.screens).padStart(10)} screens`);
    });
}

function printSummary(s: PrepareSummary): void {
  const total = s.screens.train + s.screens.val + s.screens.test;
  if (s.upToDate) console.log(`${s.out}/${s.subset}: already complete (${s.shards.total} shards verified), nothing to do`);
  console.log(`subset ${s.subset} → ${s.out} (encoder ${s.encoder})`);
  for (const split of ['train', 'val', 'test'] as const)
    console.log(`  ${split.padEnd(5)} ${String(s.episodes[split]).padStart(8)} episodes ${String(s.screens[split]).padStart(10)} screens`);
  console.log(`  shards: ${s.shards.total} (${s.shards.written} written, ${s.shards.reused} kept from an earlier run)`);
  console.log(`  screens: ${total} (${s.encoded} encoded, ${s.reused} in kept shards)`);
  if (s.unassigned.episodes > 0)
    console.log(
      `  not in the split file: ${s.unassigned.episodes} episodes, ${s.unassigned.screens} screens (not written), e.g. ${s.unassigned.examples.slice(0, 3).join(', ')}`,
    );
  if (s.records.skipped > 0) console.log(`  corrupt records skipped: ${s.records.skipped}`);
  if (!s.upToDate) console.log(`  ${s.seconds.toFixed(1)} s, ${s.screensPerSecond.toFixed(1)} screens/s`);
}
