import { readFile } from 'node:fs/promises';
import { InputError } from './errors.js';

/** Parses a JSON file; undefined when it does not exist, an InputError naming it when it is not JSON. */
export async function readJsonIfExists(path: string, hint = ''): Promise<unknown | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new InputError(`not valid JSON (${(err as Error).message})${hint}`, path);
  }
}

/** Parses JSON Lines, skipping blank lines; a bad line is an InputError naming `file:line`. */
export function parseJsonLines(text: string, file: string): Array<{ value: unknown; where: string }> {
  const out: Array<{ value: unknown; where: string }> = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const where = `${file}:${i + 1}`;
    try {
      out.push({ value: JSON.parse(line) as unknown, where });
    } catch (err) {
      throw new InputError(`not valid JSON (${(err as Error).message})`, where);
    }
  });
  return out;
}
