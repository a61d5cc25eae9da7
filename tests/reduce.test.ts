import fc from 'fast-check';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { RawImage } from '../src/screen/types.js';
import { builtinGeometry } from '../src/screen/vision/builtin.js';
import { pixelKernels } from '../src/screen/vision/builtin/native.js';
import { reduceLinear } from '../src/screen/vision/builtin/reduce.js';
import { patternImage } from './helpers/screens.js';

/** What the built-in encoder asked libvips for before reduce.ts: the reference bytes. */
async function viaSharp(img: RawImage, width: number, height: number): Promise<Uint8Array> {
  const buf = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels as 3 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

const image = (width: number, height: number, kind: 'noise' | 'binary' | 'stripes', seed: number): RawImage => patternImage(width, height, kind, seed, 'reduce-test');

describe('reduceLinear: libvips linear reduce, byte for byte', () => {
  // The synthetic screens' shrinks (160, 144 and 180 px wide), the largest below 1.5, widths whose masks round
  // apart if the kernel multiplies by 1/shrink instead of dividing (136, 150), heights whose row positions round
  // apart unless they restart every 16 rows as libvips's strips do (193, 233 → 192), rows alone and columns alone.
  const cases: [number, number, number, number][] = [
    [160, 320, 128, 256],
    [129, 193, 128, 192],
    [156, 233, 128, 192],
    [136, 300, 128, 282],
    [150, 330, 128, 282],
    [144, 320, 128, 284],
    [180, 400, 128, 284],
    [191, 420, 128, 284],
    [160, 256, 128, 256],
    [128, 400, 128, 284],
  ];
  // The JavaScript loops, and the C++ ones where the autoui_pixels addon is built.
  const paths = [['JavaScript', null], ...(pixelKernels() ? [['C++', pixelKernels()] as const] : [])] as const;
  for (const [w, h, ow, oh] of cases) {
    it(`${w}×${h} → ${ow}×${oh} equals sharp`, async () => {
      for (const kind of ['noise', 'binary', 'stripes'] as const) {
        const img = image(w, h, kind, w * 31 + h);
        const want = Buffer.from(await viaSharp(img, ow, oh));
        for (const [name, native] of paths) {
          const mine = reduceLinear(img, ow, oh, native);
          expect(mine, `${kind}, ${name}`).not.toBeNull();
          expect(Buffer.compare(Buffer.from(mine!), want), `${kind}, ${name}`).toBe(0);
        }
      }
    });
  }

  it('equals sharp at the built-in encoder geometry of random screen sizes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 129, max: 191 }), fc.double({ min: 1.01, max: 2.4, noNaN: true }), fc.integer({ min: 1, max: 1000 }), async (w, aspect, seed) => {
        const img = image(w, Math.round(w * aspect), 'noise', seed);
        const g = builtinGeometry(img);
        const mine = reduceLinear(img, g.fineWidth, g.fineHeight);
        // Left to sharp only where an axis shrinks by 1.5 or more (five taps).
        if (mine === null) expect(Math.max(img.width / g.fineWidth, img.height / g.fineHeight)).toBeGreaterThanOrEqual(1.5);
        else expect(Buffer.compare(Buffer.from(mine), Buffer.from(await viaSharp(img, g.fineWidth, g.fineHeight)))).toBe(0);
      }),
      { numRuns: 60 },
    );
  });

  it('leaves to sharp what it does not do: enlarging, a shrink of 1.5 or more on either axis, other channel counts', () => {
    expect(reduceLinear(image(100, 200, 'noise', 1), 128, 256)).toBeNull();
    expect(reduceLinear(image(192, 284, 'noise', 1), 128, 284)).toBeNull();
    expect(reduceLinear(image(160, 426, 'noise', 1), 128, 284)).toBeNull();
    expect(reduceLinear(image(1080, 2400, 'noise', 1), 128, 284)).toBeNull();
    expect(reduceLinear({ width: 160, height: 320, channels: 4, data: new Uint8Array(160 * 320 * 4) }, 128, 256)).toBeNull();
  });

  it('copies an image already at the size, as a resize to its own size does', async () => {
    const img = image(128, 256, 'noise', 3);
    const out = reduceLinear(img, 128, 256)!;
    expect(out).toEqual(img.data);
    expect(Buffer.compare(Buffer.from(out), Buffer.from(await viaSharp(img, 128, 256)))).toBe(0);
    expect(out.buffer).not.toBe(img.data.buffer);
  });

  it('keeps a flat image flat and averages a sharp edge by its distance', () => {
    const flat = { width: 160, height: 320, channels: 3, data: new Uint8Array(160 * 320 * 3).fill(77) };
    expect(new Set(reduceLinear(flat, 128, 256))).toEqual(new Set([77]));
    // Left half white, right half black: the output's edge column lies between, the rest stay pure.
    const edge = { width: 160, height: 2, channels: 3, data: new Uint8Array(160 * 2 * 3).map((_, i) => (Math.floor(i / 3) % 160 < 80 ? 255 : 0)) };
    const row = Array.from(reduceLinear(edge, 128, 2)!.subarray(0, 128 * 3).filter((_, i) => i % 3 === 0));
    expect(row.slice(0, 62).every((v) => v >= 254)).toBe(true);
    expect(row.slice(66).every((v) => v === 0)).toBe(true);
    expect(row.slice(62, 66).some((v) => v > 0 && v < 255)).toBe(true);
  });
});
