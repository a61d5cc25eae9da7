/**
 * report.html of a closed-loop run: the view of the run's dumps (dumps.ts), written from them alone.
 * Per task, failures first: its outcome and success check, then every screen the agent saw with the
 * action it took drawn over it (eval/viz.ts draws it, as in `autoui viz`), its plan and latency.
 * Screens are files beside the report (screens/…), so the report stays small; no script, and every
 * text from a task or a page goes through escaping.
 */
import { join } from 'node:path';
import { ACTION_TYPE_NAMES, type ActionTypeName, type AitwAction, type TypeProbs } from '../../data/types.js';
import { describeAction } from '../../infer/predict.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { actionSvg, PRED_COLOUR } from '../viz.js';
import { kindLine, taskFileName, typedLine, type RunSummary, type ScreenRef, type StepDump, type TaskDump } from './dumps.js';
import { UNCHANGED_SHARE } from './screen_change.js';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;

/** One line naming an action: "tap (y 0.512, x 0.310)", "scroll up", "type “hello”", "PRESS_BACK". */
export function actionLabel(a: AitwAction): string {
  const d = describeAction(a);
  if (d.gesture === 'tap') return `tap (y ${a.touch_yx[0].toFixed(3)}, x ${a.touch_yx[1].toFixed(3)})`;
  if (d.gesture === 'scroll') return `scroll ${d.scroll_direction}`;
  if (d.gesture === 'type') return `type “${a.typed_text}”`;
  return ACTION_TYPE_NAMES[a.action_type];
}

function shot(screen: ScreenRef, action: AitwAction | null): string {
  const { shownWidth: w, shownHeight: h } = screen;
  const overlay = action ? actionSvg(action, w, h, PRED_COLOUR, 0) : '';
  return `<div class="shot" style="width:${w}px;height:${h}px"><img src="${esc(screen.file)}" width="${w}" height="${h}" alt="screen">` +
    `<svg class="overlay" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" xmlns="http://www.w3.org/2000/svg">${overlay}</svg></div>`;
}

const percent = (p: number): string => `${(p * 100).toFixed(p < 0.995 ? 0 : 1)} %`;
const chosenProb = (type: ActionTypeName, probs: TypeProbs): string => `<div>model's probability of ${type}: ${percent(probs[type] ?? 0)}</div>`;

function stepFigure(s: StepDump): string {
  const what = s.action ? actionLabel(s.action) : `no valid action (${s.invalid ?? 'unknown'})`;
  const facts = [
    `<div class="act">${s.index + 1}. ${esc(what)}</div>`,
    s.plan ? `<div>plan: ${esc(s.plan.join(' → '))}</div>` : '',
    s.action && s.typeProbs ? chosenProb(ACTION_TYPE_NAMES[s.action.action_type], s.typeProbs) : '',
    s.textChoices && s.textChoices.length > 1 ? `<div>other texts weighed: ${esc(s.textChoices.slice(1).map((c) => `"${c.text}" ${c.score.toFixed(2)}`).join(', '))} (typed: ${s.textChoices[0]!.score.toFixed(2)}; mean log-probability per token)</div>` : '',
    `<div>latency: ${s.latency_ms.toFixed(0)} ms</div>`,
    s.url ? `<div class="url">${esc(s.url)}</div>` : '',
    s.checkAfter ? `<div class="${s.checkAfter.ok ? 'ok' : 'no'}">check after: ${esc(s.checkAfter.detail)}</div>` : '',
    s.avoided ? `<div>avoided (did nothing here, or backed out of): ${esc(s.avoided.map(actionLabel).join('; '))}</div>` : '',
    s.backedOutOf ? `<div>back where ${esc(actionLabel(s.backedOutOf))} was taken: avoided there</div>` : '',
    s.screenChange !== undefined && s.screenChange <= UNCHANGED_SHARE ? '<div class="no">the screen did not change</div>' : '',
  ];
  return `<figure class="step">${shot(s.screen, s.action)}<figcaption>${facts.join('')}</figcaption></figure>`;
}

function taskSection(d: TaskDump): string {
  const verdict = d.success ? 'success' : d.reached ? 'failed (goal reached but not declared)' : 'failed';
  const steps = d.stepDumps.map(stepFigure);
  if (d.finalScreen) steps.push(`<figure class="step final">${shot(d.finalScreen, null)}<figcaption><div class="act">final screen</div></figcaption></figure>`);
  return `<section class="task ${d.success ? 'ok' : 'fail'}" id="task-${esc(taskFileName(d.task.id))}">
<h2><span class="badge">${d.success ? '✓' : '✗'}</span> ${esc(d.task.id)} <small>${esc(verdict)}</small></h2>
<p class="goal">goal: ${esc(d.task.goal)}</p>
<p class="facts">stopped: ${esc(d.stop_reason)} · ${d.steps} step(s) · ${d.seconds.toFixed(1)} s · check: ${d.check ? `<span class="${d.check.ok ? 'ok' : 'no'}">${esc(d.check.detail)}</span>` : 'not evaluated'}${d.blockedRequests ? ` · ${d.blockedRequests} request(s) blocked` : ''}</p>
<div class="steps">${steps.join('\n')}</div>
</section>`;
}

const STYLE = `body{font-family:system-ui,sans-serif;color:#1d2330;background:#f4f6fa;margin:0;padding:16px 24px}
h1{font-size:20px}table{border-collapse:collapse;font-size:13px;margin-bottom:16px}td,th{border:1px solid #d4d9e3;padding:3px 8px;text-align:left}
.task{background:#fff;border:1px solid #dde2ec;border-radius:8px;padding:8px 14px;margin:14px 0}.task.fail{border-left:6px solid #e62828}.task.ok{border-left:6px solid #12a150}
h2{font-size:16px;margin:6px 0}h2 small{font-weight:normal;color:#4a5468}.goal,.facts{font-size:13px;margin:4px 0}
.steps{display:flex;gap:12px;overflow-x:auto;padding-bottom:8px}.step{margin:0;flex:none}.shot{position:relative;line-height:0;border:1px solid #c5cbd8}
.shot img,.shot svg{position:absolute;left:0;top:0}figcaption{font-size:12px;max-width:360px;margin-top:4px}.act{font-weight:600}
.url{color:#4a5468;word-break:break-all}.ok{color:#12703a}.no{color:#b01c1c}`;

/** The whole report as one HTML document. Pure. */
export function renderReport(dumps: readonly TaskDump[], summary: RunSummary): string {
  const order = [...dumps.filter((d) => !d.success), ...dumps.filter((d) => d.success)];
  const rows = summary.per_task
    .map((t) => `<tr><td><a href="#task-${esc(taskFileName(t.id))}">${esc(t.id)}</a></td><td>${t.success ? 'yes' : 'no'}</td><td>${t.reached ? 'yes' : 'no'}</td><td>${t.steps}</td><td>${esc(t.stop_reason)}</td></tr>`)
    .join('\n');
  const first = dumps[0];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>autoui run — ${summary.tasks} tasks</title><style>${STYLE}</style></head>
<body>
<h1>autoui run: ${summary.tasks} task(s), success ${pct(summary.success_rate)}, reached ${pct(summary.reached_rate)}, ${summary.mean_steps.toFixed(2)} steps on average</h1>
<p class="facts">${first ? `agent ${esc(first.agent)} · environment ${esc(first.environment)}` : 'no tasks'}</p>
${summary.by_kind ? `<p class="facts" id="kinds">succeeded by kind: ${esc(kindLine(summary))}</p>` : ''}
${summary.typed_text ? `<p class="facts" id="typed">typed text: ${esc(typedLine(summary.typed_text))}</p>` : ''}
<table id="summary"><tr><th>task</th><th>success</th><th>reached</th><th>steps</th><th>stopped</th></tr>
${rows}
</table>
${order.map(taskSection).join('\n')}
</body></html>
`;
}

/** Writes OUT/report.html; returns its path. */
export async function writeReport(out: string, dumps: readonly TaskDump[], summary: RunSummary): Promise<string> {
  const file = join(out, 'report.html');
  await writeFileAtomic(file, renderReport(dumps, summary));
  return file;
}
