/**
 * A tiny local web site with known geometry for closed-loop runs, its suite and a script that
 * solves every task. Pages use fixed positions in a 412×915 CSS px viewport, so a target's centre
 * in AITW (y, x) form is (top + height / 2) / 915, (left + width / 2) / 412.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AitwAction, YX } from '../../src/data/types.js';

const W = 412;
const H = 915;

/** An absolutely placed block at CSS px (top, left, width, height). */
const box = (top: number, height: number, left = 20, width = 372): string => `position:absolute;top:${top}px;left:${left}px;width:${width}px;height:${height}px`;
/** The AITW point at the centre of a block. */
export const centre = (top: number, height: number, left = 20, width = 372): YX => [(top + height / 2) / H, (left + width / 2) / W];

const page = (title: string, body: string, script = ''): string =>
  `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title>` +
  `<style>body{margin:0;font:20px sans-serif}a,button,label{display:block;background:#2456d6;color:#fff;text-decoration:none;line-height:80px;text-align:center}input[type=text]{font:20px sans-serif}</style></head>` +
  `<body><h1 style="${box(0, 80)};margin:0">${title}</h1>${body}${script ? `<script>${script}</script>` : ''}</body></html>`;

/** Index links: Settings, Form, Long, Switch at these tops (height 80). */
export const LINK_TOPS = { settings: 100, form: 220, long: 340, switch: 460 } as const;
/** The link far below the fold on long.html: top 1450 px, 200 high; two upward swipes bring it to y ≈ 382–582. */
export const LONG_LINK = { top: 1450, height: 200 } as const;

export const PAGES: Record<string, string> = {
  'index.html': page(
    'Home',
    Object.entries(LINK_TOPS)
      .map(([name, top]) => `<a id="to-${name}" href="${name}.html" style="${box(top, 80)}">${name}</a>`)
      .join(''),
  ),
  'settings.html': page('Settings', `<p style="${box(100, 80)}">nothing here</p>`),
  'long.html': page('Long', `<div style="height:3000px"></div><a id="deep" href="target.html" style="${box(LONG_LINK.top, LONG_LINK.height)}">deep link</a>`),
  'target.html': page('Target', `<p style="${box(100, 80)}">found it</p>`),
  'form.html': page(
    'Form',
    `<form id="f" style="${box(100, 60)}"><input id="q" type="text" autocomplete="off" style="width:100%;height:60px;box-sizing:border-box"></form><p id="out" style="${box(200, 80)}"></p>`,
    `document.getElementById('f').addEventListener('submit',(e)=>{e.preventDefault();document.getElementById('out').textContent='searched: '+document.getElementById('q').value;});`,
  ),
  'switch.html': page('Switch', `<label for="wifi" style="${box(100, 80)}">Wi-Fi <input id="wifi" type="checkbox" role="switch"></label>`),
};

const tap = (p: YX): AitwAction => ({ action_type: 4, touch_yx: p, lift_yx: p, typed_text: '' });
const swipeUp: AitwAction = { action_type: 4, touch_yx: [0.8, 0.5], lift_yx: [0.2, 0.5], typed_text: '' };
const key = (action_type: AitwAction['action_type'], typed_text = ''): AitwAction => ({ action_type, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text });
const done = key(10);
const link = (name: keyof typeof LINK_TOPS): AitwAction => tap(centre(LINK_TOPS[name], 80));

export interface SiteTask {
  line: Record<string, unknown>;
  actions: AitwAction[];
}

/** Tasks covering taps, a scroll below the fold, typing + Enter, a switch, back and home. */
export const SITE_TASKS: SiteTask[] = [
  { line: { id: 'nav-settings', goal: 'open the settings page', start_url: 'site/index.html', success: { url_endswith: '/settings.html' } }, actions: [link('settings'), done] },
  { line: { id: 'scroll-deep', goal: 'open the deep link', start_url: 'site/index.html', success: { url_endswith: '/target.html' } }, actions: [link('long'), swipeUp, swipeUp, tap([(LONG_LINK.top + LONG_LINK.height / 2 - 1068) / H, 0.5]), done] },
  { line: { id: 'search', goal: 'search for hello world', start_url: 'site/form.html', success: { selector: '#out', text_contains: 'searched: hello world' } }, actions: [tap(centre(100, 60)), key(3, 'hello world'), key(7), done] },
  { line: { id: 'wifi-on', goal: 'turn on wi-fi', start_url: 'site/switch.html', success: { selector: '#wifi', checked: true } }, actions: [tap(centre(100, 80)), done] },
  // The first BACK returns to the start page, the second stays there (a tab's history starts at the task).
  { line: { id: 'back', goal: 'open settings, then go back', start_url: 'site/index.html', success: { url: 'site/index.html' } }, actions: [link('settings'), key(5), key(5), done] },
  { line: { id: 'home-form', goal: 'go home and open the form', start_url: 'site/settings.html', home_url: 'site/index.html', success: { url_endswith: '/form.html' } }, actions: [key(6), link('form'), done] },
];

/** Writes DIR/site/*.html, DIR/suite.jsonl and DIR/script.jsonl; returns their paths. */
export async function writeTaskSite(dir: string, tasks: SiteTask[] = SITE_TASKS): Promise<{ suite: string; script: string; site: string }> {
  const site = join(dir, 'site');
  await mkdir(site, { recursive: true });
  for (const [name, html] of Object.entries(PAGES)) await writeFile(join(site, name), html);
  const suite = join(dir, 'suite.jsonl');
  const script = join(dir, 'script.jsonl');
  await writeFile(suite, tasks.map((t) => JSON.stringify(t.line)).join('\n') + '\n');
  await writeFile(script, tasks.map((t) => JSON.stringify({ id: t.line.id, actions: t.actions })).join('\n') + '\n');
  return { suite, script, site };
}
