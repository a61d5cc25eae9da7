/**
 * The training loop: AdamW with warm-up and linear decay, gradient clipping, length-bucketed batches
 * with per-subset sampling, our grounding and referring losses, `last/` (resumable) and `best/`
 * checkpoints. Validation is the caller's (a `Validator`): scoring needs decoding and the metric,
 * which sit above training in the pipeline.
 *
 * Determinism: the batch order is a pure function of (seed, epoch), and dropout masks and referring
 * phrases are drawn from streams keyed by the global step, so a resumed run repeats an uninterrupted
 * one bit for bit.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend, type BackendInfo } from '../backend.js';
import { requireManifest, type Manifest } from '../data/manifest.js';
import { loadShards, type ShardTable } from '../data/shards.js';
import { AutoUiModel } from '../model/autoui.js';
import { DEFAULT_TEXT_LIMITS, encodeSplit, stepContext, type EncodedSplit, type StepContext } from '../model/batch.js';
import {
  assertSameEncoder,
  CHECKPOINT_FORMAT,
  loadOptimizerInto,
  loadTrainerState,
  loadWeightsInto,
  readCheckpointMeta,
  saveCheckpoint,
  type AutoUiCheckpointMeta,
  type ScreenTextMeta,
  type TrainerState,
} from '../model/checkpoint.js';
import { ActionCodec, type CodecConfig } from '../model/codec.js';
import { modelConfig, type ModelConfig, type PresetName } from '../model/config.js';
import { initFromHuggingFace, loadPretrainedInto, pretrainedModelConfig, type HfT5Init } from '../model/hf_t5.js';
import { buildWordTokenizer } from '../model/tokenizer.js';
import { InputError } from '../util/errors.js';
import { KNOWN_SUBSETS } from '../data/types.js';
import { progress, type Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { AUTOUI_VERSION } from '../util/version.js';
import { AdamW, DEFAULT_ADAMW, learningRate } from './adamw.js';
import { planEpoch } from './batching.js';
import { disposeBatch, makeBatch, previousTexts, splitExample } from './examples.js';
import { RECIPES, type RecipeName, type TrainRecipe } from './recipes.js';
import { tablePhrases, type ReferringPhrase } from './referring.js';
import { homeFirstSwap, siteMaps } from './home_first.js';
import { backOutExample, relabelBatch, renamedSearch, requeriedExample, resultsOpenExample, retypeBatch, searchableNames, searchOpenExample, swapBatch, type Example, type Swap } from './relabel.js';

export interface TrainOptions extends TrainRecipe {
  /** Shard directory made by `autoui data prepare`. */
  data: string;
  /** Checkpoint directory; `last/` and `best/` go inside. */
  out: string;
  preset: PresetName;
  /** The recipe the values came from, recorded in the checkpoint (recipes.ts). */
  recipe: RecipeName;
  /** A Hugging Face T5-family folder to start from (config, weights, tokenizer); overrides `preset`. */
  init?: string;
  /** Further action codec settings; ignored on resume, where the checkpoint's codec is kept. */
  codec?: Partial<CodecConfig>;
  /** Further overrides of the preset. */
  modelOverrides?: Partial<ModelConfig>;
  maxSteps?: number;
  seed: number;
  resume: boolean;
  subsets?: string[];
  /** Also save `last/` every this many steps, so a killed run loses little (0 = only per epoch). */
  saveEvery: number;
  /** Stop after this many optimiser steps in *this* process (for tests of resume); the state stays resumable. */
  stopAfter?: number;
  quiet?: boolean;
  log?: (line: string) => void;
}

/**
 * The options of a recipe, before the run's own (data, out). Seed 0 is the demo's, so a plain
 * `autoui train` on the demo's shards trains the demo's model bit for bit.
 */
export function recipeOptions(recipe: RecipeName, preset: PresetName = 'tiny'): Omit<TrainOptions, 'data' | 'out'> {
  return { ...RECIPES[recipe], recipe, preset, seed: 0, resume: false, saveEvery: 200 };
}

/** The scratch recipe for `tiny`: what `autoui train --data D` runs. */
export const DEFAULT_TRAIN: Omit<TrainOptions, 'data' | 'out'> = recipeOptions('scratch');

/** What a validator says about the model after an epoch; the best checkpoint maximises `score`. */
export interface Validation {
  score: number;
  /** One line for the log, e.g. "val action matching 91.2% (click 85.0%)". */
  summary: string;
}

/** Scores the model on rows of the validation split (the same rows every epoch). */
export type Validator<V extends Validation = Validation> = (model: AutoUiModel, codec: ActionCodec, split: EncodedSplit, rows: readonly number[]) => V;

export interface TrainResult<V extends Validation = Validation> {
  checkpoint: string;
  last: string;
  state: TrainerState;
  backend: BackendInfo;
  val: V | null;
  /** True when the run stopped early on `stopAfter` and can be resumed. */
  interrupted: boolean;
}

/** Raised when the loss stops being a finite number; the last good checkpoint stays on disk. */
export class DivergedError extends Error {
  override name = 'DivergedError';
}

/** Everything one training run holds between steps. */
interface Run<V extends Validation> {
  opts: TrainOptions;
  log: (line: string) => void;
  backend: BackendInfo;
  meta: AutoUiCheckpointMeta;
  model: AutoUiModel;
  weights: Map<string, tf.Variable>;
  opt: AdamW;
  codec: ActionCodec;
  train: EncodedSplit;
  /** Validation split and the rows scored each epoch; null without a validator or rows. */
  val: { split: EncodedSplit; rows: number[]; validate: Validator<V> } | null;
  phrases: ReferringPhrase[][] | null;
  /** Renamed searches over the web screens' names (null: off). */
  rename: Swap<StepContext> | null;
  /** Hindsight HOME over the web sites' maps (null: off). */
  homeFirst: Swap<StepContext> | null;
  lengths: number[];
  state: TrainerState;
  lastDir: string;
  bestDir: string;
}

/** Progress of this process's share of the run. */
interface Pace {
  bar: Progress;
  steps: number;
  samples: number;
  started: number;
  lossEma: number | null;
  lastVal: Validation | null;
}

/** Trains (or resumes) a model on a shard directory; validates after the last `valEpochs` epochs (and at a --max-steps end) when given a validator. */
export async function fit<V extends Validation>(opts: TrainOptions, validate?: Validator<V>): Promise<TrainResult<V>> {
  const run = await setupRun(opts, validate);
  try {
    return await runEpochs(run);
  } finally {
    run.model.dispose();
    run.opt.dispose();
  }
}

/** The referring loss needs annotations and a patch grid to point into. */
export function referringApplies(referWeight: number, encoder: Manifest['encoder']): boolean {
  return referWeight > 0 && encoder.grid != null;
}

async function setupRun<V extends Validation>(opts: TrainOptions, validate: Validator<V> | undefined): Promise<Run<V>> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const backend = await initBackend();
  const manifest = await requireManifest(opts.data);
  const unknown = Object.keys(opts.subsetFraction ?? {}).filter((s) => !manifest.subsets[s] && !KNOWN_SUBSETS.includes(s));
  if (unknown.length > 0)
    throw new InputError(`no subset ${unknown.map((s) => `'${s}'`).join(', ')} in ${opts.data} (it has: ${Object.keys(manifest.subsets).sort().join(', ')})`, '--subset-fraction');
  const referring = referringApplies(opts.referWeight, manifest.encoder);
  if (opts.referWeight > 0 && !referring) log(`note: encoder '${manifest.encoder.id}' has no patch grid, so the referring loss is off`);
  const lastDir = join(opts.out, 'last');
  const resuming = opts.resume && existsSync(join(lastDir, 'trainer_state.json'));
  const previous = resuming ? await readCheckpointMeta<ModelConfig, AutoUiCheckpointMeta['codec'], Manifest['encoder']>(lastDir) : null;
  const screenText = previous ? previous.screenText ?? null : textChannel(opts, manifest);
  // Annotations give the referring phrases, and the icons whose labels a grounded tap also names.
  const trainTable = await loadShards(opts.data, { split: 'train', subsets: opts.subsets, annotations: referring || opts.groundWeight > 0, texts: screenText !== null });
  if (trainTable.rows === 0) throw new InputError('no training rows (is the train split empty?)', opts.data);
  const { meta, codec, pretrained } = previous ? resumed(previous, lastDir, manifest, opts) : await freshMeta(opts, manifest, trainTable, screenText);
  const model = new AutoUiModel(meta.model, opts.seed);
  if (pretrained) {
    const rep = loadPretrainedInto(model, pretrained);
    log(`initialised from ${pretrained.source}: ${rep.loaded} tensors loaded, ${rep.addedRows} embedding rows added for the action codec, fresh: ${rep.fresh.join(', ') || 'none'}`);
  }
  const weights = model.namedWeights();
  const opt = new AdamW(weights, { ...DEFAULT_ADAMW, weightDecay: opts.weightDecay, clipNorm: opts.clipNorm });
  const train = encodeSplit(trainTable, codec, screenText);
  const lengths = train.inputs.map((x, i) => x.length + train.targets[i]!.length);
  const batchesPerEpoch = planEpoch(lengths, trainTable.subset, epochPlan(opts, 0)).length;
  let state: TrainerState = {
    epoch: 0,
    batch: 0,
    globalStep: 0,
    totalSteps: Math.min(opts.epochs * batchesPerEpoch, opts.maxSteps ?? Infinity),
    seed: opts.seed,
    bestScore: null,
    history: [],
  };
  if (resuming) {
    await loadWeightsInto(lastDir, weights);
    await loadOptimizerInto(lastDir, opt);
    state = (await loadTrainerState(lastDir))!;
    log(`resuming from ${lastDir}: epoch ${state.epoch + 1}, batch ${state.batch}, step ${state.globalStep}/${state.totalSteps}`);
  }
  meta.training = { ...meta.training, ...trainingFacts(opts, trainTable, batchesPerEpoch, backend) };
  return {
    opts, log, backend, meta, model, weights, opt, codec, train, lengths, state, lastDir,
    bestDir: join(opts.out, 'best'),
    val: validate && opts.valRows > 0 ? await validationRows(opts, codec, screenText, validate) : null,
    phrases: referring ? tablePhrases(train, (text) => codec.tokenizer.encodeText(text)) : null,
    rename: opts.renameRate > 0 ? renamedSearch(searchableNames(trainTable.subset, trainTable.texts ?? [])) : null,
    homeFirst: opts.homeFirstRate > 0 ? homeFirstSwap(trainTable, siteMaps(trainTable)) : null,
  };
}

/** The text channel a fresh run trains: on when the recipe wants it and the chosen subsets were prepared with screen texts. */
function textChannel(opts: TrainOptions, manifest: Manifest): ScreenTextMeta | null {
  if (!opts.screenText) return null;
  const subsets = opts.subsets ?? Object.keys(manifest.subsets);
  const sources = [...new Set(subsets.map((s) => manifest.subsets[s]?.screenText ?? 'none'))].filter((x) => x !== 'none').sort();
  return sources.length === 0 ? null : { source: sources.join('+'), ...DEFAULT_TEXT_LIMITS, maxItems: opts.textItems };
}

function resumed(meta: AutoUiCheckpointMeta, lastDir: string, manifest: Manifest, opts: TrainOptions): { meta: AutoUiCheckpointMeta; codec: ActionCodec; pretrained?: undefined } {
  assertSameEncoder(meta.encoder, manifest.encoder, lastDir, opts.data);
  return { meta, codec: ActionCodec.fromJSON(meta.codec) };
}

async function freshMeta(opts: TrainOptions, manifest: Manifest, table: ShardTable, screenText: ScreenTextMeta | null): Promise<{ meta: AutoUiCheckpointMeta; codec: ActionCodec; pretrained?: HfT5Init }> {
  const pretrained = opts.init ? await initFromHuggingFace(opts.init) : undefined;
  const tokenizer = pretrained ? pretrained.tokenizer : buildWordTokenizer(trainingCorpus(table), { maxWords: opts.vocabWords });
  const codec = new ActionCodec(tokenizer, { coordBins: opts.coordBins, caseModes: opts.caseTokens, ...opts.codec });
  // The pointer learns on tap targets read off a patch grid (grounding.ts), and with the grounding loss's attention as its prior.
  const tapPointer = opts.pointerWeight > 0 && opts.groundWeight > 0 && manifest.encoder.grid != null;
  const tapOffset = tapPointer && opts.offsetWeight > 0;
  const copyPointer = opts.copyPointer && codec.config.copyText;
  const sizes = { vocabSize: codec.vocabSize, screenDim: manifest.encoder.dim, screenText: screenText !== null, textMatch: screenText !== null && opts.textMatch, tapPointer, tapOffset, copyPointer, copyContext: copyPointer && opts.copyContext, copyStopContext: copyPointer && opts.copyStopContext };
  const overrides = { dropoutRate: opts.dropoutRate, ...opts.modelOverrides };
  const model = pretrained ? { ...pretrainedModelConfig(pretrained, sizes), ...overrides } : modelConfig(opts.preset, { ...overrides, ...sizes });
  const meta: AutoUiCheckpointMeta = {
    format: CHECKPOINT_FORMAT,
    model,
    codec: codec.toJSON(),
    encoder: manifest.encoder,
    screenText,
    training: { data: opts.data, preset: opts.init ? null : opts.preset, init: opts.init ?? null, seed: opts.seed },
    created: new Date().toISOString(),
    autoui: AUTOUI_VERSION,
  };
  return { meta, codec, pretrained };
}

/** A fixed random subset of the validation split: the same rows every epoch, so epochs are comparable. */
async function validationRows<V extends Validation>(opts: TrainOptions, codec: ActionCodec, texts: ScreenTextMeta | null, validate: Validator<V>): Promise<Run<V>['val']> {
  const table = await loadShards(opts.data, { split: 'val', subsets: opts.subsets, texts: texts !== null });
  if (table.rows === 0) return null;
  const all = Rng.from(opts.seed, 'val').shuffle(Array.from({ length: table.rows }, (_, i) => i));
  return { split: encodeSplit(table, codec, texts), rows: all.slice(0, opts.valRows).sort((a, b) => a - b), validate };
}

async function runEpochs<V extends Validation>(run: Run<V>): Promise<TrainResult<V>> {
  const { state, opts } = run;
  const pace: Pace = {
    bar: progress({ label: 'train', total: state.totalSteps, done: state.globalStep, unit: 'steps', quiet: opts.quiet }),
    steps: 0,
    samples: 0,
    started: Date.now(),
    lossEma: null,
    lastVal: null,
  };
  const result = (interrupted: boolean, checkpoint: string): TrainResult<V> => {
    pace.bar.stop();
    return { checkpoint, last: run.lastDir, state, backend: run.backend, val: pace.lastVal as V | null, interrupted };
  };
  for (; state.epoch < opts.epochs && state.globalStep < state.totalSteps; state.epoch++, state.batch = 0) {
    const batches = planEpoch(run.lengths, run.train.table.subset, epochPlan(opts, state.epoch));
    for (; state.batch < batches.length && state.globalStep < state.totalSteps; state.batch++) {
      if (opts.stopAfter !== undefined && pace.steps >= opts.stopAfter) {
        await save(run, run.lastDir, true);
        return result(true, run.lastDir);
      }
      await trainStep(run, pace, batches[state.batch]!);
    }
    const epochDone = state.batch >= batches.length;
    await endEpoch(run, pace, epochDone);
    if (!epochDone) break;
  }
  if (!existsSync(run.bestDir)) await save(run, run.bestDir, false);
  return result(false, run.bestDir);
}

/** One optimiser step on `rows` of the training split. */
async function trainStep<V extends Validation>(run: Run<V>, pace: Pace, rows: readonly number[]): Promise<void> {
  const { opts, state, model, codec } = run;
  const recorded = rows.map((r) => splitExample(run.train, r));
  const step = (ex: Example) => stepContext(run.train.table, ex.row, codec);
  const requeried = retypeBatch(recorded, step, opts.requeryRate, codec, Rng.from(opts.seed, 'requery', state.globalStep), requeriedExample);
  const renamed = run.rename ? retypeBatch(requeried, step, opts.renameRate, codec, Rng.from(opts.seed, 'rename', state.globalStep), run.rename) : requeried;
  const retyped = retypeBatch(renamed, step, opts.retypeRate, codec, Rng.from(opts.seed, 'retype', state.globalStep));
  const withPrevious = (ex: Example) => ({ ...step(ex), previousTexts: previousTexts(run.train, ex.row) });
  const opened = swapBatch(retyped, withPrevious, opts.searchOpenRate, codec, Rng.from(opts.seed, 'search-open', state.globalStep), searchOpenExample);
  const resultsOpened = swapBatch(opened, step, opts.resultsOpenRate, codec, Rng.from(opts.seed, 'results-open', state.globalStep), resultsOpenExample);
  const backedOut = swapBatch(resultsOpened, withPrevious, opts.backOutRate, codec, Rng.from(opts.seed, 'back-out', state.globalStep), backOutExample);
  const homed = run.homeFirst ? swapBatch(backedOut, step, opts.homeFirstRate, codec, Rng.from(opts.seed, 'home-first', state.globalStep), run.homeFirst) : backedOut;
  const examples = relabelBatch(homed, opts.relabelRate, codec, Rng.from(opts.seed, 'relabel', state.globalStep));
  const batch = makeBatch(run.train, examples, codec.tokenizer.padId, {
    grounding: opts.groundWeight > 0,
    ...(model.config.tapPointer ? { pointerRadius: opts.pointerRadius } : {}),
    ...(run.phrases ? { refer: { phrases: run.phrases, perRow: opts.referPerRow, rng: Rng.from(opts.seed, 'refer', state.globalStep) } } : {}),
    ...(model.config.tapPointer ? { tapStep: (t: readonly number[]) => codec.tapStep(t) } : {}),
    ...(model.config.copyPointer ? { copy: codec, copyPositions: opts.copyPositionWeight > 0 } : {}),
    ...(model.config.tapOffset ? { offsets: true } : {}),
  });
  model.setDropoutSeed(Rng.from(opts.seed, 'dropout', state.globalStep).int(0, 2 ** 31 - 1));
  const { value, grads } = tf.variableGrads(() => model.loss(batch, true, { ground: opts.groundWeight, refer: opts.referWeight, pointer: opts.pointerWeight, offset: opts.offsetWeight, copy: opts.copyPositionWeight }), [...run.weights.values()]);
  disposeBatch(batch);
  const loss = value.dataSync()[0]!;
  value.dispose();
  if (!Number.isFinite(loss)) {
    tf.dispose(Object.values(grads));
    pace.bar.stop();
    throw new DivergedError(
      `loss became ${loss} at step ${state.globalStep + 1} (epoch ${state.epoch + 1}, batch ${state.batch + 1}); stopped without applying it. ` +
        (existsSync(run.lastDir) ? `The last good checkpoint is ${run.lastDir}; ` : '') +
        'try a lower --lr or a smaller --clip-norm.',
    );
  }
  const byVariable = new Map([...run.weights].map(([hf, v]) => [v.name, hf]));
  const named = new Map(Object.entries(grads).map(([k, g]) => [byVariable.get(k) ?? k, g]));
  const warmup = Math.max(1, Math.round(state.totalSteps * opts.warmupRatio));
  run.opt.apply(named, learningRate(state.globalStep, state.totalSteps, opts.lr, warmup));
  tf.dispose(Object.values(grads));
  state.globalStep++;
  pace.steps++;
  pace.samples += rows.length;
  pace.lossEma = pace.lossEma === null ? loss : 0.95 * pace.lossEma + 0.05 * loss;
  pace.bar.tick(1, { loss: pace.lossEma, 'samples/s': pace.samples / ((Date.now() - pace.started) / 1000) });
  if (opts.saveEvery > 0 && state.globalStep % opts.saveEvery === 0) await save(run, run.lastDir, true);
}

/** End of an epoch, or of the run at --max-steps within one: validate, keep last and best. */
async function endEpoch<V extends Validation>(run: Run<V>, pace: Pace, epochDone: boolean): Promise<void> {
  const { state } = run;
  const entry: TrainerState['history'][number] = { epoch: state.epoch + 1, step: state.globalStep, loss: pace.lossEma ?? NaN };
  state.history.push(entry);
  // A finished epoch is saved as "start of the next one", so a resume never repeats it.
  const keep = (dir: string, withOptimizer: boolean) => (epochDone ? saveAtNextEpoch(run, dir, withOptimizer) : save(run, dir, withOptimizer));
  // A run stopped by --max-steps validates at its end, so its best/ is a validated one.
  const due = state.epoch >= run.opts.epochs - run.opts.valEpochs || state.globalStep >= state.totalSteps;
  if (run.val && due) {
    const v = run.val.validate(run.model, run.codec, run.val.split, run.val.rows);
    pace.lastVal = v;
    entry.val = v.score;
    run.log(`\nepoch ${state.epoch + 1}: loss ${pace.lossEma?.toFixed(4)} · ${v.summary}`);
    if (state.bestScore === null || v.score > state.bestScore) {
      state.bestScore = v.score;
      await keep(run.bestDir, false);
    }
  } else {
    run.log(`\nepoch ${state.epoch + 1}: loss ${pace.lossEma?.toFixed(4)}`);
  }
  await keep(run.lastDir, true);
}

function save<V extends Validation>(run: Run<V>, dir: string, withOptimizer: boolean): Promise<void> {
  return saveCheckpoint(dir, { meta: run.meta, weights: run.weights, state: run.state, ...(withOptimizer ? { optimizer: run.opt } : {}) });
}

async function saveAtNextEpoch<V extends Validation>(run: Run<V>, dir: string, withOptimizer: boolean): Promise<void> {
  const { epoch, batch } = run.state;
  Object.assign(run.state, { epoch: epoch + 1, batch: 0 });
  try {
    await save(run, dir, withOptimizer);
  } finally {
    Object.assign(run.state, { epoch, batch });
  }
}

function epochPlan(opts: TrainOptions, epoch: number) {
  return { batchSize: opts.batchSize, seed: opts.seed, epoch, subsetFraction: opts.subsetFraction };
}

/** Goals and typed texts: the words the default tokenizer should know whole. */
function* trainingCorpus(t: ShardTable): Generator<string> {
  for (let i = 0; i < t.rows; i++) {
    if (i === 0 || t.goal[i] !== t.goal[i - 1]) yield t.goal[i]!;
    if (t.typedText[i]) yield t.typedText[i]!;
  }
}

function trainingFacts(opts: TrainOptions, t: ShardTable, batchesPerEpoch: number, backend: BackendInfo): Record<string, unknown> {
  const { data, preset, recipe, epochs, lr, batchSize, warmupRatio, weightDecay, clipNorm, dropoutRate, coordBins, groundWeight, referWeight, referPerRow, relabelRate, retypeRate, requeryRate, renameRate, searchOpenRate, resultsOpenRate, backOutRate, homeFirstRate, pointerWeight, pointerRadius, offsetWeight, copyPointer, copyPositionWeight, copyContext, copyStopContext, caseTokens, seed, subsetFraction, screenText, textMatch, textItems, vocabWords } = opts;
  return {
    data, preset, recipe, epochs, lr, batchSize, warmupRatio, weightDecay, clipNorm, dropoutRate, coordBins, groundWeight, referWeight, referPerRow, relabelRate, retypeRate, requeryRate, renameRate, searchOpenRate, resultsOpenRate, backOutRate, homeFirstRate, pointerWeight, pointerRadius, offsetWeight, copyPointer, copyPositionWeight, copyContext, copyStopContext, caseTokens, seed, subsetFraction, screenText, textMatch, textItems, vocabWords,
    trainRows: t.rows,
    batchesPerEpoch,
    backend: backend.backend,
  };
}
