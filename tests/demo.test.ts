import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoPaths, runDemo } from '../src/pipeline/demo.js';

describe('demo', () => {
  it('runs synth → prepare → train → eval end to end under --out, and a re-run resumes every stage', async () => {
    const out = mkdtempSync(join(tmpdir(), 'autoui-demo-'));
    const o = { out, episodes: 50, seed: 3, maxSteps: 2, recipe: { epochs: 1, lr: 3e-3 }, quiet: true };
    const r = await runDemo(o);
    expect(r.data).toBe(join(out, 'shards'));
    expect(r.checkpoint.startsWith(join(out, 'checkpoints'))).toBe(true);
    expect(existsSync(join(r.checkpoint, 'model.safetensors'))).toBe(true);
    expect(r.metrics.n).toBeGreaterThan(0);
    expect(Object.keys(r.metrics)).toEqual(['n', 'action_match', 'type_acc', 'text_acc', 'click_acc', 'scroll_acc', 'invalid', 'subsets']);
    const again = await runDemo(o);
    expect(again.metrics).toEqual(r.metrics);
  });

  it('keeps data in runs/demo and the checkpoint in checkpoints/demo by default, and everything under --out when given', () => {
    expect(demoPaths({})).toEqual({ synth: join('runs', 'demo', 'synth'), shards: join('runs', 'demo', 'shards'), checkpoint: join('checkpoints', 'demo') });
    expect(demoPaths({ out: 'x' })).toEqual({ synth: join('x', 'synth'), shards: join('x', 'shards'), checkpoint: join('x', 'checkpoints', 'demo') });
    expect(demoPaths({ out: 'x', checkpoint: 'c' }).checkpoint).toBe('c');
    expect(demoPaths({ checkpoint: 'c' })).toMatchObject({ shards: join('runs', 'demo', 'shards'), checkpoint: 'c' });
  });
});
