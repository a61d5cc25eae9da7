/**
 * Screen texts from an Android UI tree: the XML that `uiautomator dump` writes. Every node with a
 * non-empty `text` (or, failing that, `content-desc`) gives one ScreenText, its `bounds`
 * "[x1,y1][x2,y2]" (pixels) normalised by the screen size to AITW's (y, x, h, w). Nodes are
 * taken in document order, which is uiautomator's traversal order.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { InputError } from '../../util/errors.js';
import type { Box } from '../types.js';
import type { ScreenText } from './types.js';

export interface TreeScreenSize {
  width: number;
  height: number;
}

interface UiNode {
  text?: string;
  'content-desc'?: string;
  bounds?: string;
  node?: UiNode[];
}

const BOUNDS_RE = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/;

/** "[x1,y1][x2,y2]" → normalised (y, x, h, w), clipped to the screen; null when malformed or empty on screen. */
export function parseBounds(bounds: string, size: TreeScreenSize): Box | null {
  const m = BOUNDS_RE.exec(bounds.trim());
  if (!m) return null;
  const [x1, y1, x2, y2] = m.slice(1).map(Number) as [number, number, number, number];
  const cx1 = Math.max(0, Math.min(size.width, x1));
  const cx2 = Math.max(0, Math.min(size.width, x2));
  const cy1 = Math.max(0, Math.min(size.height, y1));
  const cy2 = Math.max(0, Math.min(size.height, y2));
  if (cx2 <= cx1 || cy2 <= cy1) return null;
  return [cy1 / size.height, cx1 / size.width, (cy2 - cy1) / size.height, (cx2 - cx1) / size.width];
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => name === 'node',
  parseAttributeValue: false,
  parseTagValue: false,
});

function collect(nodes: readonly UiNode[] | undefined, size: TreeScreenSize, out: ScreenText[]): void {
  for (const n of nodes ?? []) {
    const label = (n.text ?? '').trim() || (n['content-desc'] ?? '').trim();
    const box = label && n.bounds ? parseBounds(n.bounds, size) : null;
    if (box) out.push({ text: label, box, score: 1 });
    collect(n.node, size, out);
  }
}

/** The texts of a uiautomator dump; `where` names the dump in errors. Nodes off screen or without text are skipped. */
export function parseUiTree(xml: string, size: TreeScreenSize, where = 'uiautomator dump'): ScreenText[] {
  if (!(size.width > 0 && size.height > 0)) throw new RangeError(`screen size must be positive, got ${size.width}×${size.height}`);
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new InputError(`not well-formed XML (line ${valid.err.line}: ${valid.err.msg})`, where);
  const doc = parser.parse(xml) as { hierarchy?: { node?: UiNode[] } | '' };
  if (doc.hierarchy === undefined) throw new InputError('has no <hierarchy> root (is it a uiautomator dump?)', where);
  const out: ScreenText[] = [];
  // An empty <hierarchy/> parses as '' (a screen with no nodes).
  if (typeof doc.hierarchy === 'object') collect(doc.hierarchy.node, size, out);
  return out;
}
