import { InputError } from '../../util/errors.js';
import { builtinEncoder } from './parallel.js';
import type { VisionEncoder } from './encoder.js';
import { FEATURE_MODES, type FeatureMode, type TransformersKind } from './feature_modes.js';

export type { EncoderInfo, VisionEncoder } from './encoder.js';
export { sameEncoder } from './encoder.js';
export { BuiltinEncoder, BUILTIN_INFO } from './builtin.js';

/** Encoder specs the CLI accepts, for help texts. */
export const ENCODER_SPECS =
  "'builtin' (default; no weights), or a local Hugging Face ONNX folder: 'clip:<dir>', 'siglip:<dir>', " +
  "'hf:<dir>' (any transformers.js image-feature model); append '#pooled' or '#patches+pooled' to change the features (default: patch tokens)";

export interface EncoderSpec {
  kind: 'builtin' | TransformersKind;
  dir?: string;
  mode?: FeatureMode;
}

/** Parses `builtin`, `clip:<dir>`, `siglip:<dir>`, `hf:<dir>`, each folder optionally followed by `#<mode>`. */
export function parseEncoderSpec(spec: string): EncoderSpec {
  const s = spec.trim();
  const where = `--encoder ${s}`;
  if (s === 'builtin') return { kind: 'builtin' };
  const m = /^(clip|siglip|hf|blip2):(.+)$/.exec(s);
  if (!m) throw new InputError(`unknown encoder spec; expected ${ENCODER_SPECS}`, where);
  if (m[1] === 'blip2') {
    throw new InputError("BLIP-2's vision tower has no transformers.js support; export its ViT to ONNX and load it with 'hf:<dir>#pooled'", where);
  }
  let dir = m[2]!;
  let mode: FeatureMode = 'patches';
  const hash = dir.lastIndexOf('#');
  // A '#' followed by a path separator belongs to the folder name.
  if (hash >= 0 && !/[\\/]/.test(dir.slice(hash))) {
    const suffix = dir.slice(hash + 1);
    if (!(FEATURE_MODES as readonly string[]).includes(suffix)) {
      throw new InputError(`unknown feature mode '#${suffix}' (expected ${FEATURE_MODES.map((x) => `#${x}`).join(', ')})`, where);
    }
    mode = suffix as FeatureMode;
    dir = dir.slice(0, hash);
  }
  if (dir.length === 0) throw new InputError('the model folder is empty', where);
  return { kind: m[1] === 'hf' ? 'auto' : (m[1] as TransformersKind), dir, mode };
}

/**
 * Loads a frozen vision encoder by spec (see ENCODER_SPECS). `threads` > 1 runs the built-in encoder
 * on worker threads (for bulk encoding; a single screenshot gains nothing from it).
 */
export async function loadEncoder(spec: string, opts: { threads?: number } = {}): Promise<VisionEncoder> {
  const parsed = parseEncoderSpec(spec);
  if (parsed.kind === 'builtin') return builtinEncoder(opts.threads ?? 1);
  // Imported here so the default path never loads onnxruntime.
  const { TransformersEncoder } = await import('./transformers.js');
  return TransformersEncoder.load(parsed.dir!, { kind: parsed.kind, mode: parsed.mode });
}
