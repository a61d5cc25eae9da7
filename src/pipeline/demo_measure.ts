/**
 * What the demo measures on sites training never saw: step-by-step action matching of their gold
 * episodes (overall, by task kind, and the tap on a named visible link), and the same tasks run live
 * in Chromium, with offline step accuracy and online success side by side.
 */
import { taskKind, type TaskSpec } from '../data/suite.js';
import { ChromiumEnv } from '../env/chromium.js';
import { checkActionsMatch } from '../eval/action_matching.js';
import type { Prediction } from '../eval/evaluate.js';
import type { Report } from '../eval/metrics.js';
import { PredictorAgent } from '../eval/tasks/agents.js';
import type { TypedTextAgreement } from '../eval/tasks/dumps.js';
import { runSuite } from '../eval/tasks/run_tasks.js';
import type { AitwAction } from '../data/types.js';
import { Predictor } from '../infer/predict.js';

/** Share of matching steps and their count. */
export interface StepScore {
  n: number;
  /** Percent of steps whose predicted action matches the gold one (AITW rule). */
  acc: number | null;
}

export interface HeldOutSites {
  report: Report;
  /** Step 0 of the grounding episodes ("click on X" for a visible link X): the tap. */
  linkTap: StepScore;
  /** The named-link sets (several "tap X" tasks per rendered screen, read by OCR): the tap, overall and per site; null when none was built. */
  namedLinks: { all: StepScore; bySite: Record<string, StepScore> } | null;
  /** Pooled step accuracy per task kind (navigate, scroll, search, back, toggle, launch, form, ground). */
  byKind: Record<string, StepScore>;
  /** The predictions, for the closed loop's offline column. */
  predictions: Prediction[];
}

/** The kind of each task, as the web generator recorded it. */
function kinds(suite: readonly TaskSpec[]): Map<string, string> {
  return new Map(suite.map((t) => [t.id, taskKind(t) ?? 'other']));
}

const episodeOf = (p: Prediction): string => p.id.slice(0, p.id.lastIndexOf('/'));
const stepOf = (p: Prediction): number => Number(p.id.slice(p.id.lastIndexOf('/') + 1));

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const list = out.get(key(x));
    if (list) list.push(x);
    else out.set(key(x), [x]);
  }
  return out;
}

function stepScore(ps: readonly Prediction[]): StepScore {
  const hits = ps.filter((p) => p.pred !== null && checkActionsMatch(p.pred, p.gold, p.annotations)).length;
  return { n: ps.length, acc: ps.length ? (100 * hits) / ps.length : null };
}

type Evaluated = { report: Report; predictions: Prediction[] };

export function heldOutSiteReport(r: Evaluated, suite: readonly TaskSpec[], links: Evaluated | null = null): HeldOutSites {
  const kindOf = kinds(suite);
  const byKind = Object.fromEntries(groupBy(r.predictions, (p) => kindOf.get(episodeOf(p)) ?? 'other'));
  return {
    report: r.report,
    linkTap: stepScore((byKind.ground ?? []).filter((p) => stepOf(p) === 0)),
    namedLinks: links && {
      all: stepScore(links.predictions),
      bySite: Object.fromEntries([...groupBy(links.predictions, (p) => p.subset ?? '')].map(([site, ps]) => [site, stepScore(ps)])),
    },
    byKind: Object.fromEntries(Object.entries(byKind).map(([k, ps]) => [k, stepScore(ps)])),
    predictions: r.predictions,
  };
}

export interface ClosedLoopResult {
  tasks: number;
  success_rate: number;
  reached_rate: number;
  mean_steps: number;
  /** Per task kind: tasks, live success (%), and the offline step accuracy of the same tasks' gold steps (%). */
  byKind: Record<string, { tasks: number; success: number; offline_step_acc: number | null; offline_all_steps: number }>;
  /** Offline step accuracy over every gold step of the tasks run. */
  offline_step_acc: number | null;
  /** The first text typed against the gold's, over the tasks whose gold types. */
  typed_text: TypedTextAgreement;
  report: string;
}

/**
 * Tasks run at a time, each in its own browser: alone, a task keeps the two cores about 40 % busy
 * (it waits for pages to load and settle), so a second one runs in the gaps (README, Performance).
 */
const LIVE_LANES = 2;

/**
 * Runs the tasks live with the checkpoint (resumable under `out`), then sets each kind's success beside
 * its offline step accuracy; `gold` (task id → gold actions) gives the typed text its reference.
 */
export async function closedLoop(checkpoint: string, tasks: readonly TaskSpec[], gold: ReadonlyMap<string, readonly AitwAction[]>, out: string, offline: HeldOutSites | null, quiet?: boolean): Promise<ClosedLoopResult> {
  const agent = new PredictorAgent(await Predictor.load(checkpoint));
  const envs = Array.from({ length: LIVE_LANES }, () => new ChromiumEnv());
  let r;
  try {
    r = await runSuite({ tasks, out, agent, env: envs[0]!, moreEnvs: envs.slice(1), resume: true, gold, quiet });
  } finally {
    await Promise.all(envs.map((e) => e.close()));
    await agent.close();
  }
  const kindOf = kinds(tasks);
  const preds = groupBy((offline?.predictions ?? []).filter((p) => kindOf.has(episodeOf(p))), episodeOf);
  const byKind: ClosedLoopResult['byKind'] = {};
  for (const t of r.summary.per_task) {
    const k = kindOf.get(t.id) ?? 'other';
    const e = (byKind[k] ??= { tasks: 0, success: 0, offline_step_acc: null, offline_all_steps: 0 });
    const steps = preds.get(t.id) ?? [];
    e.tasks++;
    e.success += t.success ? 1 : 0;
    e.offline_all_steps += steps.length > 0 && stepScore(steps).acc === 100 ? 1 : 0;
  }
  for (const [k, e] of Object.entries(byKind)) {
    const steps = [...preds].filter(([id]) => kindOf.get(id) === k).flatMap(([, ps]) => ps);
    Object.assign(e, { success: (100 * e.success) / e.tasks, offline_step_acc: stepScore(steps).acc, offline_all_steps: (100 * e.offline_all_steps) / e.tasks });
  }
  const { tasks: n, success_rate, reached_rate, mean_steps } = r.summary;
  return { tasks: n, success_rate, reached_rate, mean_steps, byKind, offline_step_acc: stepScore([...preds.values()].flat()).acc, typed_text: r.summary.typed_text!, report: r.report };
}
