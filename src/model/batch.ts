/**
 * Rows of a shard table as model inputs: the chain-of-action token sequences (paper §3.2) and the
 * padded tensors the model reads. Shared by training, evaluation and serving.
 */
import * as tf from '@tensorflow/tfjs-core';
import { isTapAction } from '../data/geometry.js';
import { historyOf, normalizeAction, planOf } from '../data/normalize.js';
import { actionAt, type ShardTable } from '../data/shards.js';
import type { ActionCodec } from './codec.js';
import { groundingPatches } from './grounding.js';

/** One split, tokenised: inputs and chain-of-action targets per row of the shard table. */
export interface EncodedSplit {
  table: ShardTable;
  inputs: number[][];
  targets: number[][];
}

/** Paper §3.2: input = goal + previous actions (≤ 8); target = future plan (≤ 4 types) + the current action. */
export function encodeSplit(table: ShardTable, codec: ActionCodec): EncodedSplit {
  const inputs: number[][] = new Array(table.rows);
  const targets: number[][] = new Array(table.rows);
  for (let i = 0; i < table.rows; i++) {
    const actions = table.episodeActions[i]!.map(normalizeAction);
    const step = table.stepId[i]!;
    inputs[i] = codec.encodeInput(table.goal[i]!, historyOf(actions, step, codec.config.maxHistory));
    targets[i] = codec.encodeTarget(planOf(actions, step, codec.config.maxPlan), normalizeAction(actionAt(table, i)));
  }
  return { table, inputs, targets };
}

/** Pads a list of id sequences to one length; `fill` marks padding. */
export function padIds(seqs: readonly number[][], fill: number): { ids: Int32Array; len: number } {
  const len = Math.max(1, ...seqs.map((s) => s.length));
  const ids = new Int32Array(seqs.length * len).fill(fill);
  seqs.forEach((s, b) => ids.set(s, b * len));
  return { ids, len };
}

/** Screen features of the given rows as one [B, P, D] tensor; `blind` zeroes them (the ablation). */
export function screenBatch(table: ShardTable, rows: readonly number[], blind = false): tf.Tensor3D {
  const { patches, dim } = table.encoder;
  const size = patches * dim;
  const data = new Float32Array(rows.length * size);
  if (!blind) rows.forEach((r, b) => data.set(table.screens.subarray(r * size, (r + 1) * size), b * size));
  return tf.tensor3d(data, [rows.length, patches, dim]);
}

export function inputBatch(inputs: readonly number[][], padId: number): { inputIds: tf.Tensor2D; inputMask: tf.Tensor2D } {
  const { ids, len } = padIds(inputs, padId);
  const mask = new Int32Array(ids.length);
  inputs.forEach((s, b) => mask.fill(1, b * len, b * len + s.length));
  return { inputIds: tf.tensor2d(ids, [inputs.length, len], 'int32'), inputMask: tf.tensor2d(mask, [inputs.length, len], 'int32') };
}

/** [B, P] grounding targets: 1 on the patches around the gold tap, rows of other actions all 0. */
export function groundTargetBatch(table: ShardTable, rows: readonly number[], grid: readonly [number, number]): tf.Tensor2D {
  const P = grid[0] * grid[1];
  const data = new Float32Array(rows.length * P);
  rows.forEach((r, b) => {
    const a = actionAt(table, r);
    if (!isTapAction(a)) return;
    for (const p of groundingPatches(a.touch_yx, grid)) data[b * P + p] = 1;
  });
  return tf.tensor2d(data, [rows.length, P]);
}

