/**
 * The page at GET / end to end in real headless Chromium (Debian `chromium`, driven by
 * playwright-core): upload a screenshot, type a goal, click Predict, and check the marker is drawn
 * where the server says the action is.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CHROMIUM_ARGS } from '../src/data/web/browser.js';
import { Predictor } from '../src/infer/predict.js';
import { startServer, type AutouiServer, type PredictResponse } from '../src/infer/server.js';
import { requireChromium } from './helpers/phone_pages.js';
import { makeScreenshot } from './helpers/screens.js';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';

let dir: string;
let predictor: Predictor;
let server: AutouiServer & { url: string };
let browser: BrowserContext;

beforeAll(async () => {
  const executablePath = requireChromium();
  dir = await mkdtemp(join(tmpdir(), 'autoui-page-'));
  // Seeds are tried until the untrained model predicts a tap, so the test sees a marker (deterministic).
  for (let seed = 1; seed < 40; seed++) {
    await makeTinyCheckpoint(join(dir, 'ck'), { seed, overrides: { numLayers: 1, numDecoderLayers: 1 } });
    predictor = await Predictor.load(join(dir, 'ck'));
    const r = await predictor.predict({ image: await makeScreenshot(360, 800), goal: 'open the settings app' });
    if (r.result.ok && r.result.action.gesture === 'tap') break;
    predictor.dispose();
  }
  server = await startServer(predictor, { port: 0 });
  // A fresh profile per run (playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath,
    headless: true,
    viewport: { width: 1200, height: 900 },
    args: [...CHROMIUM_ARGS],
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  predictor?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('upload, goal, predict: the marker is drawn at the returned point, with plan and latency', async () => {
  const shotFile = join(dir, 'shot.png');
  await writeFile(shotFile, await makeScreenshot(360, 800));
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url + '/');
  await page.setInputFiles('#file', shotFile);
  await page.waitForFunction(() => (document.getElementById('shot') as HTMLImageElement).naturalWidth === 360);
  await page.fill('#goal', 'open the settings app');
  const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/v1/predict')), page.click('#predict')]);
  expect(response.status()).toBe(200);
  const res = (await response.json()) as PredictResponse;
  expect(res.action?.gesture).toBe('tap');
  const marker = page.locator('#marker');
  await marker.waitFor();
  // Where the marker's centre is on screen vs where the returned pixel is on the displayed image.
  const m = (await marker.boundingBox())!;
  const img = (await page.locator('#shot').boundingBox())!;
  const expectX = img.x + (res.pixels!.touch!.x / 360) * img.width;
  const expectY = img.y + (res.pixels!.touch!.y / 800) * img.height;
  expect(Math.abs(m.x + m.width / 2 - expectX)).toBeLessThan(2);
  expect(Math.abs(m.y + m.height / 2 - expectY)).toBeLessThan(2);
  expect(await page.textContent('#plan')).toBe(res.plan!.join(' → '));
  expect(await page.textContent('#latency')).toMatch(/^\d+(\.\d+)? ms on the server/);
  expect(await page.textContent('#error')).toBe('');
  if (process.env.PAGE_SCREENSHOT) await page.screenshot({ path: process.env.PAGE_SCREENSHOT });

  // A bad request shows the server's error and leaves the page working.
  await page.fill('#goal', '');
  await page.click('#predict');
  await expect.poll(() => page.textContent('#error')).toMatch(/bad_request: goal: is empty/);
  expect(errors).toEqual([]);
  await page.close();
});

test('a screenshot narrower than the stage: the overlay covers the image exactly, so points land on it', async () => {
  const shotFile = join(dir, 'narrow.png');
  await writeFile(shotFile, await makeScreenshot(160, 320));
  const page = await browser.newPage();
  await page.goto(server.url + '/');
  await page.setInputFiles('#file', shotFile);
  await page.waitForFunction(() => (document.getElementById('shot') as HTMLImageElement).naturalWidth === 160);
  await page.fill('#goal', 'open the settings app');
  const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/v1/predict')), page.click('#predict')]);
  const res = (await response.json()) as PredictResponse;
  const img = (await page.locator('#shot').boundingBox())!;
  const overlay = (await page.locator('#overlay').boundingBox())!;
  const stage = (await page.locator('#stage').boundingBox())!;
  expect(stage.width).toBeGreaterThan(img.width + 10);
  for (const k of ['x', 'y', 'width', 'height'] as const) expect(Math.abs(overlay[k] - img[k])).toBeLessThan(1);
  if (res.action?.gesture === 'tap') {
    const m = (await page.locator('#marker').boundingBox())!;
    expect(Math.abs(m.x + m.width / 2 - (img.x + (res.pixels!.touch!.x / 160) * img.width))).toBeLessThan(2);
  }
  await page.close();
});
