import type { Box, UiAnnotations } from '../types.js';
import { glyphSvg, shapeSvg } from './glyphs.js';
import type { Element, Rect } from './layout.js';
import { layoutScreen } from './screens.js';
import type { UiState } from './state.js';
import type { ScreenSize } from './world.js';

const FONT = 'DejaVu Sans, sans-serif';
const f = (n: number): string => (Math.round(n * 100) / 100).toString();

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** SVG for one element. */
export function elementSvg(el: Element): string {
  const { x, y, w, h } = el.rect;
  const p = el.paint;
  switch (p.kind) {
    case 'rect':
      return `<rect x="${f(x)}" y="${f(y)}" width="${f(w)}" height="${f(h)}"${p.rx ? ` rx="${f(p.rx)}"` : ''} fill="${p.fill}"${p.stroke ? ` stroke="${p.stroke}"` : ''}/>`;
    case 'gradient': {
      const id = 'wallpaper';
      const [x2, y2] = p.vertical ? ['0', '1'] : ['1', '1'];
      return `<defs><linearGradient id="${id}" x1="0" y1="0" x2="${x2}" y2="${y2}"><stop offset="0" stop-color="${p.from}"/><stop offset="1" stop-color="${p.to}"/></linearGradient></defs><rect x="${f(x)}" y="${f(y)}" width="${f(w)}" height="${f(h)}" fill="url(#${id})"/>`;
    }
    case 'text':
      // Baseline sits ~0.95 em below the box top (box height is 1.25 em).
      return `<text x="${f(x)}" y="${f(y + p.size * 0.95)}" font-size="${f(p.size)}"${p.bold ? ' font-weight="bold"' : ''} fill="${p.fill}">${escapeXml(p.text)}</text>`;
    case 'appIcon': {
      const r = w / 2;
      return `<circle cx="${f(x + r)}" cy="${f(y + r)}" r="${f(r)}" fill="${p.icon.background}"/>${shapeSvg(p.icon.shape, x + r, y + r, r * 0.62, p.icon.glyph, p.icon.background)}`;
    }
    case 'shape':
      return shapeSvg(p.shape, x + w / 2, y + h / 2, Math.min(w, h) / 2, p.fill, p.background);
    case 'glyph':
      return glyphSvg(p.glyph, x, y, Math.min(w, h), p.fill, p.background);
    case 'toggle': {
      const r = h / 2;
      const knobX = p.on ? x + w - r : x + r;
      return `<rect x="${f(x)}" y="${f(y + h * 0.15)}" width="${f(w)}" height="${f(h * 0.7)}" rx="${f(h * 0.35)}" fill="${p.on ? p.accent : p.track}"/><circle cx="${f(knobX)}" cy="${f(y + r)}" r="${f(r)}" fill="${p.on ? '#ffffff' : '#f1f3f4'}" stroke="${p.on ? p.accent : '#9aa0a6'}" stroke-width="0.6"/>`;
    }
  }
}

export function svgDocument(els: readonly Element[], size: ScreenSize, offsetY = 0): string {
  const body = els.map(elementSvg).join('');
  const inner = offsetY ? `<g transform="translate(0 ${f(-offsetY)})">${body}</g>` : body;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size.width}" height="${size.height}" font-family="${FONT}">${inner}</svg>`;
}

/** Normalised AITW box (y, x, h, w) of a pixel rect, clipped to the screen. */
export function normBox(r: Rect, size: ScreenSize): Box {
  const x0 = Math.max(0, r.x);
  const y0 = Math.max(0, r.y);
  const x1 = Math.min(size.width, r.x + r.w);
  const y1 = Math.min(size.height, r.y + r.h);
  const q = (v: number): number => Math.round(v * 1e4) / 1e4;
  return [q(y0 / size.height), q(x0 / size.width), q(Math.max(0, y1 - y0) / size.height), q(Math.max(0, x1 - x0) / size.width)];
}

export function annotationsOf(els: readonly Element[], size: ScreenSize): UiAnnotations {
  const out: UiAnnotations = { positions: [], text: [], types: [] };
  for (const el of els) {
    if (!el.ann) continue;
    out.positions.push(normBox(el.rect, size));
    out.text.push(el.ann.text);
    out.types.push(el.ann.type);
  }
  return out;
}

export interface RenderedScreen {
  svg: string;
  annotations: UiAnnotations;
}

/** One screen as an SVG document plus its AITW UI annotations. Pure: same state, same output. */
export function renderScreen(state: UiState, size: ScreenSize): RenderedScreen {
  const els = layoutScreen(state, size);
  return { svg: svgDocument(els, size), annotations: annotationsOf(els, size) };
}
