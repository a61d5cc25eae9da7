/**
 * Closed-loop runs in real headless Chromium on a tiny local site (tests/helpers/task_site.ts):
 * a scripted policy solves every task, results resume, a killed browser fails only its task, and
 * the trajectories read back as AITW episodes.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandInputs, readAitwEpisodes } from '../src/data/aitw.js';
import { parseSuite, readSuite, type TaskSpec } from '../src/data/suite.js';
import type { AitwAction, YX } from '../src/data/types.js';
import { ChromiumEnv } from '../src/env/chromium.js';
import { AgentError, parseScript, ScriptedAgent, type AgentInput } from '../src/eval/tasks/agents.js';
import { readTaskDumps } from '../src/eval/tasks/dumps.js';
import { runSuite } from '../src/eval/tasks/run_tasks.js';
import { parseJsonLines } from '../src/util/json.js';
import { SITE_TASKS, writeTaskSite } from './helpers/task_site.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let dir: string;
let tasks: TaskSpec[];
let scripts: Map<string, ReturnType<typeof parseScript> extends Map<string, infer V> ? V : never>;
let env: ChromiumEnv;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install-deps.sh --test (apt-get install chromium)`);
  dir = await mkdtemp(join(tmpdir(), 'autoui-run-'));
  const files = await writeTaskSite(dir);
  tasks = await readSuite(files.suite);
  scripts = parseScript(parseJsonLines(await readFile(files.script, 'utf8'), files.script));
  env = new ChromiumEnv({ executablePath: CHROMIUM });
});

afterAll(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('autoui run in Chromium', () => {
  it('a scripted policy solves every task: taps, a scroll below the fold, typing + Enter, a switch, back, home', async () => {
    const out = join(dir, 'full');
    const { summary } = await runSuite({ tasks, out, agent: new ScriptedAgent(scripts), env, quiet: true });
    expect(summary.per_task.filter((t) => !t.success)).toEqual([]);
    expect(summary).toMatchObject({ tasks: SITE_TASKS.length, success_rate: 1, reached_rate: 1 });
    expect(summary.mean_steps).toBeCloseTo(SITE_TASKS.reduce((a, t) => a + t.actions.length, 0) / SITE_TASKS.length);
    expect(summary.per_task.every((t) => t.stop_reason === 'complete')).toBe(true);

    // Trajectories: AITW episodes, one per task, with the executed actions and the screens at device size.
    const episodes = [];
    for await (const ep of readAitwEpisodes(await expandInputs([join(out, 'trajectories')]))) episodes.push(ep);
    expect(episodes.map((e) => e.episodeId).sort()).toEqual(tasks.map((t) => t.id).sort());
    const deep = episodes.find((e) => e.episodeId === 'scroll-deep')!;
    expect(deep.goal).toBe('open the deep link');
    // Points are stored as float32.
    const f32 = (a: AitwAction): AitwAction => ({ ...a, touch_yx: a.touch_yx.map(Math.fround) as YX, lift_yx: a.lift_yx.map(Math.fround) as YX });
    expect(deep.steps.map((s) => s.action)).toEqual(SITE_TASKS[1]!.actions.map(f32));
    expect(deep.steps[0]!.image).toMatchObject({ width: 1082, height: 2402, channels: 3 });
    expect(deep.steps[0]!.deviceType).toBe('chromium');
    expect(deep.steps[1]!.currentActivity).toMatch(/\/long\.html$/);
    const split = JSON.parse(readFileSync(join(out, 'trajectories', 'split.json'), 'utf8'));
    expect(split.train.sort()).toEqual(tasks.map((t) => t.id).sort());
  });
});
