/**
 * The closed loop (`autoui run`): for each task of a suite, screenshot → agent → action → execute,
 * until the agent declares the task complete or impossible, gives no valid action, or runs out of
 * steps. A task succeeds when its check holds at the moment the agent declares it complete; it is
 * "reached" when the check held after any step, declared or not.
 *
 * Per task the run writes its screens, its AITW trajectory and then, last and atomically, its
 * result dump (dumps.ts), so a run that dies resumes at the first task without a dump. An
 * environment fault fails that task with its reason (the next reset() restarts the browser); an
 * agent failure stops the run.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { TaskSpec } from '../../data/suite.js';
import { ActionType, type ActionTypeName, type AitwAction, type Splits } from '../../data/types.js';
import type { CheckResult, Environment, Observation } from '../../env/environment.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { InputError } from '../../util/errors.js';
import { progress } from '../../util/progress.js';
import { AgentError, type Agent } from './agents.js';
import { readTaskDumps, summarize, TASK_DUMP_FORMAT, taskDumpPath, taskFileName, writeTaskDump, type RunSummary, type ScreenRef, type StepDump, type StopReason, type TaskDump } from './dumps.js';
import { writeReport } from './report.js';
import { writeTrajectory, type ExecutedStep } from './trajectory.js';
import { changedShare, RETURNED_SHARE, UNCHANGED_SHARE } from './screen_change.js';
import { isTapAction } from '../../data/geometry.js';
import { MAX_HISTORY_STEPS } from '../../infer/request.js';

export const DEFAULT_MAX_STEPS = 12;
/** Width of the screens kept for the report (the trajectories keep full size). */
export const REPORT_SCREEN_WIDTH = 360;

export interface RunOptions {
  tasks: readonly TaskSpec[];
  out: string;
  agent: Agent;
  env: Environment;
  /**
   * More environments of the same kind beside `env`: tasks run on whichever is free, so one task's
   * page loads and waits overlap another's decisions (a Chromium each; one device runs one task at a
   * time). Results are the same per task; the steps' latencies include the other tasks' share of the cores.
   */
  moreEnvs?: readonly Environment[];
  /** Steps per task unless the task sets max_steps (default 12). */
  maxSteps?: number;
  /** Keep the results already in `out` and run only the tasks without one. */
  resume?: boolean;
  /**
   * Keep actions that left the screen as it was out of the agent's next answers on that screen
   * (default true): a model trained on gold episodes repeats a no-op it has misread forever. A tap
   * the agent backed out of (a PRESS_BACK planned to go on with a tap, back on the tap's screen) is
   * kept out the same way, and leaves the history with everything after it.
   */
  avoidIneffective?: boolean;
  /** Gold actions by task id: the summary then says how the agent's typed text agrees with them. */
  gold?: ReadonlyMap<string, readonly AitwAction[]>;
  quiet?: boolean;
}

export interface RunResult {
  summary: RunSummary;
  /** Tasks run now, and tasks whose earlier results were kept. */
  ran: number;
  kept: number;
  report: string;
}

/** Mutable facts of the task being run. */
interface TaskState {
  task: TaskSpec;
  name: string;
  maxSteps: number;
  steps: StepDump[];
  executed: ExecutedStep[];
  /** The actions that took effect (all of them when ineffective ones are not avoided): what the agent reads. */
  history: AitwAction[];
  /** Actions that did nothing on the current screen, and taps backed out of to it (cleared when the screen changes). */
  avoid: AitwAction[];
  /** The taps that took effect, last on top, each with the screen it was taken on and what was avoided there. */
  taps: TapTaken[];
  success: boolean;
  reached: boolean;
  check: CheckResult | null;
  stop: StopReason;
  finalScreen: ScreenRef | null;
  blocked: number;
}

/** A tap that took effect: the tap, the screen it was taken on, the history's length before it, and what that screen avoided. */
interface TapTaken {
  tap: AitwAction;
  screen: Observation;
  history: number;
  avoid: readonly AitwAction[];
}

/** JSON with sorted keys, so equal values compare equal whatever their key order. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x));
}

/** Why an earlier result cannot stand for this run's task, or null when it can. */
function staleReason(d: TaskDump, task: TaskSpec, o: RunOptions): string | null {
  if (canonical(d.task) !== canonical(task)) return 'the task changed in the suite';
  if (d.agent !== o.agent.id) return `it was run by ${d.agent}, not ${o.agent.id}`;
  if (d.environment !== o.env.kind) return `it ran in ${d.environment}, not ${o.env.kind}`;
  if (d.maxSteps !== (task.max_steps ?? o.maxSteps ?? DEFAULT_MAX_STEPS)) return `it ran with at most ${d.maxSteps} steps`;
  if ((d.avoidsIneffective ?? false) !== avoidsIneffective(o)) return `it ran ${d.avoidsIneffective ? 'avoiding' : 'repeating'} actions that did nothing`;
  return null;
}

const avoidsIneffective = (o: RunOptions): boolean => o.avoidIneffective ?? true;

/** The results to keep: none for a fresh run (which refuses a folder holding results), the matching ones on --resume. */
async function keptResults(o: RunOptions): Promise<Map<string, TaskDump>> {
  const earlier = await readTaskDumps(o.out);
  if (!o.resume) {
    if (earlier.size) throw new InputError(`holds the results of an earlier run (${earlier.size} tasks); pass --resume to continue it or choose another --out`, o.out);
    return earlier;
  }
  const kept = new Map<string, TaskDump>();
  for (const task of o.tasks) {
    const d = earlier.get(task.id);
    if (!d) continue;
    const why = staleReason(d, task, o);
    if (why) throw new InputError(`cannot resume task ${task.id}: ${why}; remove that file to rerun it, or choose another --out`, taskDumpPath(o.out, task.id));
    kept.set(task.id, d);
  }
  return kept;
}

export async function runSuite(o: RunOptions): Promise<RunResult> {
  const kept = await keptResults(o);
  const bar = progress({ label: 'run', total: o.tasks.length, unit: 'tasks', quiet: o.quiet });
  bar.tick(kept.size);
  const results = new Map(kept);
  let ran = 0;
  let succeeded = [...kept.values()].filter((d) => d.success).length;
  const todo = o.tasks.filter((t) => !results.has(t.id));
  // Lanes take the next task in suite order; a failing lane stops the others taking more, and the
  // run waits for every lane before it fails, so no task is left running on a closed environment.
  let failed = false;
  const lane = async (env: Environment) => {
    try {
      for (let task = todo.shift(); task && !failed; task = todo.shift()) {
        const dump = await runTask(task, { ...o, env });
        await writeTaskDump(o.out, dump);
        results.set(task.id, dump);
        ran++;
        if (dump.success) succeeded++;
        bar.tick(1, { success: `${succeeded}/${results.size}` });
      }
    } catch (err) {
      failed = true;
      throw err;
    }
  };
  try {
    const lanes = await Promise.allSettled([o.env, ...(o.moreEnvs ?? [])].map(lane));
    const error = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (error) throw error.reason;
  } finally {
    bar.stop();
  }
  const dumps = o.tasks.map((t) => results.get(t.id)!);
  const summary = summarize(dumps, o.gold);
  await writeFileAtomic(join(o.out, 'summary.json'), JSON.stringify(summary, null, 1) + '\n');
  await writeSplits(o.out, dumps);
  const report = await writeReport(o.out, dumps, summary);
  return { summary, ran, kept: kept.size, report };
}

/**
 * trajectories/split.json in the AITW split form: successful runs are the training episodes (what
 * behaviour cloning on one's own successes needs); failed ones are left out of every split.
 */
async function writeSplits(out: string, dumps: readonly TaskDump[]): Promise<void> {
  const splits: Splits = { train: dumps.filter((d) => d.success && d.trajectory).map((d) => d.task.id), val: [], test: [] };
  await writeFileAtomic(join(out, 'trajectories', 'split.json'), JSON.stringify(splits) + '\n');
}

async function runTask(task: TaskSpec, o: RunOptions): Promise<TaskDump> {
  const t0 = performance.now();
  const name = taskFileName(task.id);
  const maxSteps = task.max_steps ?? o.maxSteps ?? DEFAULT_MAX_STEPS;
  const s: TaskState = { task, name, maxSteps, steps: [], executed: [], history: [], avoid: [], taps: [], success: false, reached: false, check: null, stop: 'max_steps', finalScreen: null, blocked: 0 };
  await rm(join(o.out, 'screens', name), { recursive: true, force: true });
  try {
    let obs: Observation | null = await o.env.reset(task);
    for (let i = 0; i < maxSteps && obs; i++) obs = await takeStep(s, o, obs, i);
    if (obs) s.finalScreen = await saveScreen(o.out, name, 'final', obs);
  } catch (err) {
    // The agent failing, or a task this environment cannot run, stops the run; anything else is this task's fault.
    if (err instanceof AgentError || err instanceof InputError) throw err;
    s.stop = `error: ${(err as Error).message}`;
  }
  const trajectory = join('trajectories', `${name}.tfrecord.gz`);
  const written = await writeTrajectory(join(o.out, trajectory), s.executed, { episodeId: task.id, goal: task.goal, deviceType: o.env.kind });
  return {
    format: TASK_DUMP_FORMAT,
    task,
    environment: o.env.kind,
    agent: o.agent.id,
    maxSteps,
    avoidsIneffective: avoidsIneffective(o),
    success: s.success,
    reached: s.reached,
    steps: s.steps.length,
    stop_reason: s.stop,
    check: s.check,
    trajectory: written ? trajectory : null,
    finalScreen: s.finalScreen,
    blockedRequests: s.blocked,
    seconds: (performance.now() - t0) / 1000,
    stepDumps: s.steps,
  };
}

/** One decision and its execution; the next observation, or null when the task ended at this step. */
async function takeStep(s: TaskState, o: RunOptions, obs: Observation, i: number): Promise<Observation | null> {
  const state = await o.env.state();
  s.blocked = state.blockedRequests;
  const d = await o.agent.next({ task: s.task, step: i, screenshot: obs.png, pixels: () => obs.image(), history: s.history, avoid: s.avoid });
  const step: StepDump = { index: i, screen: await saveScreen(o.out, s.name, i, obs), url: state.url, action: d.action, plan: d.plan, latency_ms: d.latency_ms, checkAfter: null };
  if (d.invalid !== undefined) step.invalid = d.invalid;
  if (d.typeProbs) step.typeProbs = d.typeProbs;
  if (d.textChoices) step.textChoices = d.textChoices;
  if (s.avoid.length > 0) step.avoided = [...s.avoid];
  s.steps.push(step);
  const a = d.action;
  if (!a) {
    s.stop = 'invalid_action';
    return null;
  }
  s.executed.push({ observation: obs, action: a, url: state.url });
  if (a.action_type === ActionType.STATUS_TASK_COMPLETE) {
    s.check = await o.env.check(s.task.success);
    s.success = s.check.ok;
    s.reached ||= s.check.ok;
    s.stop = 'complete';
    return null;
  }
  if (a.action_type === ActionType.STATUS_TASK_IMPOSSIBLE) {
    s.stop = 'impossible';
    return null;
  }
  const next = await o.env.step(a);
  // An action that did nothing is left out of the history the agent reads as well as avoided: the
  // history of a gold episode, all the model was trained on, holds only actions that took effect.
  if (avoidsIneffective(o)) step.screenChange = changedShare(await obs.image(), await next.image());
  if (step.screenChange !== undefined && step.screenChange <= UNCHANGED_SHARE) s.avoid = [...s.avoid, a].slice(-MAX_HISTORY_STEPS);
  else if (!(avoidsIneffective(o) && backsOut(a, d.plan) && (await backedOut(s, step, next)))) {
    if (isTapAction(a)) s.taps.push({ tap: a, screen: obs, history: s.history.length, avoid: s.avoid });
    s.history.push(a);
    s.avoid = [];
  }
  step.checkAfter = s.check = await o.env.check(s.task.success);
  s.reached ||= s.check.ok;
  s.blocked = (await o.env.state()).blockedRequests;
  return next;
}

/** A PRESS_BACK whose plan goes on with a tap: the agent leaves a page to try another target, not to end the task there. */
const backsOut = (a: AitwAction, plan: readonly ActionTypeName[] | null): boolean => a.action_type === ActionType.PRESS_BACK && plan?.[1] === 'DUAL_POINT';

/**
 * Whether the PRESS_BACK of `step` came back to the screen of the last tap that opened a page; if so
 * the tap, and everything after it, leave the history (together they did nothing) and the tap joins
 * what was avoided on that screen. Why: the agent then answers what it answered before the tap, with
 * its next best target instead of the same wrong link: it explores the page's links one by one.
 */
async function backedOut(s: TaskState, step: StepDump, after: Observation): Promise<boolean> {
  const last = s.taps.at(-1);
  if (!last) return false;
  step.returnedShare = changedShare(await last.screen.image(), await after.image());
  if (step.returnedShare > RETURNED_SHARE) return false;
  s.taps.pop();
  s.history.length = last.history;
  s.avoid = [...last.avoid, last.tap].slice(-MAX_HISTORY_STEPS);
  step.backedOutOf = last.tap;
  return true;
}

/** The screen scaled for the report, as OUT/screens/<task>/step_NNN.png (or final.png). */
async function saveScreen(out: string, name: string, index: number | 'final', obs: Observation): Promise<ScreenRef> {
  const file = join('screens', name, index === 'final' ? 'final.png' : `step_${String(index).padStart(3, '0')}.png`);
  const shownWidth = Math.min(REPORT_SCREEN_WIDTH, obs.width);
  const shownHeight = Math.max(1, Math.round((obs.height / obs.width) * shownWidth));
  await mkdir(join(out, 'screens', name), { recursive: true });
  const png = await sharp(obs.png).resize(shownWidth, shownHeight, { fit: 'fill' }).png().toBuffer();
  await writeFileAtomic(join(out, file), png);
  return { file, width: obs.width, height: obs.height, shownWidth, shownHeight };
}
