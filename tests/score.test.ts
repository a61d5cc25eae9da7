import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { registerScore } from '../src/cli/score.js';
import { InputError } from '../src/util/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'autoui-score-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

async function run(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const program = new Command('autoui').exitOverride();
  registerScore(program);
  await program.parseAsync(['node', 'autoui', 'score', ...args]);
  return { stdout, stderr };
}

function writeJsonl(name: string, lines: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return path;
}

const tap = (y: number, x: number) => ({ action_type: 4, touch_yx: [y, x], lift_yx: [y, x], typed_text: '' });
const boxes = [[0.9, 0.9, 0.05, 0.05]];
const records = [
  { id: 'a', pred: tap(0.5, 0.5), gold: tap(0.52, 0.5), annotations: boxes, subset: 'general' },
  { id: 'b', pred: tap(0.1, 0.1), gold: tap(0.52, 0.5), annotations: boxes, subset: 'general' },
  { id: 'c', pred: null, gold: { action_type: 5 }, annotations: boxes, subset: 'install' },
  { id: 'd', pred: { action_type: 3, typed_text: 'Pizza' }, gold: { action_type: 3, typed_text: 'pizza near me' }, annotations: [], subset: 'install' },
];

describe('autoui score', () => {
  it('prints the Report as JSON with exactly the documented keys and writes details atomically', async () => {
    const file = writeJsonl('ok.jsonl', records);
    const details = join(dir, 'out', 'details.jsonl');
    const { stdout, stderr } = await run(file, '--json', '--details', details);
    const report = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(report).sort()).toEqual(['action_match', 'click_acc', 'invalid', 'n', 'scroll_acc', 'subsets', 'tap_in_box', 'text_acc', 'text_exact', 'type_acc']);
    expect(report).toMatchObject({ n: 4, invalid: 1, action_match: 25, type_acc: 75, text_acc: 100, text_exact: 0, click_acc: 50, scroll_acc: null });
    expect(Object.keys(report.subsets as object)).toEqual(['general', 'install']);
    expect(readFileSync(details, 'utf8')).toBe(
      ['{"id":"a","match":true}', '{"id":"b","match":false}', '{"id":"c","match":false}', '{"id":"d","match":false}', ''].join('\n'),
    );
    expect(readdirSync(join(dir, 'out'))).toEqual(['details.jsonl']); // no temp file left behind
    expect(stderr).toContain('1 step(s) have no UI annotations');
  });

  it('prints a table by default', async () => {
    const { stdout } = await run(writeJsonl('table.jsonl', records));
    expect(stdout).toMatch(/^subset\s+n\s+action_match/);
    expect(stdout).toMatch(/\ngeneral\s+2\s+50\.00/);
    expect(stdout).toMatch(/\noverall\s+4\s+25\.00/);
  });

  it.each([
    ['not json', ['{"id": "a",'], /bad\.jsonl:1: not valid JSON/],
    ['missing pred', [{ id: 'a', gold: tap(0.1, 0.1), annotations: [] }], /bad\.jsonl:1: 'pred' is missing/],
    ['bad action type', [records[0], { ...records[0], pred: { ...tap(0.1, 0.1), action_type: 8 } }], /bad\.jsonl:2 pred\.action_type: must be an action type/],
    ['bad point', [{ ...records[0], gold: { action_type: 4, touch_yx: [0.1], lift_yx: [0.1, 0.1] } }], /bad\.jsonl:1 gold\.touch_yx: must be \[y, x\]/],
    ['dual point without points', [{ ...records[0], gold: { action_type: 4 } }], /bad\.jsonl:1 gold: a DUAL_POINT action needs touch_yx/],
    ['bad box', [{ ...records[0], annotations: [[0, 0, 1, 1], [0, 0, 1]] }], /bad\.jsonl:1: 'annotations\[1\]'/],
    ['non-finite', ['{"id":"a","pred":null,"gold":{"action_type":4,"touch_yx":[1e999,0],"lift_yx":[0,0]},"annotations":[]}'], /bad\.jsonl:1 gold\.touch_yx: must be \[y, x\]/],
    ['bad text', [{ ...records[0], pred: { action_type: 3, typed_text: 5 } }], /bad\.jsonl:1 pred\.typed_text: must be a string/],
    ['missing id', [{ ...records[0], id: 3 }], /bad\.jsonl:1: 'id'/],
    ['bad subset', [{ ...records[0], subset: 7 }], /'subset'/],
  ])('rejects %s with an InputError naming file, line and field', async (_name, lines, message) => {
    const file = writeJsonl('bad.jsonl', lines);
    const err = await run(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(message);
  });

  it('rejects a missing or empty file', async () => {
    await expect(run(join(dir, 'nope.jsonl'))).rejects.toThrow(/nope\.jsonl: cannot read input \(ENOENT\)/);
    await expect(run(writeJsonl('empty.jsonl', []))).rejects.toThrow(/empty\.jsonl: no records/);
  });

  it('skips blank lines but keeps line numbers right', async () => {
    const path = join(dir, 'blank.jsonl');
    writeFileSync(path, `${JSON.stringify(records[0])}\n\n${JSON.stringify({ ...records[0], id: '' })}\n`);
    await expect(run(path)).rejects.toThrow(/blank\.jsonl:3: 'id'/);
  });
});
