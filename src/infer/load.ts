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
import { sameEncoder } from '../screen/vision/encoder.js';
import { InputError } from '../util/errors.js';

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

/**
 * Loads checkpoints that answer as one (infer/ensemble.ts): the first, then each further one, which
 * must read the same inputs the same way (codec and vocabulary, encoder, text channel) and land taps
 * the same way, since one batch is built for all of them; else an InputError names the one at fault.
 * One directory (a string) loads alone.
 */
export async function loadCheckpoints(given: string | readonly string[], opts: { tapFrom?: TapSource | 'auto' } = {}): Promise<LoadedCheckpoint[]> {
  const dirs = typeof given === 'string' ? [given] : given;
  if (dirs.length === 0) throw new InputError('no checkpoint given', 'checkpoint');
  const all: LoadedCheckpoint[] = [];
  try {
    for (const dir of dirs) {
      const c = await loadCheckpoint(dir, opts);
      all.push(c);
      const first = all[0]!;
      const differs = [
        ['codec and vocabulary', JSON.stringify(c.codec.toJSON()) !== JSON.stringify(first.codec.toJSON())],
        ['vision encoder', !sameEncoder(c.meta.encoder, first.meta.encoder)],
        ['text channel', JSON.stringify(c.meta.screenText ?? null) !== JSON.stringify(first.meta.screenText ?? null) || c.model.config.textMatch !== first.model.config.textMatch],
        ['tap source', c.taps !== first.taps],
      ].find(([, d]) => d);
      if (differs) throw new InputError(`its ${differs[0]} differ from ${first.dir}'s: checkpoints answer together only when trained on the same data the same way`, c.dir);
    }
  } catch (e) {
    for (const c of all) c.model.dispose();
    throw e;
  }
  return all;
}
