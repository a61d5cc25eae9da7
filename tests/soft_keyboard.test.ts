/**
 * The on-screen keyboard in real headless Chromium: a focused text field shows it at the bottom of
 * the screen (also on a page without a mobile viewport tag, whose layout viewport is larger than
 * the screen), its keys are annotated and what it covers is not, the recorder will not tap under
 * it, and the closed-loop environment shows the same keyboard, still types into the field, and
 * closes the keyboard on BACK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHROMIUM, type PhoneScreen } from '../src/data/web/browser.js';
import { Recorder } from '../src/data/web/recorder.js';
import { ActionType, type UiAnnotations } from '../src/data/types.js';
import { ChromiumEnv } from '../src/env/chromium.js';
import { openPhonePages, type PhonePages } from './helpers/phone_pages.js';
import { pixelAt } from './helpers/screens.js';

const DEVICE = { name: 'test-phone', width: 360, height: 640, dpr: 1 };
const BODY = `<h1 id="title">Find</h1><input id="q" type="search" style="width:200px;height:30px"> <input id="cb" type="checkbox">
<div style="position:absolute;top:600px;left:10px"><a id="low" href="#x">Low link</a></div>`;
const PAGES: Record<string, string> = {
  'mobile.html': `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head><body style="margin:0;background:#fff">${BODY}</body></html>`,
  // No viewport tag: a phone lays the page out 980 px wide, so its layout viewport is taller than the screen.
  'desktop.html': `<!doctype html><html><body style="margin:0;background:#fff">${BODY}<div style="height:3000px"></div></body></html>`,
};

let phone: PhonePages;
let screen: PhoneScreen;

beforeAll(async () => {
  phone = await openPhonePages(PAGES, DEVICE, 'autoui-keyboard-');
  screen = phone.screen;
});

afterAll(async () => {
  await phone?.close();
});

const url = (f: string): string => phone.url(f);
const KEYS = 'qwertyuiopasdfghjklzxcvbnm'.split('');

/** The annotated single-letter keys, with their boxes (y, x, h, w). */
const keysOf = (a: UiAnnotations) => a.text.map((t, i) => ({ t, box: a.positions[i]! })).filter((x) => KEYS.includes(x.t));

async function tapCentre(selector: string): Promise<void> {
  const b = (await screen.box(selector))!;
  await screen.tap(b.x + b.w / 2, b.y + b.h / 2, false);
}

describe('the on-screen keyboard', () => {
  for (const page of ['mobile.html', 'desktop.html']) {
    it(`shows at the bottom of the screen while a text field has focus, and hides what it covers (${page})`, async () => {
      await screen.goto(url(page));
      const before = await screen.capture();
      expect(keysOf(before.annotations)).toEqual([]);
      expect(before.annotations.text).toContain('Low link');
      expect(await pixelAt(before.png, [0.99, 0.5])).toEqual([255, 255, 255]);

      await tapCentre('#q');
      const shot = await screen.capture();
      const keys = keysOf(shot.annotations);
      expect(keys.map((k) => k.t).sort()).toEqual([...KEYS].sort());
      // Every key on the screen, in its lower half, in three rows.
      for (const { box } of keys) {
        expect(box[0]).toBeGreaterThan(0.5);
        expect(box[0] + box[2]).toBeLessThanOrEqual(1);
        expect(box[1]).toBeGreaterThanOrEqual(0);
        expect(box[1] + box[3]).toBeLessThanOrEqual(1);
      }
      expect(new Set(keys.map((k) => k.box[0])).size).toBe(3);
      expect(shot.annotations.text).not.toContain('Low link');
      expect(await pixelAt(shot.png, [0.99, 0.5])).not.toEqual([255, 255, 255]);
      const rec = new Recorder(screen, new Map());
      expect(await rec.reaches((await screen.box('#low'))!, { selector: '#low' })).toBe(false);
      expect(await rec.reaches((await screen.box('#title'))!, { selector: '#title' })).toBe(true);

      // Focus leaves the field (a tap on the heading): the keyboard goes.
      await tapCentre('#title');
      const after = await screen.capture();
      expect(keysOf(after.annotations)).toEqual([]);
      expect(after.annotations.text).toContain('Low link');
    });
  }

  it('does not show for a checkbox', async () => {
    await screen.goto(url('mobile.html'));
    await tapCentre('#cb');
    expect(await screen.page.evaluate(() => (document.activeElement as HTMLElement | null)?.id)).toBe('cb');
    expect(keysOf((await screen.capture()).annotations)).toEqual([]);
  });

  it('shows in the closed-loop environment too, which still types into the field', async () => {
    const env = new ChromiumEnv({ executablePath: DEFAULT_CHROMIUM });
    try {
      const viewport = { width: DEVICE.width, height: DEVICE.height, dpr: 1 };
      const first = await env.reset({ id: 'kb', goal: 'type hello', start_url: url('mobile.html'), viewport, success: { selector: '#q', value: 'hello' } });
      expect(await pixelAt(first.png, [0.99, 0.5])).toEqual([255, 255, 255]);
      const b = (await screen.box('#q'))!; // same page, same layout
      const yx: [number, number] = [(b.y + b.h / 2) / DEVICE.height, (b.x + b.w / 2) / DEVICE.width];
      const tapped = await env.step({ action_type: ActionType.DUAL_POINT, touch_yx: yx, lift_yx: yx, typed_text: '' });
      expect(await pixelAt(tapped.png, [0.99, 0.5])).not.toEqual([255, 255, 255]);
      await env.step({ action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: 'hello' });
      expect((await env.check({ selector: '#q', value: 'hello' })).ok).toBe(true);
      // BACK with the keyboard up closes it and stays on the page, as on Android.
      const back = await env.step({ action_type: ActionType.PRESS_BACK, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' });
      expect(await pixelAt(back.png, [0.99, 0.5])).toEqual([255, 255, 255]);
      expect((await env.state()).url).toBe(url('mobile.html'));
    } finally {
      await env.close();
    }
  });
});
