import { InputError } from '../../util/errors.js';
import { BuiltinEncoder } from './builtin.js';
import type { VisionEncoder } from './encoder.js';

export type { EncoderInfo, VisionEncoder } from './encoder.js';
export { sameEncoder } from './encoder.js';
export { BuiltinEncoder, BUILTIN_INFO } from './builtin.js';

/** Encoder specs the CLI accepts, for help texts. */
export const ENCODER_SPECS = "'builtin' (default; no weights) — 'clip:<dir>' and 'siglip:<dir>' coming";

/**
 * Loads a frozen vision encoder by spec: `builtin`, or `<kind>:<local model dir>` for the
 * transformers.js encoders (not wired yet).
 */
export async function loadEncoder(spec: string): Promise<VisionEncoder> {
  const s = spec.trim();
  if (s === 'builtin') return new BuiltinEncoder();
  const m = /^(clip|siglip|blip2):(.+)$/.exec(s);
  if (m) {
    throw new InputError(
      `the ${m[1]} encoder is not available yet (only 'builtin' is); '${m[2]}' was not read`,
      `--encoder ${s}`,
    );
  }
  throw new InputError(`unknown encoder spec; expected ${ENCODER_SPECS}`, `--encoder ${s}`);
}
