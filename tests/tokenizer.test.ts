import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/util/errors.js';
import { buildWordTokenizer, splitPieces, tokenString, tokenizerFromJSON, type TextTokenizer } from '../src/model/tokenizer.js';

const GOALS = [
  "search for 'lg ultragear' on ebay",
  "Search for 'logitech g903' on ebay",
  'What is the price of a 12 inch pizza on walmart?',
  'Open a new Chrome private window',
  'open a new tab in chrome',
  'search for flights from NYC to London on google',
  "what's on the menu at chipotle?",
  'add a samsung galaxy s10 to the cart on ebay',
  'Search for hotels in Paris',
  'go to ebay.com, search for "corsair k70", and select the first entry',
  'install the Instagram app',
  'turn off wifi',
];

/** Test strings mixing everything the pre-tokeniser has to split deterministically. */
const nastyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'grapheme-composite', maxLength: 20 }),
  fc
    .array(
      fc.constantFrom(
        'search', 'Search', 'SEARCH', ' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u3000', "'", '"', '.', ',', 'ebay',
        'ß', 'İ', 'ǅ', 'ﬁ', 'é', 'e\u0301', '\u0301', '👍🏽', '👨‍👩‍👧', '🇫🇷', '中文', '日本語', 'ｆｕｌｌ', '\u0000', '\u0007',
        '\u200b', '\u200d', '\ufeff', '\uffff', '12', '٣', '½', '$1,299.99', 'ΣΊΣΥΦΟΣ', 'ﬀ', 'Ⅻ',
      ),
      { maxLength: 25 },
    )
    .map((parts) => parts.join('')),
);

function roundTrips(tok: TextTokenizer, s: string): boolean {
  return tok.decodeText(tok.encodeText(s)) === s;
}

describe('word tokenizer', () => {
  const tok = buildWordTokenizer(GOALS, { minCount: 1 });

  it('splits into pieces that concatenate back to the input', () => {
    expect(splitPieces("search for 'lg ultragear' on ebay")).toEqual([
      'search', ' for', " '", 'lg', ' ultragear', "'", ' on', ' ebay',
    ]);
    expect(splitPieces('a  b\n\n c ')).toEqual(['a', ' ', ' b', '\n\n', ' c', ' ']);
    fc.assert(fc.property(nastyText, (s) => splitPieces(s).join('') === s));
  });

  it('encodes a typical goal in one token per word', () => {
    const ids = tok.encodeText("search for 'lg ultragear' on ebay");
    expect(ids).toHaveLength(8);
    expect(ids.map((id) => tokenString(tok, id))).toEqual([
      '"search"', '" for"', '" \'"', '"lg"', '" ultragear"', '<0x27>', '" on"', '" ebay"',
    ]);
    expect(tok.decodeText(ids)).toBe("search for 'lg ultragear' on ebay");
  });

  it('keeps case losslessly, reusing lower-case ids through <cap>/<upper>', () => {
    const small = buildWordTokenizer(['open chrome now'], { minCount: 1 });
    const lower = small.encodeText('chrome');
    expect(lower).toHaveLength(1);
    const cap = small.encodeText('Chrome');
    expect(cap.map((id) => tokenString(small, id))).toEqual(['<cap>', '"chrome"']);
    expect(small.encodeText('CHROME').map((id) => tokenString(small, id))).toEqual(['<upper>', '"chrome"']);
    expect(small.decodeText(small.encodeText('Open CHROME Now'))).toBe('Open CHROME Now');
    // Mixed case the modifiers cannot express falls back, still lossless.
    expect(roundTrips(small, 'cHrOmE')).toBe(true);
  });

  it('falls back to known sub-words and then UTF-8 bytes for unknown words', () => {
    const small = buildWordTokenizer(['ultra gear'], { minCount: 1 });
    const ids = small.encodeText('ultragear');
    expect(ids.map((id) => tokenString(small, id))).toEqual(['"ultra"', '"gear"']);
    const emoji = small.encodeText('👍');
    expect(emoji.map((id) => tokenString(small, id))).toEqual(['<0xF0>', '<0x9F>', '<0x91>', '<0x8D>']);
    expect(small.decodeText(emoji)).toBe('👍');
  });

  it('is lossless for arbitrary Unicode, whatever vocabulary it was built from', () => {
    fc.assert(
      fc.property(fc.array(nastyText, { maxLength: 8 }), nastyText, (corpus, s) => {
        const t = buildWordTokenizer(corpus, { minCount: 1 });
        return roundTrips(t, s) && corpus.every((c) => roundTrips(t, c));
      }),
      { numRuns: 400 },
    );
    fc.assert(fc.property(nastyText, (s) => roundTrips(tok, s)), { numRuns: 1000 });
  });

  it('keeps edge cases byte-exact: BOM, NUL, empty, only spaces', () => {
    for (const s of ['', ' ', '   ', '\ufeff', '\ufeffsearch', 'a\u0000b', '\r\n\r\n', 'e\u0301\u0301']) {
      expect(tok.decodeText(tok.encodeText(s))).toBe(s);
    }
    expect(tok.encodeText('')).toEqual([]);
  });

  it('rejects lone surrogates with a clear error', () => {
    expect(() => tok.encodeText('ab\ud800c')).toThrow(InputError);
    expect(() => tok.encodeText('ab\ud800c')).toThrow(/lone surrogate U\+D800 at index 2/);
    expect(() => buildWordTokenizer(['ok', 'x\udc00'])).toThrow(/corpus item 1/);
  });

  it('builds the same vocabulary whatever the corpus order, honouring minCount and maxWords', () => {
    const a = buildWordTokenizer(GOALS, { minCount: 1 }).toJSON();
    const b = buildWordTokenizer([...GOALS].reverse(), { minCount: 1 }).toJSON();
    expect(a).toEqual(b);
    const frequent = buildWordTokenizer(GOALS, { minCount: 3 }).toJSON().words as string[];
    expect(frequent).toContain(' on');
    expect(frequent).not.toContain(' ultragear');
    const capped = buildWordTokenizer(GOALS, { minCount: 1, maxWords: 5 });
    expect(capped.vocabSize).toBe(261 + 5);
  });

  it('reserves pad 0, eos 1, unk 2; decodeText skips pad/eos and rejects out-of-range ids', () => {
    expect([tok.padId, tok.eosId, tok.unkId]).toEqual([0, 1, 2]);
    const ids = tok.encodeText('turn off wifi');
    expect(tok.decodeText([0, ...ids, 1])).toBe('turn off wifi');
    expect(() => tok.decodeText([tok.vocabSize])).toThrow(RangeError);
    expect([0, 1, 2].some((id) => tok.isTextId(id))).toBe(false);
    expect(tok.isTextId(3) && tok.isTextId(tok.vocabSize - 1) && !tok.isTextId(tok.vocabSize)).toBe(true);
  });

  it('survives JSON round trips and names the bad field', () => {
    const again = tokenizerFromJSON(JSON.parse(JSON.stringify(tok.toJSON())));
    expect(again.kind).toBe('words-v1');
    expect(again.vocabSize).toBe(tok.vocabSize);
    for (const g of GOALS) expect(again.encodeText(g)).toEqual(tok.encodeText(g));
    expect(() => tokenizerFromJSON({ kind: 'nope' })).toThrow(/unknown tokenizer kind "nope"/);
    expect(() => tokenizerFromJSON({ kind: 'words-v1', words: ['ab', 7] })).toThrow(/tokenizer\.words\[1\]/);
    expect(() => tokenizerFromJSON({ kind: 'words-v1', words: ['ab', 'ab'] })).toThrow(/duplicate/);
    expect(() => tokenizerFromJSON({ kind: 'words-v1', words: ['a'] })).toThrow(/single byte/);
  });

  it('keeps typical AITW goals short', () => {
    const lengths = GOALS.map((g) => tok.encodeText(g).length);
    const words = GOALS.map((g) => g.split(/\s+/).length);
    // One token per word plus punctuation: never more than twice the word count for in-vocabulary goals.
    lengths.forEach((n, i) => expect(n).toBeLessThanOrEqual(2 * words[i]!));
    expect(tok.encodeText('search for hotels in paris').length).toBe(5);
  });
});
