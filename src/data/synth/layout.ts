import type { AppIcon, AppInfo } from './apps.js';
import type { UiGlyph } from './glyphs.js';
import { NAV_H, STATUS_H, type ScreenSize, type Theme, type World } from './world.js';
import type { Field } from './state.js';

/** Pixel rectangle. */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type Paint =
  | { kind: 'rect'; fill: string; rx: number; stroke?: string }
  | { kind: 'gradient'; from: string; to: string; vertical: boolean }
  | { kind: 'text'; text: string; size: number; fill: string; anchor: 'start' | 'middle' | 'end'; bold: boolean }
  | { kind: 'appIcon'; icon: AppIcon }
  | { kind: 'shape'; shape: AppIcon['shape']; fill: string; background: string }
  | { kind: 'glyph'; glyph: UiGlyph; fill: string; background: string }
  | { kind: 'toggle'; on: boolean; accent: string; track: string };

/** One drawn thing. Annotated elements become AITW UI annotations; `id` names oracle targets. */
export interface Element {
  rect: Rect;
  paint: Paint;
  id?: string;
  ann?: { type: string; text: string };
  /** Keyboard elements are rasterised once per (size, theme) and pasted (see raster.ts). */
  layer?: 'keyboard';
}

/** Layout units: the screen is 160 units wide whatever its pixel width; height scales along. */
export const UNITS_W = 160;
/** Average advance of DejaVu Sans glyphs, in em; good enough for annotation boxes and truncation. */
const CHAR_EM = 0.58;
export const KEYBOARD_H = 96;

export function textWidth(text: string, size: number): number {
  return text.length * size * CHAR_EM;
}

export function truncate(text: string, size: number, maxW: number): string {
  const max = Math.max(1, Math.floor(maxW / (size * CHAR_EM)));
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** Collects elements in layout units and stores them in pixels. */
export class Builder {
  readonly els: Element[] = [];
  readonly u: number;
  /** Screen height in layout units. */
  readonly H: number;
  readonly W = UNITS_W;

  constructor(
    readonly size: ScreenSize,
    readonly theme: Theme,
  ) {
    this.u = size.width / UNITS_W;
    this.H = size.height / this.u;
  }

  private px(x: number, y: number, w: number, h: number): Rect {
    const u = this.u;
    return { x: x * u, y: y * u, w: w * u, h: h * u };
  }

  add(x: number, y: number, w: number, h: number, paint: Paint, extra: Omit<Element, 'rect' | 'paint'> = {}): Element {
    const el: Element = { rect: this.px(x, y, w, h), paint, ...extra };
    this.els.push(el);
    return el;
  }

  rect(x: number, y: number, w: number, h: number, fill: string, rx = 0, extra: Omit<Element, 'rect' | 'paint'> = {}): Element {
    return this.add(x, y, w, h, { kind: 'rect', fill, rx: rx * this.u }, extra);
  }

  /** Text whose box starts at (x, y) top (or is centred on x / ends at x); annotated as TEXT unless told not. */
  text(
    x: number,
    y: number,
    text: string,
    size: number,
    fill: string,
    opts: { anchor?: 'start' | 'middle' | 'end'; bold?: boolean; maxW?: number; ann?: boolean; id?: string; layer?: 'keyboard' } = {},
  ): Element | undefined {
    const shown = opts.maxW ? truncate(text, size, opts.maxW) : text;
    if (!shown) return undefined;
    const anchor = opts.anchor ?? 'start';
    const w = textWidth(shown, size);
    const left = anchor === 'start' ? x : anchor === 'middle' ? x - w / 2 : x - w;
    const extra: Omit<Element, 'rect' | 'paint'> = {};
    if (opts.ann ?? true) extra.ann = { type: 'TEXT', text: shown };
    if (opts.id) extra.id = opts.id;
    if (opts.layer) extra.layer = opts.layer;
    return this.add(left, y, w, size * 1.25, { kind: 'text', text: shown, size: size * this.u, fill, anchor: 'start', bold: opts.bold ?? false }, extra);
  }

  glyph(x: number, y: number, s: number, glyph: UiGlyph, fill: string, background: string, ann?: string, id?: string): Element {
    const extra: Omit<Element, 'rect' | 'paint'> = {};
    if (ann) extra.ann = { type: ann, text: '' };
    if (id) extra.id = id;
    return this.add(x, y, s, s, { kind: 'glyph', glyph, fill, background }, extra);
  }

  appIcon(cx: number, cy: number, d: number, app: AppInfo, id?: string): Element {
    return this.add(cx - d / 2, cy - d / 2, d, d, { kind: 'appIcon', icon: app.icon }, {
      ann: { type: app.iconType, text: '' },
      ...(id ? { id } : {}),
    });
  }

  button(x: number, y: number, w: number, h: number, label: string, fill: string, textFill: string, id?: string, size = 7): Element {
    const el = this.rect(x, y, w, h, fill, h / 2, { ann: { type: 'TEXT', text: label }, ...(id ? { id } : {}) });
    this.text(x + w / 2, y + (h - size * 1.25) / 2, label, size, textFill, { anchor: 'middle', bold: true, ann: false });
    return el;
  }

  /** A search / address field; the field box is the tap target and carries the text annotation. */
  field(x: number, y: number, w: number, h: number, field: Field, placeholder: string, opts: { fill?: string; id?: string; mic?: boolean; glyph?: UiGlyph } = {}): Element {
    const t = this.theme;
    const shown = field.text || placeholder;
    const el = this.rect(x, y, w, h, opts.fill ?? t.surfaceAlt, h / 2, { ann: { type: 'TEXT', text: shown }, id: opts.id ?? 'field' });
    const gs = h * 0.55;
    this.glyph(x + h * 0.3, y + (h - gs) / 2, gs, opts.glyph ?? 'search', t.muted, opts.fill ?? t.surfaceAlt, 'ICON_MAGNIFYING_GLASS');
    const size = Math.min(7.5, h * 0.45);
    const tx = x + h * 0.3 + gs + 4;
    const maxW = w - (tx - x) - (opts.mic ? h : 4);
    const txt = this.text(tx, y + (h - size * 1.25) / 2, shown, size, field.text ? t.onSurface : t.muted, { maxW, ann: false });
    if (field.focused) {
      const cx = txt ? txt.rect.x / this.u + txt.rect.w / this.u + 0.5 : tx;
      this.rect(cx, y + h * 0.22, 0.8, h * 0.56, t.accent);
    }
    if (opts.mic) this.glyph(x + w - h * 0.85, y + h * 0.2, h * 0.6, 'mic', t.accent, opts.fill ?? t.surfaceAlt, 'ICON_MIC');
    return el;
  }

  toggle(x: number, y: number, on: boolean, id: string): Element {
    const t = this.theme;
    return this.add(x, y, 20, 11, { kind: 'toggle', on, accent: t.accent, track: t.dark ? '#5f6368' : '#bdc1c6' }, {
      id,
      ann: { type: on ? 'ICON_TOGGLE_ON' : 'ICON_TOGGLE_OFF', text: '' },
    });
  }
}

export function statusBar(b: Builder, world: World, bg: string | null, fg: string): void {
  if (bg) b.rect(0, 0, b.W, STATUS_H, bg);
  b.text(5, 2, world.time, 7, fg, { bold: true });
  const pct = `${world.battery}%`;
  const pw = textWidth(pct, 6.5);
  b.text(b.W - 4, 2.4, pct, 6.5, fg, { anchor: 'end' });
  b.glyph(b.W - 4 - pw - 7, 2, 7, 'battery', fg, bg ?? '#000000', 'ICON_BATTERY');
  b.glyph(b.W - 4 - pw - 15, 2, 7, 'wifi', fg, bg ?? '#000000');
}

/** Gesture navigation bar: a pill at the bottom. */
export function navBar(b: Builder, bg: string | null, fg: string): void {
  if (bg) b.rect(0, b.H - NAV_H, b.W, NAV_H, bg);
  b.rect(b.W / 2 - 18, b.H - NAV_H / 2 - 1, 36, 2.2, fg, 1.1);
}

/** Top app bar with back arrow, title and overflow menu. Returns its bottom. */
export function appBar(b: Builder, title: string, bg: string, fg: string, opts: { back?: boolean; y?: number; right?: UiGlyph } = {}): number {
  const y = opts.y ?? STATUS_H;
  b.rect(0, y, b.W, 24, bg);
  let x = 6;
  if (opts.back ?? true) {
    b.glyph(4, y + 5, 14, 'back', fg, bg, 'ICON_ARROW_BACKWARD', 'back');
    x = 24;
  }
  b.text(x, y + 7, title, 9, fg, { bold: true, maxW: b.W - x - 22 });
  b.glyph(b.W - 16, y + 5, 14, opts.right ?? 'dots', fg, bg, opts.right === 'cart' ? 'ICON_SHOPPING_CART' : 'ICON_THREE_DOTS', opts.right === 'cart' ? 'cart' : undefined);
  return y + 24;
}

const KEY_ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];

/** On-screen keyboard at the bottom, above the nav bar. Returns its top. */
export function keyboard(b: Builder): number {
  const t = b.theme;
  const top = b.H - NAV_H - KEYBOARD_H;
  const bg = t.dark ? '#202124' : '#e8eaed';
  const key = t.dark ? '#3c4043' : '#ffffff';
  const label = t.dark ? '#e8eaed' : '#202124';
  const L = { layer: 'keyboard' as const };
  b.rect(0, top, b.W, KEYBOARD_H + NAV_H, bg, 0, L);
  const kw = 15.2;
  const kh = 19;
  KEY_ROWS.forEach((row, r) => {
    const x0 = (b.W - row.length * (kw + 0.8)) / 2 + (r === 2 ? 0 : 0);
    const y = top + 4 + r * (kh + 3);
    [...row].forEach((ch, i) => {
      const x = x0 + i * (kw + 0.8);
      b.rect(x, y, kw, kh, key, 2, L);
      b.text(x + kw / 2, y + 5, ch, 8, label, { anchor: 'middle', layer: 'keyboard' });
    });
  });
  const y = top + 4 + 3 * (kh + 3);
  b.rect(4, y, 22, kh, t.dark ? '#5f6368' : '#c9ccd1', 2, L);
  b.text(15, y + 5.5, '?123', 6.5, label, { anchor: 'middle', layer: 'keyboard' });
  b.rect(30, y, 90, kh, key, 2, L);
  b.rect(124, y, 32, kh, t.accent, 2, L);
  b.glyph(133, y + 3, 13, 'search', '#ffffff', t.accent, undefined);
  b.els[b.els.length - 1]!.layer = 'keyboard';
  return top;
}
