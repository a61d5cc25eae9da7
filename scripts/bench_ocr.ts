/**
 * OCR throughput on 1080×2400 phone screenshots of real documentation pages (rendered by headless
 * Debian chromium, as in ocr_accuracy.ts; rendering is not timed): model load, per-screen latency
 * (p50/p95) reading one screen at a time, and screens/s for the whole set in one `read`, with the
 * reader's default workers (worker threads of one onnxruntime thread each) beside the same reads
 * in this thread with two onnxruntime threads, in the same run; the whole set again with the models
 * opened as shipped (no folded convolution tails), its reads alternated with the default reader's;
 * and the process CPU time per screen (the figure that stays meaningful when the cores are shared).
 *
 *   node dist/scripts/bench_ocr.js [--json] [--pages N] [--det-side S] [<file.html | dir>...]
 * Without inputs it reads the nodejs-doc API pages (/usr/share/doc/nodejs/api); on a machine
 * without them: `apt-get download nodejs-doc && dpkg -x nodejs-doc_*.deb DIR` and pass
 * DIR/usr/share/doc/nodejs/api.
 */
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RawImage } from '../src/screen/types.js';
import { OcrReader, type OcrOptions } from '../src/screen/text/ocr.js';
import { launchPhone, pickPages, renderScreens } from './ocr_accuracy.js';

export interface BenchOcrOptions {
  /** HTML files or directories; `pages` are taken, spread evenly, over all of them. */
  inputs: string[];
  /** Pages to render (one screen each). */
  pages?: number;
  /** Reader options (concurrency is set by the bench). */
  reader?: OcrOptions;
  /** Progress lines on stderr. */
  log?: (line: string) => void;
}

export interface BenchOcrResult {
  reader: string;
  screens: number;
  width: number;
  height: number;
  /** Text lines found per screen (mean). */
  lines_per_screen: number;
  /** Worker threads of the default reader. */
  workers: number;
  /** `OcrReader.load` + session creation (every worker). */
  load_ms: number;
  /** One screen at a time (a `predict` request), the default reader. */
  screens_per_s: number;
  p50_ms: number;
  p95_ms: number;
  /** Process CPU seconds (all threads) per screen, one at a time. */
  cpu_s_per_screen: number;
  /** All screens in one `read` (how `data prepare` reads a batch), the default reader: the mean rate of two reads. */
  screens_per_s_batch: number;
  /** All screens in one `read`, the default reader without the cut where the ink changes (its cost). */
  screens_per_s_batch_no_ink: number;
  /** All screens in one `read`, the models opened as shipped (no folded convolution tails), alternated with the default reader's reads. */
  screens_per_s_batch_shipped: number;
  /** The same in this thread, two onnxruntime threads: one at a time, and the whole set in one `read`. */
  in_thread: { screens_per_s: number; p50_ms: number; screens_per_s_batch: number };
  /** 1-minute load average of the machine at the end (other jobs share the cores). */
  loadavg: number;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function timeOneByOne(reader: OcrReader, images: RawImage[]): Promise<{ ms: number[]; cpu: number; lines: number }> {
  const ms: number[] = [];
  let lines = 0;
  const c0 = process.cpuUsage();
  for (const img of images) {
    const t = performance.now();
    lines += (await reader.read([img]))[0]!.length;
    ms.push(performance.now() - t);
  }
  const c = process.cpuUsage(c0);
  return { ms, cpu: (c.user + c.system) / 1e6, lines };
}

/** Screens/s of the whole set in one `read`. */
async function batchRate(reader: OcrReader, images: RawImage[]): Promise<number> {
  const t = performance.now();
  await reader.read(images);
  return images.length / ((performance.now() - t) / 1000);
}

export async function benchOcr(opts: BenchOcrOptions): Promise<BenchOcrResult> {
  const log = opts.log ?? (() => {});
  const perInput = Math.ceil((opts.pages ?? 10) / opts.inputs.length);
  const files = opts.inputs.flatMap((i) => pickPages(i, perInput)).slice(0, opts.pages ?? 10);
  const { browser, context } = await launchPhone();
  const shots = await renderScreens(context, files).finally(() => browser.close());
  const images = shots.map((s) => s.image);
  log(`rendered ${images.length} screens of ${images[0]!.width}×${images[0]!.height}`);

  // Every pass reads the same screens: without line memory, each read times them as new screens.
  const fresh = { ...opts.reader, rememberLines: false };
  const t0 = performance.now();
  const reader = await OcrReader.load(fresh);
  await reader.ready();
  const loadMs = performance.now() - t0;
  const single = await OcrReader.load({ ...fresh, workers: 1, threads: 2 });
  const noInk = await OcrReader.load({ ...fresh, inkCuts: false });
  const shipped = await OcrReader.load({ ...fresh, foldConvTails: false });
  try {
    // Warm-up: first-run allocations and kernel selection.
    await Promise.all([reader.read(images.slice(0, 2)), single.read(images.slice(0, 1)), noInk.read(images.slice(0, 2)), shipped.read(images.slice(0, 2))]);
    const one = await timeOneByOne(reader, images);
    log(`${reader.workers} workers, one at a time: p50 ${quantile(one.ms, 0.5).toFixed(0)} ms, ${one.lines} lines`);
    const alone = await timeOneByOne(single, images);
    log(`this thread, one at a time: p50 ${quantile(alone.ms, 0.5).toFixed(0)} ms`);
    // The folded and the shipped models alternated, so the hour's drift falls on both alike.
    const pairs: number[][] = [];
    for (let k = 0; k < 2; k++) pairs.push([await batchRate(reader, images), await batchRate(shipped, images)]);
    const mean = (i: number) => (pairs[0]![i]! + pairs[1]![i]!) / 2;
    const [batch, shippedBatch] = [mean(0), mean(1)];
    const [aloneBatch, noInkBatch] = [await batchRate(single, images), await batchRate(noInk, images)];
    const total = one.ms.reduce((a, b) => a + b, 0) / 1000;
    return {
      reader: reader.id, screens: images.length, width: images[0]!.width, height: images[0]!.height,
      lines_per_screen: one.lines / images.length, workers: reader.workers, load_ms: loadMs,
      screens_per_s: images.length / total, p50_ms: quantile(one.ms, 0.5), p95_ms: quantile(one.ms, 0.95),
      cpu_s_per_screen: one.cpu / images.length, screens_per_s_batch: batch, screens_per_s_batch_no_ink: noInkBatch,
      screens_per_s_batch_shipped: shippedBatch,
      in_thread: { screens_per_s: images.length / (alone.ms.reduce((a, b) => a + b, 0) / 1000), p50_ms: quantile(alone.ms, 0.5), screens_per_s_batch: aloneBatch },
      loadavg: loadavg()[0]!,
    };
  } finally {
    await Promise.all([reader.dispose(), single.dispose(), noInk.dispose(), shipped.dispose()]);
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const value = (name: string) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : undefined);
  const inputs = argv.filter((a, i) => !a.startsWith('--') && !(i > 0 && ['--pages', '--det-side'].includes(argv[i - 1]!)));
  const defaults = '/usr/share/doc/nodejs/api';
  if (inputs.length === 0) {
    if (!existsSync(defaults)) throw new Error(`${defaults} is missing: apt-get download nodejs-doc && dpkg -x nodejs-doc_*.deb DIR, then pass DIR${defaults}`);
    inputs.push(defaults);
  }
  const detSide = value('--det-side');
  const r = await benchOcr({
    inputs, pages: value('--pages') ?? 10, reader: detSide ? { detLimitSide: detSide } : {},
    log: json ? undefined : (s) => process.stderr.write(s + '\n'),
  });
  if (json) process.stdout.write(JSON.stringify(r, null, 1) + '\n');
  else {
    console.log(`${r.reader}: ${r.screens} screens ${r.width}×${r.height}, ${r.lines_per_screen.toFixed(1)} lines each; load ${r.load_ms.toFixed(0)} ms`);
    console.log(`${r.workers} workers, one at a time: ${r.screens_per_s.toFixed(2)} screens/s, p50 ${r.p50_ms.toFixed(0)} ms, p95 ${r.p95_ms.toFixed(0)} ms, ${r.cpu_s_per_screen.toFixed(2)} CPU-s/screen; the whole set in one read: ${r.screens_per_s_batch.toFixed(2)} screens/s (${r.screens_per_s_batch_no_ink.toFixed(2)} without the cut where the ink changes; ${r.screens_per_s_batch_shipped.toFixed(2)} with the models as shipped, no folded convolution tails)`);
    console.log(`in this thread (2 onnxruntime threads): one at a time ${r.in_thread.screens_per_s.toFixed(2)} screens/s, p50 ${r.in_thread.p50_ms.toFixed(0)} ms; the whole set ${r.in_thread.screens_per_s_batch.toFixed(2)} screens/s`);
    console.log(`(load average ${r.loadavg.toFixed(1)} on ${availableParallelism()} cores at the end)`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
