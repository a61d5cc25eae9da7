import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { InputError } from '../util/errors.js';
import type { RawImage } from './types.js';

type Container = 'png' | 'jpeg' | 'webp';

/** Which encoded container `bytes` is, by magic bytes; undefined for anything else (e.g. raw pixels). */
export function sniffImage(bytes: Uint8Array): Container | undefined {
  if (bytes.length >= 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (
    bytes.length >= 12 &&
    Buffer.from(bytes.buffer, bytes.byteOffset, 4).toString('latin1') === 'RIFF' &&
    Buffer.from(bytes.buffer, bytes.byteOffset + 8, 4).toString('latin1') === 'WEBP'
  )
    return 'webp';
  return undefined;
}

/** Converts raw pixels with 1–4 channels to RGB (gray expanded, alpha dropped). */
export function toRgb(img: RawImage): RawImage {
  const { height, width, channels, data } = img;
  if (channels === 3) return img;
  const n = height * width;
  const out = new Uint8Array(n * 3);
  if (channels === 1 || channels === 2) {
    for (let i = 0, j = 0; i < n; i++, j += 3) {
      const g = data[i * channels]!;
      out[j] = g;
      out[j + 1] = g;
      out[j + 2] = g;
    }
  } else if (channels === 4) {
    for (let i = 0, j = 0, k = 0; i < n; i++, j += 3, k += 4) {
      out[j] = data[k]!;
      out[j + 1] = data[k + 1]!;
      out[j + 2] = data[k + 2]!;
    }
  } else {
    throw new RangeError(`cannot convert ${channels}-channel pixels to RGB`);
  }
  return { height, width, channels: 3, data: out };
}

/**
 * Decodes an AITW `image/encoded` value to RGB pixels. Raw uint8 H×W×C when the byte count says so,
 * otherwise PNG/JPEG/WebP by magic bytes (size checked against H/W). `where` names the file/record.
 */
export async function decodeScreen(
  bytes: Uint8Array,
  height: number,
  width: number,
  channels: number,
  where: string,
): Promise<RawImage> {
  const at = `${where} feature 'image/encoded'`;
  if (!(Number.isInteger(height) && height > 0 && Number.isInteger(width) && width > 0))
    throw new InputError(`invalid image size ${height}×${width}`, at);
  const expected = height * width * channels;
  if (bytes.length === expected) {
    if (channels < 1 || channels > 4) throw new InputError(`unsupported channel count ${channels} (expected 1–4)`, at);
    // Copy: `bytes` is a view into a whole stream chunk, which a kept step must not pin in memory.
    return toRgb({ height, width, channels, data: new Uint8Array(bytes) });
  }
  const kind = sniffImage(bytes);
  if (!kind)
    throw new InputError(
      `has ${bytes.length} bytes, but raw pixels of height×width×channels = ${height}×${width}×${channels} need ${expected}, and it is not PNG/JPEG/WebP`,
      at,
    );
  const out = await sharp(bytes)
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch((err: Error) => {
      throw new InputError(`cannot decode ${kind.toUpperCase()} (${err.message})`, at);
    });
  const { info } = out;
  if (info.height !== height || info.width !== width)
    throw new InputError(
      `${kind.toUpperCase()} is ${info.height}×${info.width} but image/height×image/width say ${height}×${width}`,
      at,
    );
  const img = { height, width, channels: info.channels, data: new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.length) };
  return toRgb(img);
}

/** Lossless PNG of raw pixels (1–4 channels). */
export async function encodePng(img: RawImage): Promise<Buffer> {
  const { height, width, channels, data } = img;
  if (data.length !== height * width * channels)
    throw new RangeError(`image data has ${data.length} bytes, expected ${height}×${width}×${channels}`);
  if (channels < 1 || channels > 4) throw new RangeError(`cannot PNG-encode ${channels}-channel pixels`);
  return sharp(data, { raw: { height, width, channels: channels as 1 | 2 | 3 | 4 } }).png().toBuffer();
}

/** Hex SHA-256 of the RGB bytes, row-major (the `image_sha256` of `data inspect`). */
export function rawSha256(img: RawImage): string {
  return createHash('sha256').update(toRgb(img).data).digest('hex');
}
