/**
 * `npm run bench:encoders`: frozen vision encoders in screens/s on this machine, side by side in
 * one run — the built-in encoder at two screen sizes (AITW's 1080×2400 RGB, resize included, and the
 * synthetic set's 160×320), optionally an older build of it (--baseline, for ratios), and a
 * CLIP-B/32-sized ONNX tower (random weights; the cost does not depend on the values) through the
 * real transformers.js path on onnxruntime-node (CPU). Each figure is the best of --repeats timed
 * passes (the machine is shared: the best pass is the least disturbed one), in wall-clock screens/s
 * and in CPU milliseconds per screen (all threads of the process, libvips' included).
 *
 *   node dist/scripts/bench_encoders.js [--json] [--screens N] [--batch B] [--repeats R]
 *        [--baseline <built encoder module .js>] [--no-clip] [--dir <CLIP folder>]
 * With --dir, a real exported CLIP/SigLIP folder is timed instead of the generated tower.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RawImage } from '../src/screen/types.js';
import { loadEncoder, type VisionEncoder } from '../src/screen/vision/index.js';
import { CLIP_B32, writeVisionTower } from './make_tiny_onnx.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const opt = (name: string): string | undefined => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : undefined);
const screens = Number(opt('--screens') ?? 64);
const batch = Number(opt('--batch') ?? 8);
const repeats = Number(opt('--repeats') ?? 3);
const baselinePath = opt('--baseline');
const dirArg = opt('--dir');
const log = (s: string) => process.stderr.write(s + '\n');

/** Phone-like screens with structure (bars, blocks, small coloured icons), different per screen. */
function screen(k: number, width: number, height: number): RawImage {
  const data = new Uint8Array(width * height * 3).fill(245);
  const u = width / 8;
  for (let y = 0; y < height; y++) {
    const band = Math.floor((y + k * 37) / (0.6 * u));
    if (band % 5 === 0) data.fill(40 + ((k * 29) % 180), y * width * 3, (y * width + Math.floor(width * 0.6)) * 3);
    if (band % 5 === 2) {
      for (let x = Math.floor(0.2 * u); x < Math.floor(0.8 * u); x++) data.set([(k * 53) % 256, (k * 91 + band * 17) % 256, 200], (y * width + x) * 3);
    }
  }
  return { width, height, channels: 3, data };
}

interface Timing {
  screensPerSecond: number;
  cpuMsPerScreen: number;
}

/** One timed pass over `images`, in batches. */
async function pass(enc: VisionEncoder, images: RawImage[]): Promise<Timing> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < images.length; i += batch) await enc.encode(images.slice(i, i + batch));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { screensPerSecond: images.length / seconds, cpuMsPerScreen: (cpu.user + cpu.system) / 1000 / images.length };
}

/** The best of `repeats` passes per encoder, the encoders' passes interleaved so they see the same machine load. */
async function time(encs: VisionEncoder[], images: RawImage[]): Promise<Timing[]> {
  for (const enc of encs) await enc.encode(images.slice(0, Math.min(batch, images.length))); // warm-up: session init, kernels, tables
  const best: Timing[] = encs.map(() => ({ screensPerSecond: 0, cpuMsPerScreen: Infinity }));
  for (let r = 0; r < repeats; r++) {
    for (const [i, enc] of encs.entries()) {
      const t = await pass(enc, images);
      if (t.screensPerSecond > best[i]!.screensPerSecond) best[i] = t;
    }
  }
  return best;
}

async function builtinFrom(path: string): Promise<VisionEncoder> {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as { BuiltinEncoder?: new () => VisionEncoder };
  if (!mod.BuiltinEncoder) throw new Error(`${path} exports no BuiltinEncoder`);
  return new mod.BuiltinEncoder();
}

const sizes = [
  ['1080x2400', 1080, 2400],
  ['160x320', 160, 320],
] as const;
const results: Record<string, Timing & { id: string; patches: number; dim: number }> = {};
const encoders: [string, VisionEncoder][] = [['builtin', await loadEncoder('builtin')]];
if (baselinePath) encoders.push(['baseline', await builtinFrom(baselinePath)]);
for (const [label, w, h] of sizes) {
  const images = Array.from({ length: screens }, (_, k) => screen(k, w, h));
  const timings = await time(encoders.map(([, enc]) => enc), images);
  for (const [i, [name, enc]] of encoders.entries()) {
    const key = `${name}@${label}`;
    results[key] = { ...timings[i]!, id: enc.info.id, patches: enc.info.patches, dim: enc.info.dim };
    log(`${key} (${enc.info.id}): ${results[key].screensPerSecond.toFixed(1)} screens/s, ${results[key].cpuMsPerScreen.toFixed(2)} CPU ms/screen`);
  }
}

if (!args.includes('--no-clip')) {
  let tmp: string | undefined;
  try {
    let dir = dirArg;
    if (!dir) {
      tmp = await mkdtemp(join(tmpdir(), 'autoui-bench-clip-'));
      log('writing a CLIP-B/32-sized tower (88M random weights)…');
      dir = await writeVisionTower(join(tmp, 'clip-b32'), CLIP_B32);
    }
    const clip = await loadEncoder(`clip:${dir}`);
    const images = Array.from({ length: Math.min(screens, 16) }, (_, k) => screen(k, 1080, 2400));
    results['clip-b32@1080x2400'] = { ...(await time([clip], images))[0]!, ...clip.info };
    log(`clip-b32: ${results['clip-b32@1080x2400'].screensPerSecond.toFixed(2)} screens/s`);
    clip.dispose?.();
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}

const ratios: Record<string, number> = {};
if (baselinePath) {
  for (const [label] of sizes) ratios[label] = results[`builtin@${label}`]!.screensPerSecond / results[`baseline@${label}`]!.screensPerSecond;
}
if (json) {
  process.stdout.write(JSON.stringify({ screens, batch, repeats, results, ratios }, null, 1) + '\n');
} else {
  console.log(`encoder                 screens/s  CPU ms/screen  features`);
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name.padEnd(22)} ${r.screensPerSecond.toFixed(2).padStart(10)} ${r.cpuMsPerScreen.toFixed(2).padStart(14)}  ${r.patches}×${r.dim} (${r.id})`);
  }
  for (const [label, x] of Object.entries(ratios)) console.log(`builtin / baseline at ${label}: ${x.toFixed(2)}× screens/s`);
}
