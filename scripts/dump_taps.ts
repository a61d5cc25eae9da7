/**
 * Dumps every tap step of a synthetic (or any AITW) set for the attention probe
 * (scripts/attention_probe.py): OUT/meta.json (the encoder's info; per tap its subset, split, goal,
 * step, gold tap, annotation boxes and patch layout, see patchLayout) and OUT/features.f32 (the
 * encoder's patches × dim per tap screen, float32, in meta order).
 *
 *   node dist/scripts/dump_taps.js <synth dir> <out dir> [--encoder-module <file.js>]
 * --encoder-module loads `BuiltinEncoder` from another build of the built-in encoder (an older
 * version kept outside the repository), to compare two versions on the same taps.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expandInputs, readAitwSteps } from '../src/data/aitw.js';
import { isTapAction } from '../src/data/geometry.js';
import { loadSplits, splitOf } from '../src/data/splits.js';
import { SUBSETS } from '../src/data/types.js';
import { patchLayout, type VisionEncoder } from '../src/screen/vision/encoder.js';
import { BuiltinEncoder } from '../src/screen/vision/index.js';

const args = process.argv.slice(2);
const flag = args.indexOf('--encoder-module');
const modulePath = flag >= 0 ? args.splice(flag, 2)[1] : undefined;
const [root, out] = args;
if (!root || !out) throw new Error('usage: dump_taps.js <synth dir> <out dir> [--encoder-module <file.js>]');

async function encoderFrom(path: string | undefined): Promise<VisionEncoder> {
  if (!path) return new BuiltinEncoder();
  const mod = (await import(pathToFileURL(resolve(path)).href)) as { BuiltinEncoder?: new () => VisionEncoder };
  if (!mod.BuiltinEncoder) throw new Error(`${path} exports no BuiltinEncoder`);
  return new mod.BuiltinEncoder();
}

const encoder = await encoderFrom(modulePath);
mkdirSync(out, { recursive: true });
const fd = openSync(join(out, 'features.f32'), 'w');
const meta: unknown[] = [];
for (const subset of SUBSETS) {
  const split = splitOf(await loadSplits(join(root, subset, 'split.json')));
  for await (const st of readAitwSteps(await expandInputs([join(root, subset)]))) {
    const a = st.action;
    if (!isTapAction(a)) continue;
    const [f] = await encoder.encode([st.image]);
    writeSync(fd, new Uint8Array(f!.buffer, f!.byteOffset, f!.byteLength));
    const layout = patchLayout(encoder.info, st.image);
    meta.push({
      subset,
      split: split(st.episodeId),
      goal: st.goal,
      step: st.stepId,
      activity: st.currentActivity,
      yx: a.touch_yx,
      boxes: st.annotations.positions,
      texts: st.annotations.text,
      layout: layout && { rows: layout.rows, cols: layout.cols, rowHeight: layout.rowHeight, colWidth: layout.colWidth },
    });
  }
}
closeSync(fd);
writeFileSync(join(out, 'meta.json'), JSON.stringify({ encoder: encoder.info, taps: meta }));
process.stderr.write(`${meta.length} taps → ${out}\n`);
