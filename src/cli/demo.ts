import type { Command } from 'commander';
import { formatReport } from '../eval/format_report.js';
import { typedLine } from '../eval/tasks/dumps.js';
import { DEMO_DEFAULTS, runDemo, type DemoOptions, type DemoResult } from '../pipeline/demo.js';
import { RECIPES } from '../train/recipes.js';
import type { TrainRecipe } from '../train/recipes.js';
import { aspectList, floatOption, intOption, printJson, subsetFractionOption } from './common.js';

/** The demo's own options as commander parses them, and the recipe changes it passes on. */
interface DemoCliOptions extends Pick<DemoOptions, 'out' | 'checkpoint' | 'episodes' | 'unseenEpisodes' | 'aspects' | 'webEpisodes' | 'linkScreens' | 'runTasks' | 'seed' | 'maxSteps'> {
  epochs?: number;
  batch?: number;
  lr?: number;
  coordBins?: number;
  dropout?: number;
  groundWeight?: number;
  referWeight?: number;
  subsetFraction?: Record<string, number>;
  json?: boolean;
}

/** The recipe fields the user changed (commander leaves the others undefined). */
function recipeChanges(o: DemoCliOptions): Partial<TrainRecipe> {
  const changes: Partial<TrainRecipe> = {
    epochs: o.epochs, batchSize: o.batch, lr: o.lr, coordBins: o.coordBins, dropoutRate: o.dropout,
    groundWeight: o.groundWeight, referWeight: o.referWeight, subsetFraction: o.subsetFraction,
  };
  return Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as Partial<TrainRecipe>;
}

export function registerDemo(program: Command): void {
  const r = RECIPES.scratch;
  program
    .command('demo')
    .description('the main job, offline: synthesise the built-in set and its unseen-apps split, render web sites in Chromium (two held out), prepare shards (held-out sites through OCR), train `tiny` with the scratch recipe, evaluate every split, and run held-out-site tasks live')
    .option('--out <dir>', 'put everything the demo makes under this directory (default: data in runs/demo, the checkpoint in checkpoints/demo)')
    .option('--checkpoint <dir>', 'checkpoint directory (default: checkpoints/demo, or <out>/checkpoints/demo with --out)')
    .option('--episodes <n>', 'synthetic episodes across the five subsets', intOption('--episodes', 10), DEMO_DEFAULTS.episodes)
    .option('--unseen-episodes <n>', 'synthetic episodes whose target app training never shows', intOption('--unseen-episodes', 3), DEMO_DEFAULTS.unseenEpisodes)
    .option('--aspects <list>', 'width ÷ height ratios of the synthetic screens, one drawn per episode at 320 px high (0.5 = 160×320 alone)', aspectList('--aspects'), DEMO_DEFAULTS.aspects)
    .option('--web-episodes <n>', 'episodes per web site rendered in Chromium (0 = the synthetic set alone)', intOption('--web-episodes', 0), DEMO_DEFAULTS.webEpisodes)
    .option('--link-screens <n>', 'screens of each held-out site rendered for the named-link set (several "tap X" tasks each; 0 = none)', intOption('--link-screens', 0), DEMO_DEFAULTS.linkScreens)
    .option('--run-tasks <n>', 'held-out-site tasks run live in Chromium at the end (0 = none)', intOption('--run-tasks', 0), DEMO_DEFAULTS.runTasks)
    .option('--seed <n>', 'seed for data, initialisation and order', intOption('--seed'), DEMO_DEFAULTS.seed)
    .option('--max-steps <n>', 'cap on optimiser steps', intOption('--max-steps', 1))
    .option('--epochs <n>', `training epochs (recipe: ${r.epochs})`, intOption('--epochs', 1))
    .option('--batch <n>', `batch size (recipe: ${r.batchSize})`, intOption('--batch', 1))
    .option('--lr <rate>', `peak learning rate (recipe: ${r.lr})`, floatOption('--lr'))
    .option('--coord-bins <q>', `coordinate grid steps per axis (recipe: ${r.coordBins})`, intOption('--coord-bins', 2))
    .option('--dropout <p>', `dropout rate (recipe: ${r.dropoutRate})`, floatOption('--dropout'))
    .option('--ground-weight <w>', `weight of the grounding loss (recipe: ${r.groundWeight}; 0 = the paper’s loss alone)`, floatOption('--ground-weight'))
    .option('--refer-weight <w>', `weight of the referring loss (recipe: ${r.referWeight}; 0 = off)`, floatOption('--refer-weight'))
    .option('--subset-fraction <list>', `share of each subset's training rows drawn per epoch (recipe: ${Object.entries(r.subsetFraction).map(([k, v]) => `${k}=${v}`).join(',')}; others all)`, subsetFractionOption('--subset-fraction'))
    .option('--json', 'end with one JSON object {checkpoint, data, metrics}')
    .action(async (o: DemoCliOptions) => {
      const { out, checkpoint, episodes, unseenEpisodes, aspects, webEpisodes, linkScreens, runTasks, seed, maxSteps } = o;
      const result = await runDemo({ out, checkpoint, episodes, unseenEpisodes, aspects, webEpisodes, linkScreens, runTasks, seed, maxSteps, recipe: recipeChanges(o), quiet: o.json });
      if (o.json) return printJson({ ...result, heldOutSites: result.heldOutSites && { ...result.heldOutSites, predictions: undefined } });
      console.log(formatDemo(result));
    });
}

const pct = (v: number | null): string => (v === null ? '-' : v.toFixed(2));

/** The demo's tables: where the model was trained, then where it was not. */
function formatDemo(r: DemoResult): string {
  const parts = ['\nSynthetic test split, action matching (AITW):\n', formatReport(r.metrics)];
  if (r.web) parts.push('\nWeb sites seen in training, their test episodes:\n', formatReport(r.web));
  parts.push('\nUnseen apps (synthetic; target apps never shown in training):\n', formatReport(r.unseenApps));
  const h = r.heldOutSites;
  if (h) {
    parts.push('\nHeld-out sites (never used in training; screens read through OCR):\n', formatReport(h.report));
    if (h.namedLinks) {
      const sites = Object.entries(h.namedLinks.bySite).map(([k, v]) => `${k} ${pct(v.acc)} % of ${v.n}`).join(', ');
      parts.push(`named visible links (one-step "tap X" on rendered screens, OCR): tap accuracy ${pct(h.namedLinks.all.acc)} % of ${h.namedLinks.all.n} (${sites})`);
    }
    parts.push(`grounding episodes, step 0 (tap the named link): ${pct(h.linkTap.acc)} % of ${h.linkTap.n}`);
    parts.push(`by task kind (step accuracy): ${Object.entries(h.byKind).map(([k, s]) => `${k} ${pct(s.acc)} (${s.n})`).join(' · ')}`);
  }
  const c = r.closedLoop;
  if (c) {
    parts.push(`\nLive in Chromium, held-out sites: ${c.tasks} tasks, success ${pct(c.success_rate * 100)} %, reached ${pct(c.reached_rate * 100)} %, mean ${c.mean_steps.toFixed(1)} steps; offline step accuracy of the same tasks ${pct(c.offline_step_acc)} %`);
    for (const [k, e] of Object.entries(c.byKind)) parts.push(`  ${k.padEnd(9)} ${String(e.tasks).padStart(3)} tasks · success ${pct(e.success)} % · offline: steps ${pct(e.offline_step_acc)} %, every step ${pct(e.offline_all_steps)} %`);
    parts.push(`  typed text: ${typedLine(c.typed_text)}`);
    parts.push(`report: ${c.report}`);
  }
  parts.push(`\ncheckpoint: ${r.checkpoint}\nshards:     ${r.data}`);
  return parts.join('\n');
}
