/**
 * Goal wording: several templates per task kind, and the named UI text in the case a person might
 * type it (as shown, lower case, or title case), so a model cannot key on one phrasing.
 */
import type { Rng } from '../../util/rng.js';

export type TaskKind = 'ground' | 'navigate' | 'scroll' | 'search' | 'back' | 'toggle' | 'launch' | 'form';
export const TASK_KINDS: readonly TaskKind[] = ['ground', 'navigate', 'scroll', 'search', 'back', 'toggle', 'launch', 'form'];

const title = (s: string): string => s.replace(/\b([a-z])/g, (c) => c.toUpperCase());

/** The text as shown (most often), in lower case, or in title case. */
export function varyCase(text: string, rng: Rng): string {
  return rng.weighted<(s: string) => string>([
    [(s) => s, 0.6],
    [(s) => s.toLowerCase(), 0.25],
    [title, 0.15],
  ])(text);
}

const fill = (rng: Rng, templates: readonly string[], vars: Record<string, string>): string =>
  rng.pick(templates).replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? '');

export function groundGoal(rng: Rng, link: string): string {
  return fill(rng, ['open {x}', 'click on {x}', 'tap {x}', 'go to the {x} page', 'tap on "{x}"', 'select {x}'], { x: varyCase(link, rng) });
}

const NAVIGATE_TEMPLATES = ['go to the {p} page', 'navigate to {p}', 'find the {p} page in the {s} docs', 'open the page about {p}', 'show me {p}'];

/** A navigation goal for `page`; without a `site`, only the templates that do not name one. */
export function navigateGoal(rng: Rng, page: string, site?: string): string {
  const templates = site === undefined ? NAVIGATE_TEMPLATES.filter((t) => !t.includes('{s}')) : NAVIGATE_TEMPLATES;
  return fill(rng, templates, { p: varyCase(page, rng), s: site ?? '' });
}

export function scrollGoal(rng: Rng, link: string): string {
  return fill(rng, ['scroll down and open {x}', 'find {x} further down the page and tap it', 'open {x}', 'scroll to {x} and click it'], { x: varyCase(link, rng) });
}

export function searchGoal(rng: Rng, query: string, page: string): string {
  return fill(rng, ['search for {q} and open {p}', 'use search to find "{q}", then open the {p} page', 'look up {q} and go to {p}', 'search {q} and open the result {p}'], {
    q: query,
    p: varyCase(page, rng),
  });
}

export function backGoal(rng: Rng, link: string): string {
  return fill(rng, ['open {x}, then go back', 'tap {x} and go back', 'click on {x} and then return to the previous page', 'visit {x} and come back'], { x: varyCase(link, rng) });
}

export function toggleGoal(rng: Rng, setting: string, on: boolean): string {
  const x = varyCase(setting, rng);
  return on
    ? fill(rng, ['turn on {x}', 'enable {x}', 'switch {x} on', 'make sure {x} is on'], { x })
    : fill(rng, ['turn off {x}', 'disable {x}', 'switch {x} off', 'make sure {x} is off'], { x });
}

export function launchGoal(rng: Rng, app: string): string {
  return fill(rng, ['open {x}', 'open the {x} app', 'launch {x}', 'start {x}', 'go to {x}'], { x: varyCase(app, rng) });
}

export function formGoal(rng: Rng, entries: readonly { label: string; value: string }[]): string {
  const parts = entries.map((e) => fill(rng, ['{v} as {l}', '{l} {v}', '"{v}" in the {l} field'], { v: e.value, l: varyCase(e.label, rng) }));
  return fill(rng, ['enter {x}', 'type {x}', 'fill in {x}'], { x: parts.join(' and ') });
}

const STOP = new Set(['with', 'from', 'that', 'this', 'your', 'what', 'when', 'where', 'which', 'using', 'about', 'into', 'other', 'more', 'page', 'guide', 'documentation', 'introduction']);

/** The words of a page name one could search for: alphabetic, 4+ letters, not a filler word and not the site's own name. */
export function searchWords(name: string, site = ''): string[] {
  const skip = new Set([...STOP, ...site.toLowerCase().split(/[^a-z]+/)]);
  return [...new Set(name.split(/[^A-Za-z]+/).filter((w) => w.length >= 4 && !skip.has(w.toLowerCase())))];
}

/**
 * A word of a page name to search for (searchWords), in lower case; not the site's own name because
 * every page matches it (Sphinx then lists the whole site, item by item); undefined if none.
 */
export function searchWord(name: string, rng: Rng, site = ''): string | undefined {
  const words = searchWords(name, site);
  return words.length ? rng.pick(words).toLowerCase() : undefined;
}
