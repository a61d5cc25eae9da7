/**
 * Pixels in and out of the OCR models. Resizing and cropping go through sharp (libvips); only the
 * uint8 → float32 NCHW packing is written here, since it is one loop fused with the normalisation.
 *
 * PP-OCR models are trained on images read by OpenCV, i.e. BGR: the tensors here put blue in
 * channel 0 and apply each model's mean/std in that order.
 */
import sharp, { type Sharp } from 'sharp';
import type { RawImage } from '../types.js';
import { checkRawImage } from '../vision/builtin.js';

/** An axis-aligned box in pixels: columns [x0, x1), rows [y0, y1). */
export interface PixelBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * The input as 3-channel RGB: grey is replicated and alpha is flattened onto white (text drawn on
 * a transparent background is still dark on light after that, where dropping alpha could leave
 * black on black).
 */
export async function toRgb(img: RawImage, what: string): Promise<RawImage> {
  checkRawImage(img, what);
  if (img.channels === 3) return img;
  const { data, info } = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels as 1 | 2 | 3 | 4 } })
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

function input(img: RawImage): Sharp {
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels as 3 } });
}

/** The whole RGB image resized to width×height (aspect not kept), RGB bytes. */
export async function resizeRgb(img: RawImage, width: number, height: number): Promise<Uint8Array> {
  if (width === img.width && height === img.height) return img.data;
  const buf = await input(img).resize(width, height, { fit: 'fill' }).raw().toBuffer();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

/** The `box` of an RGB image resized to width×height, RGB bytes. */
export async function cropResizeRgb(img: RawImage, box: PixelBox, width: number, height: number): Promise<Uint8Array> {
  const buf = await input(img)
    .extract({ left: box.x0, top: box.y0, width: box.x1 - box.x0, height: box.y1 - box.y0 })
    .resize(width, height, { fit: 'fill' })
    .raw()
    .toBuffer();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

/**
 * Writes RGB bytes (h×w×3) as normalised BGR planes into `out` at image slot `n` of a [N, 3, h, outW]
 * tensor: value = (byte/255 − mean[c]) / std[c]; columns w..outW are left as they are (the caller's
 * padding value).
 */
export function packBgr(
  rgb: Uint8Array, width: number, height: number,
  out: Float32Array, n: number, outWidth: number,
  mean: readonly number[], std: readonly number[],
): void {
  const plane = height * outWidth;
  const base = n * 3 * plane;
  for (let c = 0; c < 3; c++) {
    const src = 2 - c; // BGR: channel 0 takes the blue byte
    const scale = 1 / (255 * std[c]!);
    const shift = mean[c]! / std[c]!;
    const dst = base + c * plane;
    for (let y = 0; y < height; y++) {
      let i = y * width * 3 + src;
      const row = dst + y * outWidth;
      for (let x = 0; x < width; x++, i += 3) out[row + x] = rgb[i]! * scale - shift;
    }
  }
}
