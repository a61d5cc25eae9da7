/**
 * `data web` rendering in real headless Chromium on tiny local pages: annotations match the DOM
 * and the screenshot, gold taps land inside their targets, navigation follows shortest paths, and
 * a recorded scroll-to-find replays in the closed-loop environment.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phoneContext, PhoneScreen, type Shot } from '../src/data/web/browser.js';
import { inReach, isTaskPage, shortestPaths } from '../src/data/web/graph.js';
import { groundTask, navigateTask, scrollTask } from '../src/data/web/link_tasks.js';
import { Recorder } from '../src/data/web/recorder.js';
import { ChromiumEnv } from '../src/env/chromium.js';
import { siteModel, type SiteModel } from '../src/data/web/site_model.js';
import { ActionType, type Box } from '../src/data/types.js';
import { Rng } from '../src/util/rng.js';
import { openPhonePages, type PhonePages } from './helpers/phone_pages.js';
import { pixelAt } from './helpers/screens.js';

const DEVICE = { name: 'test-phone', width: 360, height: 640, dpr: 1 };
const STYLE = `body{margin:0;font:16px/20px sans-serif}header{position:fixed;top:0;left:0;right:0;height:40px;background:#c00}
main{padding:60px 10px 0}p{width:200px;margin:0 0 10px}#blue{background:#00f;width:100px;height:50px}.sw{display:inline-block;width:40px;height:24px;background:#0a0}`;
const page = (title: string, body: string): string =>
  `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} — Tiny</title><style>${STYLE}</style></head><body>${body}</body></html>`;

const PAGES: Record<string, string> = {
  'index.html': page(
    'Start',
    `<header><a href="two.html">Top</a></header><main><h1>Tiny start</h1>
<p id="para">one two three four five six seven eight nine ten eleven twelve</p>
<a id="l2" href="two.html">Second page</a><div id="blue"></div>
<label class="sw"><input type="checkbox" id="cb" style="opacity:0"></label>
<div style="height:900px"></div><a id="far" href="three.html">Far away link</a><div style="height:600px"></div></main>`,
  ),
  'two.html': page('Second', `<main><h1>Second</h1><a href="four.html">Fourth page</a> <a href="index.html">Back home</a></main>`),
  'three.html': page('Third', `<main><h1>Third</h1><a href="four.html">Fourth page</a></main>`),
  'four.html': page('Fourth', `<main><h1>Fourth</h1><p>The end.</p></main>`),
  // Wider than the phone: the second link is laid out past the right edge of the screen.
  'wide.html': page('Wide', `<main><div style="width:900px"><a href="two.html">Near link</a><a href="three.html" style="margin-left:600px">Offscreen link</a></div></main>`),
};

let phone: PhonePages;
let screen: PhoneScreen;
let site: SiteModel;

beforeAll(async () => {
  phone = await openPhonePages(PAGES, DEVICE, 'autoui-web-render-');
  screen = phone.screen;
  site = await siteModel({ site: 'tiny', kind: 'manual', label: 'Tiny', pagesDir: phone.dir, start: 'index.html', sphinx: false });
});

afterAll(async () => {
  await phone?.close();
});

const url = (f: string): string => phone.url(f);

/** DOM rects of an element's text lines (or of the element), normalised like annotations. */
async function domBoxes(selector: string, lines: boolean): Promise<Box[]> {
  return screen.page.evaluate(
    ({ sel, lines, w, h }) => {
      const e = document.querySelector(sel)!;
      let rects: DOMRect[];
      if (lines) {
        const r = document.createRange();
        r.selectNodeContents(e);
        rects = Array.from(r.getClientRects());
      } else rects = [e.getBoundingClientRect()];
      return rects.map((q) => [q.top / h, q.left / w, q.height / h, q.width / w] as [number, number, number, number]);
    },
    { sel: selector, lines, w: DEVICE.width, h: DEVICE.height },
  );
}

const near = (a: Box, b: Box, tol = 2 / DEVICE.height): boolean => a.every((v, i) => Math.abs(v - b[i]!) <= tol);

const pixel = (shot: Shot, yx: [number, number]): Promise<number[]> => pixelAt(shot.png, yx);

describe('screens and annotations', () => {
  it('annotation boxes are the DOM boxes: one TEXT per rendered line, ICON_TOGGLE for a text-less switch', async () => {
    await screen.goto(url('index.html'));
    const shot = await screen.capture();
    expect([shot.width, shot.height]).toEqual([DEVICE.width, DEVICE.height]);
    const a = shot.annotations;
    const lines = await domBoxes('#para', true);
    expect(lines.length).toBeGreaterThan(1);
    const paraItems = a.positions.map((p, i) => ({ p, t: a.text[i]!, k: a.types[i]! })).filter((x) => lines.some((l) => near(l, x.p)));
    expect(paraItems.length).toBe(lines.length);
    expect(paraItems.every((x) => x.k === 'TEXT')).toBe(true);
    expect(paraItems.map((x) => x.t).join(' ')).toBe('one two three four five six seven eight nine ten eleven twelve');
    const [link] = await domBoxes('#l2', false);
    expect(a.text[a.positions.findIndex((p) => near(p, link!))]).toBe('Second page');
    const [sw] = await domBoxes('.sw', false);
    expect(a.types[a.positions.findIndex((p) => near(p, sw!))]).toBe('ICON_TOGGLE');
    expect(a.text).not.toContain('Far away link'); // below the fold
  });

  it('the screenshot shows what the annotations say, also after a scroll under a fixed header', async () => {
    await screen.goto(url('index.html'));
    const [blue] = await domBoxes('#blue', false);
    const shot = await screen.capture();
    expect(await pixel(shot, [blue![0] + blue![2] / 2, blue![1] + blue![3] / 2])).toEqual([0, 0, 255]);
    // A finger swipe of 100 CSS px moves the content by that less Chromium's touch slop.
    await screen.swipe({ x: 200, y: 500 }, { x: 200, y: 400 });
    const after = await screen.capture();
    const dy = after.view.pageY;
    expect(dy).toBeGreaterThan(70);
    expect(dy).toBeLessThanOrEqual(100);
    const [moved] = await domBoxes('#blue', false);
    expect(moved![0]).toBeCloseTo(blue![0] - dy / DEVICE.height, 4);
    expect(await pixel(after, [moved![0] + moved![2] * 0.75, moved![1] + moved![3] / 2])).toEqual([0, 0, 255]);
    expect(await pixel(after, [10 / DEVICE.height, 0.5])).toEqual([204, 0, 0]);
  });

  it("a page lays out at the device's pixel ratio even when its screens are captured at a smaller one", async () => {
    const c = await phoneContext(phone.browser, { device: { name: 'dpr-3', width: 360, height: 640, dpr: 3 }, colorScheme: 'light' });
    try {
      const small = await PhoneScreen.open(c, 1);
      await small.goto(url('index.html'));
      expect(await small.page.evaluate(() => window.devicePixelRatio)).toBe(3);
      const shot = await small.capture();
      expect([shot.width, shot.height]).toEqual([360, 640]);
    } finally {
      await c.close();
    }
  });
});

/** The annotation box (normalised) the DOM gives `selector` on the step's screen. */
const inside = (yx: [number, number], b: Box): boolean => yx[0] >= b[0] && yx[0] <= b[0] + b[2] && yx[1] >= b[1] && yx[1] <= b[1] + b[3];

describe('gold episodes', () => {
  it('a one-step grounding tap lies inside the link it names and ends on its page', async () => {
    for (let seed = 0; seed < 3; seed++) {
      const rec = new Recorder(screen, new Map());
      const ep = await groundTask(rec, site, Rng.from('ground', seed), 'index.html');
      expect(ep).toBeDefined();
      const [tap, done] = ep!.steps;
      expect(tap!.action.action_type).toBe(ActionType.DUAL_POINT);
      expect(tap!.action.lift_yx).toEqual(tap!.action.touch_yx);
      const a = tap!.shot.annotations;
      const named = a.positions.filter((_, i) => ep!.goal.toLowerCase().includes(a.text[i]!.toLowerCase()) && a.text[i]!.length > 2);
      expect(named.some((b) => inside(tap!.action.touch_yx, b))).toBe(true);
      expect(done!.action.action_type).toBe(ActionType.STATUS_TASK_COMPLETE);
      expect(done!.shot.view.url.endsWith((ep!.success as { url_endswith: string }).url_endswith.replace('/pages/', '/'))).toBe(true);
    }
  });

  it('never taps a link laid out past the right edge of a page wider than the phone', async () => {
    for (let seed = 0; seed < 4; seed++) {
      const ep = await groundTask(new Recorder(screen, new Map()), site, Rng.from('wide', seed), 'wide.html');
      expect(ep).toBeDefined();
      expect(ep!.goal.toLowerCase()).toContain('near link');
      expect(ep!.steps[0]!.action.touch_yx[1]).toBeLessThan(1);
    }
  });

  // A touch swipe's length varies by a few px on a loaded machine, now and then enough to move a blind
  // tap off a 20 px link; a recorder that scrolls differently from the environment misses every time.
  it('scroll-to-find swipes up until the link is on screen, then taps it', { retry: 2 }, async () => {
    const ep = await scrollTask(new Recorder(screen, new Map()), site, Rng.from('scroll'), 'index.html');
    expect(ep).toBeDefined();
    const kinds = ep!.steps.map((s) => s.action);
    const swipes = kinds.slice(0, -2);
    expect(swipes.length).toBeGreaterThan(0);
    for (const s of swipes) expect(s.touch_yx[0] - s.lift_yx[0]).toBeGreaterThan(0.04); // finger moves up
    expect(ep!.goal.toLowerCase()).toContain('far away link');
    expect(ep!.success).toEqual({ url_endswith: '/pages/three.html' });
    // The closed-loop environment replays the recorded swipes and tap blind and lands on the link's page.
    const env = new ChromiumEnv();
    try {
      await env.reset({ id: 'replay', goal: ep!.goal, start_url: url('index.html'), viewport: { width: DEVICE.width, height: DEVICE.height, dpr: DEVICE.dpr }, success: { url_endswith: '/three.html' } });
      for (const a of kinds) await env.step(a);
      expect((await env.state()).url).toBe(url('three.html'));
    } finally {
      await env.close();
    }
  });

  it('navigation takes exactly as many taps as the shortest path has links', async () => {
    const rec = new Recorder(screen, new Map());
    const ep = await navigateTask(rec, site, Rng.from('nav', 1), 'index.html');
    expect(ep).toBeDefined();
    const target = (ep!.success as { url_endswith: string }).url_endswith.replace('/pages/', '');
    const taps = ep!.steps.filter((s) => s.action.action_type === ActionType.DUAL_POINT && s.action.touch_yx[0] === s.action.lift_yx[0]);
    const path = shortestPaths(site.graph, 'index.html', isTaskPage, inReach).get(target)!;
    expect(taps.length).toBe(path.length);
    expect(path.length).toBeGreaterThanOrEqual(2);
    expect(rec.screen.page.url()).toBe(url(target));
  });

  it('navigation away from the entry page presses HOME, then follows the entry page\'s links', async () => {
    const rec = new Recorder(screen, new Map());
    // From two.html the only page two links away is three.html (through index.html), one link from the entry page.
    const ep = await navigateTask(rec, site, Rng.from('nav', 2), 'two.html');
    expect(ep!.success).toEqual({ url_endswith: '/pages/three.html' });
    const kinds = ep!.steps.map((s) => s.action.action_type);
    expect(kinds[0]).toBe(ActionType.PRESS_HOME);
    expect(kinds.at(-1)).toBe(ActionType.STATUS_TASK_COMPLETE);
    const taps = ep!.steps.filter((s) => s.action.action_type === ActionType.DUAL_POINT && s.action.touch_yx[0] === s.action.lift_yx[0]);
    expect(taps.length).toBe(1);
    expect(rec.screen.page.url()).toBe(url('three.html'));
  });
});
