/**
 * UI annotations of a rendered screen, read from the DOM the way AITW's OCR and icon detector see a
 * screen: one TEXT item per rendered line of text (words measured with Range rects and joined while
 * they sit on one line of one block), one ICON_* item per icon glyph and per clickable element with
 * no text. `collectScreenItems` runs inside the page (it must be self-contained: it is serialised
 * into the browser); `toAnnotations` turns its CSS-pixel boxes into AITW's normalised (y, x, h, w).
 */
import type { Box, UiAnnotations } from '../types.js';

/** A box in CSS px relative to the visual viewport (what the screenshot shows). */
export interface CssBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface ScreenItem extends CssBox {
  text: string;
  type: string;
}

/** What the collector needs to know: the icon ligature → AITW icon class table, and the on-screen keyboard's marker. */
export interface CollectOptions {
  iconTypes: Record<string, string>;
  /** The attribute marking the soft keyboard (soft_keyboard.ts): what it covers is not on the screen. */
  keyboardAttr: string;
}

/** Material Symbols ligatures → the icon classes AITW's detector uses (others: ICON_<NAME>). */
export const ICON_TYPES: Readonly<Record<string, string>> = {
  arrow_back: 'ICON_ARROW_BACKWARD',
  arrow_forward: 'ICON_ARROW_FORWARD',
  arrow_upward: 'ICON_ARROW_UPWARD',
  arrow_downward: 'ICON_ARROW_DOWNWARD',
  chevron_right: 'ICON_V_FORWARD',
  chevron_left: 'ICON_V_BACKWARD',
  expand_more: 'ICON_V_DOWNWARD',
  expand_less: 'ICON_V_UPWARD',
  search: 'ICON_MAGNIFYING_GLASS',
  home: 'ICON_HOME',
  add: 'ICON_PLUS',
  check: 'ICON_CHECK',
  close: 'ICON_X',
  star: 'ICON_STAR',
  favorite: 'ICON_HEART',
  mic: 'ICON_MIC',
  settings: 'ICON_SETTINGS',
  share: 'ICON_SHARE',
  more_vert: 'ICON_THREE_DOTS',
  menu: 'ICON_THREE_BARS',
  mail: 'ICON_ENVELOPE',
  call: 'ICON_CALL',
  chat: 'ICON_CHAT',
  person: 'ICON_PERSON',
  group: 'ICON_PEOPLE',
  photo_camera: 'ICON_TAKE_PHOTO',
  videocam: 'ICON_VIDEOCAM',
  notifications: 'ICON_NOTIFICATIONS',
  location_on: 'ICON_LOCATION',
  schedule: 'ICON_TIME',
  info: 'ICON_INFO',
  help: 'ICON_QUESTION',
  delete: 'ICON_DELETE',
  edit: 'ICON_EDIT',
  send: 'ICON_SEND',
  refresh: 'ICON_REFRESH',
  play_arrow: 'ICON_PLAY',
  pause: 'ICON_PAUSE',
  light_mode: 'ICON_SUN',
  volume_up: 'ICON_VOLUME_UP',
  explore: 'ICON_COMPASS',
  apps: 'ICON_LAUNCH_APPS',
  thumb_up: 'ICON_LIKE',
};

/**
 * Runs in the page. Returns the visible texts and icons, boxes relative to the visual viewport.
 * Hand-written: no library measures rendered lines from a live DOM. One long function because
 * Playwright serialises it into the page: it cannot call anything defined outside it.
 */
export function collectScreenItems(opts: CollectOptions): ScreenItem[] {
  const vv = window.visualViewport;
  const ox = vv ? vv.offsetLeft : 0;
  const oy = vv ? vv.offsetTop : 0;
  const W = vv ? vv.width : window.innerWidth;
  const H = vv ? vv.height : window.innerHeight;
  const items: ScreenItem[] = [];
  const styles = new Map<Element, CSSStyleDeclaration>();
  const style = (e: Element): CSSStyleDeclaration => {
    let s = styles.get(e);
    if (!s) styles.set(e, (s = getComputedStyle(e)));
    return s;
  };
  const onScreen = (r: { left: number; top: number; right: number; bottom: number; width: number; height: number }): boolean =>
    r.width > 0.5 && r.height > 0.5 && r.right > ox && r.left < ox + W && r.bottom > oy && r.top < oy + H;
  const isIconFont = (e: Element): boolean => /Material (Symbols|Icons)/i.test(style(e).fontFamily);
  const visible = (e: Element): boolean => {
    const s = style(e);
    return s.visibility !== 'hidden' && s.opacity !== '0';
  };
  const blockOf = (e: Element): Element => {
    let b: Element | null = e;
    while (b && /^(inline|contents)/.test(style(b).display) && b.parentElement) b = b.parentElement;
    return b ?? e;
  };
  // The soft keyboard hides the page under it: items of the page whose centre it covers are skipped.
  const kb = document.querySelector(`[${opts.keyboardAttr}]`);
  const kbTop = kb ? kb.getBoundingClientRect().top : Infinity;
  const covered = (e: Element, r: { top: number; bottom: number }): boolean => (r.top + r.bottom) / 2 > kbTop && !kb!.contains(e);
  const push = (r: CssBox, text: string, type: string): void => {
    items.push({ x: r.x - ox, y: r.y - oy, w: r.w, h: r.h, text, type });
  };

  // Text: words of visible text nodes, joined into lines.
  let line: { block: Element; x: number; y: number; r: number; b: number; words: string[] } | undefined;
  const flush = (): void => {
    if (line) push({ x: line.x, y: line.y, w: line.r - line.x, h: line.b - line.y }, line.words.join(' '), 'TEXT');
    line = undefined;
  };
  // Elements wholly above or below the screen are skipped with their subtree: long manual pages
  // hold tens of thousands of text nodes, of which a screen shows a few hundred.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode(node: Node): number {
      if (node.nodeType !== Node.ELEMENT_NODE) return NodeFilter.FILTER_ACCEPT;
      const r = (node as Element).getBoundingClientRect();
      const offScreen = (r.width > 0 || r.height > 0) && (r.bottom < oy || r.top > oy + H) && style(node as Element).position !== 'fixed';
      return offScreen ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
    },
  });
  const range = document.createRange();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const parent = n.parentElement;
    const text = n.nodeValue ?? '';
    if (!parent || !/\S/.test(text) || /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|TITLE|OPTION)$/.test(parent.tagName)) continue;
    if (!onScreen(parent.getBoundingClientRect()) || !visible(parent) || isIconFont(parent)) continue;
    const block = blockOf(parent);
    for (const m of text.matchAll(/\S+/g)) {
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const r = range.getBoundingClientRect();
      if (!onScreen(r) || covered(parent, r)) continue;
      const sameLine =
        line && line.block === block && r.left >= line.r - 1 && r.left - line.r < r.height * 1.5 && Math.min(r.bottom, line.b) - Math.max(r.top, line.y) > r.height * 0.5;
      if (!sameLine) flush();
      if (!line) line = { block, x: r.left, y: r.top, r: r.right, b: r.bottom, words: [] };
      line.words.push(m[0]);
      line.r = Math.max(line.r, r.right);
      line.y = Math.min(line.y, r.top);
      line.b = Math.max(line.b, r.bottom);
    }
  }
  flush();

  // Icons drawn with an icon font, clickable or not (AITW's detector sees every icon).
  const iconHosts = new Set<Element>();
  for (const e of Array.from(document.querySelectorAll('i, span, .material-symbols-outlined, .material-icons'))) {
    const r = e.getBoundingClientRect();
    if (!onScreen(r) || covered(e, r) || !isIconFont(e) || !visible(e)) continue;
    const name = (e.textContent ?? '').trim();
    if (!name) continue;
    iconHosts.add(e);
    push({ x: r.left, y: r.top, w: r.width, h: r.height }, '', opts.iconTypes[name] ?? `ICON_${name.toUpperCase()}`);
  }

  // Clickables with no text of their own and no icon inside: switches, image links, empty fields.
  const clickable = 'a[href], button, input:not([type=hidden]), select, textarea, label, [role=button], [role=switch], [onclick]';
  const taken: Element[] = [];
  for (const e of Array.from(document.querySelectorAll(clickable))) {
    const r = e.getBoundingClientRect();
    if (!onScreen(r) || covered(e, r) || taken.some((t) => t.contains(e)) || !visible(e)) continue;
    const field = e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement ? e : undefined;
    if (field && field.type !== 'checkbox' && field.type !== 'radio') {
      const shown = (field.value || field.placeholder).trim();
      if (shown) push({ x: r.left, y: r.top, w: r.width, h: r.height }, shown, 'TEXT');
      else push({ x: r.left, y: r.top, w: r.width, h: r.height }, '', 'ICON_TEXT_FIELD');
      taken.push(e);
      continue;
    }
    const hasIcon = Array.from(iconHosts).some((i) => e.contains(i));
    const ownText = Array.from(e.querySelectorAll('*')).length === 0 ? (e.textContent ?? '').trim() : (e as HTMLElement).innerText?.trim() ?? '';
    if (hasIcon || ownText) continue;
    const sw = e.querySelector('input[type=checkbox], input[type=radio]') ?? (field ? e : null);
    push({ x: r.left, y: r.top, w: r.width, h: r.height }, '', sw ? 'ICON_TOGGLE' : e.querySelector('img, svg') ? 'ICON_IMAGE' : 'ICON_UNKNOWN');
    taken.push(e);
  }
  return items;
}

const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));

/**
 * Normalises items to AITW boxes (y, x, h, w) over a viewport of `width`×`height` CSS px,
 * clipping to the screen and dropping what is left with no area.
 */
export function toAnnotations(items: readonly ScreenItem[], width: number, height: number): UiAnnotations {
  const out: UiAnnotations = { positions: [], text: [], types: [] };
  for (const it of items) {
    const y0 = clamp01(it.y / height);
    const x0 = clamp01(it.x / width);
    const y1 = clamp01((it.y + it.h) / height);
    const x1 = clamp01((it.x + it.w) / width);
    if (y1 - y0 <= 0 || x1 - x0 <= 0) continue;
    const box: Box = [round4(y0), round4(x0), round4(y1 - y0), round4(x1 - x0)];
    out.positions.push(box);
    out.text.push(it.text);
    out.types.push(it.type);
  }
  return out;
}

/** Four decimals, as AITW stores coordinates; float32 storage would blur more anyway. */
export function round4(v: number): number {
  return Math.round(v * 1e4) / 1e4;
}
