import { Option, type Command } from 'commander';
import { formatReport } from '../eval/format_report.js';
import { isPresetName, PRESETS } from '../model/config.js';
import { train } from '../pipeline/train.js';
import { defaultRecipe, describeRecipes, RECIPE_NAMES, type RecipeName, type TrainRecipe } from '../train/recipes.js';
import { recipeOptions, type TrainOptions } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import { floatOption, intOption, printJson, subsetFractionOption } from './common.js';

/** Flags that override single recipe fields: the CLI name, the recipe field, the parser. */
export const RECIPE_FLAGS = {
  epochs: ['--epochs <n>', 'epochs', 'passes over the training split', intOption('--epochs', 1)],
  lr: ['--lr <rate>', 'lr', 'peak learning rate (AdamW)', floatOption('--lr', 0)],
  batch: ['--batch <n>', 'batchSize', 'examples per optimiser step', intOption('--batch', 1)],
  warmupRatio: ['--warmup-ratio <r>', 'warmupRatio', 'share of steps spent warming the learning rate up', floatOption('--warmup-ratio', 0)],
  weightDecay: ['--weight-decay <w>', 'weightDecay', 'decoupled weight decay', floatOption('--weight-decay', 0)],
  clipNorm: ['--clip-norm <c>', 'clipNorm', 'clip the global gradient norm (0 = off)', floatOption('--clip-norm', 0)],
  dropout: ['--dropout <p>', 'dropoutRate', 'dropout rate', floatOption('--dropout', 0)],
  coordBins: ['--coord-bins <q>', 'coordBins', 'coordinate grid steps per axis of the action codec', intOption('--coord-bins', 2)],
  groundWeight: ['--ground-weight <w>', 'groundWeight', 'weight of the grounding loss that points the screen attention at gold taps (0 = the paper’s loss alone)', floatOption('--ground-weight', 0)],
  referWeight: ['--refer-weight <w>', 'referWeight', 'weight of the referring loss that points the screen attention at each annotated text (0 = off)', floatOption('--refer-weight', 0)],
  referPerRow: ['--refer-per-row <k>', 'referPerRow', 'referring phrases drawn per screen and step', intOption('--refer-per-row', 1)],
  pointerWeight: ['--pointer-weight <w>', 'pointerWeight', "weight of the decoder tap pointer's loss (0 = no pointer: taps from the screen attention)", floatOption('--pointer-weight', 0)],
  pointerRadius: ['--pointer-radius <r>', 'pointerRadius', 'the tap pointer learns to pick the patch under the gold tap and those within r patches of it (0–1)', floatOption('--pointer-radius', 0)],
  offsetWeight: ['--offset-weight <w>', 'offsetWeight', "weight of the tap offset's loss: where in the pointed patch a tap lands (0 = the patch's centre)", floatOption('--offset-weight', 0)],
  copyPositionWeight: ['--copy-position-weight <w>', 'copyPositionWeight', "weight of the copy pointer's position loss: where in the goal each typed id comes from (0 = the copy mixture's loss alone)", floatOption('--copy-position-weight', 0)],
  relabel: ['--relabel <rate>', 'relabelRate', 'share of training rows swapped, step by step, for a "tap X" task naming a text of their own screen (0 = off)', floatOption('--relabel', 0)],
  retype: ['--retype <rate>', 'retypeRate', 'share of TYPE rows whose typed words are swapped, step by step, for a made-up phrase in the goal and the text (0 = off)', floatOption('--retype', 0)],
  requery: ['--requery <rate>', 'requeryRate', 'share of TYPE rows whose typed words stand twice in the goal (a search for a word of the name it opens) swapped, step by step, for another later word of the goal in the query\'s place (0 = off)', floatOption('--requery', 0)],
  rename: ['--rename <rate>', 'renameRate', 'share of TYPE rows of searches for a word of the name they open swapped, step by step, for a search for a word of another name from the web screens (0 = off)', floatOption('--rename', 0)],
  searchOpen: ['--search-open <rate>', 'searchOpenRate', 'share of the steps of recorded searches that typed Q and tapped a result R swapped, step by step, for "search for Q and open R": the tap, and "task complete" on the page it opened (0 = off)', floatOption('--search-open', 0)],
  resultsOpen: ['--results-open <rate>', 'resultsOpenRate', 'share of the steps that end a recorded search on its results ("task complete" after typing Q) swapped, step by step, for "search for Q and open R", R another item of the results, answered with a tap on R (0 = off)', floatOption('--results-open', 0)],
  backOut: ['--back-out <rate>', 'backOutRate', 'share of the steps on a screen that a tap opened swapped, step by step, for "open R", R another item of the screen before the tap, answered with PRESS_BACK (0 = off)', floatOption('--back-out', 0)],
  homeFirst: ['--home-first <rate>', 'homeFirstRate', 'share of the web rows\' first steps on a page other than their site\'s entry page swapped, step by step, for "go to the N page", N a page name of the site the screen does not show, answered PRESS_HOME (0 = off)', floatOption('--home-first', 0)],
  textItems: ['--text-items <n>', 'textItems', 'most screen text items the model reads per screen (the first in reading order)', intOption('--text-items', 1)],
  vocabWords: ['--vocab-words <n>', 'vocabWords', 'most words in the tokenizer built from the training goals; the rest are spelled in bytes', intOption('--vocab-words', 0)],
  valRows: ['--val-rows <n>', 'valRows', 'validation screens scored at each validation (0 = none)', intOption('--val-rows')],
  valEpochs: ['--val-epochs <n>', 'valEpochs', 'validate after the last n epochs only; best/ is the best of them', intOption('--val-epochs', 1)],
} as const satisfies Record<string, readonly [string, keyof TrainRecipe, string, (v: string) => number]>;
type RecipeFlag = keyof typeof RECIPE_FLAGS;

export type TrainCliOptions = Partial<Record<RecipeFlag, number>> & {
  data: string;
  out: string;
  config: string;
  recipe?: RecipeName;
  init?: string;
  maxSteps?: number;
  seed: number;
  saveEvery: number;
  resume?: boolean;
  subsets?: string;
  googleAppsFraction?: number;
  subsetFraction?: Record<string, number>;
  json?: boolean;
  /** false with --no-text-match. */
  textMatch?: boolean;
  /** false with --no-copy-pointer. */
  copyPointer?: boolean;
  /** true with --case-tokens. */
  caseTokens?: boolean;
  /** true with a bare --copy-context, else its value; false with --no-copy-context. */
  copyContext?: boolean | string;
  /** true with --copy-stop-context, false with --no-copy-stop-context. */
  copyStopContext?: boolean;
};

/** The trainer's options: the recipe (by --recipe, else by --init), then every flag the user gave. */
export function trainOptionsFrom(o: TrainCliOptions): TrainOptions {
  if (!isPresetName(o.config)) throw new InputError(`unknown config '${o.config}' (one of ${Object.keys(PRESETS).join(', ')})`, '--config');
  const base = recipeOptions(o.recipe ?? defaultRecipe(o.init), o.config);
  const flags: Partial<TrainRecipe> = {};
  for (const [flag, [, field]] of Object.entries(RECIPE_FLAGS) as [RecipeFlag, (typeof RECIPE_FLAGS)[RecipeFlag]][]) {
    if (o[flag] !== undefined) flags[field] = o[flag];
  }
  const googleApps: Record<string, number> = o.googleAppsFraction === undefined ? {} : { google_apps: o.googleAppsFraction };
  const copyContext = o.copyContext === undefined ? base.copyContext : o.copyContext !== false && copyContextOption(o.copyContext);
  if (o.copyStopContext && !copyContext) throw new InputError('needs --copy-context: the stop reads the context the keys hold', '--copy-stop-context');
  // Without the keys' context the stop has none to read, whatever the recipe says.
  const copyStopContext = copyContext !== false && (o.copyStopContext ?? base.copyStopContext);
  return {
    ...base,
    ...flags,
    ...(o.textMatch === false ? { textMatch: false } : {}),
    ...(o.copyPointer === false ? { copyPointer: false } : {}),
    ...(o.caseTokens ? { caseTokens: true } : {}),
    copyContext,
    copyStopContext,
    data: o.data,
    out: o.out,
    init: o.init,
    maxSteps: o.maxSteps,
    seed: o.seed,
    saveEvery: o.saveEvery,
    resume: o.resume ?? false,
    subsets: o.subsets?.split(',').map((s) => s.trim()).filter(Boolean),
    subsetFraction: { ...base.subsetFraction, ...googleApps, ...o.subsetFraction },
    quiet: o.json,
  };
}

function copyContextOption(v: true | string): true | 'states' {
  if (v === true || v === 'embeddings') return true;
  if (v === 'states') return 'states';
  throw new InputError(`unknown value '${v}' (embeddings or states)`, '--copy-context');
}

export function addTrainOptions(cmd: Command): Command {
  const d = recipeOptions('scratch');
  cmd
    .option('--config <name>', `model size: ${Object.keys(PRESETS).join(' | ')}`, 'tiny')
    .option('--init <dir>', 'start from a Hugging Face T5 / FLAN-T5 / FLAN-Alpaca folder (config.json, model.safetensors, tokenizer); overrides --config and selects the pretrained recipe')
    .addOption(new Option('--recipe <name>', `starting hyper-parameters (default: pretrained with --init, else scratch). ${describeRecipes()}`).choices(RECIPE_NAMES));
  for (const [flags, field, help, parse] of Object.values(RECIPE_FLAGS)) cmd.option(flags, `${help} (default: the recipe's; scratch ${String(d[field])})`, parse);
  return cmd
    .option('--max-steps <n>', 'stop after this many optimiser steps in total', intOption('--max-steps', 1))
    .option('--seed <n>', 'seed for initialisation, data order and dropout', intOption('--seed'), d.seed)
    .option('--subsets <list>', 'comma-separated subsets to train on (default: all in the shards)')
    .option('--google-apps-fraction <f>', 'share of GoogleApps rows drawn per epoch (Auto-UI: 0.1; default: the recipe’s)', floatOption('--google-apps-fraction', 0))
    .option('--subset-fraction <list>', 'shares of subsets drawn per epoch, e.g. web_shopping=0.6,install=0.7 (up to 10: above 1 a subset’s rows repeat, e.g. web=3), merged over the recipe’s (a google_apps entry overrides --google-apps-fraction)', subsetFractionOption('--subset-fraction'))
    .option('--no-text-match', 'screen text items without their lexical match with the goal (the keys of the text channel alone)')
    .option('--no-copy-pointer', 'typed text from the vocabulary alone, without the copy pointer over the goal')
    .option('--case-tokens', 'typed text starts with one case token for the whole text (as written, lower, Capitalised, or free text) instead of a casing per copied word')
    .option('--copy-context [from]', "the copy pointer's keys also read the two goal tokens before each position, which say which word of a search goal is its query: their embeddings (bare flag, or 'embeddings') or their fused states ('states'; the scratch recipe's)")
    .option('--no-copy-context', "the copy pointer's keys without that context (the pretrained recipe's), and its stop too")
    .option('--copy-stop-context', "with --copy-context, the copy pointer's stop also reads the keys' context, which says where a search goal's query ends (the scratch recipe's)")
    .option('--no-copy-stop-context', "the copy pointer's stop reads its own place alone (the pretrained recipe's)")
    .option('--save-every <n>', 'also save last/ every n steps (0 = per epoch only)', intOption('--save-every'), d.saveEvery);
}

export function registerTrain(program: Command): void {
  addTrainOptions(
    program
      .command('train')
      .description('train Auto-UI on prepared shards from a recipe (scratch, or pretrained with --init); keeps last/ (resumable) and best/ (by validation action matching)')
      .requiredOption('--data <dir>', 'shard directory from `autoui data prepare`')
      .option('--out <dir>', 'checkpoint directory', 'checkpoints/autoui')
      .option('--resume', 'continue a killed run from <out>/last exactly (weights, optimiser, data order)')
      .option('--json', 'print one JSON summary on stdout'),
  ).action(async (o: TrainCliOptions) => {
    const opts = trainOptionsFrom(o);
    const r = await train(opts);
    const summary = { checkpoint: r.checkpoint, last: r.last, recipe: opts.recipe, steps: r.state.globalStep, epochs: r.state.epoch, history: r.state.history, backend: r.backend.backend, val: r.val?.report ?? null };
    if (o.json) return printJson(summary);
    console.log(`recipe: ${opts.recipe}\nbest checkpoint: ${r.checkpoint}\nlast checkpoint: ${r.last} (step ${r.state.globalStep})`);
    if (r.val) console.log('\nvalidation (last epoch):\n' + formatReport(r.val.report));
  });
}
