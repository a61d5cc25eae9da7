import { Option, type Command } from 'commander';
import { readSuite, tasksOfKinds } from '../data/suite.js';
import { AdbEnv } from '../env/adb.js';
import { DEFAULT_CHROMIUM } from '../data/web/browser.js';
import { ChromiumEnv } from '../env/chromium.js';
import type { Environment } from '../env/environment.js';
import { PredictorAgent, readScriptFile, ScriptedAgent, ServerAgent, type Agent } from '../eval/tasks/agents.js';
import { kindLine, typedLine } from '../eval/tasks/dumps.js';
import { DEFAULT_MAX_STEPS, runSuite } from '../eval/tasks/run_tasks.js';
import { Predictor } from '../infer/predict.js';
import type { TapSource } from '../model/pointer.js';
import { InputError } from '../util/errors.js';
import { checkpointDirs, ensembleOption, intOption, printJson, tapFromOption, textBeamsOption, textStartOption } from './common.js';

interface RunCliOptions {
  suite: string;
  kind?: string[];
  checkpoint?: string;
  ensemble?: string[];
  server?: string;
  script?: string;
  gold?: string;
  token?: string;
  encoder?: string;
  tapFrom: TapSource | 'auto';
  textBeams: number;
  textStart: boolean;
  out: string;
  maxSteps: number;
  resume?: boolean;
  avoidIneffective: boolean;
  json?: boolean;
  env: 'chromium' | 'adb';
  chromium?: string;
  adb?: string;
  serial?: string;
  concurrency: number;
}

async function makeAgent(o: RunCliOptions): Promise<Agent> {
  const given = (['checkpoint', 'server', 'script'] as const).filter((k) => o[k] !== undefined);
  if (given.length !== 1) throw new InputError(`give exactly one agent: --checkpoint, --server or --script (got ${given.length ? given.map((k) => `--${k}`).join(', ') : 'none'})`, 'run');
  if (o.ensemble && !o.checkpoint) throw new InputError('--ensemble adds checkpoints to --checkpoint; give --checkpoint too', '--ensemble');
  if (o.checkpoint) return new PredictorAgent(await Predictor.load(checkpointDirs({ ...o, checkpoint: o.checkpoint }), { encoder: o.encoder, tapFrom: o.tapFrom, textBeams: o.textBeams, textStart: o.textStart }));
  if (o.server) {
    if (!URL.canParse(o.server)) throw new InputError(`not a URL: '${o.server}'`, '--server');
    return new ServerAgent(o.server, { token: o.token ?? (process.env.AUTOUI_TOKEN || undefined) });
  }
  return new ScriptedAgent(await readScriptFile(o.script!, 'the script'));
}

/** One environment per task run at a time: a browser each; a device runs one task at a time. */
function makeEnvs(o: RunCliOptions): Environment[] {
  if (o.env === 'adb') {
    if (o.concurrency > 1) throw new InputError('one device runs one task at a time (--env adb)', '--concurrency');
    return [new AdbEnv({ adb: o.adb, serial: o.serial })];
  }
  return Array.from({ length: o.concurrency }, () => new ChromiumEnv({ executablePath: o.chromium }));
}

/** `autoui run --suite FILE (--checkpoint DIR | --server URL | --script FILE) [--out DIR] [--max-steps N] [--resume] [--json]` */
export function registerRun(parent: Command): void {
  parent
    .command('run')
    .description('run an agent on a task suite in a real browser (or an Android device over adb) and measure task success')
    .requiredOption('--suite <file>', 'task suite, JSON Lines: {"id", "goal", "start_url", "success": {...}, ...} per line')
    .option('--kind <list>', 'run only the tasks of these kinds, comma-separated (a task\'s "meta": {"kind"}, e.g. navigate,search)', (v: string) => v.split(',').map((k) => k.trim()).filter((k) => k !== ''))
    .option('--checkpoint <dir>', 'agent: a checkpoint loaded in this process')
    .option('--server <url>', 'agent: a running `autoui serve` (e.g. http://127.0.0.1:8080)')
    .option('--script <file>', 'agent: replay given actions, JSON Lines {"id": TASK_ID, "actions": [...]} (to check that a suite is solvable)')
    .option('--gold <file>', 'gold actions, JSON Lines {"id": TASK_ID, "actions": [...]} (the gold-SPLIT.jsonl beside a suite from `data web --suite`): the summary adds typed_text, the agent\'s first typed text against the gold\'s')
    .option('--token <token>', 'bearer token for --server (or set AUTOUI_TOKEN)')
    .option('--encoder <spec>', "vision encoder for --checkpoint, when the checkpoint's is not built in")
    .addOption(tapFromOption())
    .addOption(textBeamsOption())
    .addOption(textStartOption())
    .addOption(ensembleOption())
    .option('--out <dir>', 'where results, trajectories, screens and report.html go', 'autoui-run')
    .option('--max-steps <n>', 'agent decisions per task unless the task sets max_steps', intOption('--max-steps', 1), DEFAULT_MAX_STEPS)
    .option('--resume', 'keep the results already in --out and run only the unfinished tasks')
    .option('--no-avoid-ineffective', 'let the agent repeat an action that left the screen as it was, or a tap it backed out of (default: the next answer on that screen avoids it)')
    .option('--json', 'print {"tasks", "success_rate", "reached_rate", "mean_steps", "by_kind", "typed_text", "per_task"} as JSON on stdout (by_kind when tasks have a meta.kind, typed_text with --gold)')
    .addOption(new Option('--env <kind>', 'where actions run').choices(['chromium', 'adb']).default('chromium'))
    .option('--chromium <path>', `Chromium binary (default $CHROMIUM_PATH or ${DEFAULT_CHROMIUM})`)
    .option('--adb <path>', 'adb binary for --env adb (default: adb on PATH)')
    .option('--serial <serial>', 'device serial for --env adb')
    .option('--concurrency <n>', "tasks run at a time, each in its own browser: one task's page loads overlap another's decisions (the steps' latencies then include the other tasks' share of the cores)", intOption('--concurrency', 1), 1)
    .addHelpText(
      'after',
      `
A task succeeds when its success check holds at the moment the agent declares STATUS_TASK_COMPLETE;
it is "reached" when the check held after any step, declared or not. Per task --out gets
results/<task>.json (written last: --resume skips tasks that have one), trajectories/<task>.tfrecord.gz
(AITW records of the executed steps, for eval, viz, data prepare and training; trajectories/split.json
lists the successful ones as train), screens/<task>/ and, at the end, summary.json and report.html.
The browser is a 412×915 CSS px phone at DPR 2.625 unless a task sets "viewport"; it loads only
file:// pages and 127.0.0.1. --env adb is untested on hardware: it drives a device with adb shell input,
screencap and uiautomator, and can check only {"selector": "*", "text_contains": T}.`,
    )
    .action(async (o: RunCliOptions) => {
      const all = await readSuite(o.suite);
      if (all.length === 0) throw new InputError('the suite has no tasks', o.suite);
      const tasks = tasksOfKinds(all, o.kind, o.suite);
      const gold = o.gold === undefined ? undefined : await readScriptFile(o.gold, 'the gold actions');
      const envs = makeEnvs(o);
      const agent = await makeAgent(o);
      let result;
      try {
        result = await runSuite({ tasks, out: o.out, agent, env: envs[0]!, moreEnvs: envs.slice(1), maxSteps: o.maxSteps, resume: o.resume, avoidIneffective: o.avoidIneffective, gold, quiet: o.json });
      } finally {
        await Promise.all(envs.map((e) => e.close()));
        await agent.close?.();
      }
      const s = result.summary;
      if (o.json) return printJson(s);
      for (const t of s.per_task) console.log(`${t.success ? 'ok  ' : 'FAIL'} ${t.id}  ${t.steps} step(s), ${t.stop_reason}${!t.success && t.reached ? ' (reached)' : ''}`);
      console.log(`\n${s.tasks} task(s): success ${(100 * s.success_rate).toFixed(1)} %, reached ${(100 * s.reached_rate).toFixed(1)} %, ${s.mean_steps.toFixed(2)} steps on average` + (result.kept ? ` (${result.kept} kept from the earlier run)` : ''));
      if (s.by_kind) console.log(`succeeded by kind: ${kindLine(s)}`);
      if (s.typed_text) console.log(`typed text: ${typedLine(s.typed_text)}`);
      console.log(`report: ${result.report}`);
    });
}
