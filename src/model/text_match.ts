/*
 * The lexical match of a screen's text items with what the model is asked (our extension; docs/
 * design.md, "Lexical match"). A fixed, parameter-free feature of each text item, computed from the
 * item's characters and the query's (the goal; a referring phrase), that joins the item's screen
 * token (screen_text.ts) through a learned weight W_m:
 *   n(s)   = NFKC, lower case, every run of characters that are not letters or digits → one space
 *   T(s)   = the character trigrams of each word of n(s), with its boundaries (" ab", "abc", "bc ")
 *   c_i    = |T(item_i) ∩ T(q)|
 *   f_i    = [ c_i / |T(item_i)| ,                 how much of the item the query spells
 *              min(1, c_i / SHARED_SCALE) ,        how much they share (longer names count more)
 *              1 if n(item_i) is a run of whole words of n(q) ,
 *              min(1, w_i / RUN_SCALE) ]           w_i: characters in the longest run of whole words both hold
 * Why characters and not the model's tokens: a name is spelled the same way in the goal and on the
 * screen whatever its case, and whether or not the tokenizer knows it; a typed goal and an OCR'd
 * screen differ in case and punctuation more often than in letters. Why a feature and not a rule:
 * it says how well each item is spelled in the query and nothing else; the attention still decides
 * what to look at and the decoder what to do (no item is picked here), and `--no-text-match` trains
 * the model without it.
 */

/** f_i's width. */
export const MATCH_DIM = 4;
/** Shared trigrams at which the second feature saturates: a name of about four words. */
const SHARED_SCALE = 24;
/** Characters of a common word run at which the fourth feature saturates: about two long words. */
const RUN_SCALE = 16;

/** n(s): NFKC, lower case, non-alphanumeric runs → one space, trimmed. */
export function normalizeText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/** T(s) of a normalised string: each word's trigrams with its boundaries. */
function trigrams(norm: string): Set<string> {
  const out = new Set<string>();
  for (const word of norm.split(' ')) {
    if (!word) continue;
    const w = ` ${word} `;
    for (let i = 0; i + 3 <= w.length; i++) out.add(w.slice(i, i + 3));
  }
  return out;
}

/** A query, analysed once and matched against any number of items. */
export class MatchQuery {
  private readonly grams: Set<string>;
  private readonly words: string[];
  private readonly padded: string;

  constructor(query: string) {
    const norm = normalizeText(query);
    this.grams = trigrams(norm);
    this.words = norm ? norm.split(' ') : [];
    this.padded = ` ${norm} `;
  }

  /** f for one item, written at `out[offset .. offset + MATCH_DIM)`; zeros for an item with no letter or digit. */
  features(item: string, out: Float32Array = new Float32Array(MATCH_DIM), offset = 0): Float32Array {
    const norm = normalizeText(item);
    const grams = trigrams(norm);
    if (grams.size === 0) {
      out.fill(0, offset, offset + MATCH_DIM);
      return out;
    }
    let shared = 0;
    for (const g of grams) if (this.grams.has(g)) shared++;
    out[offset] = shared / grams.size;
    out[offset + 1] = Math.min(1, shared / SHARED_SCALE);
    out[offset + 2] = this.padded.includes(` ${norm} `) ? 1 : 0;
    out[offset + 3] = Math.min(1, this.longestRun(norm.split(' ')) / RUN_SCALE);
    return out;
  }

  /** Characters (spaces between words included) of the longest run of consecutive words the item and the query share. */
  private longestRun(item: readonly string[]): number {
    const q = this.words;
    let best = 0;
    // run[j]: the shared run ending at item word i − 1 and query word j − 1, in characters (DP over one row).
    let prev = new Array<number>(q.length + 1).fill(0);
    for (let i = 1; i <= item.length; i++) {
      const row = new Array<number>(q.length + 1).fill(0);
      for (let j = 1; j <= q.length; j++) {
        if (item[i - 1] !== q[j - 1]) continue;
        row[j] = prev[j - 1]! > 0 ? prev[j - 1]! + 1 + item[i - 1]!.length : item[i - 1]!.length;
        best = Math.max(best, row[j]!);
      }
      prev = row;
    }
    return best;
  }
}

/** f for every item against one query, row-major [items, MATCH_DIM]. */
export function matchFeatures(query: string | MatchQuery, items: readonly string[]): Float32Array {
  const q = typeof query === 'string' ? new MatchQuery(query) : query;
  const out = new Float32Array(items.length * MATCH_DIM);
  items.forEach((item, i) => q.features(item, out, i * MATCH_DIM));
  return out;
}
