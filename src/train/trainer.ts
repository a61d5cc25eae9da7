import * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend, type BackendInfo } from '../backend.js';
import { loadShards, type ShardTable } from '../data/shards.js';
import { requireManifest } from '../data/manifest.js';
import { AUTOUI_VERSION } from '../data/manifest.js';
import { predictSplit } from '../eval/evaluate.js';
import { pointerGrid } from '../model/pointer.js';
import { scoreItems, type Report } from '../eval/metrics.js';
import { AutoUiModel } from '../model/autoui.js';
import { ActionCodec, type CodecConfig, type CodecJSON } from '../model/codec.js';
import { modelConfig, type ModelConfig, type PresetName } from '../model/config.js';
import { buildWordTokenizer } from '../model/tokenizer.js';
import { initFromHuggingFace, loadPretrainedInto, pretrainedModelConfig, type HfT5Init } from '../model/hf_t5.js';
import { sameEncoder, type EncoderInfo } from '../screen/vision/encoder.js';
import { InputError } from '../util/errors.js';
import { progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { AdamW, DEFAULT_ADAMW, learningRate } from './adamw.js';
import { planEpoch } from './batching.js';
import {
  assertSameEncoder,
  CHECKPOINT_FORMAT,
  loadOptimizerInto,
  loadTrainerState,
  loadWeightsInto,
  readCheckpointMeta,
  saveCheckpoint,
  type AutoUiCheckpointMeta,
  type TrainerState,
} from '../model/checkpoint.js';
import { encodeSplit, type EncodedSplit } from '../model/batch.js';
import { disposeBatch, makeBatch } from './examples.js';
import { tablePhrases } from './referring.js';

export interface TrainOptions {
  /** Shard directory made by `autoui data prepare`. */
  data: string;
  /** Checkpoint directory; `last/` and `best/` go inside. */
  out: string;
  preset: PresetName;
  /** A Hugging Face T5-family folder to start from (config, weights, tokenizer); overrides `preset`. */
  init?: string;
  /** Action codec settings (e.g. coordBins); ignored on resume, where the checkpoint's codec is kept. */
  codec?: Partial<CodecConfig>;
  /** Overrides of the preset (e.g. dropoutRate). */
  modelOverrides?: Partial<ModelConfig>;
  epochs: number;
  lr: number;
  batchSize: number;
  warmupRatio: number;
  weightDecay: number;
  clipNorm: number;
  /** Weight of the grounding loss on the screen attention at tap steps (model/grounding.ts); 0 = the paper's loss alone. */
  groundWeight: number;
  /** Weight of the referring loss on the screens' annotated texts (referring.ts); 0 = off. */
  referWeight: number;
  /** Referring phrases drawn per screen and step. */
  referPerRow: number;
  maxSteps?: number;
  seed: number;
  resume: boolean;
  subsets?: string[];
  /** Fraction of each subset drawn per epoch; Auto-UI uses 10% of GoogleApps. */
  subsetFraction: Record<string, number>;
  /** Validation rows scored at the end of every epoch (0 = skip validation). */
  valRows: number;
  /** Also save `last/` every this many steps, so a killed run loses little (0 = only per epoch). */
  saveEvery: number;
  /** Stop after this many optimiser steps in *this* process (for tests of resume); the state stays resumable. */
  stopAfter?: number;
  quiet?: boolean;
  log?: (line: string) => void;
}

export const DEFAULT_TRAIN: Omit<TrainOptions, 'data' | 'out'> = {
  preset: 'tiny',
  epochs: 10,
  lr: 1e-4,
  batchSize: 4,
  warmupRatio: 0.05,
  weightDecay: DEFAULT_ADAMW.weightDecay,
  clipNorm: DEFAULT_ADAMW.clipNorm,
  groundWeight: 1,
  referWeight: 1,
  referPerRow: 2,
  seed: 42,
  resume: false,
  subsetFraction: { google_apps: 0.1 },
  valRows: 512,
  saveEvery: 200,
};

export interface TrainResult {
  checkpoint: string;
  last: string;
  state: TrainerState;
  backend: BackendInfo;
  val: Report | null;
  /** True when the run stopped early on `stopAfter` and can be resumed. */
  interrupted: boolean;
}

/** Raised when the loss stops being a finite number; the last good checkpoint stays on disk. */
export class DivergedError extends Error {
  override name = 'DivergedError';
}

export async function train(opts: TrainOptions): Promise<TrainResult> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const backend = await initBackend();
  const manifest = await requireManifest(opts.data);
  const lastDir = join(opts.out, 'last');
  const bestDir = join(opts.out, 'best');

  // The referring loss needs the annotations and an encoder with a patch grid to point into.
  const referring = opts.referWeight > 0 && manifest.encoder.grid !== undefined;
  if (opts.referWeight > 0 && !referring) log(`note: encoder '${manifest.encoder.id}' has no patch grid, so the referring loss is off`);
  const trainTable = await loadShards(opts.data, { split: 'train', subsets: opts.subsets, annotations: referring });
  if (trainTable.rows === 0) throw new InputError('no training rows (is the train split empty?)', opts.data);
  const valTable = opts.valRows > 0 ? await loadShards(opts.data, { split: 'val', subsets: opts.subsets }) : null;

  const resuming = opts.resume && existsSync(join(lastDir, 'trainer_state.json'));
  let meta: AutoUiCheckpointMeta;
  let codec: ActionCodec;
  let pretrained: HfT5Init | undefined;
  if (resuming) {
    meta = await readCheckpointMeta(lastDir);
    assertSameEncoder(meta.encoder, manifest.encoder, lastDir, opts.data);
    codec = ActionCodec.fromJSON(meta.codec);
  } else {
    pretrained = opts.init ? await initFromHuggingFace(opts.init) : undefined;
    codec = new ActionCodec(pretrained ? pretrained.tokenizer : buildWordTokenizer(trainingCorpus(trainTable)), opts.codec);
    const sizes = { vocabSize: codec.vocabSize, screenDim: manifest.encoder.dim };
    const config = pretrained
      ? { ...pretrainedModelConfig(pretrained, sizes), ...opts.modelOverrides }
      : modelConfig(opts.preset, { ...opts.modelOverrides, ...sizes });
    meta = {
      format: CHECKPOINT_FORMAT,
      model: config,
      codec: codec.toJSON(),
      encoder: manifest.encoder,
      training: { data: opts.data, preset: opts.init ? null : opts.preset, init: opts.init ?? null, seed: opts.seed },
      created: new Date().toISOString(),
      autoui: AUTOUI_VERSION,
    };
  }

  const model = new AutoUiModel(meta.model, opts.seed);
  if (pretrained) {
    const rep = loadPretrainedInto(model, pretrained);
    log(`initialised from ${pretrained.source}: ${rep.loaded} tensors loaded, ${rep.addedRows} embedding rows added for the action codec, fresh: ${rep.fresh.join(', ') || 'none'}`);
  }
  const weights = model.namedWeights();
  const opt = new AdamW(weights, { ...DEFAULT_ADAMW, weightDecay: opts.weightDecay, clipNorm: opts.clipNorm });
  const trainSplit = encodeSplit(trainTable, codec);
  const valSplit = valTable ? encodeSplit(valTable, codec) : null;
  const phrases = referring ? tablePhrases(trainTable, (text) => codec.tokenizer.encodeText(text)) : null;
  const lengths = trainSplit.inputs.map((x, i) => x.length + trainSplit.targets[i]!.length);
  const batchesPerEpoch = planEpoch(lengths, trainTable.subset, epochPlan(opts, 0)).length;
  const plannedSteps = opts.epochs * batchesPerEpoch;

  let state: TrainerState = {
    epoch: 0,
    batch: 0,
    globalStep: 0,
    totalSteps: Math.min(plannedSteps, opts.maxSteps ?? Infinity),
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

  try {
    return await runLoop();
  } finally {
    model.dispose();
    opt.dispose();
  }

  async function runLoop(): Promise<TrainResult> {
    const save = async (dir: string, withOptimizer: boolean) =>
      saveCheckpoint(dir, { meta, weights, ...(withOptimizer ? { optimizer: opt, state } : { state }) });

    const varName = new Map([...weights].map(([hf, v]) => [v.name, hf]));
    const warmup = Math.max(1, Math.round(state.totalSteps * opts.warmupRatio));
    const bar = progress({ label: 'train', total: state.totalSteps, unit: 'steps', quiet: opts.quiet });
    bar.tick(state.globalStep);
    let stepsThisRun = 0;
    let lastVal: Report | null = null;
    let lossEma: number | null = null;
    const started = Date.now();
    let samples = 0;

    for (; state.epoch < opts.epochs; state.epoch++, state.batch = 0) {
      if (state.globalStep >= state.totalSteps) break;
      const batches = planEpoch(lengths, trainTable.subset, epochPlan(opts, state.epoch));
      for (; state.batch < batches.length; ) {
        if (state.globalStep >= state.totalSteps) break;
        if (opts.stopAfter !== undefined && stepsThisRun >= opts.stopAfter) {
          await save(lastDir, true);
          bar.stop();
          return { checkpoint: lastDir, last: lastDir, state, backend, val: lastVal, interrupted: true };
        }
        const rows = batches[state.batch]!;
        const batch = makeBatch(trainSplit, rows, codec.tokenizer.padId, {
          grounding: opts.groundWeight > 0,
          // Drawn from a stream keyed by the step, as the dropout masks, so a resumed run draws the same phrases.
          ...(phrases ? { refer: { phrases, perRow: opts.referPerRow, rng: Rng.from(opts.seed, 'refer', state.globalStep) } } : {}),
        });
        // Dropout draws from a stream keyed by the step, so a resumed run repeats the same masks.
        model.setDropoutSeed(Rng.from(opts.seed, 'dropout', state.globalStep).int(0, 2 ** 31 - 1));
        const { value, grads } = tf.variableGrads(() => model.loss(batch, true, { ground: opts.groundWeight, refer: opts.referWeight }), [...weights.values()]);
        disposeBatch(batch);
        const loss = value.dataSync()[0]!;
        value.dispose();
        if (!Number.isFinite(loss)) {
          tf.dispose(Object.values(grads));
          bar.stop();
          throw new DivergedError(
            `loss became ${loss} at step ${state.globalStep + 1} (epoch ${state.epoch + 1}, batch ${state.batch + 1}); ` +
              `stopped without applying it. ` +
              (existsSync(lastDir) ? `The last good checkpoint is ${lastDir}; ` : '') +
              `try a lower --lr or a smaller --clip-norm.`,
          );
        }
        const named = new Map(Object.entries(grads).map(([k, g]) => [varName.get(k) ?? k, g]));
        opt.apply(named, learningRate(state.globalStep, state.totalSteps, opts.lr, warmup));
        tf.dispose(Object.values(grads));
        state.globalStep++;
        state.batch++;
        stepsThisRun++;
        samples += rows.length;
        lossEma = lossEma === null ? loss : 0.95 * lossEma + 0.05 * loss;
        bar.tick(1, { loss: lossEma, 'samples/s': samples / ((Date.now() - started) / 1000) });
        if (opts.saveEvery > 0 && state.globalStep % opts.saveEvery === 0) await save(lastDir, true);
      }
      // End of an epoch, or of the run at --max-steps within one: validate, keep last and best.
      const epochDone = state.batch >= batches.length;
      const keep = (save: () => Promise<void>) => (epochDone ? saveNextEpoch(state, save) : save());
      state.history.push({ epoch: state.epoch + 1, step: state.globalStep, loss: lossEma ?? NaN });
      if (valSplit) {
        lastVal = validate(model, codec, valSplit, opts);
        const score = lastVal.action_match ?? 0;
        state.history[state.history.length - 1]!.val = score;
        log(`\nepoch ${state.epoch + 1}: loss ${lossEma?.toFixed(4)} · val action matching ${score.toFixed(2)}% (click ${lastVal.click_acc?.toFixed(1) ?? '-'}%)`);
        if (state.bestScore === null || score > state.bestScore) {
          state.bestScore = score;
          await keep(() => save(bestDir, false));
        }
      }
      await keep(() => save(lastDir, true));
      if (!epochDone) break;
    }
    bar.stop();
    if (!existsSync(bestDir)) await save(bestDir, false);
    return { checkpoint: bestDir, last: lastDir, state, backend, val: lastVal, interrupted: false };
  }
}

/** Saves with the state pointing at the start of the next epoch, so a resume never repeats this one. */
async function saveNextEpoch(state: TrainerState, save: () => Promise<void>): Promise<void> {
  const { epoch, batch } = state;
  state.epoch = epoch + 1;
  state.batch = 0;
  try {
    await save();
  } finally {
    state.epoch = epoch;
    state.batch = batch;
  }
}

function validate(model: AutoUiModel, codec: ActionCodec, split: EncodedSplit, opts: TrainOptions): Report {
  // A fixed random subset: the same rows every epoch, so epochs are comparable.
  const all = Rng.from(opts.seed, 'val').shuffle(Array.from({ length: split.table.rows }, (_, i) => i));
  const rows = all.slice(0, opts.valRows).sort((a, b) => a - b);
  // Taps decoded as `eval` and `serve` decode them by default, so the best checkpoint is best there.
  const grid = pointerGrid('auto', split.table.encoder.grid, opts.groundWeight);
  return scoreItems(predictSplit(model, codec, split, { rows, quiet: true, pointerGrid: grid })).report;
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
  return {
    data: opts.data,
    preset: opts.preset,
    epochs: opts.epochs,
    lr: opts.lr,
    batchSize: opts.batchSize,
    warmupRatio: opts.warmupRatio,
    weightDecay: opts.weightDecay,
    clipNorm: opts.clipNorm,
    groundWeight: opts.groundWeight,
    referWeight: opts.referWeight,
    referPerRow: opts.referPerRow,
    seed: opts.seed,
    subsetFraction: opts.subsetFraction,
    trainRows: t.rows,
    batchesPerEpoch,
    backend: backend.backend,
  };
}

