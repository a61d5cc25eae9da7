import type { Command } from 'commander';
import { renderEpisodes } from '../eval/viz.js';
import { intOption, printJson } from './common.js';

interface VizCliOptions {
  out: string;
  predictions?: string;
  checkpoint?: string;
  encoder?: string;
  episode?: string[];
  maxEpisodes?: number;
  width: number;
  json?: boolean;
}

/** `autoui viz INPUTS... --out DIR [--predictions FILE | --checkpoint DIR] [--episode ID]...` */
export function registerViz(parent: Command): void {
  parent
    .command('viz')
    .description('render AITW episodes as PNG frames with the gold (green) and predicted (red) action drawn on each screenshot')
    .argument('<inputs...>', 'AITW TFRecord files, directories or globs')
    .requiredOption('--out <dir>', 'where frames go: <dir>/<episode_id>/step_NNN.png')
    .option('--predictions <file>', 'eval predictions JSONL: {"id": "<episode_id>/<step_id>", "pred", "gold", "annotations", "plan"?} per line')
    .option('--checkpoint <dir>', 'predict each step with this checkpoint instead (history = the gold previous actions)')
    .option('--encoder <spec>', "vision encoder for --checkpoint, when the checkpoint's is not built in")
    .option('--episode <id>', 'render this episode (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--max-episodes <n>', 'render at most this many episodes (default: 1, or the number of --episode)', intOption('--max-episodes', 1))
    .option('--width <px>', 'frame width (the screenshot is scaled, aspect kept)', intOption('--width', 64), 540)
    .option('--json', 'print {"episodes", "frames": [{file, episodeId, stepId, gold, pred, match}]} on stdout')
    .addHelpText(
      'after',
      `
Taps are rings, scrolls arrows, typed text and other actions captions. With --predictions and no --episode,
episodes that have predictions are chosen. The header shows the goal, step, both action types, match/miss
(AITW action matching) and the predicted plan.`,
    )
    .action(async (inputs: string[], opts: VizCliOptions) => {
      const { frames, episodes } = await renderEpisodes({
        inputs,
        out: opts.out,
        predictions: opts.predictions,
        checkpoint: opts.checkpoint,
        encoder: opts.encoder,
        episodes: opts.episode,
        maxEpisodes: opts.maxEpisodes,
        width: opts.width,
        quiet: opts.json,
      });
      if (opts.json) {
        printJson({ episodes, frames });
        return;
      }
      const matched = frames.filter((f) => f.match === true).length;
      const predicted = frames.filter((f) => f.match !== null).length;
      process.stdout.write(`wrote ${frames.length} frame(s) of ${episodes.length} episode(s) under ${opts.out}${predicted ? `; ${matched}/${predicted} predicted steps match` : ''}\n`);
    });
}
