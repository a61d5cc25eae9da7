/**
 * The agent of a closed-loop run: given the goal, the current screenshot and the actions taken so
 * far, the next action. Three implementations: an in-process Predictor (a checkpoint), a client of
 * a running `autoui serve`, and a scripted policy that replays given actions (tests, and checking
 * that a suite is solvable). An agent that cannot answer (server down, bad response) throws
 * AgentError, which stops the whole run: no task can be measured without it.
 */
import { readFile } from 'node:fs/promises';
import { ACTION_TYPE_NAMES, ActionType, type ActionTypeName, type AitwAction, type TypedTextChoice, type TypeProbs } from '../../data/types.js';
import type { TaskSpec } from '../../data/suite.js';
import { InputError } from '../../util/errors.js';
import { parseJsonLines } from '../../util/json.js';
import { parseAction, parseActionType } from '../../data/action_json.js';
import { pointlessAction } from '../../data/normalize.js';
import type { Predictor } from '../../infer/predict.js';
import { MAX_HISTORY_STEPS } from '../../infer/request.js';
import type { RawImage } from '../../screen/types.js';

export interface AgentInput {
  task: TaskSpec;
  /** Step index, 0-based. */
  step: number;
  /** The current screenshot as PNG bytes. */
  screenshot: Uint8Array;
  /**
   * The same screenshot's pixels, when the caller decodes it anyway (a live run compares screens):
   * an in-process agent reads them instead of decoding the PNG again (~40 ms for 1080×2400).
   */
  pixels?: () => Promise<RawImage>;
  /** Actions taken so far in this task, oldest first. */
  history: readonly AitwAction[];
  /** Actions seen to do nothing on this screen, which the answer should not repeat (agents that can, do). */
  avoid?: readonly AitwAction[];
}

export interface AgentDecision {
  /** null when the agent produced no valid action (then `invalid` says why). */
  action: AitwAction | null;
  invalid?: string;
  /** The chain-of-action plan, when the agent has one. */
  plan: ActionTypeName[] | null;
  /** Wall time of the decision, ms. */
  latency_ms: number;
  /** The model's probability of each action type as its next action, when the agent has one. */
  typeProbs?: TypeProbs;
  /** A TYPE action's texts the model weighed, best first (the first is typed), when the agent has them. */
  textChoices?: TypedTextChoice[];
}

export interface Agent {
  /** e.g. 'checkpoint:/path', 'server:http://…', 'script'. */
  readonly id: string;
  next(input: AgentInput): Promise<AgentDecision>;
  close?(): Promise<void>;
}

/** The agent itself failed: the run stops (distinct from an environment fault, which fails one task). */
export class AgentError extends Error {
  override name = 'AgentError';
}

/** History as requests accept it: the model reads the last few, requests are capped at MAX_HISTORY_STEPS. */
function requestHistory(history: readonly AitwAction[]): AitwAction[] {
  return history.slice(-MAX_HISTORY_STEPS);
}

/** A checkpoint loaded in this process. */
export class PredictorAgent implements Agent {
  readonly id: string;

  constructor(private readonly predictor: Predictor) {
    this.id = predictor.members.length > 1 ? `ensemble:${predictor.members.map((m) => m.dir).join(',')}` : `checkpoint:${predictor.checkpoint.dir}`;
  }

  async next(input: AgentInput): Promise<AgentDecision> {
    const t0 = performance.now();
    const request = { goal: input.task.goal, history: requestHistory(input.history), avoid: input.avoid };
    const { pixels } = input;
    const answer = pixels
      ? pixels().then((image) => this.predictor.predictRaw({ image, ...request }))
      : this.predictor.predict({ image: input.screenshot, ...request });
    const { result } = await answer.catch((err: Error) => {
      throw new AgentError(`the predictor failed at task ${input.task.id} step ${input.step}: ${err.message}`);
    });
    const latency_ms = performance.now() - t0;
    if (!result.ok) return { action: null, invalid: result.error, plan: null, latency_ms };
    const choices = result.typed_text_choices;
    return { action: result.aitw, plan: result.plan, latency_ms, typeProbs: result.type_probs, ...(choices.length > 0 ? { textChoices: choices } : {}) };
  }

  async close(): Promise<void> {
    this.predictor.dispose();
  }
}

/** The JSON a server answers POST /v1/predict with (the fields this client reads). */
interface ServerAnswer {
  action?: { action_type_id?: unknown; touch_point?: unknown; lift_point?: unknown; typed_text?: unknown } | null;
  plan?: unknown;
  type_probs?: unknown;
  typed_text_choices?: unknown;
  invalid?: unknown;
  error?: { code?: unknown; message?: unknown };
}

/** Reads a /v1/predict answer into a decision; throws AgentError naming what is wrong. */
export function decisionFromAnswer(body: ServerAnswer, latency_ms: number): AgentDecision {
  if (body.action === null || body.action === undefined) {
    if (typeof body.invalid === 'string') return { action: null, invalid: body.invalid, plan: null, latency_ms };
    throw new AgentError(`the server's answer has no action: ${JSON.stringify(body).slice(0, 200)}`);
  }
  const a = body.action;
  let action: AitwAction;
  let plan: ActionTypeName[] | null;
  try {
    action = parseAction({ action_type: a.action_type_id, touch_point: a.touch_point, lift_point: a.lift_point, typed_text: a.typed_text }, 'action');
    plan = Array.isArray(body.plan) ? body.plan.map((t, i) => ACTION_TYPE_NAMES[parseActionType(t, `plan[${i}]`)]) : null;
  } catch (err) {
    throw new AgentError(`the server's answer is not a valid action (${(err as Error).message})`);
  }
  return { action, plan, latency_ms, ...typeProbsOf(body.type_probs), ...textChoicesOf(body.typed_text_choices) };
}

/** An answer's typed_text_choices that are {text, score} objects, when there are any (older servers send none). */
function textChoicesOf(v: unknown): Pick<AgentDecision, 'textChoices'> {
  const choices = Array.isArray(v) ? v.filter((c): c is TypedTextChoice => typeof c?.text === 'string' && typeof c?.score === 'number') : [];
  return choices.length > 0 ? { textChoices: choices.map(({ text, score }) => ({ text, score })) } : {};
}

/** An answer's type_probs when it is an object of action-type names to numbers (older servers send none). */
function typeProbsOf(v: unknown): Pick<AgentDecision, 'typeProbs'> {
  if (typeof v !== 'object' || v === null) return {};
  const entries = Object.entries(v).filter((e): e is [ActionTypeName, number] => Object.hasOwn(ActionType, e[0]) && typeof e[1] === 'number');
  return { typeProbs: Object.fromEntries(entries) };
}

export interface ServerAgentOptions {
  /** Bearer token, when the server was started with --token. */
  token?: string;
  /** Per-request limit, ms (default 120 000). */
  timeoutMs?: number;
}

/** A client of `autoui serve` (POST /v1/predict with the screenshot as base64 JSON). */
export class ServerAgent implements Agent {
  readonly id: string;
  private readonly endpoint: string;

  constructor(
    base: string,
    private readonly opts: ServerAgentOptions = {},
  ) {
    this.endpoint = new URL('/v1/predict', base).href;
    this.id = `server:${new URL(base).origin}`;
  }

  async next(input: AgentInput): Promise<AgentDecision> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.opts.token) headers.Authorization = `Bearer ${this.opts.token}`;
    const avoid = input.avoid?.length ? { avoid: input.avoid } : {};
    const body = JSON.stringify({ goal: input.task.goal, image: Buffer.from(input.screenshot).toString('base64'), history: requestHistory(input.history), ...avoid });
    const t0 = performance.now();
    let res: Response;
    try {
      res = await fetch(this.endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.opts.timeoutMs ?? 120_000) });
    } catch (err) {
      throw new AgentError(`cannot reach ${this.endpoint} (${(err as Error).message})`);
    }
    const answer = (await res.json().catch(() => ({}))) as ServerAnswer;
    const latency_ms = performance.now() - t0;
    if (!res.ok) throw new AgentError(`${this.endpoint} answered HTTP ${res.status} at task ${input.task.id} step ${input.step}: ${String(answer.error?.message ?? res.statusText)}`);
    return decisionFromAnswer(answer, latency_ms);
  }
}

export interface ScriptedAgentOptions {
  /** Called before each decision (tests use it to break the environment mid-run). */
  onStep?: (input: AgentInput) => void | Promise<void>;
}

/**
 * Replays a fixed list of actions per task id. The plan is the types of the next four scripted
 * actions (the chain-of-action form); past the end of a script the agent gives up with
 * STATUS_TASK_IMPOSSIBLE, and a task without a script is an AgentError.
 */
export class ScriptedAgent implements Agent {
  readonly id = 'script';

  constructor(
    private readonly scripts: ReadonlyMap<string, readonly AitwAction[]>,
    private readonly opts: ScriptedAgentOptions = {},
  ) {}

  async next(input: AgentInput): Promise<AgentDecision> {
    await this.opts.onStep?.(input);
    const script = this.scripts.get(input.task.id);
    if (!script) throw new AgentError(`the script has no actions for task ${input.task.id}`);
    const rest = script.slice(input.step);
    const action = rest[0] ?? pointlessAction(ActionType.STATUS_TASK_IMPOSSIBLE);
    return { action, plan: rest.slice(0, 4).map((a) => ACTION_TYPE_NAMES[a.action_type]), latency_ms: 0 };
  }
}

/**
 * A script file: JSON Lines `{"id": TASK_ID, "actions": [ACTION, ...]}`, actions in the history
 * form requests take ({"action_type": id|name, "touch_yx"|"touch_point", "lift_yx"|"lift_point",
 * "typed_text"}). Errors name `file:line`.
 */
export function parseScript(lines: ReadonlyArray<{ value: unknown; where: string }>): Map<string, AitwAction[]> {
  const out = new Map<string, AitwAction[]>();
  for (const { value, where } of lines) {
    const v = value as { id?: unknown; actions?: unknown };
    if (typeof v !== 'object' || v === null || typeof v.id !== 'string' || !Array.isArray(v.actions)) {
      throw new InputError('expected {"id": "<task id>", "actions": [...]}', where);
    }
    if (out.has(v.id)) throw new InputError(`duplicate task id '${v.id}'`, where);
    out.set(v.id, v.actions.map((a, i) => parseAction(a, `${where} actions[${i}]`)));
  }
  return out;
}

/** parseScript over a file; `what` names it in the error when it cannot be read ("the script", "the gold actions"). */
export async function readScriptFile(file: string, what: string): Promise<Map<string, AitwAction[]>> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new InputError(`cannot read ${what} (${err.code ?? err.message})`, file);
  });
  return parseScript(parseJsonLines(text, file));
}
