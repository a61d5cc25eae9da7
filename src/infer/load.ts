import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { initBackend } from '../backend.js';
import { AutoUiModel } from '../model/autoui.js';
import { ActionCodec } from '../model/codec.js';
// Registers the Hugging Face tokenizer kind, which checkpoints trained with --init carry.
import '../model/hf_tokenizer.js';
import { validateConfig } from '../model/config.js';
import { tapSource, type TapSource } from '../model/pointer.js';
import { loadWeightsInto, readCheckpointMeta } from '../model/checkpoint.js';
import type { AutoUiCheckpointMeta } from '../model/checkpoint.js';

export interface LoadedCheckpoint {
  dir: string;
  meta: AutoUiCheckpointMeta;
  model: AutoUiModel;
  codec: ActionCodec;
  /** Where decoded taps land (model/pointer.ts): the decoder's pointer, the screen attention, or the coordinate tokens. */
  taps: TapSource;
}

/**
 * Loads a checkpoint directory; a training output dir (with best/ and last/) resolves to its best/.
 * `tapFrom` (default auto) says where decoded taps land, see tapSource.
 */
export async function loadCheckpoint(dir: string, opts: { tapFrom?: TapSource | 'auto' } = {}): Promise<LoadedCheckpoint> {
  await initBackend();
  const resolved = !existsSync(join(dir, 'config.json')) && existsSync(join(dir, 'best', 'config.json')) ? join(dir, 'best') : dir;
  const meta: AutoUiCheckpointMeta = await readCheckpointMeta(resolved);
  const config = validateConfig(meta.model, join(resolved, 'config.json'));
  const model = new AutoUiModel(config, 0);
  await loadWeightsInto(resolved, model.namedWeights());
  const groundWeight = Number(meta.training.groundWeight ?? 0);
  const taps = tapSource(opts.tapFrom ?? 'auto', { grid: meta.encoder.grid, groundWeight, pointer: config.tapPointer === true });
  return { dir: resolved, meta, model, codec: ActionCodec.fromJSON(meta.codec), taps };
}
