/**
 * Dumps every tap step of a synthetic (or any AITW) set for the attention probe
 * (scripts/attention_probe.py): OUT/meta.json (subset, split, goal, step, gold tap, boxes) and
 * OUT/features.f32 (the built-in encoder's patches × dim per tap screen, float32, in meta order).
 *
 *   node dist/scripts/dump_taps.js <synth dir> <out dir>
 */
import { mkdirSync, openSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expandInputs, readAitwSteps } from '../src/data/aitw.js';
import { loadSplits, splitOf } from '../src/data/splits.js';
import { SUBSETS } from '../src/data/types.js';
import { isTapAction } from '../src/data/geometry.js';
import { BuiltinEncoder } from '../src/screen/vision/index.js';

const [root, out] = process.argv.slice(2);
if (!root || !out) throw new Error('usage: dump_taps.js <synth dir> <out dir>');
mkdirSync(out, { recursive: true });
const encoder = new BuiltinEncoder();
const fd = openSync(join(out, 'features.f32'), 'w');
const meta: unknown[] = [];
for (const subset of SUBSETS) {
  const split = splitOf(await loadSplits(join(root, subset, 'split.json')));
  for await (const st of readAitwSteps(await expandInputs([join(root, subset)]))) {
    const a = st.action;
    if (!isTapAction(a)) continue;
    const [f] = await encoder.encode([st.image]);
    writeSync(fd, new Uint8Array(f!.buffer, f!.byteOffset, f!.byteLength));
    meta.push({ subset, split: split(st.episodeId), goal: st.goal, step: st.stepId, activity: st.currentActivity, yx: a.touch_yx, boxes: st.annotations.positions, texts: st.annotations.text });
  }
}
closeSync(fd);
writeFileSync(join(out, 'meta.json'), JSON.stringify({ encoder: encoder.info, taps: meta }));
process.stderr.write(`${meta.length} taps → ${out}\n`);
