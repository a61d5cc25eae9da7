/**
 * Text tokenizers for the language side of Auto-UI.
 *
 * The default, `words-v1`, needs no downloaded vocabulary: it is built from the training goals and
 * typed texts. It is lossless (`decodeText(encodeText(s)) === s` for every well-formed string) and
 * keeps sequences short (a typical goal is one token per word).
 *
 * words-v1 id layout (fixed; `kind` names it):
 *   0 <pad> · 1 <eos> · 2 <unk> · 3..258 the 256 UTF-8 bytes · 259 <cap> · 260 <upper> · 261.. words.
 *
 * Every token but the modifiers stands for a literal string, so decoding is concatenation; byte
 * tokens are gathered into runs and decoded as UTF-8. `<cap>` / `<upper>` upper-case the first
 * letter / all of the next word, so "Chrome" and "EBAY" reuse the ids of "chrome" and "ebay".
 *
 * Action-codec special tokens are not part of a text tokenizer: the codec appends them after
 * `vocabSize` (see codec.ts), so a Hugging Face tokenizer can replace this one unchanged.
 */
import { InputError } from '../util/errors.js';

export interface TokenizerJSON {
  kind: string;
  [key: string]: unknown;
}

export interface TextTokenizer {
  /** Names the implementation and id layout, e.g. 'words-v1'. */
  readonly kind: string;
  /** Text ids are [0, vocabSize). The action codec's special tokens come after. */
  readonly vocabSize: number;
  readonly padId: number;
  readonly eosId: number;
  readonly unkId: number;
  /** Ids of the text, no eos. Throws InputError for strings that are not well-formed Unicode. */
  encodeText(text: string): number[];
  /** Inverse of encodeText. Skips pad/eos; lenient on sequences encodeText never makes (bad UTF-8 → U+FFFD). */
  decodeText(ids: number[]): string;
  /** True for ids that may appear inside encoded text (not pad/eos/unk or other reserved ids). */
  isTextId(id: number): boolean;
  /** Self-describing; saved inside checkpoints. */
  toJSON(): TokenizerJSON;
}

export const WORDS_V1 = 'words-v1';

export interface WordTokenizerJSON extends TokenizerJSON {
  kind: typeof WORDS_V1;
  /** The word strings, in id order starting at WORD_BASE. */
  words: string[];
}

const PAD = 0;
const EOS = 1;
const UNK = 2;
const BYTE_BASE = 3;
const CAP = BYTE_BASE + 256;
const UPPER = CAP + 1;
const WORD_BASE = UPPER + 1;

/**
 * Pre-tokenisation: letters (with their combining marks), digit runs and single other characters,
 * each taking one preceding ASCII space; whitespace runs leave their last space to the next word.
 * The alternatives cover every code point, so the pieces always concatenate back to the input.
 */
const PIECE_RE = / ?\p{L}[\p{L}\p{M}]*| ?\p{N}+| ?[^\s\p{L}\p{N}]|\s+(?!\S)|\s+/gu;
const LONE_SURROGATE_RE = /[\uD800-\uDFFF]/u;

export function splitPieces(text: string): string[] {
  return text.match(PIECE_RE) ?? [];
}

function assertWellFormed(text: string, where?: string): void {
  const m = LONE_SURROGATE_RE.exec(text);
  if (m) {
    throw new InputError(
      `text is not well-formed Unicode: lone surrogate U+${m[0].charCodeAt(0).toString(16).toUpperCase()} at index ${m.index}`,
      where,
    );
  }
}

/** Upper-cases the first letter, after one leading space if there is one. */
export function capitalise(word: string): string {
  const i = word.startsWith(' ') ? 1 : 0;
  const cp = word.codePointAt(i);
  if (cp === undefined) return word;
  const ch = String.fromCodePoint(cp);
  return word.slice(0, i) + ch.toUpperCase() + word.slice(i + ch.length);
}

const utf8 = new TextEncoder();
// ignoreBOM: a leading U+FEFF in a byte run is text, not a byte-order mark.
const utf8Decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

class WordTokenizer implements TextTokenizer {
  readonly kind = WORDS_V1;
  readonly padId = PAD;
  readonly eosId = EOS;
  readonly unkId = UNK;
  readonly vocabSize: number;
  private readonly words: readonly string[];
  private readonly ids = new Map<string, number>();
  /** Longest word in UTF-16 units: bounds the longest-match search. */
  private readonly maxWordLength: number;

  constructor(words: readonly string[]) {
    this.words = words;
    let maxLen = 1;
    words.forEach((w, i) => {
      this.ids.set(w, WORD_BASE + i);
      maxLen = Math.max(maxLen, w.length);
    });
    this.maxWordLength = maxLen;
    this.vocabSize = WORD_BASE + words.length;
  }

  encodeText(text: string): number[] {
    assertWellFormed(text);
    const out: number[] = [];
    for (const piece of splitPieces(text)) this.encodePiece(piece, out);
    return out;
  }

  private encodePiece(piece: string, out: number[]): void {
    const exact = this.ids.get(piece);
    if (exact !== undefined) {
      out.push(exact);
      return;
    }
    const lower = piece.toLowerCase();
    const lowerId = lower !== piece ? this.ids.get(lower) : undefined;
    if (lowerId !== undefined) {
      // Case mapping is not always reversible (e.g. 'ß', 'İ'), so only use a modifier that reproduces the piece.
      if (capitalise(lower) === piece) {
        out.push(CAP, lowerId);
        return;
      }
      if (lower.toUpperCase() === piece) {
        out.push(UPPER, lowerId);
        return;
      }
    }
    this.encodeByLongestMatch(piece, out);
  }

  /** Unknown piece: greedy longest known word at each position, else the UTF-8 bytes of one code point. */
  private encodeByLongestMatch(piece: string, out: number[]): void {
    let i = 0;
    while (i < piece.length) {
      let matched = 0;
      for (let len = Math.min(this.maxWordLength, piece.length - i); len >= 2; len--) {
        const id = this.ids.get(piece.slice(i, i + len));
        if (id !== undefined) {
          out.push(id);
          matched = len;
          break;
        }
      }
      if (matched > 0) {
        i += matched;
        continue;
      }
      const cp = piece.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      for (const b of utf8.encode(ch)) out.push(BYTE_BASE + b);
      i += ch.length;
    }
  }

  decodeText(ids: number[]): string {
    let text = '';
    let bytes: number[] = [];
    let modifier = 0;
    const flushBytes = (): void => {
      if (bytes.length > 0) {
        text += utf8Decoder.decode(Uint8Array.from(bytes));
        bytes = [];
      }
    };
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new RangeError(`decodeText: id ${id} at position ${k} is outside the text vocabulary [0, ${this.vocabSize})`);
      }
      if (id === PAD || id === EOS) continue;
      if (id >= BYTE_BASE && id < CAP) {
        modifier = 0; // a modifier applies only to a word that follows it directly
        bytes.push(id - BYTE_BASE);
        continue;
      }
      flushBytes();
      if (id === CAP || id === UPPER) {
        modifier = id;
        continue;
      }
      let piece = id === UNK ? '\uFFFD' : this.words[id - WORD_BASE]!;
      if (modifier === CAP) piece = capitalise(piece);
      else if (modifier === UPPER) piece = piece.toUpperCase();
      modifier = 0;
      text += piece;
    }
    flushBytes();
    return text;
  }

  isTextId(id: number): boolean {
    return Number.isInteger(id) && id >= BYTE_BASE && id < this.vocabSize;
  }

  toJSON(): WordTokenizerJSON {
    return { kind: WORDS_V1, words: [...this.words] };
  }

  /** For debugging and reports: a readable name for any text id. */
  tokenString(id: number): string {
    if (id === PAD) return '<pad>';
    if (id === EOS) return '<eos>';
    if (id === UNK) return '<unk>';
    if (id === CAP) return '<cap>';
    if (id === UPPER) return '<upper>';
    if (id >= BYTE_BASE && id < CAP) return `<0x${(id - BYTE_BASE).toString(16).toUpperCase().padStart(2, '0')}>`;
    return JSON.stringify(this.words[id - WORD_BASE]);
  }
}

/** A word is worth an id only if it is longer than one byte (single bytes already have ids). */
function isUsefulWord(w: string): boolean {
  return utf8.encode(w).length > 1;
}

export interface WordTokenizerOptions {
  /** Keep pieces seen at least this often (default 2). */
  minCount?: number;
  /** At most this many word ids, most frequent first (default 8000). */
  maxWords?: number;
}

/**
 * Builds the default tokenizer from a corpus (goals and typed texts). Counts every piece as written,
 * lower-cased and without its leading space; ties break by code-unit order so the same corpus always
 * gives the same vocabulary.
 */
export function buildWordTokenizer(corpus: Iterable<string>, opts: WordTokenizerOptions = {}): TextTokenizer {
  const minCount = opts.minCount ?? 2;
  const maxWords = opts.maxWords ?? 8000;
  if (!Number.isInteger(minCount) || minCount < 1) throw new RangeError(`minCount must be an integer ≥ 1, got ${minCount}`);
  if (!Number.isInteger(maxWords) || maxWords < 0) throw new RangeError(`maxWords must be an integer ≥ 0, got ${maxWords}`);
  const counts = new Map<string, number>();
  const bump = (w: string): void => {
    counts.set(w, (counts.get(w) ?? 0) + 1);
  };
  let index = 0;
  for (const text of corpus) {
    assertWellFormed(text, `corpus item ${index}`);
    for (const piece of splitPieces(text)) {
      // Bare forms let a word reuse its id after a quote or inside an unknown compound; lower-case
      // forms let capitalised variants share an id through <cap>/<upper>.
      const forms = new Set<string>([piece, piece.toLowerCase()]);
      if (piece.startsWith(' ')) for (const f of [...forms]) forms.add(f.slice(1));
      forms.forEach(bump);
    }
    index++;
  }
  const words = [...counts.entries()]
    .filter(([w, c]) => c >= minCount && isUsefulWord(w))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, maxWords)
    .map(([w]) => w);
  return new WordTokenizer(words);
}

function wordTokenizerFromJSON(j: TokenizerJSON): TextTokenizer {
  const words = j['words'];
  if (!Array.isArray(words)) throw new InputError('`words` must be an array of strings', 'tokenizer.words');
  const seen = new Set<string>();
  words.forEach((w: unknown, i) => {
    const where = `tokenizer.words[${i}]`;
    if (typeof w !== 'string') throw new InputError(`expected a string, got ${typeof w}`, where);
    assertWellFormed(w, where);
    if (!isUsefulWord(w)) throw new InputError(`word ${JSON.stringify(w)} is a single byte, which has its own id`, where);
    if (seen.has(w)) throw new InputError(`duplicate word ${JSON.stringify(w)}`, where);
    seen.add(w);
  });
  return new WordTokenizer(words as string[]);
}

type TokenizerLoader = (j: TokenizerJSON) => TextTokenizer;
const loaders = new Map<string, TokenizerLoader>([[WORDS_V1, wordTokenizerFromJSON]]);

/** Lets other tokenizer kinds (e.g. a Hugging Face T5 adapter) load from checkpoints without editing this file. */
export function registerTokenizerKind(kind: string, load: TokenizerLoader): void {
  loaders.set(kind, load);
}

export function tokenizerFromJSON(j: TokenizerJSON): TextTokenizer {
  if (typeof j !== 'object' || j === null || typeof j.kind !== 'string') {
    throw new InputError('expected an object with a string `kind`', 'tokenizer');
  }
  const load = loaders.get(j.kind);
  if (!load) throw new InputError(`unknown tokenizer kind ${JSON.stringify(j.kind)} (known: ${[...loaders.keys()].join(', ')})`, 'tokenizer.kind');
  return load(j);
}

/** Readable token names for debugging; falls back to the id for tokenizers without names. */
export function tokenString(tok: TextTokenizer, id: number): string {
  return tok instanceof WordTokenizer ? tok.tokenString(id) : `#${id}`;
}
