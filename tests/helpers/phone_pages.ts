/** Local pages in a temporary folder, opened on one phone in headless Chromium: the browser tests' common set-up. */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { DEFAULT_CHROMIUM, launchChromium, phoneContext, PhoneScreen, type Device } from '../../src/data/web/browser.js';

export interface PhonePages {
  dir: string;
  browser: Browser;
  /** One page of a light-scheme phone context on `device`. */
  screen: PhoneScreen;
  /** The file:// URL of one of the pages. */
  url(file: string): string;
  /** Closes the browser and removes the folder. */
  close(): Promise<void>;
}

/** The Chromium the browser tests run, or an error saying how to install it: the tests need it, they never skip. */
export function requireChromium(): string {
  if (!existsSync(DEFAULT_CHROMIUM)) throw new Error(`${DEFAULT_CHROMIUM} is missing: run scripts/install-deps.sh --test`);
  return DEFAULT_CHROMIUM;
}

/** Writes `pages` (file name → HTML) to a new temporary folder and opens a phone on them; Debian's Chromium must be installed. */
export async function openPhonePages(pages: Record<string, string>, device: Device, prefix: string): Promise<PhonePages> {
  requireChromium();
  const dir = await mkdtemp(join(tmpdir(), prefix));
  for (const [f, html] of Object.entries(pages)) await writeFile(join(dir, f), html);
  const browser = await launchChromium();
  const screen = await PhoneScreen.open(await phoneContext(browser, { device, colorScheme: 'light' }), 1);
  return {
    dir,
    browser,
    screen,
    url: (f) => pathToFileURL(join(dir, f)).href,
    close: async () => {
      await browser.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
