/**
 * OCR accuracy on real phone screens: HTML pages rendered by headless Debian chromium
 * (playwright-core) at 412×915 CSS px, DPR 2.625 (a 1080×2400 screenshot), touch, mobile. The
 * ground truth is the DOM's visible one-line link texts with their boxes; a link counts as
 *   exact      when an OCR line overlapping its box reads the same (case-insensitive, spaces normalised),
 *   substring  when an overlapping OCR line contains it as whole words.
 * Also reports OCR speed over the same screens (lines/s, screens/s; rendering excluded).
 *
 *   node dist/scripts/ocr_accuracy.js [options] <file.html | dir>...   (each argument is reported as a group)
 *     --pages N            pages per argument, spread evenly over its sorted files (default 12)
 *     --screens K          screenshots per page, scrolling one viewport each (default 1)
 *     --det-side S --thresh T --box-thresh B --unclip U --min-score M --rec-min-width W   reader options
 *     --whole-lines        keep each detected line whole (no cut at separators)
 *     --no-ink-cuts        cut lines at separators only, not where the ink changes
 *     --workers W          OCR worker threads (default: up to 2, one per core)
 *     --misses N           print up to N missed links per group on stderr
 *     --json               one JSON document on stdout
 * Every request that is not file:// is blocked: nothing leaves the machine.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM } from '../src/data/web/browser.js';
import type { Box, RawImage } from '../src/screen/types.js';
import { OcrReader, type OcrOptions } from '../src/screen/text/ocr.js';
import { loadCharacters, resolveModelPaths } from '../src/screen/text/ocr_models.js';
import type { ScreenText } from '../src/screen/text/types.js';

/** A 1080×2400 phone screen: 412×915 CSS px at 2.625 device pixels per CSS px. */
export const PHONE = { viewport: { width: 412, height: 915 }, deviceScaleFactor: 2.625, isMobile: true, hasTouch: true };

export interface LinkText {
  text: string;
  box: Box;
  /** No other text shares the link's line in its block. */
  alone: boolean;
}

export interface RenderedScreen {
  file: string;
  scroll: number;
  image: RawImage;
  links: LinkText[];
}

/** HTML files of each argument (a file, or a directory's *.html), `perArg` spread evenly over the sorted list. */
export function pickPages(arg: string, perArg: number): string[] {
  const p = resolve(arg);
  const all = statSync(p).isDirectory()
    ? readdirSync(p).filter((f) => f.endsWith('.html')).sort().map((f) => join(p, f))
    : [p];
  if (all.length <= perArg) return all;
  return Array.from({ length: perArg }, (_, k) => all[Math.floor((k * all.length) / perArg)]!);
}

export async function launchPhone(): Promise<{ browser: Browser; context: BrowserContext }> {
  const browser = await chromium.launch({ executablePath: DEFAULT_CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
  const context = await browser.newContext(PHONE);
  await context.route('**/*', (route) => (route.request().url().startsWith('file://') ? route.continue() : route.abort()));
  return { browser, context };
}

/**
 * Links wholly inside the viewport, visible, not covered, one line of non-empty text; boxes
 * normalised. `alone` says no other text of the link's block shares its line (a link inside a
 * sentence can only ever be part of an OCR line, never a whole one).
 */
function collectLinks(): Array<{ text: string; box: [number, number, number, number]; alone: boolean }> {
  // The visual viewport is what the screenshot shows; on a page without a mobile viewport tag
  // Chromium lays out at 980 CSS px and zooms out, and innerWidth/innerHeight are not the screen.
  const vv = window.visualViewport;
  const X0 = vv ? vv.offsetLeft : 0, Y0 = vv ? vv.offsetTop : 0;
  const W = vv ? vv.width : window.innerWidth, H = vv ? vv.height : window.innerHeight;
  const blockOf = (el: Element): Element => {
    let b: Element = el;
    while (b.parentElement && getComputedStyle(b).display.startsWith('inline')) b = b.parentElement;
    return b;
  };
  const alone = (a: Element, r: DOMRect): boolean => {
    const walker = document.createTreeWalker(blockOf(a), NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (a.contains(n) || !n.textContent?.trim()) continue;
      range.selectNodeContents(n);
      for (const t of Array.from(range.getClientRects())) {
        const overlap = Math.min(t.bottom, r.bottom) - Math.max(t.top, r.top);
        if (t.width > 0 && overlap > 0.5 * Math.min(t.height, r.height)) return false;
      }
    }
    return true;
  };
  const out: Array<{ text: string; box: [number, number, number, number]; alone: boolean }> = [];
  for (const a of Array.from(document.querySelectorAll('a'))) {
    const rects = a.getClientRects();
    if (rects.length !== 1) continue;
    const r = rects[0]!;
    if (r.width < 1 || r.height < 1 || r.top < Y0 || r.left < X0 || r.bottom > Y0 + H || r.right > X0 + W) continue;
    const text = (a as HTMLElement).innerText.trim();
    if (text === '' || text.includes('\n')) continue;
    const style = getComputedStyle(a);
    if (style.visibility !== 'visible' || Number(style.opacity) < 0.5) continue;
    // An icon-font ligature ("arrow_back") is drawn as a glyph, not as its text.
    if ([a, ...Array.from(a.querySelectorAll('*'))].some((e) => /Material (Symbols|Icons)/i.test(getComputedStyle(e).fontFamily))) continue;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(a === hit || a.contains(hit))) continue;
    out.push({ text, box: [(r.top - Y0) / H, (r.left - X0) / W, r.height / H, r.width / W], alone: alone(a, r) });
  }
  return out;
}

/** Screenshots (RGB) and link texts of each page, `screens` viewports down from the top. */
export async function renderScreens(context: BrowserContext, files: string[], screens = 1): Promise<RenderedScreen[]> {
  const out: RenderedScreen[] = [];
  for (const file of files) {
    // A page of its own for each file: a page that moves itself elsewhere (a meta refresh) would
    // interrupt the next file's load.
    const page = await context.newPage();
    try {
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      await page.evaluate(() => document.fonts.ready.then(() => undefined));
      await shoot(page, file, screens, out);
    } catch (e) {
      // Such a page has no screen of its own to score.
      if (!/context was destroyed|interrupted by another navigation/.test(String(e))) throw e;
      process.stderr.write(`  skipped ${basename(file)}: it navigated away while being read\n`);
    } finally {
      await page.close();
    }
  }
  return out;
}

async function shoot(page: Page, file: string, screens: number, out: RenderedScreen[]): Promise<void> {
  for (let k = 0; k < screens; k++) {
    const scroll = await page.evaluate((k) => {
      window.scrollTo(0, k * window.innerHeight);
      return window.scrollY;
    }, k);
    if (k > 0 && scroll === out[out.length - 1]?.scroll) break; // the page ends here
    const links = await page.evaluate(collectLinks);
    const png = await page.screenshot({ type: 'png' });
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const image = { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
    out.push({ file, scroll, image, links });
  }
}

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** List markers drawn before a link (outside it) that OCR rightly reads as part of the line. */
const MARKER = /^[·•◦▪‣∙●○■□►▸▶→:：.*\-–—]+\s*/u;

function overlaps(a: Box, b: Box): boolean {
  return Math.min(a[0] + a[2], b[0] + b[2]) > Math.max(a[0], b[0]) && Math.min(a[1] + a[3], b[1] + b[3]) > Math.max(a[1], b[1]);
}

/**
 * Whether `link` is read exactly / as whole words by an OCR line overlapping its box. Characters
 * the recogniser cannot output (`readable` is its character set) are dropped from the link's text,
 * and a list marker before the line's text is ignored unless the link itself starts with it.
 * Links with nothing readable are not scored (undefined).
 */
export function matchLink(link: LinkText, lines: readonly ScreenText[], readable?: ReadonlySet<string>): { exact: boolean; substring: boolean } | undefined {
  const want = norm(readable ? [...link.text].filter((c) => /\s/.test(c) || readable.has(c)).join('') : link.text);
  if (want === '') return undefined;
  const words = new RegExp(`(?<![\\p{L}\\p{N}])${escape(want)}(?![\\p{L}\\p{N}])`, 'u');
  let exact = false, substring = false;
  for (const l of lines) {
    if (!overlaps(l.box, link.box)) continue;
    const read = norm(l.text);
    const got = MARKER.test(want) ? read : read.replace(MARKER, '');
    if (got === want) exact = true;
    if (words.test(read)) substring = true;
  }
  return { exact, substring };
}

export interface GroupReport {
  pages: number;
  screens: number;
  /** Links scored (with something the recogniser can output). */
  links: number;
  /** Share of links read exactly as a whole overlapping OCR line. */
  exact: number;
  /** Share of links found as whole words in an overlapping OCR line. */
  substring: number;
  /** Links alone on their line (no other text of their block beside them), and the shares for them. */
  links_alone: number;
  exact_alone: number;
  substring_alone: number;
  lines: number;
  ocr_seconds: number;
  lines_per_s: number;
  screens_per_s: number;
}

interface Miss {
  file: string;
  want: string;
  got: string[];
  alone: boolean;
}

interface Tally {
  links: number;
  exact: number;
  substring: number;
}

function score(shots: RenderedScreen[], results: ScreenText[][], readable: ReadonlySet<string>, misses: Miss[]): { all: Tally; alone: Tally } {
  const all = { links: 0, exact: 0, substring: 0 }, alone = { links: 0, exact: 0, substring: 0 };
  shots.forEach((s, i) => {
    for (const link of s.links) {
      const m = matchLink(link, results[i]!, readable);
      if (!m) continue;
      for (const t of link.alone ? [all, alone] : [all]) {
        t.links++;
        t.exact += m.exact ? 1 : 0;
        t.substring += m.substring ? 1 : 0;
      }
      if (!m.exact) {
        misses.push({ file: basename(s.file), want: link.text, got: results[i]!.filter((l) => overlaps(l.box, link.box)).map((l) => l.text), alone: link.alone });
      }
    }
  });
  return { all, alone };
}

async function evaluateGroup(reader: OcrReader, readable: ReadonlySet<string>, shots: RenderedScreen[], misses: Miss[]): Promise<Omit<GroupReport, 'pages'>> {
  const t0 = performance.now();
  const results = await reader.read(shots.map((s) => s.image));
  const seconds = (performance.now() - t0) / 1000;
  const lines = results.reduce((n, r) => n + r.length, 0);
  const { all, alone } = score(shots, results, readable, misses);
  const share = (k: number, n: number) => k / Math.max(n, 1);
  return {
    screens: shots.length, links: all.links, exact: share(all.exact, all.links), substring: share(all.substring, all.links),
    links_alone: alone.links, exact_alone: share(alone.exact, alone.links), substring_alone: share(alone.substring, alone.links),
    lines, ocr_seconds: seconds, lines_per_s: lines / seconds, screens_per_s: shots.length / seconds,
  };
}

function parseArgs(argv: string[]): { inputs: string[]; json: boolean; pages: number; screens: number; missCount: number; reader: OcrOptions } {
  const inputs: string[] = [];
  const flags = new Map<string, string>();
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '--whole-lines' || a === '--no-ink-cuts') flags.set(a, '');
    else if (a.startsWith('--')) flags.set(a, argv[++i] ?? '');
    else inputs.push(a);
  }
  const num = (k: string) => (flags.has(k) ? Number(flags.get(k)) : undefined);
  const db = { threshold: num('--thresh'), boxThreshold: num('--box-thresh'), unclipRatio: num('--unclip') };
  const reader: OcrOptions = {
    detLimitSide: num('--det-side'), minScore: num('--min-score'), workers: num('--workers'), ...(flags.has('--whole-lines') ? { splitItems: false } : {}), ...(flags.has('--no-ink-cuts') ? { inkCuts: false } : {}),
    db: Object.fromEntries(Object.entries(db).filter(([, v]) => v !== undefined)),
    rec: num('--rec-min-width') !== undefined ? { minWidth: num('--rec-min-width')! } : {},
  };
  return { inputs, json, pages: num('--pages') ?? 12, screens: num('--screens') ?? 1, missCount: num('--misses') ?? 0, reader };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const describe = (g: GroupReport) =>
  `${g.links} links: exact ${pct(g.exact)}, substring ${pct(g.substring)}; ${g.links_alone} alone on their line: exact ${pct(g.exact_alone)}, ` +
  `substring ${pct(g.substring_alone)}; ${g.lines_per_s.toFixed(1)} lines/s, ${g.screens_per_s.toFixed(2)} screens/s`;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.inputs.length === 0) throw new Error('usage: ocr_accuracy [options] <file.html | dir>...');
  const reader = await OcrReader.load(args.reader);
  await reader.ready();
  const readable = new Set(await loadCharacters(resolveModelPaths().dictionary));
  const { browser, context } = await launchPhone();
  const groups: Record<string, GroupReport> = {};
  try {
    for (const input of args.inputs) {
      const files = pickPages(input, args.pages);
      const shots = await renderScreens(context, files, args.screens);
      const misses: Miss[] = [];
      groups[input] = { pages: files.length, ...(await evaluateGroup(reader, readable, shots, misses)) };
      const g = groups[input]!;
      process.stderr.write(`${input}: ${describe(g)}\n`);
      for (const m of misses.slice(0, args.missCount)) {
        process.stderr.write(`  miss${m.alone ? '' : ' (in text)'} ${m.file}: ${JSON.stringify(m.want)} → ${JSON.stringify(m.got)}\n`);
      }
    }
  } finally {
    await browser.close();
    await reader.dispose();
  }
  if (args.json) process.stdout.write(JSON.stringify({ reader: reader.id, groups }, null, 1) + '\n');
  else for (const [k, g] of Object.entries(groups)) console.log(`${k}: ${describe(g)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
