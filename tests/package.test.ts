/**
 * The package as a user gets it: `npm pack`, install the tarball into a fresh project, import it from
 * plain Node ESM and from TypeScript (against the shipped .d.ts), and run one prediction through the
 * public API. Uses the dist/ that `npm ci` built (packing with scripts would rebuild dist/ while other
 * test files run the CLI from it).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';

const repo = resolve(import.meta.dirname, '..');
const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });

describe('the packed package', () => {
  let project: string;
  let checkpoint: string;
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'autoui-pack-'));
    const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', root], repo)) as Array<{ filename: string }>;
    project = join(root, 'app');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { autoui: `file:${join(root, packed[0]!.filename)}` } }));
    writeFileSync(join(project, '.npmrc'), 'onnxruntime-node-install=skip\n');
    run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], project);
    checkpoint = join(root, 'ckpt');
    await makeTinyCheckpoint(checkpoint);
    await sharp({ create: { width: 160, height: 320, channels: 3, background: { r: 240, g: 240, b: 240 } } }).png().toFile(join(project, 'shot.png'));
  }, 300_000);

  it('imports from plain Node ESM and predicts through load()', () => {
    const script = `
      import { readFileSync } from 'node:fs';
      import { load, ActionType, checkActionsMatch, PRESETS } from 'autoui';
      const agent = await load(${JSON.stringify(checkpoint)});
      const { result } = await agent.predict({ image: readFileSync('shot.png'), goal: 'open the Clock app', history: [] });
      agent.dispose();
      const a = { action_type: ActionType.PRESS_BACK, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' };
      console.log(JSON.stringify({ ok: result.ok, type: result.ok ? result.aitw.action_type : null, match: checkActionsMatch(a, a, [[0, 0, 1, 1]]), tiny: PRESETS.tiny.dModel }));`;
    writeFileSync(join(project, 'use.mjs'), script);
    const out = JSON.parse(run(process.execPath, ['use.mjs'], project).trim().split('\n').pop()!);
    expect(out).toMatchObject({ ok: true, match: true, tiny: 128 });
    expect([3, 4, 5, 6, 7, 10, 11]).toContain(out.type);
  });

  it('type-checks a TypeScript caller against the shipped declarations', () => {
    writeFileSync(join(project, 'use.ts'), `
      import { load, type AitwAction, type PredictionResult, type Report } from 'autoui';
      export async function next(png: Uint8Array): Promise<AitwAction | null> {
        const agent = await load('ckpt');
        const { result }: { result: PredictionResult } = await agent.predict({ image: png, goal: 'open Clock', history: [] });
        agent.dispose();
        return result.ok ? result.aitw : null;
      }
      export const overall = (r: Report): number | null => r.action_match;
      // @ts-expect-error the API takes a goal string
      load('ckpt').then((a) => a.predict({ image: new Uint8Array(), goal: 42 }));`);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['use.ts'] }));
    expect(() => run(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], project)).not.toThrow();
  });

  it('allows no deep imports', () => {
    writeFileSync(join(project, 'deep.mjs'), "await import('autoui/dist/src/model/autoui.js');");
    expect(() => run(process.execPath, ['deep.mjs'], project)).toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules', 'autoui', 'package.json'), 'utf8'));
    expect(Object.keys(pkg.exports)).toEqual(['.']);
  });
});
