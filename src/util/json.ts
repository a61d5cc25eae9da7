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
