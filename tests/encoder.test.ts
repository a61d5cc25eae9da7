import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RawImage } from '../src/screen/types.js';
import { BUILTIN_INFO, BUILTIN_LAYOUT, BuiltinEncoder, builtinFeatures, builtinGeometry, resizeForBuiltin } from '../src/screen/vision/builtin.js';
import { COLOUR_BINS, GREY_BINS, colourMemberships } from '../src/screen/vision/builtin/colour.js';
import { patchBox, patchIsReal, patchLayout } from '../src/screen/vision/encoder.js';
import { loadEncoder } from '../src/screen/vision/index.js';
import { InputError } from '../src/util/errors.js';
import { bytesOf } from './helpers/bytes.js';

type RGB = [number, number, number];

/** A tiny drawing surface for hand-made screens. */
function blank(width: number, height: number, bg: RGB): RawImage {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) data.set(bg, i * 3);
  return { width, height, channels: 3, data };
}
/** Sets pixel (x, y) if it lies on the image (shapes may run off small screens). */
function put(img: RawImage, x: number, y: number, c: RGB): void {
  if (x >= 0 && y >= 0 && x < img.width && y < img.height) img.data.set(c, (y * img.width + x) * 3);
}
function fillRect(img: RawImage, x: number, y: number, w: number, h: number, c: RGB): void {
  for (let yy = Math.round(y); yy < Math.round(y + h); yy++) for (let xx = Math.round(x); xx < Math.round(x + w); xx++) put(img, xx, yy, c);
}
function fillCircle(img: RawImage, cx: number, cy: number, r: number, c: RGB): void {
  for (let yy = Math.floor(cy - r); yy <= Math.ceil(cy + r); yy++)
    for (let xx = Math.floor(cx - r); xx <= Math.ceil(cx + r); xx++) if ((xx - cx) ** 2 + (yy - cy) ** 2 <= r * r) put(img, xx, yy, c);
}
/** Text-like stripes: thin dark strokes on a line, `s` pixels a unit. */
function fakeText(img: RawImage, x: number, y: number, w: number, s = 1): void {
  for (let xx = x; xx < x + w; xx += 3 * s) fillRect(img, xx, y, s, 7 * s, [30, 30, 30]);
  fillRect(img, x, y + 3 * s, w, s, [30, 30, 30]);
}

/** Two screen sizes of different aspect: the demo's 1:2 and a 1080×2400 phone's 0.45. */
const SIZES = [
  { width: 160, height: 320 },
  { width: 216, height: 480 },
] as const;

/** A phone-like screen of `size`, drawn in units of its patch side so both aspects show the same UI. */
function screen(size: { width: number; height: number }, iconColour: RGB): RawImage {
  const u = size.width / 8; // one patch side in pixels (portrait screens fill the 8 columns)
  const img = blank(size.width, size.height, [245, 245, 245]);
  fillRect(img, 0, 0, size.width, 0.8 * u, [40, 40, 40]);
  fillRect(img, 1.2 * u, 2 * u, 1.2 * u, 1.2 * u, iconColour);
  fillCircle(img, 1.8 * u, 2.6 * u, 0.35 * u, [255, 255, 255]);
  fakeText(img, Math.round(2.8 * u), Math.round(2.4 * u), Math.round(4 * u));
  fillRect(img, 5.5 * u, 6 * u, 1.5 * u, 0.7 * u, [30, 140, 60]);
  return img;
}

const { patches, dim } = BUILTIN_INFO;
const [gridRows, gridCols] = BUILTIN_INFO.grid!;
const vec = (f: Float32Array, p: number) => f.subarray(p * dim, (p + 1) * dim);
const group = (f: Float32Array, p: number, g: keyof typeof BUILTIN_LAYOUT) => Array.from(vec(f, p).subarray(...BUILTIN_LAYOUT[g]));
const same = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.from(a).every((v, k) => v === b[k]);
const dist = (a: number[], b: number[]) => Math.sqrt(a.reduce((s, v, k) => s + (v - b[k]!) ** 2, 0));

describe('builtin encoder: grid and layout', () => {
  it('is a 20×8 square-layout grid whose groups tile the patch vector', () => {
    expect(BUILTIN_INFO).toMatchObject({ id: 'builtin-v6', patches: 160, grid: [20, 8], pooled: false, layout: 'square' });
    const spans = Object.values(BUILTIN_LAYOUT).sort((a, b) => a[0] - b[0]);
    expect(spans[0]![0]).toBe(0);
    spans.forEach((s, k) => k > 0 && expect(s[0]).toBe(spans[k - 1]![1]));
    expect(spans.at(-1)![1]).toBe(dim);
  });

  it('fills exactly the patches patchLayout calls real, and leaves padding all zero', async () => {
    const sizes = [...SIZES, { width: 1080, height: 2400 }, { width: 100, height: 50 }, { width: 90, height: 300 }];
    const out = await new BuiltinEncoder().encode(sizes.map((s) => screen(s, [220, 40, 40])));
    sizes.forEach((size, i) => {
      const layout = patchLayout(BUILTIN_INFO, size)!;
      const g = builtinGeometry(size);
      expect([g.rows, g.cols]).toEqual([layout.rows, layout.cols]);
      for (let p = 0; p < patches; p++) {
        const v = vec(out[i]!, p);
        if (patchIsReal(layout, p)) expect(v.some((x) => x !== 0), `${size.width}×${size.height} patch ${p}`).toBe(true);
        else expect(v.every((x) => x === 0), `${size.width}×${size.height} padding patch ${p}`).toBe(true);
      }
    });
    // 1:2 fills 16 rows; 0.45 fills 18 (the last one cut short); 8 columns either way.
    expect(patchLayout(BUILTIN_INFO, SIZES[0])!.rows).toBe(16);
    expect(patchLayout(BUILTIN_INFO, SIZES[1])!.rows).toBe(18);
  });

  it('puts a colour where patchBox says its patch is, at both aspects', async () => {
    for (const size of SIZES) {
      const layout = patchLayout(BUILTIN_INFO, size)!;
      const p = 5 * gridCols + 3;
      const [y, x, h, w] = patchBox(layout, p);
      const img = blank(size.width, size.height, [245, 245, 245]);
      fillRect(img, x * size.width, y * size.height, w * size.width, h * size.height, [30, 60, 220]);
      const [f] = await new BuiltinEncoder().encode([img]);
      const hued = (q: number) => group(f!, q, 'histogram').slice(GREY_BINS).reduce((s, v) => s + v, 0);
      expect(hued(p)).toBeGreaterThan(0.9);
      for (const q of [p - 1, p + 1, p - gridCols, p + gridCols]) expect(hued(q)).toBeLessThan(0.1);
      // The position code's first two numbers are the patch box's centre, in [-1, 1].
      const [cy, cx] = group(f!, p, 'position');
      expect(cy).toBeCloseTo(2 * (y + h / 2) - 1, 5);
      expect(cx).toBeCloseTo(2 * (x + w / 2) - 1, 5);
    }
  });

  it('keeps the aspect: the same UI drawn at 1:2 and at 0.45 gives nearly the same patch features', async () => {
    const [a, b] = await new BuiltinEncoder().encode(SIZES.map((s) => screen(s, [220, 40, 40])));
    // The icon's patch (row 2, column 1) and the text's (row 2, column 4), far from any screen edge.
    for (const p of [2 * gridCols + 1, 2 * gridCols + 4]) {
      for (const g of ['histogram', 'pairs', 'luma'] as const) {
        const d = dist(group(a!, p, g), group(b!, p, g));
        const n = Math.sqrt(group(a!, p, g).reduce((s, v) => s + v * v, 0));
        expect(d / n, `${g} of patch ${p}`).toBeLessThan(0.2);
      }
    }
  });
});

describe('builtin encoder: features', () => {
  it('gives one finite, roughly unit-scale patches×dim vector per image', async () => {
    const out = await new BuiltinEncoder().encode([screen(SIZES[0], [220, 40, 40]), screen(SIZES[1], [40, 90, 220]), blank(1080, 2400, [0, 0, 0])]);
    expect(out).toHaveLength(3);
    for (const f of out) {
      expect(f).toBeInstanceOf(Float32Array);
      expect(f.length).toBe(patches * dim);
      expect(f.every((v) => Number.isFinite(v) && Math.abs(v) <= 1.5)).toBe(true);
    }
  });

  it('is deterministic across calls and instances, and independent of the rest of the batch', async () => {
    const img = screen(SIZES[1], [220, 40, 40]);
    const [a] = await new BuiltinEncoder().encode([img]);
    const b = await new BuiltinEncoder().encode([screen(SIZES[0], [1, 2, 3]), img, blank(1080, 2400, [9, 9, 9]), img]);
    expect(bytesOf(b[1]!).equals(bytesOf(a!))).toBe(true);
    expect(bytesOf(b[3]!).equals(bytesOf(a!))).toBe(true);
  });

  it('encodeInto writes the batch side by side into the array given, and refuses one of another size', async () => {
    const images = [screen(SIZES[0], [1, 2, 3]), screen(SIZES[1], [220, 40, 40])];
    const size = BUILTIN_INFO.patches * BUILTIN_INFO.dim;
    const enc = new BuiltinEncoder();
    const out = new Float32Array(2 * size);
    expect(await enc.encodeInto(images, out)).toBe(out);
    const one = await enc.encode(images);
    expect(Array.from(out)).toEqual([...one[0]!, ...one[1]!]);
    await expect(enc.encodeInto(images, new Float32Array(size))).rejects.toThrow(/out has \d+ values, expected 2×/);
  });

  it('changing one icon colour changes only the patches at or next to the icon (and its rows’ context)', async () => {
    const size = SIZES[1];
    const [red, blue] = await new BuiltinEncoder().encode([screen(size, [220, 40, 40]), screen(size, [40, 90, 220])]);
    const layout = patchLayout(BUILTIN_INFO, size)!;
    const side = layout.rowHeight * size.height; // patch side in screen pixels
    // The icon's box, widened by half a patch (the pair and pattern windows) and a pixel of resize kernel.
    const m = side / 2 + size.width / 64;
    const u = size.width / 8;
    const box = { x0: 1.2 * u - m, x1: 2.4 * u + m, y0: 2 * u - m, y1: 3.2 * u + m };
    const [r0, r1] = BUILTIN_LAYOUT.row;
    let changed = 0;
    for (let p = 0; p < patches; p++) {
      const [y, x, h, w] = patchBox(layout, p).map((v, k) => v * (k % 2 === 0 ? size.height : size.width));
      const local = (f: Float32Array) => Array.from(vec(f, p)).filter((_, k) => k < r0 || k >= r1);
      const near = x! < box.x1 && x! + w! > box.x0 && y! < box.y1 && y! + h! > box.y0;
      if (!same(local(red!), local(blue!))) {
        changed++;
        expect(near, `patch ${p} is far from the icon`).toBe(true);
      }
      const iconRows = y! < box.y1 && y! + h! > box.y0;
      if (!iconRows) expect(same(group(red!, p, 'row'), group(blue!, p, 'row')), `row context of patch ${p}`).toBe(true);
      expect(group(red!, p, 'position')).toEqual(group(blue!, p, 'position'));
    }
    expect(changed).toBeGreaterThan(0);
  });

  it('colour pairs fire on an icon’s two colours wherever it sits against the grid', async () => {
    const disc: RGB = [120, 60, 200];
    const glyph: RGB = [250, 250, 250];
    // The pair bins are whatever the quantiser makes of the two colours: no palette is assumed.
    const top = (c: RGB) => [...colourMemberships(c[0] / 255, c[1] / 255, c[2] / 255)].sort((a, b) => b[1] - a[1])[0]![0];
    const [a, b] = [top(disc), top(glyph)].sort((x, y) => x - y) as [number, number];
    const pairIndex = BUILTIN_LAYOUT.pairs[0] + a * COLOUR_BINS - (a * (a - 1)) / 2 + (b - a);
    const iconAt = (x: number, y: number) => {
      const img = blank(216, 480, [245, 245, 245]);
      fillCircle(img, x, y, 14, disc);
      fillRect(img, x - 5, y - 5, 10, 10, glyph);
      return img;
    };
    // 27 px patches: the second icon sits half a patch off the first, straddling a patch corner.
    const [centred, straddling, none] = await new BuiltinEncoder().encode([iconAt(67, 121), iconAt(81, 135), blank(216, 480, [245, 245, 245])]);
    const best = (f: Float32Array) => Math.max(...Array.from({ length: patches }, (_, p) => f[p * dim + pairIndex]!));
    expect(best(centred!)).toBeGreaterThan(0.1);
    expect(best(straddling!) / best(centred!)).toBeGreaterThan(0.7);
    expect(best(none!)).toBe(0);
  });

  it('row context: every patch left of a switch carries its colour, wherever the switch is in the row', async () => {
    const row = 6;
    const settingsRow = (switchCol: number, colour: RGB) => {
      const img = blank(216, 480, [245, 245, 245]);
      fillCircle(img, 13, row * 27 + 13, 9, [30, 136, 229]);
      fakeText(img, 32, row * 27 + 9, 60);
      fillRect(img, switchCol * 27 + 4, row * 27 + 8, 20, 11, colour);
      return img;
    };
    const enc = new BuiltinEncoder();
    for (const col of [4, 7]) {
      const [on, off] = await enc.encode([settingsRow(col, [26, 115, 232]), settingsRow(col, [189, 193, 198])]);
      const context = (f: Float32Array, c: number) => group(f, row * gridCols + c, 'row');
      // The icon's patch does not see the switch, but its row context does.
      expect(group(on!, row * gridCols, 'histogram')).toEqual(group(off!, row * gridCols, 'histogram'));
      expect(dist(context(on!, 0), context(off!, 0))).toBeGreaterThan(0.15);
      for (let c = 1; c < col; c++) expect(dist(context(on!, c), context(off!, c))).toBeGreaterThan(0.15);
    }
  });

  it('local binary patterns tell two glyph shapes apart more than shifts of one glyph', async () => {
    // Same two colours, so colour and pair features cannot separate the shapes.
    const icon = (x: number, y: number, glyph: 'square' | 'circle') => {
      const img = blank(216, 480, [245, 245, 245]);
      fillCircle(img, x, y, 18, [30, 136, 229]);
      if (glyph === 'square') fillRect(img, x - 7, y - 7, 15, 15, [255, 255, 255]);
      else fillCircle(img, x, y, 8, [255, 255, 255]);
      return img;
    };
    const at = [[67, 135], [71, 138], [77, 142], [82, 139]] as const;
    const enc = new BuiltinEncoder();
    const squares = await enc.encode(at.map(([x, y]) => icon(x, y, 'square')));
    const circles = await enc.encode(at.map(([x, y]) => icon(x, y, 'circle')));
    // Summed over the screen, as a linear attention score adds up the patches around the icon.
    const bag = (f: Float32Array) => {
      const v = new Array<number>(BUILTIN_LAYOUT.lbp[1] - BUILTIN_LAYOUT.lbp[0]).fill(0);
      for (let p = 0; p < patches; p++) group(f, p, 'lbp').forEach((x, k) => (v[k]! += x * x));
      return v;
    };
    const mean = (xs: number[]) => xs.reduce((s, v) => s + v, 0) / xs.length;
    const [sq, ci] = [squares.map(bag), circles.map(bag)];
    const shape = mean(sq.flatMap((a) => ci.map((b) => dist(a, b))));
    const shift = mean([...sq, ...ci].flatMap((a, i, all) => all.slice(i + 1, i < 4 ? 4 : 8).map((b) => dist(a, b))));
    expect(shape).toBeGreaterThan(1.5 * shift);
  });

  it('tells text-like texture from flat background', async () => {
    const img = blank(216, 480, [245, 245, 245]);
    fakeText(img, 54, 200, 108);
    const [f] = await new BuiltinEncoder().encode([img]);
    const energy = (p: number) => group(f!, p, 'edges').reduce((s, v) => s + v, 0);
    const textPatch = Math.floor(203 / 27) * gridCols + 3;
    expect(energy(textPatch)).toBeGreaterThan(1);
    expect(energy(gridCols * 12)).toBe(0);
  });

  it('position codes differ for every pair of real patches and do not depend on content', async () => {
    const size = SIZES[1];
    const [a, b] = await new BuiltinEncoder().encode([blank(size.width, size.height, [128, 128, 128]), screen(size, [7, 200, 30])]);
    const layout = patchLayout(BUILTIN_INFO, size)!;
    const real = Array.from({ length: patches }, (_, p) => p).filter((p) => patchIsReal(layout, p));
    const codes = real.map((p) => group(a!, p, 'position'));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: real.length - 1 }), fc.integer({ min: 0, max: real.length - 1 }), (i, j) => {
        const d = dist(codes[i]!, codes[j]!);
        return i === j ? d === 0 : d > 0.05;
      }),
    );
    real.forEach((p, i) => expect(group(b!, p, 'position')).toEqual(codes[i]));
  });
});

describe('builtin encoder: inputs', () => {
  it('reads grey and grey+alpha like RGB with equal channels, and RGBA like RGB', async () => {
    const coloured = screen(SIZES[1], [220, 40, 40]);
    const grey: RawImage = { ...coloured, channels: 1, data: coloured.data.filter((_, i) => i % 3 === 1) };
    const rgb: RawImage = { ...coloured, data: coloured.data.map((_, i) => grey.data[Math.floor(i / 3)]!) };
    const greyAlpha: RawImage = { ...rgb, channels: 2, data: new Uint8Array(rgb.width * rgb.height * 2).map((_, i) => (i % 2 ? 255 : rgb.data[(i >> 1) * 3]!)) };
    const rgba: RawImage = { ...coloured, channels: 4, data: new Uint8Array(coloured.width * coloured.height * 4).map((_, i) => (i % 4 === 3 ? 255 : coloured.data[(i >> 2) * 3 + (i % 4)]!)) };
    const [fRgb, fGrey, fGreyAlpha, fColoured, fRgba] = await new BuiltinEncoder().encode([rgb, grey, greyAlpha, coloured, rgba]);
    const maxDiff = (x: Float32Array, y: Float32Array) => x.reduce((m, v, k) => Math.max(m, Math.abs(v - y[k]!)), 0);
    expect(maxDiff(fGrey!, fRgb!)).toBeLessThan(1e-6);
    expect(maxDiff(fGreyAlpha!, fRgb!)).toBeLessThan(1e-6);
    expect(maxDiff(fRgba!, fColoured!)).toBeLessThan(1e-6);
  });

  it('resizes a 1080×2400 screen to its fine image at 16 pixels a patch', async () => {
    const { fine, geometry } = await resizeForBuiltin(blank(1080, 2400, [200, 10, 10]));
    expect([geometry.fineWidth, geometry.fineHeight]).toEqual([128, 284]);
    expect(fine.length).toBe(128 * 284 * 3);
    expect(() => builtinFeatures(fine.subarray(3), geometry)).toThrow(/expected 128×284×3/);
  });

  it('rejects malformed images with an InputError naming the image', async () => {
    const bad: RawImage = { width: 10, height: 10, channels: 3, data: new Uint8Array(299) };
    await expect(new BuiltinEncoder().encode([screen(SIZES[0], [1, 2, 3]), bad])).rejects.toThrow(/image 1 of the batch.*299 bytes/);
    await expect(new BuiltinEncoder().encode([{ ...bad, channels: 5 }])).rejects.toBeInstanceOf(InputError);
    await expect(new BuiltinEncoder().encode([{ ...bad, width: 0 }])).rejects.toThrow(/positive integers/);
  });
});

describe('colour quantiser', () => {
  const unit = fc.integer({ min: 0, max: 255 }).map((v) => v / 255);
  it('spreads each colour’s unit mass over at most 4 of the bins', () => {
    fc.assert(
      fc.property(unit, unit, unit, (r, g, b) => {
        const m = colourMemberships(r, g, b);
        const total = [...m.values()].reduce((s, v) => s + v, 0);
        return Math.abs(total - 1) < 1e-9 && m.size <= 4 && [...m].every(([k, v]) => k >= 0 && k < COLOUR_BINS && v > 0);
      }),
    );
  });
  it('keeps greys in the lightness bins and saturated colours in the hue bins', () => {
    fc.assert(fc.property(unit, (v) => [...colourMemberships(v, v, v).keys()].every((k) => k < GREY_BINS)));
    for (const c of [[1, 0, 0], [0, 0.6, 0], [0.1, 0.2, 0.9]] as const) expect([...colourMemberships(...c).keys()].every((k) => k >= GREY_BINS)).toBe(true);
  });
});

describe('loadEncoder', () => {
  it("loads 'builtin'", async () => {
    const enc = await loadEncoder('builtin');
    expect(enc.info.id).toBe(BUILTIN_INFO.id);
  });
  it('names a missing clip/siglip folder, and rejects unknown specs', async () => {
    await expect(loadEncoder('clip:/models/clip')).rejects.toThrow(/no such folder/);
    await expect(loadEncoder('siglip:/m')).rejects.toBeInstanceOf(InputError);
    await expect(loadEncoder('resnet')).rejects.toThrow(/unknown encoder spec/);
  });
});

describe('ParallelEncoder', () => {
  it('on worker threads (the compiled worker in dist/), features are bit-identical to the in-process encoder', async () => {
    // Workers run compiled JavaScript, so this uses the build `npm ci` made.
    const { ParallelEncoder } = (await import('../dist/src/screen/vision/parallel.js')) as typeof import('../src/screen/vision/parallel.js');
    const pool = new ParallelEncoder(2);
    const images = [1, 2, 3, 4, 5].map((k) => ({ width: 160 + 20 * k, height: 320, channels: 3, data: Uint8Array.from({ length: (160 + 20 * k) * 320 * 3 }, (_, i) => (i * k * 7919) % 251) }));
    const [a, b] = [await pool.encode(images), await new BuiltinEncoder().encode(images)];
    pool.dispose();
    expect(a).toHaveLength(5);
    a.forEach((f, i) => expect(Buffer.compare(bytesOf(f), bytesOf(b[i]!))).toBe(0));
    await expect(pool.encode([{ width: 2, height: 2, channels: 3, data: new Uint8Array(5) }])).rejects.toThrow(/image 0 of the batch/);
    await expect(pool.encode(images)).rejects.toThrow(/after dispose/);
  });

  it('encoders of one size share a pool: disposing one leaves the others, and the next one, working', async () => {
    const { ParallelEncoder } = (await import('../dist/src/screen/vision/parallel.js')) as typeof import('../src/screen/vision/parallel.js');
    const images = [{ width: 160, height: 320, channels: 3, data: Uint8Array.from({ length: 160 * 320 * 3 }, (_, i) => (i * 31) % 253) }];
    const first = new ParallelEncoder(2);
    const second = new ParallelEncoder(2);
    const a = await first.encode(images);
    first.dispose();
    first.dispose();
    const b = await second.encode(images);
    second.dispose();
    const third = new ParallelEncoder(2);
    const c = await third.encode(images);
    third.dispose();
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });
});
