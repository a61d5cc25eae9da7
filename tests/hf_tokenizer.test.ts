import fc from 'fast-check';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionCodec } from '../src/model/codec.js';
import { HF_TOKENIZER, loadHfTokenizer } from '../src/model/hf_tokenizer.js';
import { tokenizerFromJSON } from '../src/model/tokenizer.js';
import { InputError } from '../src/util/errors.js';

/*
 * The fixture vocabulary (scripts/make_t5_fixtures.py): <pad> 0, </s> 1, <unk> 2, then Unigram
 * pieces with fixed scores, so the best segmentation of each test string can be worked out by hand.
 */
const FOLDER = join(import.meta.dirname, 'fixtures', 't5', 'flan-t5');
const SPIECE = join(import.meta.dirname, 'fixtures', 't5', 'spiece-only');
const ID = {
  '▁': 3, '▁open': 4, '▁the': 5, '▁app': 6, '▁search': 7, '▁for': 8, '▁coffee': 9, '▁near': 10, '▁me': 11,
  '▁a': 12, '▁s': 13, '▁c': 14, e: 15, a: 16, o: 17, p: 18, n: 19, t: 20, h: 21, r: 22, c: 23, '.': 36,
} as const;
const LETTERS = 'eaopntrhcfmilsdguybwkxvzjq';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-hf-tok-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Hugging Face tokenizer from a local folder', () => {
  it('encodes by the Unigram vocabulary (worked out by hand) and decodes back', async () => {
    const tok = await loadHfTokenizer(FOLDER);
    expect(tok.kind).toBe(HF_TOKENIZER);
    expect([tok.padId, tok.eosId, tok.unkId]).toEqual([0, 1, 2]);
    expect(tok.vocabSize).toBe(44);
    expect(tok.encodeText('open the app')).toEqual([ID['▁open'], ID['▁the'], ID['▁app']]);
    expect(tok.encodeText('search for coffee near me')).toEqual([7, 8, 9, 10, 11]);
    // "seen": ▁s+e+e+n scores −4.5−15 = −19.5, beating ▁+s+e+e+n (−22).
    expect(tok.encodeText('seen')).toEqual([ID['▁s'], ID.e, ID.e, ID.n]);
    // "apps": ▁app + s beats ▁a + p + p + s.
    expect(tok.encodeText('apps.')).toEqual([ID['▁app'], 28, ID['.']]);
    // Characters outside the vocabulary become <unk>; no eos is added to text.
    expect(tok.encodeText('Open')).toEqual([ID['▁'], tok.unkId, ID.p, ID.e, ID.n]);
    expect(tok.decodeText([4, 5, 6, 1, 0])).toBe('open the app');
    expect(tok.decodeText([])).toBe('');
    expect(() => tok.encodeText('a\uD800b')).toThrow(InputError);
    expect(() => tok.decodeText([44])).toThrow(RangeError);
  });

  it('round-trips lower-case text made of vocabulary letters (whitespace runs collapse to one space)', async () => {
    const tok = await loadHfTokenizer(FOLDER);
    const word = fc.string({ unit: fc.constantFrom(...LETTERS), minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 6 }), fc.array(fc.constantFrom(' ', '  ', '\t'), { minLength: 6, maxLength: 6 }), (words, gaps) => {
        const text = words.map((w, i) => (i ? gaps[i]! : '') + w).join('');
        const ids = tok.encodeText(text);
        expect(ids.every((id) => tok.isTextId(id))).toBe(true);
        expect(tok.decodeText(ids)).toBe(words.join(' '));
      }),
      { numRuns: 200 },
    );
  });

  it('vocabSize can be raised to the embedding size; codec tokens start after it', async () => {
    const tok = await loadHfTokenizer(FOLDER, { vocabSize: 48 });
    expect(tok.vocabSize).toBe(48);
    expect(tok.isTextId(43)).toBe(true);
    expect(tok.isTextId(44)).toBe(false); // embedding padding rows are no text
    expect([0, 1, 2].some((id) => tok.isTextId(id))).toBe(false);
    expect(tok.decodeText([4, 45, 5])).toBe('open the');
    const codec = new ActionCodec(tok);
    expect(codec.vocabSize).toBeGreaterThan(48);
    await expect(loadHfTokenizer(FOLDER, { vocabSize: 40 })).rejects.toThrow(/smaller than the tokenizer's \(44 ids\)/);
  });

  it('saves into a checkpoint and comes back through tokenizerFromJSON without the folder', async () => {
    const tok = await loadHfTokenizer(FOLDER, { vocabSize: 48 });
    const back = tokenizerFromJSON(JSON.parse(JSON.stringify(tok.toJSON())));
    expect(back.kind).toBe(HF_TOKENIZER);
    expect(back.vocabSize).toBe(48);
    for (const s of ['open the app', 'search for coffee near me', 'seen apps.']) expect(back.encodeText(s)).toEqual(tok.encodeText(s));
    expect(() => tokenizerFromJSON({ kind: HF_TOKENIZER, tokenizer: 3 })).toThrow(/tokenizer\.tokenizer/);
  });

  it('a folder with only spiece.model (the original T5 releases) tokenizes the same, with extra ids appended', async () => {
    const json = await loadHfTokenizer(FOLDER);
    const spm = await loadHfTokenizer(SPIECE);
    expect(spm.vocabSize).toBe(46); // 44 pieces + extra_ids 2 from tokenizer_config.json
    for (const s of ['open the app', 'seen apps.', 'search  for\tcoffee', 'Open']) expect(spm.encodeText(s)).toEqual(json.encodeText(s));
    expect(spm.isTextId(45)).toBe(false); // <extra_id_0>: special
    expect(spm.decodeText([4, 45, 5])).toBe('open the');
  });

  it('names the folder or file at fault', async () => {
    await expect(loadHfTokenizer(dir)).rejects.toThrow(/no tokenizer here/);
    const broken = join(dir, 'broken');
    await cp(FOLDER, broken, { recursive: true });
    await writeFile(join(broken, 'tokenizer.json'), '{"model": ');
    const err = await loadHfTokenizer(broken).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain(join(broken, 'tokenizer.json'));
    const badSpm = join(dir, 'bad-spm');
    await cp(SPIECE, badSpm, { recursive: true });
    await writeFile(join(badSpm, 'spiece.model'), Buffer.from([0xff, 0xff, 0xff]));
    await expect(loadHfTokenizer(badSpm)).rejects.toThrow(/not a SentencePiece model/);
  });
});
