/** Small hand-made screenshots (encoded bytes) for inference tests. */
import { crc32 } from '@node-rs/crc32';
import sharp from 'sharp';
import type { RawImage } from '../../src/screen/types.js';
import { Rng } from '../../src/util/rng.js';

/** A phone-like screen: white background, a coloured bar on top and a button; encoded as `format`. */
export async function makeScreenshot(width = 540, height = 1200, format: 'png' | 'jpeg' | 'webp' = 'png', alpha = false): Promise<Buffer> {
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
      <rect width="100%" height="100%" fill="#ffffff"/>
      <rect width="100%" height="${Math.round(height * 0.08)}" fill="#1a73e8"/>
      <rect x="${Math.round(width * 0.2)}" y="${Math.round(height * 0.5)}" width="${Math.round(width * 0.6)}" height="${Math.round(height * 0.07)}" rx="12" fill="#34a853"/>
    </svg>`,
  );
  let img = sharp(svg);
  img = alpha ? img.ensureAlpha(0.8) : img.removeAlpha();
  return format === 'png' ? img.png().toBuffer() : format === 'jpeg' ? img.jpeg().toBuffer() : img.webp().toBuffer();
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td) >>> 0);
  return Buffer.concat([len, td, crc]);
}

/**
 * A PNG whose header claims width×height with almost no pixel data: a decompression-bomb stand-in
 * (and a 0×0 image) that costs nothing to build.
 */
export function pngHeaderOnly(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])), chunk('IEND', Buffer.alloc(0))]);
}

/** The RGB of an encoded screenshot at the normalised point (y, x). */
export async function pixelAt(png: Uint8Array, yx: readonly [number, number]): Promise<number[]> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const o = (Math.round(yx[0] * info.height) * info.width + Math.round(yx[1] * info.width)) * 3;
  return [data[o]!, data[o + 1]!, data[o + 2]!];
}

/**
 * A deterministic raw RGB image (`label` and `seed` pick the random draw): random bytes, black/white
 * noise, hard stripes (sharp edges are where rounding shows), or a flat UI-like screen with a few
 * coloured boxes and rows of text-like strokes.
 */
export function patternImage(width: number, height: number, kind: 'noise' | 'binary' | 'stripes' | 'ui', seed: number, label: string): RawImage {
  const rng = Rng.from(label, seed);
  const boxes = kind !== 'ui' ? [] : Array.from({ length: 6 }, () => ({ x: rng.int(0, width - 1), y: rng.int(0, height - 1), w: rng.int(4, 60), h: rng.int(4, 30), c: [rng.int(0, 255), rng.int(0, 255), rng.int(0, 255)] }));
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i++) {
    const p = Math.floor(i / 3);
    const x = p % width, y = Math.floor(p / width), ch = i % 3;
    if (kind === 'noise') data[i] = rng.int(0, 255);
    else if (kind === 'binary') data[i] = rng.chance(0.5) ? 0 : 255;
    else if (kind === 'stripes') data[i] = x % 5 < 2 ? 250 : 8;
    else {
      const box = boxes.find((b) => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h);
      data[i] = box ? box.c[ch]! : y % 24 < 7 && x % 3 === 0 && x > 20 && x < width - 20 ? 40 : 245;
    }
  }
  return { width, height, channels: 3, data };
}
