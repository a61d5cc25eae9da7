/**
 * `npm run bench:encoders`: frozen vision encoders in screens/s on this machine — the built-in
 * encoder and a CLIP-B/32-sized ONNX tower (random weights; the cost does not depend on the
 * values) run through the real transformers.js path on onnxruntime-node (CPU). Screens are
 * 1080×2400 RGB, AITW's size, so the resize is included. Prints a table, or JSON with --json.
 *
 *   node dist/scripts/bench_encoders.js [--json] [--screens N] [--batch B] [--dir <CLIP folder>]
 * With --dir, a real exported CLIP/SigLIP folder is timed instead of the generated tower.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RawImage } from '../src/data/types.js';
import { loadEncoder, type VisionEncoder } from '../src/screen/vision/index.js';
import { CLIP_B32, writeVisionTower } from './make_tiny_onnx.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const opt = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const screens = opt('--screens', 32);
const batch = opt('--batch', 8);
const dirArg = args.indexOf('--dir') >= 0 ? args[args.indexOf('--dir') + 1] : undefined;
const log = (s: string) => process.stderr.write(s + '\n');

/** AITW-sized screens with some structure (bars and blocks), different per screen. */
function screen(k: number): RawImage {
  const width = 1080, height = 2400;
  const data = new Uint8Array(width * height * 3).fill(245);
  for (let y = 0; y < height; y += 1) {
    const bar = ((y + k * 37) >> 6) % 5 === 0;
    if (!bar) continue;
    data.fill(40 + ((k * 29) % 180), y * width * 3, y * width * 3 + width * 3 * 0.6);
  }
  return { width, height, channels: 3, data };
}

async function time(enc: VisionEncoder, images: RawImage[]): Promise<number> {
  await enc.encode(images.slice(0, Math.min(batch, images.length))); // warm-up: session init, kernels
  const t0 = performance.now();
  for (let i = 0; i < images.length; i += batch) await enc.encode(images.slice(i, i + batch));
  return images.length / ((performance.now() - t0) / 1000);
}

const images = Array.from({ length: screens }, (_, k) => screen(k));
const results: Record<string, { screensPerSecond: number; patches: number; dim: number; id: string }> = {};

const builtin = await loadEncoder('builtin');
results.builtin = { screensPerSecond: await time(builtin, images), ...builtin.info };
log(`builtin: ${results.builtin.screensPerSecond.toFixed(1)} screens/s`);

let tmp: string | undefined;
try {
  let dir = dirArg;
  if (!dir) {
    tmp = await mkdtemp(join(tmpdir(), 'autoui-bench-clip-'));
    log('writing a CLIP-B/32-sized tower (88M random weights)…');
    dir = await writeVisionTower(join(tmp, 'clip-b32'), CLIP_B32);
  }
  const t0 = performance.now();
  const clip = await loadEncoder(`clip:${dir}`);
  const loadSeconds = (performance.now() - t0) / 1000;
  results['clip-b32'] = { screensPerSecond: await time(clip, images), ...clip.info };
  log(`clip-b32: ${results['clip-b32'].screensPerSecond.toFixed(2)} screens/s (load ${loadSeconds.toFixed(1)} s)`);
  clip.dispose?.();
} finally {
  if (tmp) await rm(tmp, { recursive: true, force: true });
}

if (json) {
  process.stdout.write(JSON.stringify({ screens, batch, results }, null, 1) + '\n');
} else {
  console.log(`encoder      screens/s   features`);
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name.padEnd(12)} ${r.screensPerSecond.toFixed(2).padStart(9)}   ${r.patches}×${r.dim} (${r.id})`);
  }
}
