/**
 * HTML of a generated app site, styled with BeerCSS (Material Design 3, plain CSS that works from
 * file://; its JS is an ES module, which Chromium refuses from file://, and no page here needs it).
 * The theme is the Material 3 palette of the site's seed colour, light and dark (prefers-color-
 * scheme), computed by material-dynamic-colors. writeAppSite copies BeerCSS and its icon font next
 * to the pages, so a site folder is self-contained.
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import materialDynamicColors from 'material-dynamic-colors';
import type { AppModel, Contact, SettingsPage, SimpleApp } from './app_model.js';

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const BEER_FILES = ['beer.min.css', 'material-symbols-outlined.woff2'] as const;

interface PageParts {
  title: string;
  brand: string;
  back?: string;
  actions?: string;
  body: string;
  script?: string;
}

/** The page frame every app page shares: top app bar (optional back arrow) and content. */
export function page(p: PageParts): string {
  const back = p.back ? `<a class="button circle transparent" href="${p.back}" aria-label="Back"><i>arrow_back</i></a>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(p.title)} – ${esc(p.brand)}</title>
<link rel="stylesheet" href="beer.min.css"><link rel="stylesheet" href="theme.css"></head>
<body><header class="primary"><nav>${back}<h5 class="max">${esc(p.title)}</h5>${p.actions ?? ''}</nav></header>
<main class="responsive">
${p.body}
</main>${p.script ? `\n<script>${p.script}</script>` : ''}
</body></html>
`;
}

function launcherPage(m: AppModel): string {
  const tiles = m.launcher
    .map((e) => `<a class="s3 center-align app-tile" href="${e.file}"><div class="avatar circle primary-container center-align middle-align"><i>${e.icon}</i></div><div class="small-text">${esc(e.label)}</div></a>`)
    .join('\n');
  return page({ title: m.spec.brand, brand: m.spec.brand, actions: '<button class="circle transparent" aria-label="More"><i>more_vert</i></button>', body: `<div class="grid">\n${tiles}\n</div>` });
}

function switchRow(s: SettingsPage['switches'][number]): string {
  return `<li><i>${s.icon}</i><div class="max"><h6 class="small">${esc(s.label)}</h6></div><label class="switch"><input type="checkbox" id="${s.id}" aria-label="${esc(s.label)}"${s.on ? ' checked' : ''}><span></span></label></li>`;
}

function settingsPage(m: AppModel, p: SettingsPage, back: string, links: SettingsPage[]): string {
  const rows = p.switches.map(switchRow);
  const subs = links.map((l) => `<li><a class="row max" href="${l.file}"><i>${l.icon}</i><div class="max"><h6 class="small">${esc(l.title)}</h6></div><i>chevron_right</i></a></li>`);
  // Sub-page links sit between switches, so some of them are below the fold.
  const mid = Math.min(rows.length, 4);
  const items = [...rows.slice(0, mid), ...subs, ...rows.slice(mid)];
  return page({ title: p.title, brand: m.spec.brand, back, body: `<ul class="list border">\n${items.join('\n')}\n</ul>` });
}

const initials = (name: string): string => name.split(' ').map((w) => w[0]).join('');

function contactsPage(m: AppModel): string {
  const c = m.contacts;
  const rows = c.people.map(
    (p) => `<li><a class="row max" href="${p.file}"><div class="circle primary-container center-align middle-align">${initials(p.name)}</div><div class="max"><h6 class="small">${esc(p.name)}</h6><div>${esc(p.phone)}</div></div></a></li>`,
  );
  const body = `<div class="field large prefix round fill"><i>search</i><input id="q" type="search" placeholder="${esc(c.searchPlaceholder)}" aria-label="${esc(c.searchPlaceholder)}"></div>
<ul class="list border" id="people">\n${rows.join('\n')}\n</ul>`;
  // Filters as you type, like a phone's contact list. BeerCSS lays list items out as flex boxes, which
  // overrides the `hidden` attribute, so the filter sets their display itself.
  const script = `document.getElementById('q').addEventListener('input',function(e){var q=e.target.value.toLowerCase();document.querySelectorAll('#people li').forEach(function(li){li.style.display=li.textContent.toLowerCase().indexOf(q)<0?'none':'';});});`;
  return page({ title: c.title, brand: m.spec.brand, back: 'index.html', body, script, actions: `<a class="button circle transparent" href="${m.form.file}" aria-label="${esc(m.form.title)}"><i>person_add</i></a>` });
}

function contactPage(m: AppModel, p: Contact): string {
  const body = `<div class="center-align"><div class="avatar big circle primary-container center-align middle-align">${initials(p.name)}</div><h5>${esc(p.name)}</h5></div>
<nav class="center-align"><a class="button" href="#call"><i>call</i><span>Call</span></a><a class="button" href="#text"><i>chat</i><span>Text</span></a><a class="button border" href="#mail"><i>mail</i><span>Email</span></a></nav>
<ul class="list border"><li><i>phone</i><div class="max"><h6 class="small">${esc(p.phone)}</h6><div>Mobile</div></div></li><li><i>mail</i><div class="max"><h6 class="small">${esc(p.email)}</h6><div>Personal</div></div></li></ul>`;
  return page({ title: p.name, brand: m.spec.brand, back: m.contacts.file, body });
}

function formPage(m: AppModel): string {
  const f = m.form;
  const fields = f.fields.map((x) => `<div class="field label border"><input id="${x.id}" type="${x.kind}" placeholder=" "><label for="${x.id}">${esc(x.label)}</label></div>`);
  const body = `${fields.join('\n')}\n<nav class="right-align"><a class="button border" href="${m.contacts.file}">Cancel</a><button id="save">${esc(f.save)}</button></nav>`;
  return page({ title: f.title, brand: m.spec.brand, back: 'index.html', body });
}

function simplePage(m: AppModel, s: SimpleApp): string {
  const cards = s.lines.map((l) => `<article class="border"><div class="row"><i>${s.icon}</i><div class="max">${esc(l)}</div></div></article>`);
  return page({ title: s.title, brand: m.spec.brand, back: 'index.html', body: cards.join('\n') });
}

/** Every page of the site: file name → HTML. */
export function appPages(m: AppModel): Map<string, string> {
  const out = new Map<string, string>();
  out.set('index.html', launcherPage(m));
  const { main, subpages } = m.settings;
  out.set(main.file, settingsPage(m, main, 'index.html', subpages));
  for (const s of subpages) out.set(s.file, settingsPage(m, s, main.file, []));
  out.set(m.contacts.file, contactsPage(m));
  for (const p of m.contacts.people) out.set(p.file, contactPage(m, p));
  out.set(m.form.file, formPage(m));
  for (const s of m.simple) out.set(s.file, simplePage(m, s));
  return out;
}

const kebab = (k: string): string => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const vars = (palette: Record<string, string>): string => Object.entries(palette).map(([k, v]) => `--${kebab(k)}:${v}`).join(';');

/** The site's theme: BeerCSS variables for the light palette, and the dark one under prefers-color-scheme. */
export async function themeCss(color: string): Promise<string> {
  const t = (await materialDynamicColors(color)) as { light: Record<string, string>; dark: Record<string, string> };
  return `:root,body{${vars(t.light)}}\n@media (prefers-color-scheme: dark){:root,body{${vars(t.dark)}}body{color-scheme:dark}}\n.app-tile{display:block;padding:0.5rem 0}.avatar{width:3.5rem;height:3.5rem;min-width:3.5rem;margin:0 auto;display:flex}.avatar.big{width:5rem;height:5rem}\n`;
}

/** Writes the site's pages, theme and BeerCSS files into `dir`. */
export async function writeAppSite(m: AppModel, dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  const beer = join(dirname(createRequire(import.meta.url).resolve('beercss/package.json')), 'dist', 'cdn');
  for (const f of BEER_FILES) await copyFile(join(beer, f), join(dir, f));
  await writeFile(join(dir, 'theme.css'), await themeCss(m.spec.color));
  const pages = appPages(m);
  for (const [file, html] of pages) await writeFile(join(dir, file), html);
  return pages.size;
}
