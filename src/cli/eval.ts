import { Option, type Command } from 'commander';
import { writeFileAtomic } from '../util/atomic.js';
import { evaluateCheckpoint } from '../eval/run.js';
import { formatReport } from '../eval/format_report.js';
import type { Prediction } from '../eval/evaluate.js';
import type { SplitName } from '../data/types.js';
import { InputError } from '../util/errors.js';
import { checkpointDirs, ensembleOption, printJson, tapFromOption, textBeamsOption, textStartOption } from './common.js';
import type { TapSource } from '../model/pointer.js';
import type { BlindMode } from '../model/batch.js';

/** One line per prediction in `autoui score`'s input format (plus the plan and any decode error). */
export function predictionsJsonl(preds: readonly Prediction[]): string {
  return preds.map((p) => JSON.stringify({ id: p.id, subset: p.subset, pred: p.pred, gold: p.gold, annotations: p.annotations, plan: p.plan, ...(p.error ? { error: p.error } : {}) })).join('\n') + '\n';
}

export function parseSplit(v: string): SplitName {
  if (v !== 'train' && v !== 'val' && v !== 'test') throw new InputError(`expected train, val or test, got '${v}'`, '--split');
  return v;
}

export function registerEval(program: Command): void {
  program
    .command('eval')
    .description('greedy-decode a split and report AITW action matching per subset and overall')
    .requiredOption('--checkpoint <dir>', 'checkpoint directory (a training --out resolves to its best/)')
    .requiredOption('--data <dir>', 'shard directory from `autoui data prepare`')
    .option('--split <name>', 'train | val | test', parseSplit, 'test' as SplitName)
    .option('--subset <list>', 'comma-separated subsets (default: all)')
    .addOption(
      new Option('--blind [what]', 'ablation, how much the model uses the screen: take away the screen (pixel features and text items) or the pixels alone')
        .choices(['screen', 'pixels'])
        .preset('screen'),
    )
    .option('--batch <n>', 'screens decoded together', (v) => Number(v), 64)
    .option('--out <file>', 'write predictions as JSONL in `autoui score` input format')
    .option('--json', 'print the metrics as one JSON object')
    .addOption(tapFromOption())
    .addOption(textBeamsOption())
    .addOption(textStartOption())
    .addOption(ensembleOption())
    .action(async (o: { checkpoint: string; ensemble?: string[]; data: string; split: SplitName; subset?: string; blind?: BlindMode; batch: number; out?: string; json?: boolean; tapFrom: TapSource | 'auto'; textBeams: number; textStart: boolean }) => {
      const { report, predictions } = await evaluateCheckpoint({
        checkpoint: checkpointDirs(o),
        data: o.data,
        split: o.split,
        subsets: o.subset?.split(',').map((s) => s.trim()).filter(Boolean),
        blind: o.blind,
        batchSize: o.batch,
        quiet: o.json,
        tapFrom: o.tapFrom,
        textBeams: o.textBeams,
        textStart: o.textStart,
      });
      if (o.out) await writeFileAtomic(o.out, predictionsJsonl(predictions));
      if (o.json) return printJson(report);
      console.log(formatReport(report));
    });
}
