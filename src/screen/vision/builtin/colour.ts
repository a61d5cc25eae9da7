/**
 * Colour for the built-in encoder: per-pixel planes (luma, opponent chroma) and a generic soft
 * colour quantiser, with no palette: colours are binned by perceptual lightness and hue in OKLab.
 *
 * Bins (COLOUR_BINS = 16): 4 achromatic bins by OKLab lightness L (centres 0, 1/3, 2/3, 1: equal
 * perceptual steps from black to white) and 12 hue bins (centres every 30° of OKLab hue, the
 * resolution of the classic 12-hue colour wheel). A pixel's chroma C decides how its unit of mass
 * splits between the two: all achromatic below one just-noticeable difference (C ≤ 0.02, the JND
 * CSS Color 4 uses for OKLab), all chromatic from CHROMA_FULL on, linearly in between. Within each
 * family the mass is split linearly between the two nearest centres, so no feature jumps when a
 * colour crosses a bin boundary, and colours between centres stay distinguishable by their ratio.
 */

export const GREY_BINS = 4;
export const HUE_BINS = 12;
export const COLOUR_BINS = GREY_BINS + HUE_BINS;
/** At most two grey and two hue bins are non-zero for any colour. */
export const MAX_MEMBERSHIPS = 4;
const CHROMA_JND = 0.02;
/** Full chroma weight at 4 JND: UI greys tinted blue (C ≈ 0.01–0.03) stay (nearly) all grey, brand colours (C > 0.1) are fully hued. */
const CHROMA_FULL = 4 * CHROMA_JND;

/*
 * sRGB → OKLab (Ottosson 2020): the published matrices and cube root, written out rather than
 * taken from a colour library because it runs only to fill the table below, once per process.
 */
function srgbToLinear(v: number): number {
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
}

export function oklab(r: number, g: number, b: number): [number, number, number] {
  const lr = srgbToLinear(r), lg = srgbToLinear(g), lb = srgbToLinear(b);
  const l = Math.cbrt(0.4122214708 * lr + 0.5363325363 * lg + 0.0514459929 * lb);
  const m = Math.cbrt(0.2119034982 * lr + 0.6806995451 * lg + 0.1073969566 * lb);
  const s = Math.cbrt(0.0883024619 * lr + 0.2817188376 * lg + 0.6299787005 * lb);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

/** Splits `mass` linearly between the two bins around position `t` (in bin units) of `n` bins, cyclic or clamped. */
function splitLinear(t: number, n: number, cyclic: boolean, mass: number, add: (bin: number, w: number) => void): void {
  const lo = Math.floor(t);
  const frac = t - lo;
  const wrap = (k: number) => (cyclic ? ((k % n) + n) % n : Math.min(n - 1, Math.max(0, k)));
  if (1 - frac > 0) add(wrap(lo), mass * (1 - frac));
  if (frac > 0) add(wrap(lo + 1), mass * frac);
}

/** Soft bin memberships of one sRGB colour (components in [0, 1]); they sum to 1. */
export function colourMemberships(r: number, g: number, b: number): Map<number, number> {
  const [L, A, B] = oklab(r, g, b);
  const chroma = Math.hypot(A, B);
  const hued = Math.min(1, Math.max(0, (chroma - CHROMA_JND) / (CHROMA_FULL - CHROMA_JND)));
  const out = new Map<number, number>();
  const add = (bin: number, w: number) => {
    if (w > 0) out.set(bin, (out.get(bin) ?? 0) + w);
  };
  splitLinear(Math.min(1, Math.max(0, L)) * (GREY_BINS - 1), GREY_BINS, false, 1 - hued, add);
  const hue = (Math.atan2(B, A) / (2 * Math.PI) + 1) % 1;
  splitLinear(hue * HUE_BINS, HUE_BINS, true, hued, (k, w) => add(GREY_BINS + k, w));
  return out;
}

/**
 * Memberships of every colour at 5 bits per channel (32,768 colours, the centre of each cell):
 * a lookup per pixel instead of a cube root and an arctangent. 5 bits step 8/255 per channel,
 * under one JND almost everywhere, and soft bins change slowly, so the table loses nothing the
 * features could use.
 */
const LUT_BITS = 5;
const LUT_SIZE = 1 << (3 * LUT_BITS);
export const lutBins = new Uint8Array(LUT_SIZE * MAX_MEMBERSHIPS);
export const lutWeights = new Float32Array(LUT_SIZE * MAX_MEMBERSHIPS);
export const lutCounts = new Uint8Array(LUT_SIZE);
(() => {
  const levels = 1 << LUT_BITS;
  const centre = (q: number) => (q * (256 / levels) + 256 / levels / 2) / 255;
  for (let code = 0; code < LUT_SIZE; code++) {
    const m = colourMemberships(centre(code >> (2 * LUT_BITS)), centre((code >> LUT_BITS) & (levels - 1)), centre(code & (levels - 1)));
    let n = 0;
    for (const [bin, w] of m) {
      lutBins[code * MAX_MEMBERSHIPS + n] = bin;
      lutWeights[code * MAX_MEMBERSHIPS + n] = w;
      n++;
    }
    lutCounts[code] = n;
  }
})();

/** The table entry of an 8-bit colour. */
export function colourCode(r: number, g: number, b: number): number {
  const s = 8 - LUT_BITS;
  return ((r >> s) << (2 * LUT_BITS)) | ((g >> s) << LUT_BITS) | (b >> s);
}

/** Per-pixel planes of the colour image, filled by `fillPlanes`. */
export interface ColourPlanes {
  /** Rec. 709 luma Y' in [0, 1] (gamma-encoded, as displays and JPEG define it). */
  luma: Float32Array;
  /** Opponent colour axes (van de Sande et al. 2010): O1 = (R − G)/√2, O2 = (R + G − 2B)/√6, in about [-0.8, 0.8]. */
  o1: Float32Array;
  o2: Float32Array;
  /** Colour-table entry of each pixel (see colourCode). */
  code: Uint16Array;
}

export function colourPlanes(pixels: number): ColourPlanes {
  return { luma: new Float32Array(pixels), o1: new Float32Array(pixels), o2: new Float32Array(pixels), code: new Uint16Array(pixels) };
}

/** Fills the first `n` pixels of `planes` from interleaved RGB bytes. */
export function fillPlanes(rgb: Uint8Array, n: number, planes: ColourPlanes): void {
  const inv = 1 / 255;
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    const r = rgb[j]!, g = rgb[j + 1]!, b = rgb[j + 2]!;
    planes.luma[i] = (0.2126 * r + 0.7152 * g + 0.0722 * b) * inv;
    planes.o1[i] = (r - g) * inv * Math.SQRT1_2;
    planes.o2[i] = (r + g - 2 * b) * inv * (1 / Math.sqrt(6));
    planes.code[i] = colourCode(r, g, b);
  }
}
