import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { formatReport } from '../eval/format_report.js';
import { scoreItems, type ScoredItem } from '../eval/metrics.js';
import { parseScoreFile } from '../eval/score_input.js';
import { writeFileAtomic } from '../util/atomic.js';
import { InputError } from '../util/errors.js';
import { progress } from '../util/progress.js';
import { printJson } from './common.js';

export { formatReport };

interface ScoreOptions {
  details?: string;
  json?: boolean;
}

function* ticking(items: ScoredItem[], onItem: () => void): Generator<ScoredItem> {
  for (const item of items) {
    yield item;
    onItem();
  }
}

/** `autoui score FILE.jsonl [--details OUT.jsonl] [--json]` */
export function registerScore(parent: Command): void {
  parent
    .command('score')
    .description('score predicted actions against gold ones with AITW action matching and Auto-UI accuracies')
    .argument(
      '<file>',
      'JSONL, one step per line: {"id", "pred": {action_type, touch_yx, lift_yx, typed_text} | null, "gold": {...}, "annotations": [[y,x,h,w], ...], "subset"?}',
    )
    .option('--details <out>', 'also write {"id","match"} for every input line to this JSONL file')
    .option('--json', 'print the report object as JSON on stdout instead of a table')
    .addHelpText(
      'after',
      `
Points are [y, x] normalised to the screen; pred null marks an unparseable generation (a miss).
Annotations are the gold screen's UI boxes; a step with none never matches (the reference raises there
and Auto-UI counts a miss). With "subset" on the lines, the overall row is the mean over subsets.
`,
    )
    .action(async (file: string, opts: ScoreOptions) => {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new InputError(`cannot read input (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, file);
      }
      const items = parseScoreFile(text, file);
      if (items.length === 0) throw new InputError('no records to score', file);
      const bar = progress({ label: 'score', total: items.length, unit: 'steps', quiet: opts.json === true || items.length < 100_000 });
      const { report, details } = scoreItems(ticking(items, () => bar.tick()));
      bar.stop();
      const bare = items.filter((it) => it.annotations.length === 0).length;
      if (bare > 0) {
        process.stderr.write(`autoui score: note: ${bare} step(s) have no UI annotations and count as misses (as in Auto-UI)\n`);
      }
      if (opts.details) {
        await writeFileAtomic(opts.details, details.map((d) => JSON.stringify(d)).join('\n') + '\n');
      }
      if (opts.json) printJson(report);
      else process.stdout.write(formatReport(report));
    });
}
