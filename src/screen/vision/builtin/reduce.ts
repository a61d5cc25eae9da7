/**
 * The built-in encoder's shrink, byte for byte what sharp (libvips) gives for
 * `.resize(w, h, { fit: 'fill', kernel: 'linear' })` of a 3-channel image that shrinks on each
 * axis by less than 1.5 (every synthetic screen: 144–180 px wide onto the encoder's 128).
 *
 * Written by hand because a libvips call costs ~1.0–1.3 ms of CPU for a 160×320 screen (a call
 * that copies the image unchanged costs ~0.55 ms of it), against ~2.3 ms for all the features and
 * ~0.65 ms for this; `data prepare` of synthetic screens spends ~7 % less CPU a screen without
 * it. This is the arithmetic of libvips 8.18's reducev then reduceh (their uchar vector paths),
 * integer once the masks are made, so it gives libvips's bytes exactly; tests/reduce.test.ts holds
 * it to sharp's output on many sizes (and would catch a libvips that computes otherwise). A shrink
 * of 1.5 or more reads 5 or more taps, where libvips's vector code wins (a 412×915 page: 1.1 ms
 * against ~8 in JavaScript); such shrinks, enlarging and other channel counts return null and go
 * to sharp. Both passes run in C++ where the `autoui_pixels` addon is built (native.ts: the same
 * arithmetic, vectorised).
 *
 * libvips's steps, per axis, for an input of `size` pixels reduced by `shrink` (below twice its
 * default gap of 2, so with no box shrink first):
 * - output size round(size / shrink); `offset` = (1 + out·shrink − size)/2 − 1 centres the output;
 * - a mask of n = 2·rint(shrink) + 1 taps of the linear kernel stretched by `shrink` (triangle of
 *   half-width `shrink`), normalised to sum 1, for each of 65 sub-pixel phases (1/64 pixel), each
 *   tap truncated to a 12-bit fixed-point short;
 * - the input padded by copying its edge pixels, ceil(n/2) − 1 before and the rest after;
 * - output pixel o reads n pixels from position P = (o + 0.5)·shrink − 0.5 − offset of the padded
 *   input with the mask of P's phase (rounded to 1/64 from P's 1/128ths), and writes
 *   clamp((2048 + Σ k_i·p_i) >> 12, 0, 255).
 */

import type { RawImage } from '../../types.js';
import { BoundedMap } from '../../../util/bounded_map.js';
import { pixelKernels, type PixelKernels } from './native.js';

const PHASES = 64; // VIPS_TRANSFORM_SCALE
const SHIFT = 12; // VIPS_INTERPOLATE_SHIFT
const ONE = 1 << SHIFT;
/** Added before the shift: round to nearest. */
const HALF = ONE >> 1;
/** libvips reads 2·rint(shrink) + 1 taps: three for every shrink below 1.5, the only ones done here. */
const TAPS = 3;
const MAX_SHRINK = 1.5;

/** One axis's reduce: output pixel o reads input pixels index[3o + i] (edges copied) with weights weight[3o + i]. */
interface AxisPlan {
  out: number;
  index: Int32Array;
  weight: Int32Array;
}

function phaseMasks(shrink: number): Int16Array[] {
  return Array.from({ length: PHASES + 1 }, (_, phase) => {
    const x = phase / PHASES; // (float) phase / 64 in libvips: exact either way
    const half = x + TAPS / 2 - 1;
    // Divided, not multiplied by 1/shrink: the two round apart, and a tap of exactly 1024/4096 would truncate to 1023.
    const c = Array.from({ length: TAPS }, (_, i) => Math.max(0, 1 - Math.abs((i - half) / shrink)));
    const sum = c.reduce((a, b) => a + b, 0);
    return Int16Array.from(c, (v) => Math.trunc((v / sum) * ONE));
  });
}

/**
 * libvips computes an image in strips of 16 rows (its "fat strip", whatever its thread count: sharp's
 * output is the same at 1–16 threads) and the whole width. Within a strip it steps P by adding
 * `shrink` to its value at the strip's first pixel, so rounding restarts there: every 16 rows down,
 * never across. Stepping from 0 over the whole height differs on some shrinks (129×193 → 128×192).
 */
const STRIP_ROWS = 16;

/**
 * The reduce of `size` input pixels by `shrink` to `out` pixels, P recomputed every `restart`
 * output pixels; null for shrinks this leaves to sharp, or a size libvips would round otherwise (no
 * reduce on an axis is the identity, handled by the caller).
 */
function planAxis(size: number, shrink: number, out: number, restart: number): AxisPlan | null {
  if (shrink >= MAX_SHRINK || Math.trunc(size / shrink + 0.5) !== out) return null;
  const pad = Math.ceil(TAPS / 2) - 1;
  const offset = (1 + (out * shrink - size)) / 2 - 1;
  const phases = phaseMasks(shrink);
  const index = new Int32Array(out * TAPS);
  const weight = new Int32Array(out * TAPS);
  let p = 0;
  for (let o = 0; o < out; o++) {
    p = o % restart === 0 ? (o + 0.5) * shrink - 0.5 - offset : p + shrink;
    const mask = phases[((Math.trunc(p * PHASES * 2) & (PHASES * 2 - 1)) + 1) >> 1]!;
    for (let i = 0; i < TAPS; i++) {
      index[o * TAPS + i] = Math.min(size - 1, Math.max(0, Math.trunc(p) - pad + i));
      weight[o * TAPS + i] = mask[i]!;
    }
  }
  return { out, index, weight };
}

/** Plans by axis and (size, shrink, out): a bulk run sees a few screen sizes over and over. */
const plans = new BoundedMap<string, AxisPlan | null>(64);

function axis(along: 'rows' | 'columns', size: number, shrink: number, out: number): AxisPlan | null {
  const key = `${along}/${size}/${shrink}/${out}`;
  let plan = plans.get(key);
  if (plan === undefined) plans.set(key, (plan = planAxis(size, shrink, out, along === 'rows' ? STRIP_ROWS : Infinity)));
  return plan;
}

/*
 * Both passes: libvips packs each sum with saturation; here no sum can leave 0–255 (the weights are
 * ≥ 0 and sum to at most 4096, so at most (2048 + 4096·255) >> 12 = 255), so plain byte stores give
 * the same.
 */

/** Rows reduced: rows of `rowBytes` bytes → plan.out rows. */
function reduceRows(src: Uint8Array, rowBytes: number, { out: rows, index, weight }: AxisPlan, native: PixelKernels | null): Uint8Array {
  const out = new Uint8Array(rows * rowBytes);
  if (native) {
    native.reduceRows(src, rowBytes, index, weight, out);
    return out;
  }
  for (let o = 0, k = 0; o < rows; o++, k += TAPS) {
    const r0 = index[k]! * rowBytes, r1 = index[k + 1]! * rowBytes, r2 = index[k + 2]! * rowBytes;
    const w0 = weight[k]!, w1 = weight[k + 1]!, w2 = weight[k + 2]!;
    for (let b = 0, at = o * rowBytes; b < rowBytes; b++) out[at + b] = (HALF + w0 * src[r0 + b]! + w1 * src[r1 + b]! + w2 * src[r2 + b]!) >> SHIFT;
  }
  return out;
}

/** Columns of 3-byte pixels reduced: rows of `width` pixels → plan.out pixels. */
function reduceColumns(src: Uint8Array, width: number, height: number, { out: cols, index, weight }: AxisPlan, native: PixelKernels | null): Uint8Array {
  const out = new Uint8Array(cols * height * 3);
  if (native) {
    native.reduceColumns(src, width, height, index, weight, out);
    return out;
  }
  let q = 0;
  for (let y = 0; y < height; y++) {
    const row = y * width * 3;
    for (let k = 0; k < cols * TAPS; k += TAPS) {
      const a0 = row + index[k]! * 3, a1 = row + index[k + 1]! * 3, a2 = row + index[k + 2]! * 3;
      const w0 = weight[k]!, w1 = weight[k + 1]!, w2 = weight[k + 2]!;
      out[q++] = (HALF + w0 * src[a0]! + w1 * src[a1]! + w2 * src[a2]!) >> SHIFT;
      out[q++] = (HALF + w0 * src[a0 + 1]! + w1 * src[a1 + 1]! + w2 * src[a2 + 1]!) >> SHIFT;
      out[q++] = (HALF + w0 * src[a0 + 2]! + w1 * src[a1 + 2]! + w2 * src[a2 + 2]!) >> SHIFT;
    }
  }
  return out;
}

/**
 * `img` (3 channels) shrunk to outWidth × outHeight as sharp's linear resize gives it, or null where
 * this does not apply (then use sharp). `native`: the addon's loops (null: JavaScript's).
 */
export function reduceLinear(img: RawImage, outWidth: number, outHeight: number, native = pixelKernels()): Uint8Array | null {
  const { data, width, height, channels } = img;
  if (channels !== 3 || outWidth > width || outHeight > height) return null;
  // sharp asks vips_resize for scale 1/(width/outWidth); libvips's reduce takes the reciprocal again.
  const hshrink = 1 / (1 / (width / outWidth));
  const vshrink = 1 / (1 / (height / outHeight));
  const vertical = vshrink === 1 ? null : axis('rows', height, vshrink, outHeight);
  const horizontal = hshrink === 1 ? null : axis('columns', width, hshrink, outWidth);
  if ((vshrink !== 1 && !vertical) || (hshrink !== 1 && !horizontal)) return null;
  const tall = vertical ? reduceRows(data, width * channels, vertical, native) : data;
  return horizontal ? reduceColumns(tall, width, outHeight, horizontal, native) : tall === data ? new Uint8Array(data) : tall;
}
