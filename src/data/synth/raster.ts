import sharp from 'sharp';
import type { RawImage, UiAnnotations } from '../types.js';
import { layoutScreen } from './screens.js';
import { annotationsOf, svgDocument } from './render.js';
import type { UiState } from './state.js';
import type { ScreenSize } from './world.js';

/** SVG → uint8 H×W×3 (AITW's raw screen format). */
export async function rasterizeSvg(svg: string, size: ScreenSize): Promise<RawImage> {
  const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.width !== size.width || info.height !== size.height || info.channels !== 3)
    throw new Error(`rasterised ${info.width}×${info.height}×${info.channels}, expected ${size.width}×${size.height}×3`);
  return { height: info.height, width: info.width, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

interface Band {
  top: number;
  pixels: Uint8Array;
}

/**
 * The keyboard is the most text-heavy piece and identical on every screen that shows it, so it is
 * rasterised once per (size, look) and pasted row by row; text rendering dominates librsvg's cost.
 */
const bandCache = new Map<string, Promise<Band>>();

function keyboardBand(key: string, els: Parameters<typeof svgDocument>[0], size: ScreenSize, topPx: number): Promise<Band> {
  let band = bandCache.get(key);
  if (!band) {
    const top = Math.floor(topPx);
    // Stretch the keyboard's background up to the band's first whole row, so no row is left transparent.
    const [bg, ...keys] = els;
    if (bg) els = [{ ...bg, rect: { ...bg.rect, y: top, h: bg.rect.h + (bg.rect.y - top) } }, ...keys];
    const bandSize = { width: size.width, height: size.height - top };
    band = rasterizeSvg(svgDocument(els, bandSize, top), bandSize).then((img) => ({ top, pixels: img.data }));
    if (bandCache.size > 64) bandCache.clear();
    bandCache.set(key, band);
  }
  return band;
}

export interface RasterScreen {
  image: RawImage;
  annotations: UiAnnotations;
}

/** Renders a screen to raw RGB pixels plus annotations; same pixels as rasterising renderScreen's SVG, up to keyboard-edge anti-aliasing. */
export async function rasterizeScreen(state: UiState, size: ScreenSize): Promise<RasterScreen> {
  const els = layoutScreen(state, size);
  const annotations = annotationsOf(els, size);
  const kb = els.filter((e) => e.layer === 'keyboard');
  const rest = kb.length ? els.filter((e) => e.layer !== 'keyboard') : els;
  const image = await rasterizeSvg(svgDocument(rest, size), size);
  if (kb.length) {
    const t = state.world.theme;
    const top = Math.min(...kb.map((e) => e.rect.y));
    const band = await keyboardBand(`${size.width}x${size.height}:${t.dark}:${t.accent}`, kb, size, top);
    image.data.set(band.pixels, band.top * size.width * 3);
  }
  return { image, annotations };
}
