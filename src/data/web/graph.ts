/**
 * The link graph of a site's pages, read from the HTML files (htmlparser2): which page links to
 * which, with link texts and page titles. Navigation tasks follow shortest paths in it (BFS, links
 * in document order, so ties break the same way every run).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { Parser } from 'htmlparser2';

export interface PageLink {
  /** Target page, relative to the site folder (posix, no #fragment). */
  to: string;
  text: string;
  /** Characters of page text before the link: a layout-free stand-in for how far down a phone shows it. */
  offset: number;
}

/**
 * Links within this much text from the top count as reachable with a few swipes on a phone (a
 * 412 px wide screen shows ~1,500 characters of running text); navigation paths use only those, so
 * they run through links a person would see, not through footers and sidebars screens away.
 */
export const REACH_CHARS = 3000;
export const inReach = (l: PageLink): boolean => l.offset <= REACH_CHARS;

export interface PageInfo {
  path: string;
  title: string;
  links: PageLink[];
}

export type LinkGraph = Map<string, PageInfo>;

/** Pages no task starts or ends on: generated indexes, search, the one-page-of-everything. */
const NOT_A_TASK_PAGE = /(^|\/)(genindex|py-modindex|modindex|search|all)\.html$/;

export function isTaskPage(path: string): boolean {
  return !NOT_A_TASK_PAGE.test(path);
}

/** Resolves a link's href against its page; undefined for other sites, schemes and same-page anchors. */
export function resolveHref(from: string, href: string): string | undefined {
  const h = href.trim();
  if (h === '' || h.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(h) || h.startsWith('//')) return undefined;
  const path = h.split('#')[0]!.split('?')[0]!;
  if (path === '') return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const to = posix.normalize(posix.join(posix.dirname(from), decoded));
  return to.startsWith('..') ? undefined : to;
}

const clean = (s: string): string => s.replace(/\s+/g, ' ').trim();

/**
 * Title and outgoing links (to pages in `known`, not to itself) of one HTML page. A streaming parse
 * (no DOM): some manual pages are megabytes long.
 */
export function parsePage(html: string, path: string, known: ReadonlySet<string>): PageInfo {
  const links: PageLink[] = [];
  let title = '';
  let inTitle = false;
  let open: { to: string; text: string; offset: number } | undefined;
  let chars = 0;
  let skip = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'title') inTitle = true;
        if (name === 'script' || name === 'style') skip++;
        if (name === 'a' && attribs.href !== undefined && !open) {
          const to = resolveHref(path, attribs.href);
          if (to !== undefined && to !== path && known.has(to)) open = { to, text: '', offset: chars };
        }
      },
      ontext(text) {
        if (inTitle) title += text;
        else if (skip === 0) chars += text.replace(/\s+/g, ' ').length;
        if (open) open.text += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (name === 'script' || name === 'style') skip = Math.max(0, skip - 1);
        if (name === 'a' && open) {
          links.push({ to: open.to, text: clean(open.text), offset: open.offset });
          open = undefined;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return { path, title: clean(title) || path, links };
}

async function htmlFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory() && !e.name.startsWith('_')) out.push(...(await htmlFiles(dir, rel)));
    else if (e.isFile() && /\.html?$/i.test(e.name)) out.push(rel);
  }
  return out.sort();
}

/** A page that only forwards to another (texinfo node stubs): `<meta http-equiv="refresh">`. */
export function isRedirectStub(html: string): boolean {
  return /<meta[^>]+http-equiv\s*=\s*["']?refresh/i.test(html.slice(0, 4096));
}

/**
 * The graph of the task pages under `dir` (UTF-8 assumed; other bytes only blur titles). Redirect
 * stubs are left out, with the links to them: a tap on one lands on another page than it names.
 */
export async function readLinkGraph(dir: string): Promise<LinkGraph> {
  const texts = new Map<string, string>();
  for (const f of (await htmlFiles(dir)).filter(isTaskPage)) {
    const html = await readFile(join(dir, f), 'utf8');
    if (!isRedirectStub(html)) texts.set(f, html);
  }
  const known = new Set(texts.keys());
  const graph: LinkGraph = new Map();
  for (const [f, html] of texts) graph.set(f, parsePage(html, f, known));
  return graph;
}

/**
 * BFS from `from`: for every reachable page, one shortest path as the list of pages after `from`
 * (empty for `from` itself). `through` limits which pages a path may pass through, `edge` which
 * links it may follow.
 */
export function shortestPaths(
  graph: LinkGraph,
  from: string,
  through: (p: string) => boolean = () => true,
  edge: (l: PageLink) => boolean = () => true,
): Map<string, string[]> {
  const parent = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const p = queue[i]!;
    if (p !== from && !through(p)) continue;
    for (const l of graph.get(p)?.links ?? []) {
      if (parent.has(l.to) || !edge(l)) continue;
      parent.set(l.to, p);
      queue.push(l.to);
    }
  }
  const out = new Map<string, string[]>();
  for (const p of parent.keys()) {
    const path: string[] = [];
    for (let q: string | null | undefined = p; q !== from && q != null; q = parent.get(q)) path.unshift(q);
    out.set(p, path);
  }
  return out;
}

/**
 * The part of page titles every page shares (" — Flask Documentation (2.2.x)", " | Node.js … Documentation"),
 * found as the most common text after the last separator; '' when under half the pages share one.
 */
export function commonTitleSuffix(titles: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of titles) {
    const m = /(\s(?:—|–|\||-|::)\s[^—–|]*|\s\([^()]*\))$/.exec(t);
    if (m) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  let best = '';
  let n = 0;
  for (const [s, c] of counts) if (c > n || (c === n && s < best)) [best, n] = [s, c];
  return n * 2 >= titles.length && n >= 2 ? best : '';
}

/** A page's name as a person would say it: its title without the site-wide suffix and markup noise. */
export function pageName(title: string, suffix: string): string {
  const t = suffix && title.endsWith(suffix) ? title.slice(0, -suffix.length) : title;
  return t
    .replace(/[¶#]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(Chapter|Appendix|Part)\s+[A-Z0-9]+\.\s+/, '')
    .replace(/^[A-Z0-9]{1,3}(\.[0-9]+)*\.\s+/, '');
}
