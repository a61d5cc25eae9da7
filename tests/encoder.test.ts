import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RawImage } from '../src/data/types.js';
import {
  BUILTIN_HEIGHT,
  BUILTIN_INFO,
  BUILTIN_LAYOUT,
  BUILTIN_PATCH,
  BUILTIN_WIDTH,
  BuiltinEncoder,
  builtinFeatures,
  resizeForBuiltin,
} from '../src/screen/vision/builtin.js';
import { loadEncoder } from '../src/screen/vision/index.js';
import { InputError } from '../src/util/errors.js';

type RGB = [number, number, number];

/** A tiny drawing surface for hand-made phone screens. */
function blank(width: number, height: number, bg: RGB): RawImage {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) data.set(bg, i * 3);
  return { width, height, channels: 3, data };
}
function fillRect(img: RawImage, x: number, y: number, w: number, h: number, c: RGB): void {
  for (let yy = y; yy < y + h; yy++) for (let xx = x; xx < x + w; xx++) img.data.set(c, (yy * img.width + xx) * 3);
}
function fillCircle(img: RawImage, cx: number, cy: number, r: number, c: RGB): void {
  for (let yy = cy - r; yy <= cy + r; yy++)
    for (let xx = cx - r; xx <= cx + r; xx++)
      if ((xx - cx) ** 2 + (yy - cy) ** 2 <= r * r) img.data.set(c, (yy * img.width + xx) * 3);
}
/** Text-like stripes: thin dark strokes on a line. */
function fakeText(img: RawImage, x: number, y: number, w: number): void {
  for (let xx = x; xx < x + w; xx += 3) fillRect(img, xx, y, 1, 7, [30, 30, 30]);
  fillRect(img, x, y + 3, w, 1, [30, 30, 30]);
}

/** A 160×320 phone-like screen: status bar, an icon (coloured square with a circle glyph), text, a toggle. */
function screen(iconColour: RGB): RawImage {
  const img = blank(160, 320, [245, 245, 245]);
  fillRect(img, 0, 0, 160, 16, [40, 40, 40]);
  fillRect(img, 20, 40, 24, 24, iconColour);
  fillCircle(img, 32, 52, 7, [255, 255, 255]);
  fakeText(img, 56, 48, 80);
  fillRect(img, 110, 120, 30, 14, [30, 140, 60]);
  fillCircle(img, 132, 127, 6, [255, 255, 255]);
  return img;
}

const { patches, dim } = BUILTIN_INFO;
const [rows, cols] = BUILTIN_INFO.grid!;

function patchRow(f: Float32Array, p: number): Float32Array {
  return f.subarray(p * dim, (p + 1) * dim);
}

describe('builtin encoder', () => {
  it('reports a 16×8 grid of 364-d patches', () => {
    expect(BUILTIN_INFO).toMatchObject({ id: 'builtin-v5', patches: 128, dim: 364, grid: [16, 8], pooled: false });
    expect(rows * cols).toBe(patches);
    expect(BUILTIN_LAYOUT.lbp[1]).toBe(dim);
  });

  it('gives one patches×dim vector per image, finite and roughly unit-scale', async () => {
    const enc = new BuiltinEncoder();
    const out = await enc.encode([screen([220, 40, 40]), screen([40, 90, 220]), blank(1080, 2400, [0, 0, 0])]);
    expect(out).toHaveLength(3);
    for (const f of out) {
      expect(f).toBeInstanceOf(Float32Array);
      expect(f.length).toBe(patches * dim);
      let maxAbs = 0;
      for (const v of f) {
        expect(Number.isFinite(v)).toBe(true);
        maxAbs = Math.max(maxAbs, Math.abs(v));
      }
      expect(maxAbs).toBeLessThanOrEqual(3);
    }
  });

  it('is deterministic across calls and instances', async () => {
    const img = screen([220, 40, 40]);
    const a = await new BuiltinEncoder().encode([img]);
    const b = await new BuiltinEncoder().encode([img, img]);
    expect(Buffer.from(b[0]!.buffer).equals(Buffer.from(a[0]!.buffer))).toBe(true);
    expect(Buffer.from(b[1]!.buffer).equals(Buffer.from(a[0]!.buffer))).toBe(true);
  });

  it('changing one icon colour changes only the patches at or next to the icon (and its rows’ context)', async () => {
    const [red, blue] = await new BuiltinEncoder().encode([screen([220, 40, 40]), screen([40, 90, 220])]);
    // Icon box in 160×320 pixels, mapped to the 64×128 grid, widened by the resize kernel's reach (2 px).
    const sx = BUILTIN_WIDTH / 160;
    const sy = BUILTIN_HEIGHT / 320;
    // The colour pairs see a window reaching half a patch beyond their own.
    const margin = 2 + BUILTIN_PATCH / 2;
    const box = { x0: 20 * sx - margin, x1: 44 * sx + margin, y0: 40 * sy - margin, y1: 64 * sy + margin };
    const [r0, r1] = BUILTIN_LAYOUT.row;
    const changed: number[] = [];
    for (let p = 0; p < patches; p++) {
      const local = (f: Float32Array) => Array.from(patchRow(f, p)).filter((_, k) => k < r0 || k >= r1);
      const same = local(red!).every((v, k) => v === local(blue!)[k]);
      if (!same) changed.push(p);
      const r = Math.floor(p / cols), c = p % cols;
      const px0 = c * BUILTIN_PATCH, py0 = r * BUILTIN_PATCH;
      const overlaps = px0 < box.x1 && px0 + BUILTIN_PATCH > box.x0 && py0 < box.y1 && py0 + BUILTIN_PATCH > box.y0;
      if (!overlaps) expect(same, `patch ${p} (row ${r}, col ${c}) is far from the icon`).toBe(true);
      // The row context changes across the icon's rows, and only there.
      const rowSame = Array.from(patchRow(red!, p).subarray(r0, r1)).every((v, k) => v === patchRow(blue!, p)[r0 + k]);
      const iconRow = py0 < box.y1 && py0 + BUILTIN_PATCH > box.y0;
      if (!iconRow) expect(rowSame, `row context of patch ${p} (row ${r}) is outside the icon's rows`).toBe(true);
    }
    // The patch holding the icon's centre (32, 52) px must tell the colours apart, in its chroma features.
    const centre = Math.floor((52 * sy) / BUILTIN_PATCH) * cols + Math.floor((32 * sx) / BUILTIN_PATCH);
    expect(changed).toContain(centre);
    const [c0, c1] = BUILTIN_LAYOUT.chroma;
    const diff = patchRow(red!, centre).subarray(c0, c1).reduce((s, v, k) => s + Math.abs(v - patchRow(blue!, centre)[c0 + k]!), 0);
    expect(diff).toBeGreaterThan(0.5);
    // Position codes never change with content.
    const [p0, p1] = BUILTIN_LAYOUT.position;
    expect(Array.from(patchRow(red!, centre).subarray(p0, p1))).toEqual(Array.from(patchRow(blue!, centre).subarray(p0, p1)));
  });

  it('colour pairs fire on an icon’s two colours wherever the icon sits against the patch grid', async () => {
    // Palette entries 4 (white) and 5 (red); unordered pair (a ≤ b) index in the a-major triangle.
    const K = 16;
    const pair = (a: number, b: number) => BUILTIN_LAYOUT.pairs[0] + a * K - (a * (a - 1)) / 2 + (b - a);
    const iconAt = (x: number, y: number) => {
      const img = blank(160, 320, [245, 245, 245]);
      fillCircle(img, x, y, 12, [230, 51, 51]);
      fillRect(img, x - 4, y - 4, 8, 8, [255, 255, 255]);
      return img;
    };
    // Shifted by half a patch (10 px of 160 = 4 px of 64): the icon moves from one patch's centre to a patch border.
    const [centred, straddling, none] = await new BuiltinEncoder().encode([iconAt(50, 100), iconAt(60, 110), blank(160, 320, [245, 245, 245])]);
    const best = (f: Float32Array) => Math.max(...Array.from({ length: patches }, (_, p) => patchRow(f, p)[pair(4, 5)]!));
    expect(best(centred!)).toBeGreaterThan(0.2);
    expect(best(straddling!) / best(centred!)).toBeGreaterThan(0.7);
    expect(best(none!)).toBeLessThan(0.05);
  });

  it('row context: every patch of a row carries the colour of a switch at the row’s far end', async () => {
    const settingsRow = (switchColour: RGB) => {
      const img = blank(160, 320, [245, 245, 245]);
      fillCircle(img, 14, 150, 8, [30, 136, 229]);
      fakeText(img, 30, 146, 60);
      fillRect(img, 128, 145, 22, 11, switchColour);
      return img;
    };
    const [on, off] = await new BuiltinEncoder().encode([settingsRow([26, 115, 232]), settingsRow([189, 193, 198])]);
    const [r0, r1] = BUILTIN_LAYOUT.row;
    const row = Math.floor((150 * BUILTIN_HEIGHT) / 320 / BUILTIN_PATCH);
    const context = (f: Float32Array, c: number) => Array.from(patchRow(f, row * cols + c).subarray(r0, r1));
    for (let c = 1; c < cols; c++) expect(context(on!, c)).toEqual(context(on!, 0));
    // The icon's own patch (column 0) does not see the switch 6 patches away, but its row context does.
    const distance = context(on!, 0).reduce((s, v, k) => s + Math.abs(v - context(off!, 0)[k]!), 0);
    expect(distance).toBeGreaterThan(0.05);
    const [q0, q1] = BUILTIN_LAYOUT.palette;
    expect(Array.from(patchRow(on!, row * cols).subarray(q0, q1))).toEqual(Array.from(patchRow(off!, row * cols).subarray(q0, q1)));
  });

  it('local binary patterns tell two glyph shapes apart more than shifts of one glyph', async () => {
    // Same two colours, so colour, palette and pair features cannot separate the shapes.
    const icon = (x: number, y: number, glyph: 'square' | 'circle') => {
      const img = blank(160, 320, [245, 245, 245]);
      fillCircle(img, x, y, 13, [30, 136, 229]);
      if (glyph === 'square') fillRect(img, x - 5, y - 5, 11, 11, [255, 255, 255]);
      else fillCircle(img, x, y, 6, [255, 255, 255]);
      return img;
    };
    const at = [[50, 100], [53, 102], [57, 105], [61, 103]] as const;
    const enc = new BuiltinEncoder();
    const squares = await enc.encode(at.map(([x, y]) => icon(x, y, 'square')));
    const circles = await enc.encode(at.map(([x, y]) => icon(x, y, 'circle')));
    const [l0, l1] = BUILTIN_LAYOUT.lbp;
    // Summed over the screen, as a linear attention score adds up the patches around the icon.
    const bag = (f: Float32Array) => {
      const v = new Float64Array(l1 - l0);
      for (let p = 0; p < patches; p++) patchRow(f, p).subarray(l0, l1).forEach((x, k) => (v[k]! += x * x));
      return v;
    };
    const dist = (a: Float64Array, b: Float64Array) => Math.sqrt(a.reduce((s, v, k) => s + (v - b[k]!) ** 2, 0));
    const sqBags = squares.map(bag);
    const ciBags = circles.map(bag);
    const mean = (xs: number[]) => xs.reduce((s, v) => s + v, 0) / xs.length;
    const pairs = (a: Float64Array[], b: Float64Array[], same: boolean) => a.flatMap((x, i) => b.filter((_, j) => !same || j > i).map((y) => dist(x, y)));
    const shape = mean(pairs(sqBags, ciBags, false));
    const shift = mean([...pairs(sqBags, sqBags, true), ...pairs(ciBags, ciBags, true)]);
    // Small glyphs rasterise differently at each sub-pixel offset, so the margin is finite (measured 1.7×).
    expect(shape).toBeGreaterThan(1.5 * shift);
  });

  it('tells text-like texture from flat background and a glyph from a plain square', async () => {
    const img = blank(160, 320, [245, 245, 245]);
    fakeText(img, 40, 200, 80);
    const [f] = await new BuiltinEncoder().encode([img]);
    const [e0, e1] = BUILTIN_LAYOUT.edges;
    const energy = (p: number) => patchRow(f!, p).subarray(e0, e1).reduce((s, v) => s + v, 0);
    const textPatch = Math.floor((203 * BUILTIN_HEIGHT) / 320 / BUILTIN_PATCH) * cols + 3;
    expect(energy(textPatch)).toBeGreaterThan(2);
    expect(energy(0)).toBe(0);
  });

  it('position codes are distinct for every pair of patches and identical across screens', () => {
    const fine = new Uint8Array(4 * BUILTIN_WIDTH * BUILTIN_HEIGHT).fill(128);
    const a = builtinFeatures(new Uint8Array(BUILTIN_WIDTH * BUILTIN_HEIGHT * 3).fill(128), 3, fine);
    const b = builtinFeatures(new Uint8Array(BUILTIN_WIDTH * BUILTIN_HEIGHT).fill(7), 1, fine);
    const [p0, p1] = BUILTIN_LAYOUT.position;
    const codes = Array.from({ length: patches }, (_, p) => Array.from(patchRow(a, p).subarray(p0, p1)));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: patches - 1 }), fc.integer({ min: 0, max: patches - 1 }), (i, j) => {
        const d = codes[i]!.reduce((s, v, k) => s + (v - codes[j]![k]!) ** 2, 0);
        return i === j ? d === 0 : d > 0.05;
      }),
    );
    for (let p = 0; p < patches; p++) expect(Array.from(patchRow(b, p).subarray(p0, p1))).toEqual(codes[p]);
    // The first two position dims are the patch centre, linear in [-1, 1]: readable as coordinates.
    expect(patchRow(a, 0)[p0]).toBeCloseTo(2 * (0.5 / rows) - 1, 5);
    expect(patchRow(a, patches - 1)[p0 + 1]).toBeCloseTo(2 * ((cols - 0.5) / cols) - 1, 5);
  });

  it('accepts grey, RGBA and any screen size', async () => {
    const grey: RawImage = { width: 100, height: 50, channels: 1, data: new Uint8Array(5000).fill(90) };
    const rgba: RawImage = { width: 1080, height: 2400, channels: 4, data: new Uint8Array(1080 * 2400 * 4).fill(200) };
    const out = await new BuiltinEncoder().encode([grey, rgba]);
    expect(out.map((f) => f.length)).toEqual([patches * dim, patches * dim]);
    const small = await resizeForBuiltin(rgba);
    expect(small.data.length).toBe(BUILTIN_WIDTH * BUILTIN_HEIGHT * small.channels);
    expect(small.fine.length).toBe(4 * BUILTIN_WIDTH * BUILTIN_HEIGHT);
  });

  it('rejects malformed images with an InputError naming the image', async () => {
    const bad: RawImage = { width: 10, height: 10, channels: 3, data: new Uint8Array(299) };
    await expect(new BuiltinEncoder().encode([screen([1, 2, 3]), bad])).rejects.toThrow(/image 1 of the batch.*299 bytes/);
    await expect(new BuiltinEncoder().encode([{ ...bad, channels: 5 }])).rejects.toBeInstanceOf(InputError);
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

