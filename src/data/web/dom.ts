/**
 * In-page queries the episode runner needs (each function is serialised into the browser, so it
 * must be self-contained). Boxes are CSS px relative to the visual viewport, like annotate.ts.
 */
import type { CssBox } from './annotate.js';

/** A rendered link: where it goes (without #fragment), its text, and its first line box. */
export interface LinkOnPage {
  href: string;
  text: string;
  /** The text is drawn on the screen (false: the link shows an icon and its text is its aria-label). */
  shown: boolean;
  box: CssBox;
}

export interface ViewState {
  /** Visual viewport size in CSS px (the screenshot shows exactly this). */
  width: number;
  height: number;
  scale: number;
  pageX: number;
  pageY: number;
  /** How far the page can still scroll down, in CSS px. */
  below: number;
  url: string;
  /** Checked states, values and focus: what makes two visits to one URL look different. */
  formState: string;
}

/** Runs in the page: every rendered, visible link in document order (first line box of each). */
export function listLinks(): LinkOnPage[] {
  const vv = window.visualViewport;
  const ox = vv ? vv.offsetLeft : 0;
  const oy = vv ? vv.offsetTop : 0;
  const h = vv ? vv.height : window.innerHeight;
  const out: LinkOnPage[] = [];
  for (const a of Array.from(document.querySelectorAll('a[href]')) as HTMLAnchorElement[]) {
    const r = Array.from(a.getClientRects()).find((q) => q.width > 2 && q.height > 2);
    // Links more than a few screens away are out of any task's reach.
    if (!r || r.bottom < oy || r.top > oy + 4 * h) continue;
    const s = getComputedStyle(a);
    if (s.visibility === 'hidden' || s.opacity === '0') continue;
    // The link's words, without icon-font ligatures ("mail" drawn as an envelope).
    let text = '';
    const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode())
      if (!(n.parentElement && /Material (Symbols|Icons)/i.test(getComputedStyle(n.parentElement).fontFamily))) text += ' ' + (n.nodeValue ?? '');
    const words = text.replace(/\s+/g, ' ').trim();
    out.push({ href: a.href.split('#')[0]!, text: words || (a.getAttribute('aria-label') ?? ''), shown: words !== '', box: { x: r.left - ox, y: r.top - oy, w: r.width, h: r.height } });
  }
  return out;
}

/** Runs in the page: the first rendered element matching `selector`, or null. */
export function boxOf(selector: string): CssBox | null {
  const vv = window.visualViewport;
  const ox = vv ? vv.offsetLeft : 0;
  const oy = vv ? vv.offsetTop : 0;
  for (const e of Array.from(document.querySelectorAll(selector))) {
    const r = e.getBoundingClientRect();
    if (r.width > 2 && r.height > 2) return { x: r.left - ox, y: r.top - oy, w: r.width, h: r.height };
  }
  return null;
}

/** Runs in the page: viewport geometry and the state that decides what the screen shows. */
export function viewState(): ViewState {
  const vv = window.visualViewport;
  const doc = document.scrollingElement ?? document.documentElement;
  const fields = Array.from(document.querySelectorAll('input, textarea, select')) as HTMLInputElement[];
  const active = document.activeElement;
  const formState = fields.map((f, i) => `${i}:${f.checked ? 1 : 0}:${f.value}:${f === active ? 'F' : ''}`).join('|');
  const height = vv ? vv.height : window.innerHeight;
  return {
    width: vv ? vv.width : window.innerWidth,
    height,
    scale: vv ? vv.scale : 1,
    pageX: vv ? vv.pageLeft : window.scrollX,
    pageY: vv ? vv.pageTop : window.scrollY,
    below: Math.max(0, doc.scrollHeight - (window.scrollY + height)),
    url: location.href,
    formState,
  };
}

/** What a tap must land on: a link to `href` (no #fragment), or an element matching `selector`. */
export interface TapTarget {
  href?: string;
  selector?: string;
}

/** Runs in the page: whether a tap at (x, y) (visual viewport CSS px) reaches the target, not something drawn over it. */
export function hits(arg: { x: number; y: number; target: TapTarget }): boolean {
  const vv = window.visualViewport;
  const e = document.elementFromPoint(arg.x + (vv ? vv.offsetLeft : 0), arg.y + (vv ? vv.offsetTop : 0));
  if (!e) return false;
  if (arg.target.href !== undefined) {
    const a = e.closest('a[href]') as HTMLAnchorElement | null;
    return !!a && a.href.split('#')[0] === arg.target.href;
  }
  return arg.target.selector !== undefined && !!e.closest(arg.target.selector);
}
