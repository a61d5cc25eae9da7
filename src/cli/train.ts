import type { Command } from 'commander';
import { isPresetName, PRESETS } from '../model/config.js';
import { DEFAULT_TRAIN, train, type TrainOptions } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import { floatOption, intOption, printJson, subsetFractionOption } from './common.js';
import { formatReport } from '../eval/format_report.js';

/** The trainer's options that the CLI takes under the same names and meanings. */
type SharedTrainOptions = Pick<
  TrainOptions,
  'data' | 'out' | 'init' | 'epochs' | 'lr' | 'warmupRatio' | 'weightDecay' | 'clipNorm' | 'groundWeight' | 'referWeight' | 'referPerRow' | 'maxSteps' | 'seed' | 'valRows' | 'saveEvery'
>;

export interface TrainCliOptions extends SharedTrainOptions {
  config: string;
  batch: number;
  resume?: boolean;
  subsets?: string;
  googleAppsFraction: number;
  subsetFraction?: Record<string, number>;
  dropout?: number;
  coordBins?: number;
  json?: boolean;
}

/** Turns the CLI's flat options into the trainer's, checking names against what exists. */
export function trainOptionsFrom(o: TrainCliOptions): TrainOptions {
  const { config, batch, resume, subsets, googleAppsFraction, subsetFraction, dropout, coordBins, json, ...shared } = o;
  if (!isPresetName(config)) throw new InputError(`unknown config '${config}' (one of ${Object.keys(PRESETS).join(', ')})`, '--config');
  return {
    ...DEFAULT_TRAIN,
    ...shared,
    preset: config,
    batchSize: batch,
    resume: resume ?? false,
    subsets: subsets?.split(',').map((s) => s.trim()).filter(Boolean),
    subsetFraction: { google_apps: googleAppsFraction, ...subsetFraction },
    modelOverrides: dropout === undefined ? undefined : { dropoutRate: dropout },
    codec: coordBins === undefined ? undefined : { coordBins },
    quiet: json,
  };
}

export function addTrainOptions(cmd: Command): Command {
  const d = DEFAULT_TRAIN;
  return cmd
    .option('--config <name>', `model size: ${Object.keys(PRESETS).join(' | ')}`, d.preset)
    .option('--init <dir>', 'start from a Hugging Face T5 / FLAN-T5 / FLAN-Alpaca folder (config.json, model.safetensors, tokenizer); overrides --config')
    .option('--epochs <n>', 'passes over the training split', intOption('--epochs', 1), d.epochs)
    .option('--lr <rate>', 'peak learning rate (AdamW)', floatOption('--lr'), d.lr)
    .option('--batch <n>', 'examples per optimiser step', intOption('--batch', 1), d.batchSize)
    .option('--warmup-ratio <r>', 'share of steps spent warming the learning rate up', floatOption('--warmup-ratio'), d.warmupRatio)
    .option('--weight-decay <w>', 'decoupled weight decay', floatOption('--weight-decay'), d.weightDecay)
    .option('--clip-norm <c>', 'clip the global gradient norm (0 = off)', floatOption('--clip-norm'), d.clipNorm)
    .option('--ground-weight <w>', 'weight of the grounding loss that points the screen attention at gold taps (0 = the paper’s loss alone; README, Results)', floatOption('--ground-weight'), d.groundWeight)
    .option('--refer-weight <w>', 'weight of the referring loss that points the screen attention at each annotated text of the screen (0 = off; README, Results)', floatOption('--refer-weight'), d.referWeight)
    .option('--refer-per-row <k>', 'referring phrases drawn per screen and step', intOption('--refer-per-row', 1), d.referPerRow)
    .option('--max-steps <n>', 'stop after this many optimiser steps in total', intOption('--max-steps', 1))
    .option('--seed <n>', 'seed for initialisation, data order and dropout', intOption('--seed'), d.seed)
    .option('--subsets <list>', 'comma-separated subsets to train on (default: all in the shards)')
    .option('--google-apps-fraction <f>', 'share of GoogleApps rows drawn per epoch (Auto-UI: 0.1)', floatOption('--google-apps-fraction'), 0.1)
    .option('--subset-fraction <list>', 'shares of subsets drawn per epoch, e.g. web_shopping=0.6,install=0.7 (default: all rows; a google_apps entry overrides --google-apps-fraction)', subsetFractionOption('--subset-fraction'))
    .option('--val-rows <n>', 'validation screens scored after each epoch (0 = none)', intOption('--val-rows'), d.valRows)
    .option('--save-every <n>', 'also save last/ every n steps (0 = per epoch only)', intOption('--save-every'), d.saveEvery)
    .option('--dropout <p>', 'dropout rate (default: the config’s)', floatOption('--dropout'))
    .option('--coord-bins <q>', 'coordinate grid steps per axis for the action codec (default 100: 0.01 resolution)', intOption('--coord-bins', 2));
}

export function registerTrain(program: Command): void {
  addTrainOptions(
    program
      .command('train')
      .description('train Auto-UI on prepared shards; keeps last/ (resumable) and best/ (by validation action matching)')
      .requiredOption('--data <dir>', 'shard directory from `autoui data prepare`')
      .option('--out <dir>', 'checkpoint directory', 'checkpoints/autoui')
      .option('--resume', 'continue a killed run from <out>/last exactly (weights, optimiser, data order)')
      .option('--json', 'print one JSON summary on stdout'),
  ).action(async (o: TrainCliOptions) => {
    const r = await train(trainOptionsFrom(o));
    const summary = { checkpoint: r.checkpoint, last: r.last, steps: r.state.globalStep, epochs: r.state.epoch, history: r.state.history, backend: r.backend.backend, val: r.val };
    if (o.json) return printJson(summary);
    console.log(`best checkpoint: ${r.checkpoint}\nlast checkpoint: ${r.last} (step ${r.state.globalStep})`);
    if (r.val) console.log('\nvalidation (last epoch):\n' + formatReport(r.val));
  });
}
