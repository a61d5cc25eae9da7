/**
 * Tasks on generated app sites, executed for real: turn a setting on/off (done at once when it
 * already is), open an app from the launcher, fill form fields, and find a contact with the
 * list's search field.
 */
import type { Rng } from '../../util/rng.js';
import type { CssBox } from './annotate.js';
import type { Switch } from './app_model.js';
import { formGoal, launchGoal, searchGoal, toggleGoal, varyCase } from './goals.js';
import type { TapTarget } from './dom.js';
import { MAX_SWIPES } from './link_tasks.js';
import type { Recorder } from './recorder.js';
import { onPage, pageUrl, type Episode, type SiteModel } from './site_model.js';

const TOP = 0.01;
const BOTTOM = 0.95;

/** Swipes until `selector` is in the tap band; its box, or undefined. */
async function scrollTo(rec: Recorder, selector: string): Promise<CssBox | undefined> {
  for (let swipes = 0; ; swipes++) {
    const view = await rec.screen.view();
    const box = await rec.screen.box(selector);
    if (!box) return undefined;
    if (box.x + box.w / 2 > view.width) return undefined;
    if (box.y >= TOP * view.height && box.y + box.h <= BOTTOM * view.height) return box;
    if (swipes >= MAX_SWIPES || box.y < TOP * view.height || (await rec.swipeUp()) < 1) return undefined;
  }
}

async function tapOn(rec: Recorder, target: TapTarget & { selector: string }, navigates: boolean): Promise<boolean> {
  const box = await scrollTo(rec, target.selector);
  return !!box && (await rec.tap(box, target, navigates));
}

export async function toggleTask(rec: Recorder, m: SiteModel, rng: Rng): Promise<Episode | undefined> {
  const app = m.app!;
  const pages = [app.settings.main, ...app.settings.subpages];
  const where = rng.pick(pages);
  const sw: Switch = rng.pick(where.switches);
  const want = rng.chance(0.5);
  // Sub-page switches start on the main settings page a third of the time: open the sub-page first.
  const viaMain = where !== app.settings.main && rng.chance(0.33);
  const startPage = viaMain ? app.settings.main.file : where.file;
  await rec.screen.goto(pageUrl(m, startPage));
  if (viaMain && !(await tapOn(rec, { selector: `a[href="${where.file}"]` }, true))) return undefined;
  const selector = `label.switch:has(> #${sw.id})`;
  if (sw.on !== want && !(await tapOn(rec, { selector }, false))) return undefined;
  await rec.complete();
  const label = viaMain ? `${sw.label} in ${where.title}` : sw.label;
  return { kind: 'toggle', goal: toggleGoal(rng, label, want), start: startPage, steps: rec.steps, success: { selector: `#${sw.id}`, checked: want } };
}

export async function launchTask(rec: Recorder, m: SiteModel, rng: Rng): Promise<Episode | undefined> {
  const entry = rng.pick(m.app!.launcher);
  await rec.screen.goto(pageUrl(m, 'index.html'));
  if (!(await tapOn(rec, { selector: `a.app-tile[href="${entry.file}"]` }, true))) return undefined;
  await rec.complete();
  return { kind: 'launch', goal: launchGoal(rng, entry.label), start: 'index.html', steps: rec.steps, success: onPage(entry.file) };
}

const COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella Labs', 'Stark Works', 'Wayne Foods', 'Hooli', 'Vandelay'];

function fieldValue(kind: string, id: string, rng: Rng, name: string): string {
  if (kind === 'tel') return `555 ${rng.digits(3)} ${rng.digits(4)}`;
  if (kind === 'email') return `${name.split(' ')[0]!.toLowerCase()}${rng.int(1, 99)}@example.com`;
  return id === 'f-company' ? rng.pick(COMPANIES) : name;
}

export async function formTask(rec: Recorder, m: SiteModel, rng: Rng): Promise<Episode | undefined> {
  const form = m.app!.form;
  const name = rng.pick(m.app!.contacts.people).name;
  const fields = rng.sample(form.fields, rng.chance(0.6) ? 1 : 2);
  const entries = fields.map((f) => ({ ...f, value: fieldValue(f.kind, f.id, rng, name) }));
  await rec.screen.goto(pageUrl(m, form.file));
  for (const e of entries) {
    if (!(await tapOn(rec, { selector: `#${e.id}` }, false))) return undefined;
    await rec.type(e.value);
  }
  await rec.complete();
  const last = entries[entries.length - 1]!;
  const goal = formGoal(rng, entries.map((e) => ({ label: e.label, value: e.value })));
  // One check per task: the last field typed (the earlier ones are in the gold steps).
  return { kind: 'form', goal, start: form.file, steps: rec.steps, success: { selector: `#${last.id}`, value: last.value } };
}

export async function contactSearchTask(rec: Recorder, m: SiteModel, rng: Rng): Promise<Episode | undefined> {
  const c = m.app!.contacts;
  const person = rng.pick(c.people);
  // The goal writes the query in the case it is typed: a person types what the goal says.
  const query = varyCase(rng.pick(person.name.split(' ')), rng);
  await rec.screen.goto(pageUrl(m, c.file));
  if (!(await tapOn(rec, { selector: '#q' }, false))) return undefined;
  await rec.type(query);
  if (!(await tapOn(rec, { selector: `a[href="${person.file}"]` }, true))) return undefined;
  await rec.complete();
  return { kind: 'search', goal: searchGoal(rng, query, person.name), start: c.file, steps: rec.steps, success: onPage(person.file) };
}
