/**
 * The pieces of `autoui run` around the loop: success checks, URL filtering, file names, the
 * summary, the server answer parser, scripts; then the Predictor and server agents on a real tiny
 * checkpoint in Chromium, and the CLI's --json output.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSuite } from '../src/data/suite.js';
import { ActionType, type AitwAction } from '../src/data/types.js';
import { isAllowedUrl } from '../src/data/web/browser.js';
import { ChromiumEnv } from '../src/env/chromium.js';
import { checkElement, checkUrl, observationFromPng } from '../src/env/environment.js';
import { AgentError, decisionFromAnswer, parseScript, PredictorAgent, ServerAgent } from '../src/eval/tasks/agents.js';
import { kindLine, readTaskDumps, summarize, taskFileName, typedLine, typedTextAgreement, type TaskDump } from '../src/eval/tasks/dumps.js';
import { renderReport } from '../src/eval/tasks/report.js';
import { runSuite } from '../src/eval/tasks/run_tasks.js';
import { Predictor } from '../src/infer/predict.js';
import { decodeImageBytes } from '../src/infer/request.js';
import { startServer } from '../src/infer/server.js';
import { parseJsonLines } from '../src/util/json.js';
import { requireChromium } from './helpers/phone_pages.js';
import { writeTaskSite } from './helpers/task_site.js';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';

/** A dump with what renderReport reads besides the given fields (goal, no screens, a finished task). */
const reportable = (d: Partial<TaskDump> & { task: { id: string } }): TaskDump =>
  ({ success: false, reached: false, steps: 1, stop_reason: 'complete', ...d, task: { ...d.task, goal: 'g' }, stepDumps: [], finalScreen: null, check: null, seconds: 1, blockedRequests: 0, agent: 'a', environment: 'e' }) as TaskDump;

describe('checks, URLs, names, summary', () => {
  it('URL checks compare without the #fragment', () => {
    expect(checkUrl({ url: 'file:///s/a.html#x' }, 'file:///s/a.html#y')).toMatchObject({ ok: true });
    expect(checkUrl({ url: 'file:///s/a.html' }, 'file:///s/b.html')).toMatchObject({ ok: false, detail: 'at file:///s/b.html, not file:///s/a.html' });
    expect(checkUrl({ url_endswith: '/a.html' }, 'file:///s/a.html#top')).toMatchObject({ ok: true });
    expect(checkUrl({ selector: '#a', value: '' }, 'file:///s/a.html')).toBeNull();
  });

  it('element checks read text, checked state and value', () => {
    const facts = { text: 'Wi-Fi on', checked: true, value: null };
    expect(checkElement({ selector: '#s', text_contains: 'on' }, facts).ok).toBe(true);
    expect(checkElement({ selector: '#s', checked: false }, facts)).toMatchObject({ ok: false, detail: '#s is checked' });
    expect(checkElement({ selector: '#s', value: 'x' }, facts).ok).toBe(false);
    expect(checkElement({ selector: '#q', value: 'x' }, { text: '', checked: null, value: 'x' }).ok).toBe(true);
    expect(checkElement({ selector: '#s', checked: true }, null)).toMatchObject({ ok: false, detail: 'no element matches #s' });
  });

  it('the browser reaches only local files and 127.0.0.1', () => {
    for (const u of ['file:///a/b.html', 'data:text/plain,x', 'about:blank', 'http://127.0.0.1:8080/x', 'ws://127.0.0.1:9/']) expect(isAllowedUrl(u)).toBe(true);
    for (const u of ['https://example.com/', 'http://localhost:8080/', 'http://127.0.0.2/', 'http://127.0.0.1.nip.io/', 'ftp://127.0.0.1/', 'not a url']) expect(isAllowedUrl(u)).toBe(false);
  });

  it('task file names are safe and distinct for distinct ids', () => {
    expect(taskFileName('nav-settings')).toBe('nav-settings');
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }).filter(Boolean), fc.string({ maxLength: 30 }).filter(Boolean), (a, b) => {
        const [na, nb] = [taskFileName(a), taskFileName(b)];
        return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(na) && na.length <= 100 && (a === b || na !== nb);
      }),
    );
  });

  it('summarize: rates over tasks, mean steps, per-task outcomes in order', () => {
    const d = (id: string, success: boolean, reached: boolean, steps: number, stop_reason: TaskDump['stop_reason']) => ({ task: { id }, success, reached, steps, stop_reason }) as TaskDump;
    const s = summarize([d('a', true, true, 3, 'complete'), d('b', false, true, 12, 'max_steps'), d('c', false, false, 1, 'error: the page crashed'), d('d', false, false, 2, 'impossible')]);
    expect(s).toEqual({
      tasks: 4,
      success_rate: 0.25,
      reached_rate: 0.5,
      mean_steps: 4.5,
      per_task: [
        { id: 'a', success: true, reached: true, steps: 3, stop_reason: 'complete' },
        { id: 'b', success: false, reached: true, steps: 12, stop_reason: 'max_steps' },
        { id: 'c', success: false, reached: false, steps: 1, stop_reason: 'error: the page crashed' },
        { id: 'd', success: false, reached: false, steps: 2, stop_reason: 'impossible' },
      ],
    });
    expect(summarize([])).toEqual({ tasks: 0, success_rate: 0, reached_rate: 0, mean_steps: 0, per_task: [] });
    // Tasks with a meta.kind are counted by kind, in order of first appearance; a task without one is "other".
    const k = (id: string, kind: string | undefined, success: boolean, reached: boolean) => ({ task: { id, ...(kind ? { meta: { kind } } : {}) }, success, reached, steps: 1, stop_reason: 'complete' }) as TaskDump;
    const byKind = summarize([k('n1', 'navigate', false, true), k('s1', 'search', true, true), k('n2', 'navigate', true, true), k('x', undefined, false, false)]);
    expect(Object.keys(byKind)).toEqual(['tasks', 'success_rate', 'reached_rate', 'mean_steps', 'by_kind', 'per_task']);
    expect(byKind.by_kind).toEqual({ navigate: { tasks: 2, success: 1, reached: 2 }, search: { tasks: 1, success: 1, reached: 1 }, other: { tasks: 1, success: 0, reached: 0 } });
    expect(kindLine(byKind)).toBe('navigate 1 of 2, search 1 of 1, other 0 of 1');
    // The report says it under its heading, and says nothing of kinds when no task has one.
    const dumps = [k('n1', 'navigate', true, true), k('s1', 'search', false, false)].map(reportable);
    expect(renderReport(dumps, summarize(dumps))).toContain('<p class="facts" id="kinds">succeeded by kind: navigate 1 of 1, search 0 of 1</p>');
    const plain = dumps.map((x) => ({ ...x, task: { id: x.task.id, goal: 'g' } }) as TaskDump);
    expect(renderReport(plain, summarize(plain))).not.toContain('id="kinds"');
  });

  it('the report lists the other texts a TYPE step weighed, with their scores, and nothing for a step that weighed one', () => {
    const screen = { file: 's.png', width: 100, height: 200, shownWidth: 100, shownHeight: 200 };
    const step = (textChoices: { text: string; score: number }[]) => ({
      index: 0, screen, url: '', plan: null, latency_ms: 1, checkAfter: null, textChoices,
      action: { action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: 'evans' } as AitwAction,
    });
    const html = (choices: { text: string; score: number }[]) => {
      const dumps = [{ ...reportable({ task: { id: 't' } }), stepDumps: [step(choices)] }];
      return renderReport(dumps, summarize(dumps));
    };
    expect(html([{ text: 'evans', score: -0.1 }, { text: 'tara', score: -0.9 }])).toContain('other texts weighed: &#34;tara&#34; -0.90 (typed: -0.10');
    expect(html([{ text: 'evans', score: -0.1 }])).not.toContain('other texts weighed');
  });

  it("typed text against the gold: each task's first typed text, exact and case aside, over the tasks whose gold types", () => {
    const tap = { action_type: ActionType.DUAL_POINT, touch_yx: [0.5, 0.5], lift_yx: [0.5, 0.5], typed_text: '' } as AitwAction;
    const type = (text: string) => ({ action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text }) as AitwAction;
    const ran = (id: string, ...actions: Array<AitwAction | null>) => ({ task: { id }, stepDumps: actions.map((action) => ({ action })) }) as TaskDump;
    const gold = new Map([
      ['exact', [tap, type('internals'), type('later')]],
      ['case', [type('Ben')]],
      ['wrong', [type('unit')]],
      ['none', [type('q')]],
      ['untyped', [tap]],
    ]);
    const dumps = [
      ran('exact', tap, null, type('internals'), type('other')),
      ran('case', type('ben')),
      ran('wrong', type('cross'), type('Unit')),
      ran('none', tap, tap),
      ran('untyped', type('x')),
      ran('no gold', type('y')),
    ];
    const t = typedTextAgreement(dumps, gold);
    expect(t).toEqual({ tasks: 4, typed: 3, equal: 1, equal_ignoring_case: 2 });
    expect(typedLine(t)).toBe("the first text typed is the gold's in 1 of 4 tasks whose gold types (2 case aside; 1 typed nothing)");
    expect(summarize(dumps.map((d) => ({ ...d, success: false, reached: false, steps: 1, stop_reason: 'complete' }) as TaskDump), gold).typed_text).toEqual(t);
    expect(summarize(dumps)).not.toHaveProperty('typed_text');
    // The report says it beside the success figures, and nothing of it without a gold.
    const full = dumps.map(reportable);
    expect(renderReport(full, { ...summarize(full), typed_text: t })).toContain(`<p class="facts" id="typed">typed text: the first text typed is the gold&#39;s in 1 of 4`);
    expect(renderReport(full, summarize(full))).not.toContain('id="typed"');
  });

  it('server answers become decisions; malformed ones are agent errors', () => {
    const ok = decisionFromAnswer({ action: { action_type_id: 4, touch_point: [0.5, 0.25], lift_point: [0.5, 0.25], typed_text: '' }, plan: ['DUAL_POINT', 'STATUS_TASK_COMPLETE'] }, 12);
    expect(ok).toEqual({ action: { action_type: 4, touch_yx: [0.5, 0.25], lift_yx: [0.5, 0.25], typed_text: '' }, plan: ['DUAL_POINT', 'STATUS_TASK_COMPLETE'], latency_ms: 12 });
    // type_probs: the action types' numbers are kept, anything else in it dropped; an answer without it has none.
    const probs = decisionFromAnswer({ action: { action_type_id: 5 }, plan: ['PRESS_BACK'], type_probs: { PRESS_BACK: 0.75, DUAL_POINT: 0.25, SWIPE: 1, TYPE: 'x' } }, 3);
    expect(probs.typeProbs).toEqual({ PRESS_BACK: 0.75, DUAL_POINT: 0.25 });
    // typed_text_choices: {text, score} entries kept in order, anything else dropped; none at all → no field.
    const typed = decisionFromAnswer({ action: { action_type_id: 3, typed_text: 'evans' }, plan: ['TYPE'], typed_text_choices: [{ text: 'evans', score: -0.1 }, { text: 7, score: 0 }, { text: 'tara', score: -0.9, extra: 1 }] }, 3);
    expect(typed.textChoices).toEqual([{ text: 'evans', score: -0.1 }, { text: 'tara', score: -0.9 }]);
    expect(decisionFromAnswer({ action: { action_type_id: 3, typed_text: 'x' }, plan: ['TYPE'], typed_text_choices: 'x' }, 3)).not.toHaveProperty('textChoices');
    expect(decisionFromAnswer({ action: null, invalid: 'no action decision' }, 5)).toEqual({ action: null, invalid: 'no action decision', plan: null, latency_ms: 5 });
    expect(() => decisionFromAnswer({ action: { action_type_id: 99 } }, 1)).toThrow(AgentError);
    expect(() => decisionFromAnswer({}, 1)).toThrow(AgentError);
  });

  it('scripts: actions per task id, errors name file:line', () => {
    const lines = (t: string) => parseJsonLines(t, 's.jsonl');
    const m = parseScript(lines('{"id":"a","actions":[{"action_type":"PRESS_BACK"},{"action_type":4,"touch_point":[0.1,0.2],"lift_point":[0.1,0.2]}]}'));
    expect(m.get('a')).toEqual([
      { action_type: 5, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' },
      { action_type: 4, touch_yx: [0.1, 0.2], lift_yx: [0.1, 0.2], typed_text: '' },
    ]);
    expect(() => parseScript(lines('{"id":"a","actions":[]}\n{"id":"a","actions":[]}'))).toThrow(/s\.jsonl:2: duplicate task id/);
    expect(() => parseScript(lines('{"id":"a","actions":[{"action_type":4}]}'))).toThrow(/s\.jsonl:1 actions\[0\]: a DUAL_POINT action needs touch_yx/);
  });
});

describe('agents on a real tiny checkpoint, in Chromium', () => {
  let dir: string;
  let env: ChromiumEnv;
  let predictor: Predictor;
  beforeAll(async () => {
    const executablePath = requireChromium();
    dir = await mkdtemp(join(tmpdir(), 'autoui-agents-'));
    await writeTaskSite(dir);
    await makeTinyCheckpoint(join(dir, 'ck'), { overrides: { numLayers: 1, numDecoderLayers: 1 } });
    predictor = await Predictor.load(join(dir, 'ck'));
    env = new ChromiumEnv({ executablePath });
  });
  afterAll(async () => {
    await env?.close();
    predictor?.dispose();
  });

  it('the pixels a run hands the in-process agent are those a request decodes from the same PNG (RGB and RGBA)', async () => {
    const shot = await env.reset(parseSuite(JSON.stringify({ id: 'px', goal: 'look', start_url: 'site/index.html', success: { url: 'x' } }), join(dir, 'px.jsonl'))[0]!);
    const raw = Uint8Array.from({ length: 7 * 5 * 4 }, (_, i) => (i * 37) % 256);
    const rgba = new Uint8Array(await sharp(raw, { raw: { width: 7, height: 5, channels: 4 } }).png().toBuffer());
    for (const png of [shot.png, rgba]) {
      const [ours, theirs] = [await (await observationFromPng(png)).image(), await decodeImageBytes(png)];
      expect(ours.channels).toBe(3);
      expect([ours.width, ours.height]).toEqual([theirs.width, theirs.height]);
      expect(Buffer.compare(Buffer.from(ours.data), Buffer.from(theirs.data))).toBe(0);
    }
  });

  it('the in-process Predictor and a server with the same checkpoint act alike', async () => {
    const tasks = parseSuite(JSON.stringify({ id: 'nav', goal: 'open the settings app', start_url: 'site/index.html', max_steps: 3, success: { url_endswith: '/settings.html' } }), join(dir, 'suite.jsonl'));
    const local = await runSuite({ tasks, out: join(dir, 'local'), agent: new PredictorAgent(predictor), env, quiet: true });
    const server = await startServer(predictor, { port: 0 });
    let remote;
    try {
      remote = await runSuite({ tasks, out: join(dir, 'remote'), agent: new ServerAgent(server.url), env, quiet: true });
    } finally {
      await server.close();
    }
    expect(local.summary.tasks).toBe(1);
    const [l, r] = [(await readTaskDumps(join(dir, 'local'))).get('nav')!, (await readTaskDumps(join(dir, 'remote'))).get('nav')!];
    expect(l.agent).toBe(`checkpoint:${join(dir, 'ck')}`);
    expect(r.agent).toMatch(/^server:http:\/\/127\.0\.0\.1:\d+$/);
    expect(l.steps).toBeGreaterThanOrEqual(1);
    expect(l.stepDumps.every((s) => s.latency_ms > 0)).toBe(true);
    // Same screens, same greedy decoding: the same actions and plans.
    expect(r.stepDumps.map((s) => [s.action, s.plan, s.invalid])).toEqual(l.stepDumps.map((s) => [s.action, s.plan, s.invalid]));
    // Each step records the model's probability of every action type, through the server as in process, and the report shows the chosen one's.
    for (const [a, b] of l.stepDumps.map((s, i) => [s, r.stepDumps[i]!] as const)) {
      expect(Object.values(a.typeProbs ?? {}).reduce((x, y) => x + y, 0)).toBeCloseTo(1, 4);
      for (const [type, p] of Object.entries(a.typeProbs!)) expect(b.typeProbs?.[type as keyof typeof a.typeProbs]).toBeCloseTo(p, 4);
    }
    expect(await readFile(local.report, 'utf8')).toMatch(/model's probability of [A-Z_]+: \d+(\.\d)? %/);
    expect(remote.summary).toEqual(local.summary);
  });
});

const CLI = join(process.cwd(), 'dist', 'src', 'cli.js');
const run = promisify(execFile);

describe.runIf(existsSync(CLI))('autoui run (CLI)', () => {
  it('--json prints exactly the summary schema; a bad suite line is named', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'autoui-run-cli-'));
    const { suite, script } = await writeTaskSite(dir);
    const lines = (await readFile(suite, 'utf8')).trim().split('\n');
    await writeFile(suite, [lines[0], lines[3]].join('\n') + '\n');
    const { stdout } = await run('node', [CLI, 'run', '--suite', suite, '--script', script, '--out', join(dir, 'out'), '--json'], { maxBuffer: 1 << 24 });
    const s = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(s)).toEqual(['tasks', 'success_rate', 'reached_rate', 'mean_steps', 'per_task']);
    expect(s).toMatchObject({ tasks: 2, success_rate: 1, reached_rate: 1, mean_steps: 2 });
    for (const t of s.per_task as object[]) expect(Object.keys(t)).toEqual(['id', 'success', 'reached', 'steps', 'stop_reason']);

    // --gold: the summary adds how the first typed text agrees with the gold's (the replayed script is its own gold).
    await writeFile(suite, [lines[0], lines[2]].join('\n') + '\n');
    const typed = JSON.parse((await run('node', [CLI, 'run', '--suite', suite, '--script', script, '--gold', script, '--out', join(dir, 'gold'), '--json'], { maxBuffer: 1 << 24 })).stdout) as Record<string, unknown>;
    expect(Object.keys(typed)).toEqual(['tasks', 'success_rate', 'reached_rate', 'mean_steps', 'typed_text', 'per_task']);
    expect(typed.typed_text).toEqual({ tasks: 1, typed: 1, equal: 1, equal_ignoring_case: 1 });

    // Tasks with a kind: --kind runs those of one kind, the summary counts by kind, an unknown kind names the suite's.
    const kinded = [lines[0], lines[3]].map((l, i) => JSON.stringify({ ...JSON.parse(l!), meta: { kind: ['tap', 'scroll'][i] } }));
    await writeFile(suite, kinded.join('\n') + '\n');
    const one = JSON.parse((await run('node', [CLI, 'run', '--suite', suite, '--script', script, '--out', join(dir, 'kinds'), '--kind', 'scroll', '--json'], { maxBuffer: 1 << 24 })).stdout) as Record<string, unknown>;
    expect(one).toMatchObject({ tasks: 1, by_kind: { scroll: { tasks: 1, success: 1, reached: 1 } } });
    const none = await run('node', [CLI, 'run', '--suite', suite, '--script', script, '--out', join(dir, 'kinds2'), '--kind', 'navigate']).catch((e: { code: number; stderr: string }) => e);
    expect(none).toMatchObject({ code: 2, stderr: expect.stringMatching(/no task of kind navigate; the suite's kinds: tap, scroll/) });

    await writeFile(suite, `${lines[0]}\n{"id": "x", "goal": "g"}\n`);
    const bad = await run('node', [CLI, 'run', '--suite', suite, '--script', script, '--out', join(dir, 'out2')]).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/suite\.jsonl:2: .*start_url/) });
  });
});
