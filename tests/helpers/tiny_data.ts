/** A small synthetic AITW set, prepared into shards, for training and evaluation tests. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareFromFiles } from '../../src/data/prepare.js';
import { synthesize } from '../../src/data/synth/writer.js';
import { SUBSETS, type Subset } from '../../src/data/types.js';

export async function tinyShards(episodes = 40, seed = 7): Promise<{ root: string; shards: string; synth: string }> {
  const root = mkdtempSync(join(tmpdir(), 'autoui-data-'));
  const synth = join(root, 'synth');
  const shards = join(root, 'shards');
  const r = await synthesize({ out: synth, episodes, seed, subsets: SUBSETS, size: { width: 160, height: 320 } });
  for (const subset of Object.keys(r.summary.counts) as Subset[]) {
    await prepareFromFiles({
      inputs: r.summary.counts[subset]!.files.map((f) => join(synth, subset, f)),
      splits: join(synth, subset, 'split.json'),
      subset,
      out: shards,
    });
  }
  return { root, shards, synth };
}
