import { readdir, rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { loadEncoder } from '../screen/vision/index.js';
import { sameEncoder, type VisionEncoder } from '../screen/vision/encoder.js';
import { InputError } from '../util/errors.js';
import { expandInputs, readAitwEpisodes, type ReadStats } from './aitw.js';
import {
  manifestPath,
  readManifest,
  sha256File,
  SPLIT_NAMES,
  updateSubset,
  verifyShard,
  zeroCounts,
  type InputFileEntry,
  type ShardEntry,
  type SplitCounts,
  type SubsetEntry,
} from './manifest.js';
import { ShardWriter, type ShardRow, type WrittenShard } from './shards.js';
import { loadSplits, splitOf } from './splits.js';
import type { AitwAction, AitwEpisode, AitwStep, RawImage, SplitName } from './types.js';
import { DedupeReader } from '../screen/text/dedupe.js';
import { loadTextReader } from '../screen/text/index.js';
import type { ScreenText, TextReader } from '../screen/text/types.js';
import { annotationTexts } from './annotations.js';
import { workerFiles, workerTag, type WorkerSlot, type WorkerSubsetEntry } from './workers.js';

/**
 * `data prepare`: AITW episodes → encoder features → Arrow shards under OUT/<subset>/<split>-NNNNN.arrow.
 *
 * Determinism and resume: the inputs are read in a fixed order (sorted files, records in file
 * order), so the i-th row of split s is always the same screen, and shard k of split s always
 * holds rows k·N … (k+1)·N − 1. A re-run with the same inputs and settings verifies the shards the
 * manifest lists (size + sha256), re-reads the inputs but skips ENCODING every row that falls in a
 * verified shard, and writes only the missing shards. Different inputs or settings would place
 * rows differently, so they are refused (or rebuilt with `overwrite`).
 */

export const DEFAULT_ROWS_PER_SHARD = 2048;
export const DEFAULT_BATCH = 32;
const UNASSIGNED_EXAMPLES = 10;

export interface PrepareProgress {
  /** Screens read so far (including those in reused shards and those not in any split). */
  screens: number;
  encoded: number;
  reused: number;
  /** True on the last report, once every input was read. */
  done: boolean;
}

/**
 * Where each screen's text items come from: none, the records' own UI annotations (AITW's OCR'd
 * texts; the DOM's texts for web screens), or a reader of the pixels (OCR).
 */
export type ScreenTextSource = 'none' | 'annotations' | TextReader;

export function screenTextId(source: ScreenTextSource): string {
  return typeof source === 'string' ? source : source.id;
}

export interface PrepareSettings {
  out: string;
  subset: string;
  encoder: VisionEncoder;
  /** Screen texts stored with each row (default 'annotations'). */
  screenText?: ScreenTextSource;
  rowsPerShard?: number;
  batch?: number;
  /** The input files in reading order (their names and sizes decide whether a resume is valid). */
  inputs: InputFileEntry[];
  splitsFile: { path: string; sha256: string };
  skipCorrupt?: boolean;
  /** Rebuild this subset when it was prepared from other inputs or settings (default: refuse). */
  overwrite?: boolean;
  onProgress?: (p: PrepareProgress) => void;
  /** Corrupt-record counters from the reader, recorded in the manifest at the end. */
  readStats?: ReadStats;
  /** This run is worker i of N (`--worker i/N`): its shard names carry the tag, its entry records it. */
  worker?: WorkerSlot;
}

export interface PrepareSummary {
  out: string;
  subset: string;
  encoder: string;
  /** Rows per split (screens written, or already present). */
  screens: SplitCounts;
  episodes: SplitCounts;
  unassigned: { episodes: number; screens: number; examples: string[] };
  shards: { written: number; reused: number; total: number };
  encoded: number;
  reused: number;
  records: { read: number; skipped: number };
  /** True when the subset was already complete and nothing was read. */
  upToDate: boolean;
  seconds: number;
  screensPerSecond: number;
}

const SUBSET_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** `train-00003.arrow`, or `train-w002of016-00003.arrow` for worker 2 of 16 (names never collide). */
export function shardFileName(split: SplitName, index: number, worker?: WorkerSlot): string {
  return `${split}-${worker ? `${workerTag(worker)}-` : ''}${String(index).padStart(5, '0')}.arrow`;
}
const SHARD_FILE = /^(train|val|test)-(w\d+of\d+-)?(\d{5,})\.arrow$/;

/** What of the previous run's settings differs from this one's (empty: a resume is valid). */
function settingsDiff(prev: WorkerSubsetEntry, next: WorkerSubsetEntry): string[] {
  const diffs: string[] = [];
  const slot = (e: WorkerSubsetEntry) => (e.worker ? `${e.worker.index}/${e.worker.count}` : 'none');
  if (slot(prev) !== slot(next)) diffs.push(`--worker (${slot(prev)} → ${slot(next)})`);
  const key = (xs: InputFileEntry[]) => xs.map((f) => `${basename(f.path)}:${f.bytes}`).join('\n');
  if (key(prev.inputs) !== key(next.inputs))
    diffs.push(`input files (${prev.inputs.length} before, ${next.inputs.length} now, or different names/sizes)`);
  if (prev.splitsFile.sha256 !== next.splitsFile.sha256) diffs.push(`split file contents (${prev.splitsFile.path} → ${next.splitsFile.path})`);
  if (prev.rowsPerShard !== next.rowsPerShard) diffs.push(`--rows-per-shard (${prev.rowsPerShard} → ${next.rowsPerShard})`);
  if (prev.skipCorrupt !== next.skipCorrupt) diffs.push(`--skip-corrupt (${prev.skipCorrupt} → ${next.skipCorrupt})`);
  if ((prev.screenText ?? 'none') !== next.screenText) diffs.push(`--screen-text (${prev.screenText ?? 'none'} → ${next.screenText})`);
  return diffs;
}

/** The pure core of `data prepare`: streams episodes into shards. The CLI wiring is `prepareFromFiles`. */
export async function prepareShards(
  episodes: AsyncIterable<AitwEpisode>,
  splitFor: (episodeId: string) => SplitName | undefined,
  s: PrepareSettings,
): Promise<PrepareSummary> {
  const t0 = performance.now();
  const { rowsPerShard, batchSize } = checkSettings(s);
  const manifest = await readManifest(s.out);
  assertSameEncoderDir(manifest, s);
  const entry = newEntry(s, rowsPerShard);
  const prev = manifest?.subsets[s.subset];
  const { done, resumes } = prev ? await reusableShards(s, prev, entry) : { done: emptyShardMap(), resumes: false };
  if (prev && resumes && prev.complete && countShards(done) === prev.shards.length) return upToDateSummary(s, prev, t0);
  if (prev && resumes) entry.started = prev.started;

  entry.shards = [...done.values()].flatMap((m) => [...m.values()]);
  for (const e of entry.shards) entry.screens[e.split] += e.rows;
  const subsetDir = join(s.out, s.subset);
  await removeTempFiles(subsetDir);
  // Recording the subset (and encoder) before any work stops a run with another encoder meanwhile.
  await updateSubset(s.out, s.encoder.info, s.subset, entry);

  const writers = shardWriters(s, entry, rowsPerShard);
  const progress: PrepareProgress = { screens: 0, encoded: 0, reused: 0, done: false };
  const rowCount = await streamRows(episodes, splitFor, s, { entry, done, writers, progress, rowsPerShard, batchSize });
  for (const w of writers.values()) await w.close();
  progress.done = true;
  s.onProgress?.(progress);

  checkKeptShards(s, entry, done, rowCount, rowsPerShard);
  entry.complete = true;
  entry.finished = new Date().toISOString();
  entry.records = s.readStats ? { read: s.readStats.records, skipped: s.readStats.skipped } : entry.records;
  entry.shards.sort((a, b) => SPLIT_NAMES.indexOf(a.split) - SPLIT_NAMES.indexOf(b.split) || a.index - b.index);
  await updateSubset(s.out, s.encoder.info, s.subset, entry);
  await removeStrayShards(subsetDir, new Set(entry.shards.map((e) => basename(e.file))));

  const written = [...writers.values()].reduce((n, w) => n + w.written.length, 0);
  const seconds = (performance.now() - t0) / 1000;
  return {
    ...summaryOf(s, entry),
    shards: { written, reused: entry.shards.length - written, total: entry.shards.length },
    encoded: progress.encoded,
    reused: progress.reused,
    upToDate: false,
    seconds,
    screensPerSecond: seconds > 0 ? progress.screens / seconds : 0,
  };
}

type ShardMap = Map<SplitName, Map<number, ShardEntry>>;

const emptyShardMap = (): ShardMap => new Map(SPLIT_NAMES.map((sp) => [sp, new Map()]));
const countShards = (m: ShardMap): number => [...m.values()].reduce((n, x) => n + x.size, 0);

function checkSettings(s: PrepareSettings): { rowsPerShard: number; batchSize: number } {
  const rowsPerShard = s.rowsPerShard ?? DEFAULT_ROWS_PER_SHARD;
  const batchSize = s.batch ?? DEFAULT_BATCH;
  if (!Number.isInteger(rowsPerShard) || rowsPerShard < 1) throw new InputError(`must be a positive integer, got ${rowsPerShard}`, '--rows-per-shard');
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new InputError(`must be a positive integer, got ${batchSize}`, '--batch');
  if (!SUBSET_NAME.test(s.subset))
    throw new InputError(`'${s.subset}' is not a usable subset name (letters, digits, '_', '-', '.'; it names a directory)`, '--subset');
  return { rowsPerShard, batchSize };
}

function assertSameEncoderDir(manifest: Awaited<ReturnType<typeof readManifest>>, s: PrepareSettings): void {
  const info = s.encoder.info;
  if (manifest && Object.keys(manifest.subsets).length > 0 && !sameEncoder(manifest.encoder, info)) {
    throw new InputError(
      `this directory holds features of encoder '${manifest.encoder.id}' (${manifest.encoder.patches}×${manifest.encoder.dim}); ` +
        `this run uses '${info.id}' (${info.patches}×${info.dim}). Encoders cannot be mixed in one directory: use another --out`,
      manifestPath(s.out),
    );
  }
}

function newEntry(s: PrepareSettings, rowsPerShard: number): WorkerSubsetEntry {
  return {
    ...(s.worker ? { worker: { ...s.worker } } : {}),
    inputs: s.inputs,
    splitsFile: s.splitsFile,
    rowsPerShard,
    skipCorrupt: s.skipCorrupt ?? false,
    screenText: screenTextId(s.screenText ?? 'annotations'),
    complete: false,
    started: new Date().toISOString(),
    finished: null,
    screens: zeroCounts(),
    episodes: zeroCounts(),
    unassigned: { episodes: 0, screens: 0, examples: [] },
    records: { read: 0, skipped: 0 },
    shards: [],
  };
}

/** The verified shards of a previous run with the same settings (a different run is refused unless `overwrite`). */
async function reusableShards(s: PrepareSettings, prev: SubsetEntry, entry: WorkerSubsetEntry): Promise<{ done: ShardMap; resumes: boolean }> {
  const done = emptyShardMap();
  const diffs = settingsDiff(prev, entry);
  if (diffs.length > 0 && !s.overwrite) {
    throw new InputError(
      `subset '${s.subset}' was prepared from different ${diffs.join('; ')}; its shards would not line up. ` +
        `Re-run with the same inputs and settings to resume, or with --overwrite to rebuild it`,
      manifestPath(s.out),
    );
  }
  if (diffs.length === 0) for (const e of prev.shards) if (await verifyShard(s.out, e)) done.get(e.split)!.set(e.index, e);
  return { done, resumes: diffs.length === 0 };
}

function summaryOf(s: PrepareSettings, e: SubsetEntry): Pick<PrepareSummary, 'out' | 'subset' | 'encoder' | 'screens' | 'episodes' | 'unassigned' | 'records'> {
  return { out: s.out, subset: s.subset, encoder: s.encoder.info.id, screens: e.screens, episodes: e.episodes, unassigned: e.unassigned, records: e.records };
}

function upToDateSummary(s: PrepareSettings, prev: SubsetEntry, t0: number): PrepareSummary {
  return {
    ...summaryOf(s, prev),
    shards: { written: 0, reused: prev.shards.length, total: prev.shards.length },
    encoded: 0,
    reused: Object.values(prev.screens).reduce((a, b) => a + b, 0),
    upToDate: true,
    seconds: (performance.now() - t0) / 1000,
    screensPerSecond: 0,
  };
}

/** One writer per split; each finished shard is recorded in the manifest at once, so a crash keeps it. */
function shardWriters(s: PrepareSettings, entry: WorkerSubsetEntry, rowsPerShard: number): Map<SplitName, ShardWriter> {
  const record = async (split: SplitName, w: WrittenShard): Promise<void> => {
    entry.shards.push({ file: `${s.subset}/${shardFileName(split, w.index, s.worker)}`, split, index: w.index, rows: w.rows, bytes: w.bytes, sha256: w.sha256 });
    entry.screens[split] += w.rows;
    await updateSubset(s.out, s.encoder.info, s.subset, entry);
  };
  return new Map(
    SPLIT_NAMES.map((split) => [
      split,
      new ShardWriter({
        encoder: s.encoder.info,
        rowsPerShard,
        pathFor: (k) => join(s.out, s.subset, shardFileName(split, k, s.worker)),
        onShard: (w) => record(split, w),
      }),
    ]),
  );
}

interface StreamState {
  entry: WorkerSubsetEntry;
  done: ShardMap;
  writers: Map<SplitName, ShardWriter>;
  progress: PrepareProgress;
  rowsPerShard: number;
  batchSize: number;
}

interface PendingRow {
  split: SplitName;
  index: number;
  step: AitwStep;
  episodeActions: AitwAction[];
}

/** Reads every episode, assigns rows to splits in reading order, encodes the rows of shards not kept. Returns the rows per split. */
async function streamRows(episodes: AsyncIterable<AitwEpisode>, splitFor: (id: string) => SplitName | undefined, s: PrepareSettings, st: StreamState): Promise<SplitCounts> {
  const rowCount = zeroCounts();
  let pending: PendingRow[] = [];
  // Batches encode (on the encoder's threads) while this thread reads the next ones and writes the
  // finished ones, in reading order. Two batches ahead, so the encoder's threads do not wait while
  // this one writes; one where the texts come from a reader (OCR), which is the bottleneck there.
  const ahead = typeof s.screenText === 'object' ? 1 : 2;
  const inflight: Promise<void>[] = [];
  let written: Promise<void> = Promise.resolve();
  const flush = async () => {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    if (inflight.length >= ahead) await inflight.shift();
    const encoded = encodeBatch(batch, s);
    const previous = written;
    // The earlier writes settle first, so a failure surfaces only once no write is under way.
    written = previous.then(async () => writeRows(batch, await encoded, s, st));
    // Both are awaited later (a failed batch's own encoding, a later flush or the end); meanwhile a failure is not unhandled.
    encoded.catch(() => undefined);
    written.catch(() => undefined);
    inflight.push(written);
  };
  for await (const ep of episodes) {
    const split = splitFor(ep.episodeId);
    st.progress.screens += ep.steps.length;
    if (!split) {
      noteUnassigned(st.entry, ep);
      continue;
    }
    st.entry.episodes[split]++;
    const episodeActions = ep.steps.map((step) => step.action);
    for (const step of ep.steps) {
      const index = rowCount[split]++;
      if (st.done.get(split)!.has(Math.floor(index / st.rowsPerShard))) {
        st.progress.reused++;
        continue;
      }
      pending.push({ split, index, step, episodeActions });
      if (pending.length >= st.batchSize) await flush();
    }
    s.onProgress?.(st.progress);
  }
  await flush();
  await written;
  return rowCount;
}

function noteUnassigned(entry: WorkerSubsetEntry, ep: AitwEpisode): void {
  entry.unassigned.episodes++;
  entry.unassigned.screens += ep.steps.length;
  if (entry.unassigned.examples.length < UNASSIGNED_EXAMPLES) entry.unassigned.examples.push(ep.episodeId);
}

/** Features and texts of a batch of rows. A bad screen names its episode and step. */
async function encodeBatch(batch: readonly PendingRow[], s: PrepareSettings): Promise<{ features: Float32Array[]; texts: ScreenText[][] }> {
  try {
    const images = batch.map((p) => p.step.image);
    const [features, texts] = await Promise.all([s.encoder.encode(images), readTexts(s.screenText ?? 'annotations', batch.map((p) => p.step), images)]);
    return { features, texts };
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const at = batch[Number(/image (\d+) of the batch/.exec(err.message)?.[1] ?? NaN)];
    throw at ? new InputError(err.message.replace(/^.*?: /, ''), `episode ${at.step.episodeId} step ${at.step.stepId} (screen)`) : err;
  }
}

/** Each row of an encoded batch into its split's writer. */
async function writeRows(batch: readonly PendingRow[], { features, texts }: { features: Float32Array[]; texts: ScreenText[][] }, s: PrepareSettings, st: StreamState): Promise<void> {
  for (let i = 0; i < batch.length; i++) {
    const { split, index, step, episodeActions } = batch[i]!;
    const row: ShardRow = {
      episodeId: step.episodeId,
      subset: s.subset,
      split,
      stepId: step.stepId,
      episodeLength: step.episodeLength,
      goal: step.goal,
      imageHeight: step.image.height,
      imageWidth: step.image.width,
      screen: features[i]!,
      action: step.action,
      annotations: step.annotations,
      texts: texts[i]!,
      episodeActions,
    };
    await st.writers.get(split)!.put(index, row);
  }
  st.progress.encoded += batch.length;
  s.onProgress?.(st.progress);
}

/** The screen texts of a batch of steps from the chosen source. */
function readTexts(source: ScreenTextSource, steps: readonly AitwStep[], images: RawImage[]): Promise<ScreenText[][]> {
  if (source === 'none') return Promise.resolve(steps.map(() => []));
  if (source === 'annotations') return Promise.resolve(steps.map((st) => annotationTexts(st.annotations)));
  return source.read(images);
}

/** Kept shards must still fit the rows this run saw; otherwise the inputs changed under the same names. */
function checkKeptShards(s: PrepareSettings, entry: WorkerSubsetEntry, done: ShardMap, rowCount: SplitCounts, rowsPerShard: number): void {
  for (const split of SPLIT_NAMES) {
    for (const [k, e] of done.get(split)!) {
      const expected = Math.min(rowsPerShard, rowCount[split] - k * rowsPerShard);
      if (e.rows !== expected)
        throw new InputError(
          `kept shard ${e.file} has ${e.rows} rows but this run puts ${Math.max(0, expected)} rows there: the inputs changed. Re-run with --overwrite`,
          manifestPath(s.out),
        );
    }
    if (entry.screens[split] !== rowCount[split])
      throw new Error(`prepare: split ${split} has ${entry.screens[split]} rows in shards but ${rowCount[split]} were read`);
  }
}

/** Temp files of a crashed writer (`x.arrow.tmp-<pid>-<hex>`). */
async function removeTempFiles(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const n of names) if (/\.arrow\.tmp-/.test(n)) await rm(join(dir, n), { force: true });
}

/** Shard files the manifest no longer lists (e.g. after --overwrite with fewer rows). */
async function removeStrayShards(dir: string, keep: Set<string>): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const n of names) if (SHARD_FILE.test(n) && !keep.has(n)) await rm(join(dir, n), { force: true });
}

export interface PrepareRequest {
  inputs: string[];
  splits: string;
  subset: string;
  out: string;
  encoder?: string;
  /** Screen texts stored with each row: none, the records' annotations (default), or OCR of the pixels. */
  screenText?: 'none' | 'annotations' | 'ocr';
  rowsPerShard?: number;
  batch?: number;
  skipCorrupt?: boolean;
  overwrite?: boolean;
  /** Only this worker's share of the (sorted) input files: a contiguous block, see workerFiles. */
  worker?: WorkerSlot;
  /** Progress with an estimate of the total screens (from the bytes of the input files already read). */
  onProgress?: (p: PrepareProgress & { estimatedTotal: number }) => void;
}

/** `autoui data prepare` end to end: expand inputs, load splits and encoder, read TFRecords, write shards. */
export async function prepareFromFiles(req: PrepareRequest): Promise<PrepareSummary> {
  const all = await expandInputs(req.inputs);
  const files = req.worker ? workerFiles(all, req.worker) : all;
  const inputs: InputFileEntry[] = await Promise.all(files.map(async (f) => ({ path: resolve(f), bytes: (await stat(f)).size })));
  const splits = await loadSplits(req.splits);
  const encoder = await loadEncoder(req.encoder ?? 'builtin', { threads: availableParallelism() });
  const screenText: ScreenTextSource = req.screenText === 'ocr' ? new DedupeReader(await loadTextReader()) : req.screenText ?? 'annotations';
  const stats: ReadStats = { records: 0, skipped: 0, files: 0 };
  const totalBytes = inputs.reduce((n, f) => n + f.bytes, 0);
  const onProgress = req.onProgress
    ? (p: PrepareProgress) => {
        // Files are read in order; those before the one being read are finished.
        const doneBytes = inputs.slice(0, Math.max(0, stats.files - 1)).reduce((n, f) => n + f.bytes, 0);
        const estimatedTotal = p.done ? p.screens : doneBytes > 0 ? Math.round((p.screens * totalBytes) / doneBytes) : 0;
        req.onProgress!({ ...p, estimatedTotal: Math.max(estimatedTotal, p.screens) });
      }
    : undefined;
  try {
    return await prepareShards(readAitwEpisodes(files, { skipCorrupt: req.skipCorrupt, stats }), splitOf(splits), {
      out: req.out,
      subset: req.subset,
      encoder,
      screenText,
      rowsPerShard: req.rowsPerShard,
      batch: req.batch,
      inputs,
      splitsFile: { path: resolve(req.splits), sha256: await sha256File(req.splits) },
      skipCorrupt: req.skipCorrupt ?? false,
      overwrite: req.overwrite,
      onProgress,
      readStats: stats,
      worker: req.worker,
    });
  } finally {
    encoder.dispose?.();
    if (typeof screenText !== 'string') await screenText.dispose?.();
  }
}
