import { readFile } from 'node:fs/promises';
import { InputError } from '../util/errors.js';
import type { SplitName, Splits } from './types.js';

/** JSON key → split; AITW's own split files say "validation", Auto-UI's say "val". */
const KEYS: Record<string, SplitName> = { train: 'train', val: 'val', validation: 'val', test: 'test' };

/**
 * Loads a split file `{"train": [...], "val"|"validation": [...], "test": [...]}` of episode ids.
 * Ids must be JSON strings (AITW ids exceed 2^53, so numbers would already have lost digits).
 */
export async function loadSplits(path: string): Promise<Splits> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InputError(`cannot read split file (${(err as Error).message})`, path);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InputError(`split file is not valid JSON (${(err as Error).message})`, path);
  }
  return parseSplits(json, path);
}

/** Validates parsed split JSON; `where` names its source in errors. */
export function parseSplits(json: unknown, where: string): Splits {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new InputError('split file must be a JSON object {"train": [...], "val": [...], "test": [...]}', where);
  const out: Partial<Splits> = {};
  for (const [key, ids] of Object.entries(json)) {
    const name = KEYS[key];
    if (!name) throw new InputError(`unknown key "${key}" (expected train, val or validation, test)`, where);
    if (out[name]) throw new InputError(`both "val" and "validation" are present`, where);
    if (!Array.isArray(ids)) throw new InputError(`"${key}" must be an array of episode ids`, where);
    ids.forEach((id: unknown, i) => {
      if (typeof id !== 'string')
        throw new InputError(
          `"${key}"[${i}] is ${typeof id === 'number' ? `the number ${id}` : JSON.stringify(id)}; episode ids must be strings`,
          where,
        );
    });
    out[name] = ids as string[];
  }
  for (const name of ['train', 'val', 'test'] as const)
    if (!out[name]) throw new InputError(`missing "${name}"${name === 'val' ? ' (or "validation")' : ''}`, where);
  const splits = out as Splits;
  const owner = new Map<string, SplitName>();
  for (const name of ['train', 'val', 'test'] as const)
    for (const id of splits[name]) {
      const prev = owner.get(id);
      if (prev && prev !== name) throw new InputError(`episode id "${id}" is in both "${prev}" and "${name}"`, where);
      owner.set(id, name);
    }
  return splits;
}

/** Lookup from episode id to its split (undefined when the id is in none). */
export function splitOf(splits: Splits): (episodeId: string) => SplitName | undefined {
  const owner = new Map<string, SplitName>();
  for (const name of ['train', 'val', 'test'] as const) for (const id of splits[name]) owner.set(id, name);
  return (episodeId) => owner.get(episodeId);
}
