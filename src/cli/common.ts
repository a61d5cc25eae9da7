import { Option } from 'commander';
import { SUBSETS } from '../data/types.js';
import { TAP_SOURCES } from '../model/pointer.js';
import { DEFAULT_TEXT_BEAMS, DEFAULT_TEXT_START } from '../infer/text_beam.js';
import { InputError } from '../util/errors.js';

/** Prints one JSON document on stdout (the `--json` contract: stdout holds nothing else). */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

/** Parses a positive integer option, naming the option when it is not one. */
export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InputError(`expected an integer ≥ ${min}, got '${v}'`, name);
    return n;
  };
}

export function floatOption(name: string, min = -Infinity): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new InputError(`expected a number, got '${v}'`, name);
    if (n < min) throw new InputError(`expected a number ≥ ${min}, got '${v}'`, name);
    return n;
  };
}

/** A comma-separated list of screen aspects (width ÷ height), e.g. 0.45,0.5,0.5625; the range is checked where they are used. */
export function aspectList(name: string): (v: string) => number[] {
  return (v: string) => v.split(',').map((a) => floatOption(name)(a.trim()));
}

/** A subset drawn more than this many times per epoch would be memorised rather than learned from. */
const MAX_SUBSET_FRACTION = 10;

/**
 * Parses `name=f,name=f`: the share of each subset's training rows drawn per epoch, each in
 * (0, 10] (above 1 rows repeat; subsets left out keep all rows). Names are checked against the
 * shards when training starts (trainer.ts), so a typo cannot silently do nothing.
 */
export function subsetFractionOption(name: string): (v: string) => Record<string, number> {
  return (v: string) => {
    const out: Record<string, number> = {};
    for (const entry of v.split(',').map((e) => e.trim()).filter(Boolean)) {
      const [subset, frac, extra] = entry.split('=');
      if (!subset || frac === undefined || extra !== undefined) throw new InputError(`expected subset=fraction, got '${entry}'`, name);
      if (!/^[A-Za-z0-9_-]+$/.test(subset)) throw new InputError(`'${subset}' is not a subset name (AITW's: ${SUBSETS.join(', ')}; or the shards' own, such as web)`, name);
      const f = Number(frac);
      if (!(f > 0 && f <= MAX_SUBSET_FRACTION)) throw new InputError(`fraction for ${subset} must be in (0, ${MAX_SUBSET_FRACTION}] (above 1 its rows repeat), got '${frac}'`, name);
      out[subset] = f;
    }
    return out;
  };
}

/** `--text-beams`, shared by eval, predict, serve and run so all four type alike (infer/text_beam.ts). */
export function textBeamsOption(): Option {
  return new Option('--text-beams <n>', 'beam width for a typed text (1 = greedy)').argParser(intOption('--text-beams', 1)).default(DEFAULT_TEXT_BEAMS);
}

/** `--no-text-start` (or `--text-start` when off by default), shared like --text-beams (infer/text_beam.ts restart). */
export function textStartOption(): Option {
  return DEFAULT_TEXT_START
    ? new Option('--no-text-start', "type the text beams' run as it is, not held to the place the copy pointer picks where the goal holds its first word at several places")
    : new Option('--text-start', 'a copied text whose first word the goal holds at several places starts at the place the copy pointer picks').default(false);
}

/** `--tap-from`, shared by eval, predict and serve so all three decode taps alike (model/pointer.ts). */
export function tapFromOption(): Option {
  return new Option('--tap-from <source>', "where a decoded tap lands: the screen token the decoder's tap pointer picks (moved within a patch by the tap offset where the checkpoint has one; pointer-centre: at the token's centre), the one the screen attention looks at most, the coordinate tokens, or auto (the pointer for checkpoints that have one, else the attention for checkpoints trained with the grounding loss on a patch grid)")
    .choices(TAP_SOURCES)
    .default('auto');
}

/** `--ensemble <dir...>`, shared by eval, predict, serve and run: more checkpoints that answer with --checkpoint's (infer/ensemble.ts). */
export function ensembleOption(): Option {
  return new Option('--ensemble <dirs...>', "more checkpoints of the same data, codec and encoder that answer together with --checkpoint's: each decodes, and their answers are fused (the action type their mean probability favours; the medoid tap; the text most of them typed)");
}

/** The checkpoints named by --checkpoint and --ensemble, in that order. */
export function checkpointDirs(o: { checkpoint: string; ensemble?: string[] }): string[] {
  return [o.checkpoint, ...(o.ensemble ?? [])];
}
