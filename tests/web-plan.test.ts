/** The pure parts of `data web`: link graph, shortest paths, titles, annotations, taps, goals. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toAnnotations } from '../src/data/web/annotate.js';
import { commonTitleSuffix, inReach, isRedirectStub, pageName, parsePage, REACH_CHARS, resolveHref, shortestPaths, type LinkGraph } from '../src/data/web/graph.js';
import { searchWord, varyCase } from '../src/data/web/goals.js';
import { navigationRoute } from '../src/data/web/link_tasks.js';
import type { SiteModel } from '../src/data/web/site_model.js';
import { withViewportMeta, VIEWPORT_META } from '../src/data/web/pages.js';
import { tapAction } from '../src/data/web/recorder.js';
import { ActionType } from '../src/data/types.js';
import { Rng } from '../src/util/rng.js';

describe('link graph', () => {
  it('resolves relative hrefs and drops anchors, schemes and paths outside the site', () => {
    expect(resolveHref('a/b.html', '../c.html#x')).toBe('c.html');
    expect(resolveHref('a/b.html', 'd.html?q=1')).toBe('a/d.html');
    expect(resolveHref('a/b.html', '#top')).toBeUndefined();
    expect(resolveHref('a/b.html', 'https://example.org/')).toBeUndefined();
    expect(resolveHref('a/b.html', 'mailto:x@y')).toBeUndefined();
    expect(resolveHref('b.html', '../../etc/passwd')).toBeUndefined();
    expect(resolveHref('b.html', 'My%20Page.html')).toBe('My Page.html');
  });

  it('reads the title, links to known pages in order, their texts and text offsets', () => {
    const html = `<html><head><title>Intro — Tiny Docs</title><script>var x = "<a href='b.html'>no</a>";</script></head>
      <body><p>Hello world</p><a href="b.html#s">Beta <b>page</b></a> text <a href="zzz.html">gone</a><a href="a.html">self</a><a href="c.html">C</a></body></html>`;
    const p = parsePage(html, 'a.html', new Set(['a.html', 'b.html', 'c.html']));
    expect(p.title).toBe('Intro — Tiny Docs');
    expect(p.links.map((l) => [l.to, l.text])).toEqual([
      ['b.html', 'Beta page'],
      ['c.html', 'C'],
    ]);
    expect(p.links[0]!.offset).toBeGreaterThan(0);
    expect(p.links[1]!.offset).toBeGreaterThan(p.links[0]!.offset);
  });

  const graphOf = (adj: number[][]): LinkGraph =>
    new Map(adj.map((to, i) => [`p${i}`, { path: `p${i}`, title: `P${i}`, links: to.map((t) => ({ to: `p${t}`, text: `P${t}`, offset: 0 })) }]));

  /** All-pairs distances by Floyd–Warshall, the reference BFS must agree with. */
  function distances(adj: number[][]): number[][] {
    const n = adj.length;
    const d = adj.map((to, i) => Array.from({ length: n }, (_, j) => (i === j ? 0 : to.includes(j) ? 1 : Infinity)));
    for (let k = 0; k < n; k++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) d[i]![j] = Math.min(d[i]![j]!, d[i]![k]! + d[k]![j]!);
    return d;
  }

  it('BFS paths are shortest, valid edge by edge, and cover exactly the reachable pages', () => {
    const adjacency = fc.integer({ min: 1, max: 9 }).chain((n) => fc.array(fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { maxLength: 4 }), { minLength: n, maxLength: n }));
    fc.assert(
      fc.property(adjacency, (adj) => {
        const g = graphOf(adj);
        const d = distances(adj);
        const paths = shortestPaths(g, 'p0');
        for (let j = 0; j < adj.length; j++) {
          const path = paths.get(`p${j}`);
          if (d[0]![j] === Infinity) {
            expect(path).toBeUndefined();
            continue;
          }
          expect(path!.length).toBe(d[0]![j]);
          let at = 0;
          for (const step of path!) {
            const next = Number(step.slice(1));
            expect(adj[at]).toContain(next);
            at = next;
          }
          expect(at).toBe(j);
        }
      }),
    );
  });

  it('recognises redirect stubs (texinfo node pages)', () => {
    expect(isRedirectStub('<html><head><meta http-equiv="Refresh" content="0; url=Shell-Grammar.html#Aliasing"></head></html>')).toBe(true);
    expect(isRedirectStub('<html><head><meta http-equiv="Content-Type" content="text/html"></head></html>')).toBe(false);
  });

  it('follows only links within reach when asked', () => {
    const g: LinkGraph = new Map([
      ['a', { path: 'a', title: 'A', links: [{ to: 'c', text: 'C', offset: REACH_CHARS + 1 }, { to: 'b', text: 'B', offset: 10 }] }],
      ['b', { path: 'b', title: 'B', links: [{ to: 'c', text: 'C', offset: 10 }] }],
      ['c', { path: 'c', title: 'C', links: [] }],
    ]);
    expect(shortestPaths(g, 'a').get('c')).toEqual(['c']);
    expect(shortestPaths(g, 'a', () => true, inReach).get('c')).toEqual(['b', 'c']);
  });

  it('names pages without the site-wide title suffix or section numbers', () => {
    const titles = ['Quickstart — Flask Documentation (2.2.x)', 'API — Flask Documentation (2.2.x)', 'Odd one'];
    const suffix = commonTitleSuffix(titles);
    expect(suffix).toBe(' — Flask Documentation (2.2.x)');
    expect(pageName(titles[0]!, suffix)).toBe('Quickstart');
    expect(pageName('Chapter\u00a03.\u00a0The system initialization', '')).toBe('The system initialization');
    expect(pageName('F.1. adminpack', '')).toBe('adminpack');
    expect(commonTitleSuffix(['A', 'B — x', 'C'])).toBe('');
  });
});

describe('navigation routes', () => {
  // index → a, b; a → c; c → a, e, f; e → b; b → d; f → g: d is 3 links from c but 2 from the entry page; g 2 from c, 4 from the entry page.
  const adj: Record<string, string[]> = { 'index.html': ['a.html', 'b.html'], 'a.html': ['c.html'], 'c.html': ['a.html', 'e.html', 'f.html'], 'e.html': ['b.html'], 'b.html': ['d.html'], 'd.html': [], 'f.html': ['g.html'], 'g.html': [] };
  const graph: LinkGraph = new Map(Object.entries(adj).map(([p, to]) => [p, { path: p, title: p, links: to.map((t) => ({ to: t, text: t, offset: 0 })) }]));
  const m: SiteModel = { site: 's', kind: 'manual', label: 'S', pagesDir: '/nowhere', graph, names: new Map(), start: 'index.html' };
  const route = (from: string, to: string) => navigationRoute(m, from, to, shortestPaths(graph, from).get(to)!);

  it('goes through HOME when the walk starts away from the entry page and the target is more than a link away', () => {
    expect(route('c.html', 'd.html')).toEqual({ home: true, links: ['b.html', 'd.html'] });
  });

  it('follows the links alone from the entry page, for a target one link away, or one the entry page reaches only through more than three links', () => {
    expect(route('index.html', 'd.html')).toEqual({ home: false, links: ['b.html', 'd.html'] });
    expect(route('c.html', 'e.html')).toEqual({ home: false, links: ['e.html'] });
    expect(route('c.html', 'g.html')).toEqual({ home: false, links: ['f.html', 'g.html'] });
  });
});

describe('pages, annotations and actions', () => {
  it('adds a viewport meta tag only where there is none', () => {
    expect(withViewportMeta('<html><head><title>x</title></head></html>')).toBe(`<html><head>${VIEWPORT_META}<title>x</title></head></html>`);
    const has = '<html><head><meta name="viewport" content="width=500"></head></html>';
    expect(withViewportMeta(has)).toBe(has);
  });

  it('normalises boxes to (y, x, h, w), clipped to the screen', () => {
    const a = toAnnotations(
      [
        { x: 41.2, y: 91.5, w: 82.4, h: 45.75, text: 'Hello', type: 'TEXT' },
        { x: 400, y: 900, w: 50, h: 50, text: '', type: 'ICON_X' },
        { x: 10, y: -100, w: 10, h: 50, text: 'above', type: 'TEXT' },
      ],
      412,
      915,
    );
    expect(a.positions).toEqual([
      [0.1, 0.1, 0.05, 0.2],
      [0.9836, 0.9709, 0.0164, 0.0291],
    ]);
    expect(a.text).toEqual(['Hello', '']);
    expect(a.types).toEqual(['TEXT', 'ICON_X']);
  });

  it('a gold tap is a DUAL_POINT at the box centre with lift = touch', () => {
    const t = tapAction({ x: 100, y: 200, w: 50, h: 20 }, 400, 800);
    expect(t).toEqual({ action_type: ActionType.DUAL_POINT, touch_yx: [0.2625, 0.3125], lift_yx: [0.2625, 0.3125], typed_text: '' });
  });
});

describe('goals', () => {
  it('vary the case of named text and pick search words from page names', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) seen.add(varyCase('Message Flashing', Rng.from('t', i)));
    expect(seen).toEqual(new Set(['Message Flashing', 'message flashing']));
    const rng = Rng.from('w');
    for (let i = 0; i < 20; i++) expect(['application', 'setup']).toContain(searchWord('Application Setup', rng));
    expect(searchWord('API', rng)).toBeUndefined();
    expect(searchWord('Clang Compiler', rng, 'Clang')).toBe('compiler');
  });
});
