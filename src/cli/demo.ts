import type { Command } from 'commander';
import { formatReport } from '../eval/format_report.js';
import { DEMO_DEFAULTS, runDemo } from '../pipeline/demo.js';
import { RECIPES } from '../train/recipes.js';
import type { TrainRecipe } from '../train/recipes.js';
import { floatOption, intOption, printJson, subsetFractionOption } from './common.js';

interface DemoCliOptions {
  out?: string;
  checkpoint?: string;
  episodes: number;
  seed: number;
  maxSteps?: number;
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
    .description('the main job, offline: synthesise the built-in set, prepare shards, train `tiny` with the scratch recipe, evaluate on the test split')
    .option('--out <dir>', 'put everything the demo makes under this directory (default: data in runs/demo, the checkpoint in checkpoints/demo)')
    .option('--checkpoint <dir>', 'checkpoint directory (default: checkpoints/demo, or <out>/checkpoints/demo with --out)')
    .option('--episodes <n>', 'synthetic episodes across the five subsets', intOption('--episodes', 10), DEMO_DEFAULTS.episodes)
    .option('--seed <n>', 'seed for data, initialisation and order', intOption('--seed'), DEMO_DEFAULTS.seed)
    .option('--max-steps <n>', 'cap on optimiser steps', intOption('--max-steps', 1))
    .option('--epochs <n>', `training epochs (recipe: ${r.epochs}; 10 keeps the run in budget on a slow hour: README, Results)`, intOption('--epochs', 1))
    .option('--batch <n>', `batch size (recipe: ${r.batchSize})`, intOption('--batch', 1))
    .option('--lr <rate>', `peak learning rate (recipe: ${r.lr})`, floatOption('--lr'))
    .option('--coord-bins <q>', `coordinate grid steps per axis (recipe: ${r.coordBins})`, intOption('--coord-bins', 2))
    .option('--dropout <p>', `dropout rate (recipe: ${r.dropoutRate})`, floatOption('--dropout'))
    .option('--ground-weight <w>', `weight of the grounding loss (recipe: ${r.groundWeight}; 0 = the paper’s loss alone)`, floatOption('--ground-weight'))
    .option('--refer-weight <w>', `weight of the referring loss (recipe: ${r.referWeight}; 0 = off)`, floatOption('--refer-weight'))
    .option('--subset-fraction <list>', `share of each subset's training rows drawn per epoch (recipe: ${Object.entries(r.subsetFraction).map(([k, v]) => `${k}=${v}`).join(',')}; others all)`, subsetFractionOption('--subset-fraction'))
    .option('--json', 'end with one JSON object {checkpoint, data, metrics}')
    .action(async (o: DemoCliOptions) => {
      const result = await runDemo({ out: o.out, checkpoint: o.checkpoint, episodes: o.episodes, seed: o.seed, maxSteps: o.maxSteps, recipe: recipeChanges(o), quiet: o.json });
      if (o.json) return printJson(result);
      console.log('\nTest split, action matching (AITW), built-in synthetic set:\n');
      console.log(formatReport(result.metrics));
      console.log(`checkpoint: ${result.checkpoint}\nshards:     ${result.data}`);
    });
}
