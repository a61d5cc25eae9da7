import * as tf from '@tensorflow/tfjs-core';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceDirAtomic } from '../util/atomic.js';
import { InputError } from '../util/errors.js';
import { readJsonIfExists } from '../util/json.js';
import { readSafetensors, encodeSafetensors, type NamedTensor } from '../util/safetensors.js';
import { sameEncoder, type EncoderInfo } from '../screen/vision/encoder.js';
import type { CodecJSON } from './codec.js';
import type { ModelConfig } from './config.js';

export const CHECKPOINT_FORMAT = 'autoui-checkpoint-v1';

/** Everything needed to rebuild the model and its input/output handling, stored as config.json. */
export interface CheckpointMeta<ModelCfg = unknown, CodecCfg = unknown, EncoderCfg = unknown> {
  format: typeof CHECKPOINT_FORMAT;
  model: ModelCfg;
  codec: CodecCfg;
  encoder: EncoderCfg;
  /** What the model reads of the screens' text; absent or null = no text channel (the paper's model). */
  screenText?: ScreenTextMeta | null;
  /** Free-form facts about how it was trained (data dir, args, metrics). */
  training: Record<string, unknown>;
  created: string;
  autoui: string;
}

/** The text channel of a checkpoint: where its training texts came from, and how much text it reads. */
export interface ScreenTextMeta {
  /** 'annotations', an OCR reader's id, or several joined by '+'. */
  source: string;
  maxItems: number;
  maxTokens: number;
}

/** The metadata of an Auto-UI checkpoint: model config, action codec and the encoder whose features it reads. */
export type AutoUiCheckpointMeta = CheckpointMeta<ModelConfig, CodecJSON, EncoderInfo>;

/** A checkpoint only understands features of the encoder it was trained on. */
export function assertSameEncoder(a: EncoderInfo, b: EncoderInfo, ckpt: string, data: string): void {
  if (!sameEncoder(a, b))
    throw new InputError(`checkpoint ${ckpt} was trained on features of encoder '${a.id}' (${a.patches}×${a.dim}) but the shards were made by '${b.id}' (${b.patches}×${b.dim})`, data);
}

/** Where a run stopped, to resume it exactly: the data order is a pure function of (seed, epoch). */
export interface TrainerState {
  epoch: number;
  /** Index of the next batch to run within `epoch`. */
  batch: number;
  globalStep: number;
  totalSteps: number;
  seed: number;
  bestScore: number | null;
  history: Array<{ epoch: number; step: number; loss: number; val?: number }>;
}

function toNamed(vars: Map<string, tf.Variable>): Map<string, NamedTensor> {
  const out = new Map<string, NamedTensor>();
  for (const [name, v] of vars) out.set(name, { dtype: 'F32', shape: v.shape, data: v.dataSync() as Float32Array });
  return out;
}

export interface SaveArgs<M, C, E> {
  meta: CheckpointMeta<M, C, E>;
  weights: Map<string, tf.Variable>;
  optimizer?: { step: number; m: Map<string, tf.Variable>; v: Map<string, tf.Variable> };
  state?: TrainerState;
}

/** Writes the whole checkpoint directory at once: a crash leaves the previous one intact. */
export async function saveCheckpoint<M, C, E>(dir: string, args: SaveArgs<M, C, E>): Promise<void> {
  await replaceDirAtomic(dir, async (tmp) => {
    await writeFile(join(tmp, 'config.json'), JSON.stringify(args.meta, null, 2) + '\n');
    await writeFile(join(tmp, 'model.safetensors'), encodeSafetensors(toNamed(args.weights), { format: 'pt' }));
    if (args.optimizer) {
      const named = new Map<string, NamedTensor>();
      for (const [k, v] of toNamed(args.optimizer.m)) named.set(`m/${k}`, v);
      for (const [k, v] of toNamed(args.optimizer.v)) named.set(`v/${k}`, v);
      await writeFile(join(tmp, 'optimizer.safetensors'), encodeSafetensors(named, { step: String(args.optimizer.step) }));
    }
    if (args.state) await writeFile(join(tmp, 'trainer_state.json'), JSON.stringify(args.state, null, 2) + '\n');
  });
}

export async function readCheckpointMeta<M, C, E>(dir: string): Promise<CheckpointMeta<M, C, E>> {
  const file = join(dir, 'config.json');
  const meta = (await readJsonIfExists(file)) as CheckpointMeta<M, C, E> | undefined;
  if (!meta) throw new InputError('not an autoui checkpoint (no config.json)', dir);
  if (meta.format !== CHECKPOINT_FORMAT) throw new InputError(`unknown checkpoint format '${String(meta.format)}'`, file);
  return meta;
}

/** Copies tensors into variables by name; any missing, unexpected or mis-shaped tensor is an error naming it. */
export function assignWeights(vars: Map<string, tf.Variable>, tensors: Map<string, NamedTensor>, where: string, prefix = ''): void {
  const problems: string[] = [];
  for (const [name, v] of vars) {
    const t = tensors.get(prefix + name);
    if (!t) problems.push(`missing tensor '${prefix + name}'`);
    else if (t.shape.join('x') !== v.shape.join('x'))
      problems.push(`tensor '${prefix + name}' has shape [${t.shape}], model expects [${v.shape}]`);
  }
  for (const name of tensors.keys()) if (name.startsWith(prefix) && !vars.has(name.slice(prefix.length))) problems.push(`unexpected tensor '${name}'`);
  if (problems.length) throw new InputError(problems.slice(0, 10).join('; ') + (problems.length > 10 ? ` (+${problems.length - 10} more)` : ''), where);
  for (const [name, v] of vars) {
    const t = tensors.get(prefix + name)!;
    v.assign(tf.tensor(t.data, t.shape, t.dtype === 'I32' ? 'int32' : 'float32'));
  }
}

export async function loadWeightsInto(dir: string, vars: Map<string, tf.Variable>): Promise<void> {
  const file = join(dir, 'model.safetensors');
  const { tensors } = await readSafetensors(file);
  tf.tidy(() => assignWeights(vars, tensors, file));
}

export async function loadTrainerState(dir: string): Promise<TrainerState | undefined> {
  return (await readJsonIfExists(join(dir, 'trainer_state.json'))) as TrainerState | undefined;
}

export async function loadOptimizerInto(dir: string, opt: { step: number; m: Map<string, tf.Variable>; v: Map<string, tf.Variable> }): Promise<void> {
  const file = join(dir, 'optimizer.safetensors');
  const { tensors, metadata } = await readSafetensors(file);
  tf.tidy(() => {
    assignWeights(opt.m, new Map([...tensors].filter(([k]) => k.startsWith('m/'))), file, 'm/');
    assignWeights(opt.v, new Map([...tensors].filter(([k]) => k.startsWith('v/'))), file, 'v/');
  });
  opt.step = Number(metadata.step ?? 0);
}
