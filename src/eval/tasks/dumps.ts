/**
 * The typed record of a closed-loop run (data, kept apart from its HTML view in report.ts):
 * OUT/results/<task>.json per finished task, written atomically once the task's trajectory and
 * screens are on disk, so a crashed run resumes at the first task without one. The summary is a
 * pure function of these dumps.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { taskKind, type TaskSpec } from '../../data/suite.js';
import { ActionType, type ActionTypeName, type AitwAction, type TypedTextChoice, type TypeProbs } from '../../data/types.js';
import type { CheckResult } from '../../env/environment.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { InputError } from '../../util/errors.js';

export const TASK_DUMP_FORMAT = 'autoui-run-task/1';

/**
 * Why a task ended: the agent declared it done or impossible, ran out of steps, gave no valid
 * action, or the environment failed (`error: <what happened>`).
 */
export type StopReason = 'complete' | 'impossible' | 'max_steps' | 'invalid_action' | `error: ${string}`;

/** A saved screenshot: its file (relative to the run's folder), the screen's size, and the saved (scaled) size. */
export interface ScreenRef {
  file: string;
  width: number;
  height: number;
  shownWidth: number;
  shownHeight: number;
}

export interface StepDump {
  index: number;
  /** The screen the agent saw. */
  screen: ScreenRef;
  url: string;
  action: AitwAction | null;
  /** Why there is no action. */
  invalid?: string;
  plan: ActionTypeName[] | null;
  latency_ms: number;
  /** The model's probability of each action type as its next action (agents that have one). */
  typeProbs?: TypeProbs;
  /** A TYPE action's texts the model weighed, best first (the first is typed; agents that have them). */
  textChoices?: TypedTextChoice[];
  /** The success check after this action ran (null for status actions and invalid ones). */
  checkAfter: CheckResult | null;
  /** Actions seen to do nothing on this screen, or taps backed out of here, which the agent was asked not to repeat (run_tasks.ts). */
  avoided?: AitwAction[];
  /** Share of the screen's pixels this action changed (screen_change.ts), when the run measures it. */
  screenChange?: number;
  /** For a PRESS_BACK: share of pixels between the screen after it and the screen of the last tap that opened a page. */
  returnedShare?: number;
  /** The tap this PRESS_BACK backed out of: the screen came back to where it was tapped (run_tasks.ts). */
  backedOutOf?: AitwAction;
}

export interface TaskDump {
  format: typeof TASK_DUMP_FORMAT;
  task: TaskSpec;
  environment: string;
  agent: string;
  /** The step limit this task ran under. */
  maxSteps: number;
  /** Whether actions seen to do nothing were kept out of the agent's next answers (absent in older results: no). */
  avoidsIneffective?: boolean;
  success: boolean;
  reached: boolean;
  /** Agent decisions, the final status action included. */
  steps: number;
  stop_reason: StopReason;
  /** The check when the agent declared the task complete, else the last check made. */
  check: CheckResult | null;
  /** AITW TFRecord of the executed steps, relative to the run's folder (null when no action was taken). */
  trajectory: string | null;
  /** The screen after the last action, when no step shows it (the run hit max steps). */
  finalScreen: ScreenRef | null;
  blockedRequests: number;
  seconds: number;
  stepDumps: StepDump[];
}

export interface TaskOutcome {
  id: string;
  success: boolean;
  reached: boolean;
  steps: number;
  stop_reason: string;
}

/** Task counts of one kind of task. */
export interface KindOutcome {
  tasks: number;
  success: number;
  reached: number;
}

/** How the agent's typing agrees with gold trajectories', over the tasks whose gold types. */
export interface TypedTextAgreement {
  /** Tasks whose gold types something. */
  tasks: number;
  /** Of those, the tasks where the agent typed. */
  typed: number;
  /** The agent's first typed text is the gold's first, character for character. */
  equal: number;
  /** The same, case aside. */
  equal_ignoring_case: number;
}

/** What `autoui run --json` prints. */
export interface RunSummary {
  tasks: number;
  success_rate: number;
  reached_rate: number;
  mean_steps: number;
  /** Counts by the tasks' `meta.kind` (the web generator's navigate, search, …; "other" for a task without one), in order of first appearance; absent when no task has a kind. */
  by_kind?: Record<string, KindOutcome>;
  /** Against the gold trajectories given (`run --gold`); absent without them. */
  typed_text?: TypedTextAgreement;
  per_task: TaskOutcome[];
}

const firstTyped = (actions: ReadonlyArray<AitwAction | null>): string | undefined => actions.find((a) => a?.action_type === ActionType.TYPE)?.typed_text;

/**
 * The first text the agent typed in each task against the first its gold typed (a search's query, a
 * form's first field). Only the first: a live run's steps need not line up with the gold's, and an
 * agent that retypes would otherwise be scored on whichever attempt happens to align.
 */
export function typedTextAgreement(dumps: readonly TaskDump[], gold: ReadonlyMap<string, readonly AitwAction[]>): TypedTextAgreement {
  const out: TypedTextAgreement = { tasks: 0, typed: 0, equal: 0, equal_ignoring_case: 0 };
  for (const d of dumps) {
    const want = firstTyped(gold.get(d.task.id) ?? []);
    if (want === undefined) continue;
    out.tasks++;
    const got = firstTyped(d.stepDumps.map((s) => s.action));
    if (got === undefined) continue;
    out.typed++;
    if (got === want) out.equal++;
    if (got.toLowerCase() === want.toLowerCase()) out.equal_ignoring_case++;
  }
  return out;
}

/** The run's summary; with `gold` (task id → gold actions), how its typing agrees with the gold's. */
export function summarize(dumps: readonly TaskDump[], gold?: ReadonlyMap<string, readonly AitwAction[]>): RunSummary {
  const n = dumps.length;
  const share = (f: (d: TaskDump) => boolean): number => (n ? dumps.filter(f).length / n : 0);
  const byKind: Record<string, KindOutcome> = {};
  for (const d of dumps) {
    const k = (byKind[taskKind(d.task) ?? 'other'] ??= { tasks: 0, success: 0, reached: 0 });
    k.tasks++;
    k.success += d.success ? 1 : 0;
    k.reached += d.reached ? 1 : 0;
  }
  return {
    tasks: n,
    success_rate: share((d) => d.success),
    reached_rate: share((d) => d.reached),
    mean_steps: n ? dumps.reduce((a, d) => a + d.steps, 0) / n : 0,
    ...(dumps.some((d) => taskKind(d.task) !== undefined) ? { by_kind: byKind } : {}),
    ...(gold ? { typed_text: typedTextAgreement(dumps, gold) } : {}),
    per_task: dumps.map((d) => ({ id: d.task.id, success: d.success, reached: d.reached, steps: d.steps, stop_reason: d.stop_reason })),
  };
}

/** "navigate 3 of 18, search 22 of 58" — a summary's kinds in one line; '' without kinds. */
export function kindLine(s: RunSummary): string {
  return Object.entries(s.by_kind ?? {}).map(([k, o]) => `${k} ${o.success} of ${o.tasks}`).join(', ');
}

/** "the first text typed is the gold's in 33 of 71 tasks whose gold types (36 case aside; 5 typed nothing)" */
export function typedLine(t: TypedTextAgreement): string {
  return `the first text typed is the gold's in ${t.equal} of ${t.tasks} tasks whose gold types (${t.equal_ignoring_case} case aside; ${t.tasks - t.typed} typed nothing)`;
}

/**
 * A file name for a task id: the id itself when it is a safe name, else a readable form plus a
 * hash of the id, so two ids never share files.
 */
export function taskFileName(id: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(id)) return id;
  const readable = id.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._-]+/, '').slice(0, 80);
  return `${readable || 'task'}-${createHash('sha256').update(id).digest('hex').slice(0, 10)}`;
}

export const RESULTS_DIR = 'results';

export function taskDumpPath(out: string, id: string): string {
  return join(out, RESULTS_DIR, `${taskFileName(id)}.json`);
}

export async function writeTaskDump(out: string, dump: TaskDump): Promise<void> {
  await writeFileAtomic(taskDumpPath(out, dump.task.id), JSON.stringify(dump, null, 1) + '\n');
}

/** Every task dump in OUT/results, by task id. */
export async function readTaskDumps(out: string): Promise<Map<string, TaskDump>> {
  const dir = join(out, RESULTS_DIR);
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const dumps = new Map<string, TaskDump>();
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const file = join(dir, name);
    let d: TaskDump;
    try {
      d = JSON.parse(await readFile(file, 'utf8')) as TaskDump;
    } catch (err) {
      throw new InputError(`not a readable task result (${(err as Error).message}); remove it to rerun that task`, file);
    }
    if (d?.format !== TASK_DUMP_FORMAT || typeof d.task?.id !== 'string') throw new InputError(`not a task result of format ${TASK_DUMP_FORMAT}`, file);
    dumps.set(d.task.id, d);
  }
  return dumps;
}
