import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSplits, splitOf } from '../src/data/splits.js';
import { InputError } from '../src/util/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-splits-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

describe('loadSplits', () => {
  it('reads Auto-UI style ("val") and AITW style ("validation") files', async () => {
    const a = await loadSplits(await file('a.json', '{"train":["1","2"],"val":["3"],"test":["16150593985172894737"]}'));
    expect(a).toEqual({ train: ['1', '2'], val: ['3'], test: ['16150593985172894737'] });
    const b = await loadSplits(await file('b.json', '{"train":[],"validation":["x"],"test":["y"]}'));
    expect(b).toEqual({ train: [], val: ['x'], test: ['y'] });
  });

  const bad: [string, string, RegExp][] = [
    ['notjson', '{"train": [', /not valid JSON/],
    ['array', '[]', /must be a JSON object/],
    ['missing', '{"train":[],"test":[]}', /missing "val" \(or "validation"\)/],
    ['both', '{"train":[],"val":[],"validation":[],"test":[]}', /both "val" and "validation"/],
    ['number', '{"train":[16150593985172894737],"val":[],"test":[]}', /"train"\[0\] is the number .*must be strings/],
    ['notarray', '{"train":"1","val":[],"test":[]}', /"train" must be an array/],
    ['unknown', '{"train":[],"val":[],"test":[],"dev":[]}', /unknown key "dev"/],
    ['overlap', '{"train":["a"],"val":["b"],"test":["a"]}', /"a" is in both "train" and "test"/],
  ];
  it.each(bad)('%s → InputError naming the file', async (name, text, re) => {
    const p = await file(`${name}.json`, text);
    const err = await loadSplits(p).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message.startsWith(p)).toBe(true);
  });

  it('a missing file is an InputError', async () => {
    await expect(loadSplits(join(dir, 'nope.json'))).rejects.toThrow(/nope.json: cannot read split file/);
  });
});

describe('splitOf', () => {
  it('maps ids to their split and others to undefined', () => {
    const of = splitOf({ train: ['a', 'b'], val: ['c'], test: ['d'] });
    expect(['a', 'b', 'c', 'd', 'e'].map(of)).toEqual(['train', 'train', 'val', 'test', undefined]);
  });
});
