/**
 * The generated phone apps behave as they look in real headless Chromium: the contact list's
 * search field filters the list as you type, and a recorded contact search types its query as the
 * goal writes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_SITES, appModel } from '../src/data/web/app_model.js';
import { writeAppSite } from '../src/data/web/app_pages.js';
import { contactSearchTask } from '../src/data/web/app_tasks.js';
import { Recorder } from '../src/data/web/recorder.js';
import { siteModel } from '../src/data/web/site_model.js';
import { ActionType } from '../src/data/types.js';
import { Rng } from '../src/util/rng.js';
import { openPhonePages, type PhonePages } from './helpers/phone_pages.js';

let pages: PhonePages;
const m = appModel(APP_SITES[0]!, 0);

beforeAll(async () => {
  pages = await openPhonePages({}, { name: 'test-phone', width: 360, height: 800, dpr: 1 }, 'autoui-app-');
  await writeAppSite(m, pages.dir);
});

afterAll(async () => {
  await pages?.close();
});

describe('generated phone apps', () => {
  it('the contact list shows only the people whose entry holds what was typed into its search field', async () => {
    const page = pages.screen.page;
    await page.goto(pages.url(m.contacts.file));
    const shown = (): Promise<string[]> => page.$$eval('#people li', (lis) => lis.filter((li) => li.getBoundingClientRect().height > 0).map((li) => li.querySelector('h6')!.textContent!));
    const everyone = m.contacts.people.map((p) => p.name);
    expect(await shown()).toEqual(everyone);
    const query = m.contacts.people[2]!.name.split(' ')[1]!.slice(0, 3);
    await page.click('#q');
    await page.keyboard.type(query.toLowerCase());
    const matching = everyone.filter((n) => n.toLowerCase().includes(query.toLowerCase()));
    expect(matching.length).toBeLessThan(everyone.length);
    expect(await shown()).toEqual(matching);
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Backspace');
    expect(await shown()).toEqual(everyone);
  });

  it("a contact search's gold types its query exactly as the goal writes it", async () => {
    const site = await siteModel({ site: 'app', kind: 'app', label: 'App', pagesDir: pages.dir, start: 'index.html', sphinx: false, app: m });
    const standsInGoal = (goal: string, typed: string): boolean => new RegExp(`(^|[ "])${typed}([ ",]|$)`).test(goal);
    let recased = 0;
    for (let seed = 0; seed < 12; seed++) {
      const ep = await contactSearchTask(new Recorder(pages.screen, new Map()), site, Rng.from('contact-search', seed));
      expect(ep).toBeDefined();
      const typed = ep!.steps.filter((s) => s.action.action_type === ActionType.TYPE).map((s) => s.action.typed_text);
      expect(typed).toHaveLength(1);
      expect(standsInGoal(ep!.goal, typed[0]!), `${ep!.goal} / typed ${typed[0]}`).toBe(true);
      if (!m.contacts.people.some((p) => p.name.split(' ').includes(typed[0]!))) recased++;
    }
    // The typed case varies as a person's does (lower or title case now and then).
    expect(recased).toBeGreaterThan(0);
  });
});
