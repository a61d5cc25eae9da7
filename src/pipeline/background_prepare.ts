/**
 * `autoui data prepare` in a child process at the lowest CPU priority, for shards nothing reads until
 * later. Why: training keeps about one and a half of the two cores busy (the JavaScript and wasm work
 * between its native kernels runs on one thread), and the held-out sites' OCR, which only evaluation
 * reads, fits in the rest. At the lowest priority the child runs only when training leaves a core
 * idle, so training keeps its pace; its own threads (OCR and encoder workers) are started after the
 * priority is set and inherit it. The shards are the ones `data prepare` writes in the foreground.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setPriority, constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { PrepareRequest, PrepareSummary } from '../data/prepare.js';

/** The compiled CLI beside this module; absent when running from TypeScript sources (tests), where no child can start. */
const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

/** A request the child can take: everything but the in-process progress callback and worker slots. */
export type BackgroundRequest = Omit<PrepareRequest, 'onProgress' | 'worker'>;

/** The CLI's arguments for one request (commander's names; defaults left out). */
export function prepareArgs(r: BackgroundRequest): string[] {
  const args = ['data', 'prepare', '--input', ...r.inputs, '--splits', r.splits, '--subset', r.subset, '--out', r.out, '--json'];
  if (r.encoder !== undefined) args.push('--encoder', r.encoder);
  if (r.screenText !== undefined) args.push('--screen-text', r.screenText);
  if (r.rowsPerShard !== undefined) args.push('--rows-per-shard', String(r.rowsPerShard));
  if (r.batch !== undefined) args.push('--batch', String(r.batch));
  if (r.skipCorrupt) args.push('--skip-corrupt');
  if (r.overwrite) args.push('--overwrite');
  return args;
}

/** True when requests can run in a child (the compiled CLI exists). */
export function canPrepareInBackground(): boolean {
  return existsSync(CLI);
}

export interface BackgroundOptions {
  /** Kills the running child (prepare resumes from its finished shards on the next run). */
  signal?: AbortSignal;
  /** The CLI script the child runs (default: the compiled one beside this module). */
  cli?: string;
}

/**
 * Prepares the requests one after another in low-priority child processes; `onDone` hears each
 * summary. Rejects with the child's own error message (it names the file or field at fault).
 */
export async function prepareInBackground(reqs: readonly BackgroundRequest[], onDone: (s: PrepareSummary) => void, o: BackgroundOptions = {}): Promise<void> {
  for (const r of reqs) onDone(await prepareChild(r, o.cli ?? CLI, o.signal));
}

function prepareChild(r: BackgroundRequest, cli: string, signal: AbortSignal | undefined): Promise<PrepareSummary> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...prepareArgs(r)], { stdio: ['ignore', 'pipe', 'pipe'], signal });
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, constants.priority.PRIORITY_LOW);
      } catch {
        // Not permitted or not supported here: the child runs at normal priority, only slower for training.
      }
    }
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code, killedBy) => {
      if (code === 0) {
        try {
          return resolve(JSON.parse(out) as PrepareSummary);
        } catch {
          return reject(new Error(`data prepare of '${r.subset}' (in the background) printed no summary: ${out.slice(0, 200)}`));
        }
      }
      const why = err.trim().split('\n').slice(-3).join('\n') || `exit ${code ?? killedBy}`;
      reject(new Error(`data prepare of '${r.subset}' → ${r.out} (in the background) failed: ${why}`));
    });
  });
}
