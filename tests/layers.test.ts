/**
 * Imports go one way down the pipeline: screen features → data → model → train | infer | env → eval
 * → pipeline → cli (util, native and the backend choice serve everyone). train, infer and env are
 * peers: none imports another. This test reads every import in src/ and names any that goes up.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const LEVEL: Record<string, number> = { util: 0, native: 0, 'backend.ts': 0, screen: 1, data: 2, model: 3, train: 4, infer: 4, env: 4, eval: 5, pipeline: 6, cli: 7, 'cli.ts': 7, 'index.ts': 7 };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));
}
const room = (file: string): string => relative(SRC, file).split(/[\\/]/)[0]!;

describe('imports follow the pipeline', () => {
  it('no module imports a room above it, and train, infer and env never import each other', () => {
    const bad: string[] = [];
    for (const file of files(SRC)) {
      const from = room(file);
      expect(LEVEL[from], `unknown room for ${file}`).toBeDefined();
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const to = room(normalize(join(dirname(file), m[1]!)));
        if (to === from) continue;
        if (LEVEL[to]! > LEVEL[from]! || (LEVEL[to] === 4 && LEVEL[from] === 4)) bad.push(`${relative(SRC, file)} → ${m[1]}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
