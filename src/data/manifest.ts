import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { EncoderInfo } from '../screen/vision/encoder.js';
import { writeFileAtomic } from '../util/atomic.js';
import { readJsonIfExists } from '../util/json.js';
import { AUTOUI_VERSION } from '../util/version.js';
import { InputError } from '../util/errors.js';
import type { SplitName } from './types.js';

/**
 * DIR/manifest.json: the index of a shard directory. It names the encoder that made every
 * feature in DIR, and per subset the inputs, settings, finished shards (with sha256) and counts.
 * Readers enumerate shards through it; `data prepare` resumes from it.
 */

export const MANIFEST_FORMAT = 'autoui-shards/1';
export const MANIFEST_FILE = 'manifest.json';
export const SPLIT_NAMES: readonly SplitName[] = ['train', 'val', 'test'];

export interface ShardEntry {
  /** Path relative to DIR, e.g. `general/train-00003.arrow`. */
  file: string;
  split: SplitName;
  /** Shard k of a split holds that split's rows k·rowsPerShard … (k+1)·rowsPerShard − 1, in input order. */
  index: number;
  rows: number;
  bytes: number;
  sha256: string;
}

export interface InputFileEntry {
  path: string;
  bytes: number;
}

export type SplitCounts = Record<SplitName, number>;

export interface SubsetEntry {
  /** Input files in reading order; with the settings below they fix which row lands in which shard. */
  inputs: InputFileEntry[];
  splitsFile: { path: string; sha256: string };
  rowsPerShard: number;
  skipCorrupt: boolean;
  /** Where the rows' screen texts came from: 'none', 'annotations' (the records' own), or an OCR reader's id. Absent = 'none'. */
  screenText?: string;
  /** True once every input was read and every split's last shard written. */
  complete: boolean;
  started: string;
  finished: string | null;
  /** Rows (screens) per split in finished shards; final totals once complete. */
  screens: SplitCounts;
  /** Episodes per split; filled in when complete. */
  episodes: SplitCounts;
  /** Episodes the split file does not list: counted, not written. Filled in when complete. */
  unassigned: { episodes: number; screens: number; examples: string[] };
  /** Records read and skipped (corrupt) while reading the inputs; filled in when complete. */
  records: { read: number; skipped: number };
  shards: ShardEntry[];
}

export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  autoui: string;
  created: string;
  updated: string;
  encoder: EncoderInfo;
  subsets: Record<string, SubsetEntry>;
}

export function manifestPath(dir: string): string {
  return join(dir, MANIFEST_FILE);
}

export function zeroCounts(): SplitCounts {
  return { train: 0, val: 0, test: 0 };
}

/** Reads DIR/manifest.json; undefined when there is none. Malformed ones are an InputError naming the file. */
export async function readManifest(dir: string): Promise<Manifest | undefined> {
  const path = manifestPath(dir);
  const json = await readJsonIfExists(path);
  if (json === undefined) return undefined;
  return checkManifest(json, path);
}

/** Like readManifest, but a missing manifest is an error: DIR is not a shard directory. */
export async function requireManifest(dir: string): Promise<Manifest> {
  const m = await readManifest(dir);
  if (!m) throw new InputError(`no ${MANIFEST_FILE} here: not a shard directory (make one with 'autoui data prepare')`, dir);
  return m;
}

export async function writeManifest(dir: string, m: Manifest): Promise<void> {
  await writeFileAtomic(manifestPath(dir), JSON.stringify(m, null, 1) + '\n');
}

/**
 * Read-modify-write of one subset's entry: re-reading first keeps the entries that another
 * `data prepare` (of another subset, into the same DIR) wrote meanwhile.
 */
export async function updateSubset(dir: string, encoder: EncoderInfo, subset: string, entry: SubsetEntry): Promise<Manifest> {
  const now = new Date().toISOString();
  const m = (await readManifest(dir)) ?? {
    format: MANIFEST_FORMAT,
    autoui: AUTOUI_VERSION,
    created: now,
    updated: now,
    encoder,
    subsets: {},
  };
  m.updated = now;
  m.autoui = AUTOUI_VERSION;
  m.subsets[subset] = entry;
  await writeManifest(dir, m);
  return m;
}

/** sha256 of a file, streamed (shards are tens of MB). */
export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** True when the shard file on disk is exactly the one the manifest recorded. */
export async function verifyShard(dir: string, e: ShardEntry): Promise<boolean> {
  const path = join(dir, e.file);
  try {
    const s = await stat(path);
    if (s.size !== e.bytes) return false;
  } catch {
    return false;
  }
  return (await sha256File(path)) === e.sha256;
}

/** Shards of a split (optionally of some subsets) in reading order: subset by name, then shard index. */
export function shardsOf(m: Manifest, opts: { split?: SplitName; subsets?: readonly string[] } = {}): ShardEntry[] {
  const names = Object.keys(m.subsets).sort();
  const out: ShardEntry[] = [];
  for (const name of names) {
    if (opts.subsets && !opts.subsets.includes(name)) continue;
    const shards = m.subsets[name]!.shards.filter((s) => !opts.split || s.split === opts.split);
    out.push(...shards.sort((a, b) => SPLIT_NAMES.indexOf(a.split) - SPLIT_NAMES.indexOf(b.split) || a.index - b.index));
  }
  return out;
}

// --- validation: a hand-edited or truncated manifest must fail here, naming the field ---

type Json = Record<string, unknown>;

function isObj(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function field<T>(o: Json, key: string, where: string, ok: (v: unknown) => v is T, what: string): T {
  const v = o[key];
  if (!ok(v)) throw new InputError(`field '${where}${key}' must be ${what}, got ${JSON.stringify(v)}`);
  return v;
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const isNat = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isSplit = (v: unknown): v is SplitName => typeof v === 'string' && (SPLIT_NAMES as readonly string[]).includes(v);
const isCounts = (v: unknown): v is SplitCounts => isObj(v) && SPLIT_NAMES.every((s) => isNat(v[s]));
const isGrid = (v: unknown): v is [number, number] | null =>
  v === null || (Array.isArray(v) && v.length === 2 && v.every(isNat));

function checkManifest(json: unknown, path: string): Manifest {
  try {
    if (!isObj(json)) throw new InputError('must be a JSON object');
    if (json.format !== MANIFEST_FORMAT)
      throw new InputError(`field 'format' is ${JSON.stringify(json.format)}, expected '${MANIFEST_FORMAT}'`);
    const enc = field(json, 'encoder', '', isObj, 'an object');
    const encoder: EncoderInfo = {
      id: field(enc, 'id', 'encoder.', isStr, 'a string'),
      patches: field(enc, 'patches', 'encoder.', isNat, 'an integer'),
      dim: field(enc, 'dim', 'encoder.', isNat, 'an integer'),
      grid: field(enc, 'grid', 'encoder.', isGrid, 'null or [rows, cols]'),
      pooled: field(enc, 'pooled', 'encoder.', isBool, 'a boolean'),
    };
    // Optional (absent = 'stretch'); kept, or sameEncoder would tell a square-layout encoder from itself.
    if (enc.layout !== undefined) encoder.layout = field(enc, 'layout', 'encoder.', (v): v is 'stretch' | 'square' => v === 'stretch' || v === 'square', "'stretch' or 'square'");
    const subsets = field(json, 'subsets', '', isObj, 'an object');
    for (const [name, s] of Object.entries(subsets)) {
      const w = `subsets.${name}.`;
      if (!isObj(s)) throw new InputError(`field 'subsets.${name}' must be an object`);
      field(s, 'inputs', w, Array.isArray, 'an array');
      field(s, 'splitsFile', w, isObj, 'an object');
      field(s, 'rowsPerShard', w, isNat, 'an integer');
      field(s, 'skipCorrupt', w, isBool, 'a boolean');
      field(s, 'complete', w, isBool, 'a boolean');
      field(s, 'screens', w, isCounts, 'split counts');
      field(s, 'episodes', w, isCounts, 'split counts');
      const shards = field(s, 'shards', w, Array.isArray, 'an array');
      shards.forEach((e: unknown, i) => {
        const ws = `${w}shards[${i}].`;
        if (!isObj(e)) throw new InputError(`field '${w}shards[${i}]' must be an object`);
        field(e, 'file', ws, isStr, 'a string');
        field(e, 'split', ws, isSplit, 'train, val or test');
        field(e, 'index', ws, isNat, 'an integer');
        field(e, 'rows', ws, isNat, 'an integer');
        field(e, 'bytes', ws, isNat, 'an integer');
        field(e, 'sha256', ws, isStr, 'a string');
      });
    }
    return { ...(json as unknown as Manifest), encoder };
  } catch (err) {
    if (err instanceof InputError) throw new InputError(err.message, path);
    throw err;
  }
}
