import type { Command } from 'commander';
import { once } from 'node:events';
import { join } from 'node:path';
import { expandInputs, readAitwSteps, type ReadStats, type SourcedStep } from '../data/aitw.js';
import { encodePng, rawSha256 } from '../data/image.js';
import { ACTION_TYPE_NAMES, ActionType, type Box, type YX } from '../data/types.js';
import { writeFileAtomic } from '../util/atomic.js';

export interface InspectOptions {
  json?: boolean;
  images?: string;
  skipCorrupt?: boolean;
}

/** Where output goes; the CLI passes process streams, tests pass collectors. */
export interface InspectIo {
  out: (line: string) => Promise<void> | void;
  err: (line: string) => void;
}

/** One `--json` line: exactly these keys, in this order. */
export interface InspectRow {
  episode_id: string;
  episode_length: number;
  step_id: number;
  goal: string;
  height: number;
  width: number;
  /** Channels of the decoded screen, always 3 (RGB) whatever the record stored. */
  channels: number;
  image_sha256: string;
  action_type: number;
  touch_yx: YX;
  lift_yx: YX;
  typed_text: string;
  ui_positions: Box[];
  ui_text: string[];
  ui_types: string[];
}

export function inspectRow(s: SourcedStep): InspectRow {
  return {
    episode_id: s.episodeId,
    episode_length: s.episodeLength,
    step_id: s.stepId,
    goal: s.goal,
    height: s.image.height,
    width: s.image.width,
    channels: s.image.channels,
    image_sha256: rawSha256(s.image),
    action_type: s.action.action_type,
    touch_yx: s.action.touch_yx,
    lift_yx: s.action.lift_yx,
    typed_text: s.action.typed_text,
    ui_positions: s.annotations.positions,
    ui_text: s.annotations.text,
    ui_types: s.annotations.types,
  };
}

const yx = (p: YX): string => `(${p[0].toFixed(4)}, ${p[1].toFixed(4)})`;

/** The readable one-liner of a step. */
export function inspectLine(s: SourcedStep): string {
  const a = s.action;
  let act: string = ACTION_TYPE_NAMES[a.action_type];
  if (a.action_type === ActionType.DUAL_POINT) act += ` ${yx(a.touch_yx)}→${yx(a.lift_yx)}`;
  if (a.action_type === ActionType.TYPE) act += ` ${JSON.stringify(a.typed_text)}`;
  return [
    `${s.source.file}#${s.source.record}`,
    `episode ${s.episodeId} step ${s.stepId + 1}/${s.episodeLength}`,
    act,
    `${s.image.height}×${s.image.width}`,
    `${s.annotations.positions.length} UI element${s.annotations.positions.length === 1 ? "" : "s"}`,
    `goal ${JSON.stringify(s.goal)}`,
  ].join(' · ');
}

/** File name of a step's PNG: episode id made filesystem-safe, step zero-padded. */
export function imageName(s: { episodeId: string; stepId: number }): string {
  return `${s.episodeId.replace(/[^A-Za-z0-9._-]/g, '_')}_step${String(s.stepId).padStart(3, '0')}.png`;
}

/** Streams every step of the inputs to `io.out`; returns the read counters. */
export async function inspectData(patterns: string[], opts: InspectOptions, io: InspectIo): Promise<ReadStats> {
  const files = await expandInputs(patterns);
  const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
  const onSkip = (e: { file: string; index: number; reason: string }): void =>
    io.err(`skipped ${e.file}#record ${e.index}: ${e.reason}`);
  for await (const s of readAitwSteps(files, { skipCorrupt: opts.skipCorrupt, stats, onSkip })) {
    await io.out(opts.json ? JSON.stringify(inspectRow(s)) : inspectLine(s));
    if (opts.images) await writeFileAtomic(join(opts.images, imageName(s)), await encodePng(s.image));
  }
  const summary = `read ${stats.records} records from ${stats.files} files, skipped ${stats.skipped}`;
  if (opts.json) io.err(summary);
  else await io.out(summary);
  return stats;
}

/** Process streams with stdout backpressure; a closed pipe (`| head`) ends quietly. */
function processIo(): InspectIo {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  return {
    out: async (line) => {
      if (!process.stdout.write(line + '\n')) await once(process.stdout, 'drain');
    },
    err: (line) => process.stderr.write(line + '\n'),
  };
}

export function registerDataInspect(data: Command, io?: InspectIo): void {
  data
    .command('inspect')
    .description('decode AITW TFRecord files and print one line per step (validates every record)')
    .argument('<files...>', 'TFRecord files (gzip or plain), directories or glob patterns')
    .option('--json', 'one JSON object per step on stdout; the summary goes to stderr')
    .option('--images <dir>', 'also write every screen as PNG into this directory')
    .option('--skip-corrupt', 'skip bad records (reported on stderr and counted) instead of stopping')
    .action(async (files: string[], opts: InspectOptions) => {
      await inspectData(files, opts, io ?? processIo());
    });
}
