import type { IconShape } from './apps.js';

/** Small UI glyphs (toolbar and list icons), drawn as plain SVG shapes so rasterising stays cheap. */
export const UI_GLYPHS = [
  'search',
  'mic',
  'back',
  'dots',
  'cart',
  'plus',
  'star',
  'menu',
  'close',
  'sun',
  'cloud',
  'wifi',
  'bluetooth',
  'airplane',
  'moon',
  'bell',
  'pin',
  'battery',
  'bolt',
  'gear',
  'phone',
  'globe',
  'share',
] as const;
export type UiGlyph = (typeof UI_GLYPHS)[number];

const f = (n: number): string => (Math.round(n * 100) / 100).toString();

function polygon(points: [number, number][], fill: string): string {
  return `<polygon points="${points.map(([x, y]) => `${f(x)},${f(y)}`).join(' ')}" fill="${fill}"/>`;
}

function regular(cx: number, cy: number, r: number, n: number, rot: number): [number, number][] {
  return Array.from({ length: n }, (_, i) => {
    const a = rot + (i * 2 * Math.PI) / n;
    return [cx + r * Math.cos(a), cy + r * Math.sin(a)] as [number, number];
  });
}

/** An app-icon glyph: one solid geometric shape centred at (cx, cy) within radius r. */
export function shapeSvg(shape: IconShape, cx: number, cy: number, r: number, fill: string, background: string): string {
  switch (shape) {
    case 'circle':
      return `<circle cx="${f(cx)}" cy="${f(cy)}" r="${f(r * 0.62)}" fill="${fill}"/>`;
    case 'square':
      return `<rect x="${f(cx - r * 0.6)}" y="${f(cy - r * 0.6)}" width="${f(r * 1.2)}" height="${f(r * 1.2)}" fill="${fill}"/>`;
    case 'triangle':
      return polygon(regular(cx, cy + r * 0.12, r * 0.85, 3, -Math.PI / 2), fill);
    case 'diamond':
      return polygon(regular(cx, cy, r * 0.85, 4, -Math.PI / 2), fill);
    case 'star': {
      const pts: [number, number][] = [];
      for (let i = 0; i < 10; i++) {
        const a = -Math.PI / 2 + (i * Math.PI) / 5;
        const rr = i % 2 === 0 ? r * 0.9 : r * 0.4;
        pts.push([cx + rr * Math.cos(a), cy + rr * Math.sin(a)]);
      }
      return polygon(pts, fill);
    }
    case 'ring':
      return `<circle cx="${f(cx)}" cy="${f(cy)}" r="${f(r * 0.55)}" fill="none" stroke="${fill}" stroke-width="${f(r * 0.3)}"/>`;
    case 'plus': {
      const a = r * 0.8;
      const b = r * 0.25;
      return `<rect x="${f(cx - a)}" y="${f(cy - b)}" width="${f(2 * a)}" height="${f(2 * b)}" fill="${fill}"/><rect x="${f(cx - b)}" y="${f(cy - a)}" width="${f(2 * b)}" height="${f(2 * a)}" fill="${fill}"/>`;
    }
    case 'cross': {
      const a = r * 0.8;
      const b = r * 0.24;
      return `<g transform="rotate(45 ${f(cx)} ${f(cy)})"><rect x="${f(cx - a)}" y="${f(cy - b)}" width="${f(2 * a)}" height="${f(2 * b)}" fill="${fill}"/><rect x="${f(cx - b)}" y="${f(cy - a)}" width="${f(2 * b)}" height="${f(2 * a)}" fill="${fill}"/></g>`;
    }
    case 'bars': {
      const h = r * 0.26;
      return [-1, 0, 1]
        .map((k) => `<rect x="${f(cx - r * 0.75)}" y="${f(cy + k * r * 0.52 - h / 2)}" width="${f(r * 1.5)}" height="${f(h)}" fill="${fill}"/>`)
        .join('');
    }
    case 'hexagon':
      return polygon(regular(cx, cy, r * 0.8, 6, 0), fill);
    case 'chevron':
      return polygon(
        [
          [cx - r * 0.5, cy - r * 0.8],
          [cx + r * 0.55, cy],
          [cx - r * 0.5, cy + r * 0.8],
          [cx - r * 0.5, cy + r * 0.35],
          [cx, cy],
          [cx - r * 0.5, cy - r * 0.35],
        ],
        fill,
      );
    case 'moon':
      return `<circle cx="${f(cx)}" cy="${f(cy)}" r="${f(r * 0.72)}" fill="${fill}"/><circle cx="${f(cx + r * 0.38)}" cy="${f(cy - r * 0.22)}" r="${f(r * 0.58)}" fill="${background}"/>`;
  }
}

/** A toolbar / list glyph inside the square (x, y, s). */
export function glyphSvg(glyph: UiGlyph, x: number, y: number, s: number, fill: string, background: string): string {
  const cx = x + s / 2;
  const cy = y + s / 2;
  const sw = f(Math.max(1, s * 0.12));
  const line = (x1: number, y1: number, x2: number, y2: number): string =>
    `<line x1="${f(x1)}" y1="${f(y1)}" x2="${f(x2)}" y2="${f(y2)}" stroke="${fill}" stroke-width="${sw}" stroke-linecap="round"/>`;
  switch (glyph) {
    case 'search':
      return `<circle cx="${f(cx - s * 0.08)}" cy="${f(cy - s * 0.08)}" r="${f(s * 0.26)}" fill="none" stroke="${fill}" stroke-width="${sw}"/>${line(cx + s * 0.12, cy + s * 0.12, cx + s * 0.36, cy + s * 0.36)}`;
    case 'mic':
      return `<rect x="${f(cx - s * 0.13)}" y="${f(y + s * 0.12)}" width="${f(s * 0.26)}" height="${f(s * 0.46)}" rx="${f(s * 0.13)}" fill="${fill}"/>${line(cx, cy + s * 0.22, cx, y + s * 0.88)}`;
    case 'back':
      return `${line(x + s * 0.2, cy, x + s * 0.82, cy)}${line(x + s * 0.2, cy, cx, y + s * 0.2)}${line(x + s * 0.2, cy, cx, y + s * 0.8)}`;
    case 'dots':
      return [-1, 0, 1].map((k) => `<circle cx="${f(cx)}" cy="${f(cy + k * s * 0.28)}" r="${f(s * 0.09)}" fill="${fill}"/>`).join('');
    case 'cart':
      return `${polygon([[x + s * 0.12, y + s * 0.22], [x + s * 0.88, y + s * 0.3], [x + s * 0.78, y + s * 0.62], [x + s * 0.28, y + s * 0.62]], fill)}<circle cx="${f(x + s * 0.35)}" cy="${f(y + s * 0.8)}" r="${f(s * 0.09)}" fill="${fill}"/><circle cx="${f(x + s * 0.72)}" cy="${f(y + s * 0.8)}" r="${f(s * 0.09)}" fill="${fill}"/>`;
    case 'plus':
      return `${line(cx, y + s * 0.2, cx, y + s * 0.8)}${line(x + s * 0.2, cy, x + s * 0.8, cy)}`;
    case 'star':
      return shapeSvg('star', cx, cy, s * 0.5, fill, background);
    case 'menu':
      return [0.28, 0.5, 0.72].map((k) => line(x + s * 0.18, y + s * k, x + s * 0.82, y + s * k)).join('');
    case 'close':
      return `${line(x + s * 0.25, y + s * 0.25, x + s * 0.75, y + s * 0.75)}${line(x + s * 0.75, y + s * 0.25, x + s * 0.25, y + s * 0.75)}`;
    case 'sun':
      return `<circle cx="${f(cx)}" cy="${f(cy)}" r="${f(s * 0.22)}" fill="${fill}"/>${[0, 1, 2, 3, 4, 5, 6, 7]
        .map((i) => {
          const a = (i * Math.PI) / 4;
          return line(cx + Math.cos(a) * s * 0.32, cy + Math.sin(a) * s * 0.32, cx + Math.cos(a) * s * 0.45, cy + Math.sin(a) * s * 0.45);
        })
        .join('')}`;
    case 'cloud':
      return `<circle cx="${f(cx - s * 0.15)}" cy="${f(cy + s * 0.05)}" r="${f(s * 0.2)}" fill="${fill}"/><circle cx="${f(cx + s * 0.1)}" cy="${f(cy - s * 0.05)}" r="${f(s * 0.25)}" fill="${fill}"/><rect x="${f(cx - s * 0.35)}" y="${f(cy + s * 0.05)}" width="${f(s * 0.7)}" height="${f(s * 0.2)}" rx="${f(s * 0.1)}" fill="${fill}"/>`;
    case 'wifi':
      return polygon([[cx, y + s * 0.85], [x + s * 0.05, y + s * 0.3], [x + s * 0.95, y + s * 0.3]], fill);
    case 'bluetooth':
      return `<polyline points="${f(x + s * 0.28)},${f(y + s * 0.3)} ${f(x + s * 0.72)},${f(y + s * 0.68)} ${f(cx)},${f(y + s * 0.88)} ${f(cx)},${f(y + s * 0.12)} ${f(x + s * 0.72)},${f(y + s * 0.32)} ${f(x + s * 0.28)},${f(y + s * 0.7)}" fill="none" stroke="${fill}" stroke-width="${sw}"/>`;
    case 'airplane':
      return polygon([[cx, y + s * 0.08], [cx + s * 0.08, cy - s * 0.1], [x + s * 0.92, cy + s * 0.1], [cx + s * 0.08, cy + s * 0.05], [cx + s * 0.06, y + s * 0.78], [cx + s * 0.2, y + s * 0.92], [cx - s * 0.2, y + s * 0.92], [cx - s * 0.06, y + s * 0.78], [cx - s * 0.08, cy + s * 0.05], [x + s * 0.08, cy + s * 0.1], [cx - s * 0.08, cy - s * 0.1]], fill);
    case 'moon':
      return shapeSvg('moon', cx, cy, s * 0.5, fill, background);
    case 'bell':
      return `${polygon([[cx, y + s * 0.12], [x + s * 0.75, y + s * 0.35], [x + s * 0.82, y + s * 0.75], [x + s * 0.18, y + s * 0.75], [x + s * 0.25, y + s * 0.35]], fill)}<circle cx="${f(cx)}" cy="${f(y + s * 0.84)}" r="${f(s * 0.09)}" fill="${fill}"/>`;
    case 'pin':
      return `<circle cx="${f(cx)}" cy="${f(y + s * 0.38)}" r="${f(s * 0.26)}" fill="${fill}"/>${polygon([[x + s * 0.28, y + s * 0.48], [x + s * 0.72, y + s * 0.48], [cx, y + s * 0.92]], fill)}`;
    case 'battery':
      return `<rect x="${f(x + s * 0.3)}" y="${f(y + s * 0.15)}" width="${f(s * 0.4)}" height="${f(s * 0.75)}" rx="${f(s * 0.06)}" fill="${fill}"/><rect x="${f(cx - s * 0.08)}" y="${f(y + s * 0.06)}" width="${f(s * 0.16)}" height="${f(s * 0.1)}" fill="${fill}"/>`;
    case 'bolt':
      return polygon([[cx + s * 0.1, y + s * 0.08], [x + s * 0.25, cy + s * 0.05], [cx, cy + s * 0.05], [cx - s * 0.1, y + s * 0.92], [x + s * 0.75, cy - s * 0.05], [cx, cy - s * 0.05]], fill);
    case 'gear':
      return `${polygon(regular(cx, cy, s * 0.42, 8, 0), fill)}<circle cx="${f(cx)}" cy="${f(cy)}" r="${f(s * 0.14)}" fill="${background}"/>`;
    case 'phone':
      return `<rect x="${f(x + s * 0.28)}" y="${f(y + s * 0.1)}" width="${f(s * 0.44)}" height="${f(s * 0.8)}" rx="${f(s * 0.08)}" fill="${fill}"/>`;
    case 'globe':
      return `<circle cx="${f(cx)}" cy="${f(cy)}" r="${f(s * 0.38)}" fill="none" stroke="${fill}" stroke-width="${sw}"/>${line(x + s * 0.12, cy, x + s * 0.88, cy)}<ellipse cx="${f(cx)}" cy="${f(cy)}" rx="${f(s * 0.15)}" ry="${f(s * 0.38)}" fill="none" stroke="${fill}" stroke-width="${sw}"/>`;
    case 'share':
      return `<circle cx="${f(x + s * 0.75)}" cy="${f(y + s * 0.22)}" r="${f(s * 0.12)}" fill="${fill}"/><circle cx="${f(x + s * 0.25)}" cy="${f(cy)}" r="${f(s * 0.12)}" fill="${fill}"/><circle cx="${f(x + s * 0.75)}" cy="${f(y + s * 0.78)}" r="${f(s * 0.12)}" fill="${fill}"/>${line(x + s * 0.25, cy, x + s * 0.75, y + s * 0.22)}${line(x + s * 0.25, cy, x + s * 0.75, y + s * 0.78)}`;
  }
}
