import { it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeVisionTower, TINY_CLIP, TINY_SIGLIP } from '../../scripts/make_tiny_onnx.js';
import { loadEncoder } from '../../src/model/vision/index.js';
it('x', async () => {
  const d = await mkdtemp(join(tmpdir(), 'v-'));
  await writeVisionTower(join(d, 'clip'), TINY_CLIP);
  await writeVisionTower(join(d, 'siglip'), TINY_SIGLIP);
  for (const spec of [`clip:${d}/clip`, `siglip:${d}/siglip`, `hf:${d}/clip#pooled`, `clip:${d}/clip#patches+pooled`]) {
    const t0 = performance.now();
    const e = await loadEncoder(spec);
    console.log(spec, e.info, performance.now() - t0);
    const img = { width: 40, height: 80, channels: 3, data: new Uint8Array(40*80*3).map((_, i) => i % 251) };
    const f = await e.encode([img, { ...img, channels: 1, data: img.data.subarray(0, 3200) }]);
    console.log(f.length, f[0].length, f[0].slice(0, 4), f[1].slice(0, 4));
    e.dispose?.();
  }
});
