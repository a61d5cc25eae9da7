/**
 * OCR throughput on 1080×2400 phone screenshots of real documentation pages (rendered by headless
 * Debian chromium, as in ocr_accuracy.ts; rendering is not timed): model load, per-screen latency
 * (p50/p95) reading one screen at a time, screens/s for one and for two images in flight in one
 * process, and for two processes with one onnxruntime thread each (onnxruntime-node runs a session
 * synchronously on the JS thread, so only separate processes or threads overlap two inferences),
 * and the process CPU time per screen (the figure that stays meaningful when the cores are shared).
 *
 *   node dist/scripts/bench_ocr.js [--json] [--pages N] [--det-side S] [<file.html | dir>...]
 * Without inputs it reads the nodejs-doc API pages (/usr/share/doc/nodejs/api); on a machine
 * without them: `apt-get download nodejs-doc && dpkg -x nodejs-doc_*.deb DIR` and pass
 * DIR/usr/share/doc/nodejs/api.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
  /** `OcrReader.load` + session creation. */
  load_ms: number;
  /** One screen at a time. */
  screens_per_s: number;
  p50_ms: number;
  p95_ms: number;
  /** Process CPU seconds (all threads) per screen, one at a time. */
  cpu_s_per_screen: number;
  /** All screens in one `read`, two images in flight. */
  screens_per_s_2_in_flight: number;
  /** Two processes, one onnxruntime thread each, each reading half of the screens. */
  screens_per_s_2_processes: number;
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

/** A child's share: screens i ≡ k (mod n) of the folder, read once `go` arrives; reports its seconds. */
async function child(dir: string, k: number, n: number, reader: OcrOptions): Promise<void> {
  const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as Array<Omit<RawImage, 'data'>>;
  const mine = await Promise.all(meta.map((m, i) => ({ m, i })).filter(({ i }) => i % n === k)
    .map(async ({ m, i }) => ({ ...m, data: new Uint8Array(await readFile(join(dir, `${i}.raw`))) })));
  const ocr = await OcrReader.load({ ...reader, threads: 1, concurrency: 1 });
  await ocr.read(mine.slice(0, 1));
  process.send!({ ready: true });
  await new Promise<void>((done) => process.once('message', () => done()));
  for (const img of mine) await ocr.read([img]);
  process.send!({ done: true });
  await ocr.dispose();
}

/** Screens/s of two processes with one onnxruntime thread each, timed from a common start. */
async function twoProcesses(images: RawImage[], reader: OcrOptions): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'autoui-bench-ocr-'));
  try {
    await writeFile(join(dir, 'meta.json'), JSON.stringify(images.map(({ width, height, channels }) => ({ width, height, channels }))));
    await Promise.all(images.map((img, i) => writeFile(join(dir, `${i}.raw`), img.data)));
    const kids: ChildProcess[] = [0, 1].map((k) => fork(fileURLToPath(import.meta.url), ['--child', dir, String(k), '2', JSON.stringify(reader)]));
    const next = (c: ChildProcess) => new Promise<void>((ok, fail) => {
      c.once('message', () => ok());
      c.once('exit', (code) => fail(new Error(`OCR bench child exited with ${code}`)));
    });
    await Promise.all(kids.map(next));
    const t = performance.now();
    const finished = Promise.all(kids.map(next));
    kids.forEach((c) => c.send('go'));
    await finished;
    return images.length / ((performance.now() - t) / 1000);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchOcr(opts: BenchOcrOptions): Promise<BenchOcrResult> {
  const log = opts.log ?? (() => {});
  const perInput = Math.ceil((opts.pages ?? 10) / opts.inputs.length);
  const files = opts.inputs.flatMap((i) => pickPages(i, perInput)).slice(0, opts.pages ?? 10);
  const { browser, context } = await launchPhone();
  const shots = await renderScreens(context, files).finally(() => browser.close());
  const images = shots.map((s) => s.image);
  log(`rendered ${images.length} screens of ${images[0]!.width}×${images[0]!.height}`);

  const t0 = performance.now();
  const reader = await OcrReader.load({ ...opts.reader, concurrency: 1 });
  await reader.ready();
  const loadMs = performance.now() - t0;
  const pair = await OcrReader.load({ ...opts.reader, concurrency: 2 });
  try {
    await reader.read(images.slice(0, 1)); // warm-up: first-run allocations and kernel selection
    const one = await timeOneByOne(reader, images);
    log(`one at a time: p50 ${quantile(one.ms, 0.5).toFixed(0)} ms, ${one.lines} lines`);
    await pair.read(images.slice(0, 1));
    const t = performance.now();
    await pair.read(images);
    const pairSeconds = (performance.now() - t) / 1000;
    const total = one.ms.reduce((a, b) => a + b, 0) / 1000;
    const procs = await twoProcesses(images, opts.reader ?? {});
    return {
      reader: reader.id, screens: images.length, width: images[0]!.width, height: images[0]!.height,
      lines_per_screen: one.lines / images.length, load_ms: loadMs,
      screens_per_s: images.length / total, p50_ms: quantile(one.ms, 0.5), p95_ms: quantile(one.ms, 0.95),
      cpu_s_per_screen: one.cpu / images.length, screens_per_s_2_in_flight: images.length / pairSeconds,
      screens_per_s_2_processes: procs,
      loadavg: loadavg()[0]!,
    };
  } finally {
    await Promise.all([reader.dispose(), pair.dispose()]);
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return child(argv[1]!, Number(argv[2]), Number(argv[3]), JSON.parse(argv[4]!) as OcrOptions);
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
    console.log(`one at a time: ${r.screens_per_s.toFixed(2)} screens/s, p50 ${r.p50_ms.toFixed(0)} ms, p95 ${r.p95_ms.toFixed(0)} ms, ${r.cpu_s_per_screen.toFixed(2)} CPU-s/screen`);
    console.log(`two in flight, one process: ${r.screens_per_s_2_in_flight.toFixed(2)} screens/s; two processes × 1 thread: ${r.screens_per_s_2_processes.toFixed(2)} screens/s`);
    console.log(`(load average ${r.loadavg.toFixed(1)} on ${availableParallelism()} cores at the end)`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
