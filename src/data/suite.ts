/**
 * Task suites for closed-loop runs (`autoui run`): JSON Lines, one task per line,
 *   {"id", "goal", "start_url", "home_url"?, "viewport"?: {"width", "height", "dpr"}, "max_steps"?, "success": {...}}
 * with `success` one of
 *   {"url": U} · {"url_endswith": S} · {"selector": CSS, "text_contains": T}
 *   {"selector": CSS, "checked": bool} · {"selector": CSS, "value": V}.
 * URL checks compare URLs without their `#fragment`. Relative `start_url`, `home_url` and `url`
 * resolve against the suite file's folder as file:// URLs, so a suite and its pages move together.
 * A task succeeds when its check holds at the moment the agent declares the task complete.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { InputError } from '../util/errors.js';
import { parseJsonLines } from '../util/json.js';

const Viewport = z.strictObject({
  width: z.number().int().min(100).max(4000),
  height: z.number().int().min(100).max(8000),
  dpr: z.number().min(0.5).max(5),
});

const Success = z.union([
  z.strictObject({ url: z.string().min(1) }),
  z.strictObject({ url_endswith: z.string().min(1) }),
  z.strictObject({ selector: z.string().min(1), text_contains: z.string() }),
  z.strictObject({ selector: z.string().min(1), checked: z.boolean() }),
  z.strictObject({ selector: z.string().min(1), value: z.string() }),
]);

const Task = z.strictObject({
  id: z.string().min(1),
  goal: z.string().min(1),
  start_url: z.string().min(1),
  home_url: z.string().min(1).optional(),
  viewport: Viewport.optional(),
  max_steps: z.number().int().min(1).max(1000).optional(),
  success: Success,
  /** Free-form facts a generator records (kind, site, gold step count); runs ignore them. */
  meta: z.record(z.string(), z.unknown()).optional(),
});

export type Viewport = z.infer<typeof Viewport>;
export type SuccessCheck = z.infer<typeof Success>;
export type TaskSpec = z.infer<typeof Task>;

/** The phone viewport tasks run at unless they say otherwise: 412×915 CSS px at DPR 2.625 = a 1080×2400 screen. */
export const DEFAULT_VIEWPORT: Readonly<Viewport> = Object.freeze({ width: 412, height: 915, dpr: 2.625 });

/** `url` as an absolute URL: kept when it has a scheme, else a path relative to `baseDir` as file://. */
export function resolveTaskUrl(url: string, baseDir: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return url;
  const hash = url.indexOf('#');
  const path = hash >= 0 ? url.slice(0, hash) : url;
  return pathToFileURL(resolve(baseDir, path)).href + (hash >= 0 ? url.slice(hash) : '');
}

/** The URL without its #fragment, the form URL checks compare. */
export function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash >= 0 ? url.slice(0, hash) : url;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length ? issue.path.join('.') : '(task)';
  return `${path}: ${issue.message}`;
}

/** One task, checked; relative URLs resolved against `baseDir`. Throws InputError naming `where` and the field. */
export function parseTask(value: unknown, where: string, baseDir: string): TaskSpec {
  const r = Task.safeParse(value);
  if (!r.success) throw new InputError(r.error.issues.map(describeIssue).join('; '), where);
  const t = r.data;
  const success = 'url' in t.success ? { url: resolveTaskUrl(t.success.url, baseDir) } : t.success;
  return {
    ...t,
    start_url: resolveTaskUrl(t.start_url, baseDir),
    ...(t.home_url !== undefined ? { home_url: resolveTaskUrl(t.home_url, baseDir) } : {}),
    success,
  };
}

/** Parses suite text (JSON Lines); ids must be unique. */
export function parseSuite(text: string, file: string): TaskSpec[] {
  const baseDir = dirname(resolve(file));
  const seen = new Set<string>();
  return parseJsonLines(text, file).map(({ value, where }) => {
    const task = parseTask(value, where, baseDir);
    if (seen.has(task.id)) throw new InputError(`duplicate task id '${task.id}'`, where);
    seen.add(task.id);
    return task;
  });
}

export async function readSuite(file: string): Promise<TaskSpec[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InputError(`cannot read the suite (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, file);
  }
  return parseSuite(text, file);
}

/** One task as a suite line (the inverse of parseTask for already-absolute URLs). */
export function taskLine(task: TaskSpec): string {
  return JSON.stringify(Task.parse(task));
}

/** The task's kind as a suite line gives it (`meta.kind`: the web generator's navigate, search, …), if any. */
export function taskKind(t: TaskSpec): string | undefined {
  return typeof t.meta?.kind === 'string' ? t.meta.kind : undefined;
}

/** The suite's tasks of the kinds asked for (`meta.kind`); all of them when none are. */
export function tasksOfKinds(tasks: readonly TaskSpec[], kinds: readonly string[] | undefined, suite: string): TaskSpec[] {
  if (!kinds) return [...tasks];
  const chosen = tasks.filter((t) => kinds.includes(taskKind(t) ?? ''));
  if (chosen.length === 0) {
    const present = [...new Set(tasks.map((t) => taskKind(t)).filter((k) => k !== undefined))];
    throw new InputError(`no task of kind ${kinds.join(', ')}; the suite's kinds: ${present.length ? present.join(', ') : 'none (no task has meta.kind)'}`, suite);
  }
  return chosen;
}
