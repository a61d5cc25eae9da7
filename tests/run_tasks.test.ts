/**
 * Closed-loop runs in real headless Chromium on a tiny local site (tests/helpers/task_site.ts):
 * a scripted policy solves every task, results resume, a killed browser fails only its task, and
 * the trajectories read back as AITW episodes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandInputs, readAitwEpisodes } from '../src/data/aitw.js';
import { parseSuite, readSuite, type TaskSpec } from '../src/data/suite.js';
import type { AitwAction, YX } from '../src/data/types.js';
import { launchChromium } from '../src/data/web/browser.js';
import { ChromiumEnv } from '../src/env/chromium.js';
import type { Environment } from '../src/env/environment.js';
import { AgentError, parseScript, ScriptedAgent, type AgentInput } from '../src/eval/tasks/agents.js';
import { readTaskDumps, type RunSummary } from '../src/eval/tasks/dumps.js';
import { runSuite } from '../src/eval/tasks/run_tasks.js';
import { RETURNED_SHARE, UNCHANGED_SHARE } from '../src/eval/tasks/screen_change.js';
import { parseJsonLines } from '../src/util/json.js';
import { requireChromium } from './helpers/phone_pages.js';
import { pixelAt } from './helpers/screens.js';
import { centre, LINK_TOPS, SITE_TASKS, writeTaskSite } from './helpers/task_site.js';

let dir: string;
let tasks: TaskSpec[];
let scripts: Map<string, ReturnType<typeof parseScript> extends Map<string, infer V> ? V : never>;
let env: ChromiumEnv;
let fullSummary: RunSummary;

/** Browsers this process started (the headless shell, or the binary Debian's chromium wrapper execs: direct children). */
function childBrowsers(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && stat.includes('(chromium');
      } catch {
        return false;
      }
    })
    .map(Number);
}

beforeAll(async () => {
  const executablePath = requireChromium();
  dir = await mkdtemp(join(tmpdir(), 'autoui-run-'));
  const files = await writeTaskSite(dir);
  tasks = await readSuite(files.suite);
  scripts = parseScript(parseJsonLines(await readFile(files.script, 'utf8'), files.script));
  env = new ChromiumEnv({ executablePath });
});

afterAll(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The environment with its resets recorded: which tasks it ran. */
function counting(e: Environment, resets: string[]): Environment {
  return new Proxy(e, { get: (target, key) => (key === 'reset' ? (task: TaskSpec) => (resets.push(task.id), target.reset(task)) : Reflect.get(target, key, target)) });
}

describe('autoui run in Chromium', () => {
  it('a scripted policy solves every task: taps, a scroll below the fold, typing + Enter, a switch, back, home', async () => {
    const out = join(dir, 'full');
    const { summary } = await runSuite({ tasks, out, agent: new ScriptedAgent(scripts), env, quiet: true });
    expect(summary.per_task.filter((t) => !t.success)).toEqual([]);
    expect(summary).toMatchObject({ tasks: SITE_TASKS.length, success_rate: 1, reached_rate: 1 });
    expect(summary.mean_steps).toBeCloseTo(SITE_TASKS.reduce((a, t) => a + t.actions.length, 0) / SITE_TASKS.length);
    expect(summary.per_task.every((t) => t.stop_reason === 'complete')).toBe(true);
    fullSummary = summary;

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

  it('--resume runs only the unfinished tasks and gives the same totals; a fresh run refuses a used folder', async () => {
    const out = join(dir, 'resumed');
    const some = [tasks[0]!, tasks[3]!, tasks[4]!];
    const asked: string[] = [];
    // The agent dies at the second task: the run stops with one result on disk.
    const dying = new ScriptedAgent(scripts, {
      onStep: (i: AgentInput) => {
        if (i.task.id === some[1]!.id) throw new AgentError('agent lost');
      },
    });
    await expect(runSuite({ tasks: some, out, agent: dying, env, quiet: true })).rejects.toThrow(/agent lost/);
    expect([...(await readTaskDumps(out)).keys()]).toEqual([some[0]!.id]);
    await expect(runSuite({ tasks: some, out, agent: new ScriptedAgent(scripts), env, quiet: true })).rejects.toThrow(/--resume/);

    const counting = new ScriptedAgent(scripts, { onStep: (i: AgentInput) => void asked.push(i.task.id) });
    const r = await runSuite({ tasks: some, out, agent: counting, env, quiet: true, resume: true });
    expect(new Set(asked)).toEqual(new Set([some[1]!.id, some[2]!.id]));
    expect(r).toMatchObject({ ran: 2, kept: 1 });
    const fresh = await runSuite({ tasks: some, out: join(dir, 'fresh'), agent: new ScriptedAgent(scripts), env, quiet: true });
    expect(r.summary).toEqual(fresh.summary);
    expect(fresh.summary.per_task).toEqual(fullSummary.per_task.filter((t) => some.some((x) => x.id === t.id)));
    // Resuming a finished run changes nothing; resuming with another step limit is refused.
    asked.length = 0;
    expect((await runSuite({ tasks: some, out, agent: counting, env, quiet: true, resume: true })).summary).toEqual(fresh.summary);
    expect(asked).toEqual([]);
    await expect(runSuite({ tasks: some, out, agent: counting, env, quiet: true, resume: true, maxSteps: 3 })).rejects.toThrow(/at most 12 steps/);
  });

  it('tasks spread over a second browser give the same results, in suite order; a failing agent stops both lanes, and --resume finishes the rest', async () => {
    const second = new ChromiumEnv();
    try {
      const out = join(dir, 'two-lanes');
      const resets: [string[], string[]] = [[], []];
      const both = await runSuite({ tasks, out, agent: new ScriptedAgent(scripts), env: counting(env, resets[0]), moreEnvs: [counting(second, resets[1])], quiet: true });
      expect(both.summary.per_task).toEqual(fullSummary.per_task);
      // Both browsers took tasks, each task once.
      expect(resets.map((r) => r.length > 0)).toEqual([true, true]);
      expect([...resets[0], ...resets[1]].sort()).toEqual(tasks.map((t) => t.id).sort());

      const failing = join(dir, 'two-lanes-failing');
      const dying = new ScriptedAgent(scripts, {
        onStep: (i: AgentInput) => {
          if (i.task.id === tasks[2]!.id) throw new AgentError('agent lost');
        },
      });
      await expect(runSuite({ tasks, out: failing, agent: dying, env, moreEnvs: [second], quiet: true })).rejects.toThrow(/agent lost/);
      const done = await readTaskDumps(failing);
      expect(done.has(tasks[2]!.id)).toBe(false);
      expect(done.size).toBeLessThan(tasks.length);
      const resumed = await runSuite({ tasks, out: failing, agent: new ScriptedAgent(scripts), env, moreEnvs: [second], quiet: true, resume: true });
      expect(resumed.summary).toEqual(both.summary);
      expect(resumed.kept + resumed.ran).toBe(tasks.length);
    } finally {
      await second.close();
    }
  });

  it('a killed browser fails its task with the reason; the next task runs in a new browser', async () => {
    const out = join(dir, 'crash');
    const three = [tasks[0]!, tasks[3]!, tasks[2]!];
    const killer = new ScriptedAgent(scripts, {
      onStep: (i: AgentInput) => {
        if (i.task.id === three[1]!.id && i.step === 0) for (const pid of childBrowsers()) process.kill(pid, 'SIGKILL');
      },
    });
    const { summary } = await runSuite({ tasks: three, out, agent: killer, env, quiet: true });
    expect(summary.per_task.map((t) => t.success)).toEqual([true, false, true]);
    expect(summary.per_task[1]!.stop_reason).toMatch(/^error: .*(closed|crash)/i);
    expect(summary.success_rate).toBeCloseTo(2 / 3);

    // The report, opened in Chromium: the failure first, every task with its steps and drawn actions.
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(join(out, 'report.html')).href);
      const sections = page.locator('section.task');
      expect(await sections.count()).toBe(3);
      expect(await sections.first().getAttribute('class')).toContain('fail');
      expect(await sections.first().locator('h2').textContent()).toContain(three[1]!.id);
      for (const [i, t] of three.entries()) {
        const sec = page.locator(`section#task-${t.id}`);
        expect(await sec.locator('figure.step').count()).toBe(summary.per_task[i]!.steps);
      }
      const search = page.locator(`section#task-${three[2]!.id}`);
      expect(await search.locator('figcaption').allTextContents()).toEqual([
        expect.stringMatching(/^1\. tap \(y 0\.142, x 0\.500\)plan: DUAL_POINT → TYPE → PRESS_ENTER → STATUS_TASK_COMPLETElatency: \d+ ms.*form\.htmlcheck after: #out does not contain/),
        expect.stringMatching(/^2\. type “hello world”/),
        expect.stringMatching(/^3\. PRESS_ENTER.*check after: #out contains "searched: hello world"/),
        expect.stringMatching(/^4\. STATUS_TASK_COMPLETE/),
      ]);
      // The tap is drawn where it happened: a circle at (x, y) of the shown screen.
      const circle = search.locator('figure.step').first().locator('svg circle').first();
      expect(Number(await circle.getAttribute('cy')) / 799).toBeCloseTo(130 / 915, 2);
      const loaded = await page.evaluate(() => [...document.images].every((im) => im.complete && im.naturalWidth > 0));
      expect(loaded).toBe(true);
    } finally {
      await browser.close();
    }
  });

  it('an action that leaves the screen as it was is avoided on that screen until the screen changes, and left out of the history; the setting is part of a resume', async () => {
    const task = tasks.find((t) => t.id === 'nav-settings')!;
    const blank: AitwAction = { action_type: 4, touch_yx: [0.95, 0.5], lift_yx: [0.95, 0.5], typed_text: '' };
    const script = new Map([[task.id, [blank, blank, scripts.get(task.id)![0]!, { ...blank, action_type: 10 as const, touch_yx: [-1, -1] as YX, lift_yx: [-1, -1] as YX }]]]);
    const given: AitwAction[][] = [];
    const read: AitwAction[][] = [];
    const agent = new ScriptedAgent(script, { onStep: (i: AgentInput) => void (given.push([...(i.avoid ?? [])]), read.push([...i.history])) });
    const out = join(dir, 'avoid');
    const r = await runSuite({ tasks: [task], out, agent, env, quiet: true });
    expect(r.summary.per_task[0]).toMatchObject({ success: true, steps: 4 });
    expect(given).toEqual([[], [blank], [blank, blank], []]);
    // The agent reads only the actions that took effect.
    expect(read).toEqual([[], [], [], [script.get(task.id)![2]]]);
    const dump = (await readTaskDumps(out)).get(task.id)!;
    expect(dump.avoidsIneffective).toBe(true);
    expect(dump.stepDumps.map((d) => d.avoided ?? [])).toEqual(given);
    const [first, , link] = dump.stepDumps;
    expect(first!.screenChange).toBeLessThanOrEqual(UNCHANGED_SHARE);
    expect(link!.screenChange).toBeGreaterThan(0.01);
    const html = await readFile(join(out, 'report.html'), 'utf8');
    expect(html.match(/the screen did not change/g)).toHaveLength(2);
    expect(html.match(/avoided \(did nothing here/g)).toHaveLength(2);

    given.length = 0;
    read.length = 0;
    const off = await runSuite({ tasks: [task], out: join(dir, 'repeat'), agent, env, quiet: true, avoidIneffective: false });
    expect(off.summary.per_task[0]!.success).toBe(true);
    expect(given).toEqual([[], [], [], []]);
    expect(read).toEqual([[], [blank], [blank, blank], script.get(task.id)!.slice(0, 3)]);
    await expect(runSuite({ tasks: [task], out, agent, env, quiet: true, resume: true, avoidIneffective: false })).rejects.toThrow(/avoiding actions that did nothing/);
  });

  it('a PRESS_BACK planned to go on with a tap, back on the screen of the last tap, takes that tap out of the history and avoids it there', async () => {
    const task = tasks.find((t) => t.id === 'nav-settings')!;
    const tapAt = (name: keyof typeof LINK_TOPS): AitwAction => ({ action_type: 4, touch_yx: centre(LINK_TOPS[name], 80), lift_yx: centre(LINK_TOPS[name], 80), typed_text: '' });
    const key = (action_type: 5 | 10): AitwAction => ({ action_type, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' });
    const [form, settings, back, done] = [tapAt('form'), tapAt('settings'), key(5), key(10)];
    const given: AitwAction[][] = [];
    const read: AitwAction[][] = [];
    const onStep = (i: AgentInput) => void (given.push([...(i.avoid ?? [])]), read.push([...i.history]));
    // Plan [PRESS_BACK, DUAL_POINT, ...]: the agent leaves the form page to try another link.
    const out = join(dir, 'back-out');
    const r = await runSuite({ tasks: [task], out, agent: new ScriptedAgent(new Map([[task.id, [form, back, settings, done]]]), { onStep }), env, quiet: true });
    expect(r.summary.per_task[0]).toMatchObject({ success: true, steps: 4 });
    expect(given).toEqual([[], [], [form], []]);
    expect(read).toEqual([[], [form], [], [settings]]);
    const steps = (await readTaskDumps(out)).get(task.id)!.stepDumps;
    expect(steps[1]!.backedOutOf).toEqual(form);
    expect(steps[1]!.returnedShare).toBeLessThanOrEqual(RETURNED_SHARE);
    expect(await readFile(join(out, 'report.html'), 'utf8')).toContain('back where tap');
    // Planned to end there ([PRESS_BACK, STATUS_TASK_COMPLETE]): "open X, then go back" keeps its history.
    given.length = 0;
    read.length = 0;
    await runSuite({ tasks: [task], out: join(dir, 'back-end'), agent: new ScriptedAgent(new Map([[task.id, [form, back, done]]]), { onStep }), env, quiet: true });
    expect(given).toEqual([[], [], []]);
    expect(read).toEqual([[], [form], [form, back]]);
  });

  it('takes the screen after an action once the page has stopped filling itself in by script', async () => {
    const [task] = parseSuite(JSON.stringify({ id: 'slow', goal: 'list', start_url: 'site/slow.html', success: { url_endswith: 'slow.html' } }), join(dir, 'suite.jsonl'));
    // A tap starts a list drawn an item every 90 ms (as Sphinx's search does), and when the list is done the page turns red.
    await writeFile(
      join(dir, 'site', 'slow.html'),
      `<body style="margin:0;height:100vh;background:#fff" ontouchend="let n=0;const add=()=>{document.body.append('item '+n+' ');if(++n<8)setTimeout(add,90);else document.body.style.background='#f00'};setTimeout(add,90)">`,
    );
    await env.reset(task!);
    const tap: AitwAction = { action_type: 4, touch_yx: [0.5, 0.5], lift_yx: [0.5, 0.5], typed_text: '' };
    expect(await pixelAt((await env.step(tap)).png, [0.9, 0.5])).toEqual([255, 0, 0]);
  });

  it('refuses requests outside file:// and 127.0.0.1, and counts them', async () => {
    const [task] = parseSuite(JSON.stringify({ id: 'net', goal: 'load', start_url: 'site/net.html', success: { selector: 'img', text_contains: '' } }), join(dir, 'suite.jsonl'));
    await writeFile(join(dir, 'site', 'net.html'), '<img src="http://192.0.2.1/x.png"><img src="https://example.com/y.png"><img src="http://127.0.0.1:9/z.png">');
    await env.reset(task!);
    const st = await env.state();
    expect(st.blockedRequests).toBe(2);
  });
});
