import { stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { sameEncoder } from '../screen/vision/encoder.js';
import { InputError } from '../util/errors.js';
import { manifestPath, readManifest, requireManifest, SPLIT_NAMES, writeManifest, zeroCounts, type Manifest, type ShardEntry, type SubsetEntry } from './manifest.js';

/**
 * `data prepare --worker i/N`: feature extraction split over N independent processes (a batch
 * engine's array job), and `data merge`: one manifest over the workers' outputs.
 *
 * Worker i takes a contiguous block of the sorted input files, so the merged row order equals the
 * one-machine order. Each worker writes its own --out directory (no shared manifest to race on);
 * its shard names carry `w<i>of<N>` so they stay unique even when copied into one place. AITW
 * keeps each episode inside one file, which file-level splitting needs (an episode cut across two
 * workers would be reported as corrupt by both).
 */

export interface WorkerSlot {
  /** 0-based, as Kubernetes' JOB_COMPLETION_INDEX. */
  index: number;
  count: number;
}

/** A subset entry that records which worker wrote it (absent for one-machine runs). */
export type WorkerSubsetEntry = SubsetEntry & { worker?: WorkerSlot };

/** Parses `i/N` with 0 ≤ i < N. */
export function parseWorkerSlot(text: string, where = '--worker'): WorkerSlot {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) throw new InputError(`expected i/N (worker i of N, 0-based), got '${text}'`, where);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index >= count) throw new InputError(`worker index must be in [0, N), got ${index}/${count}`, where);
  return { index, count };
}

export function workerTag(w: WorkerSlot): string {
  const width = Math.max(3, String(w.count - 1).length);
  return `w${String(w.index).padStart(width, '0')}of${String(w.count).padStart(width, '0')}`;
}

/** Worker i's block of files: [⌊i·F/N⌋, ⌊(i+1)·F/N⌋) — sizes differ by at most one, blocks cover all. */
export function workerFiles<T>(files: readonly T[], w: WorkerSlot): T[] {
  const start = Math.floor((w.index * files.length) / w.count);
  const end = Math.floor(((w.index + 1) * files.length) / w.count);
  return files.slice(start, end);
}

export interface MergeSummary {
  out: string;
  parts: number;
  subsets: Record<string, { workers: number; shards: number; screens: number }>;
}

/** Path of a part's shard as seen from OUT, with '/' separators (manifests are portable). */
function fileFrom(out: string, part: string, file: string): string {
  return relative(out, join(part, file)).split(sep).join('/');
}

/**
 * Writes OUT/manifest.json listing the shards of every worker output in PARTS (each a `data
 * prepare --worker` --out directory; nothing is copied, so keep them where they are, ideally under
 * OUT). Parts are ordered by worker index; each subset's shards are renumbered in that order.
 * Refuses incomplete workers, missing workers of a subset, mixed encoders or settings, and inputs
 * read twice. Subsets of an existing OUT manifest that are not in the parts are kept.
 */
export async function mergeWorkerOutputs(outDir: string, partDirs: string[]): Promise<MergeSummary> {
  const out = resolve(outDir);
  if (partDirs.length === 0) throw new InputError('give at least one worker output directory', 'data merge');
  const parts: { dir: string; manifest: Manifest }[] = [];
  for (const p of partDirs) {
    const dir = resolve(p);
    if (dir === out) throw new InputError('a worker output cannot also be the merge target (use another --out)', p);
    parts.push({ dir, manifest: await requireManifest(dir) });
  }
  const encoder = parts[0]!.manifest.encoder;
  for (const p of parts) {
    if (!sameEncoder(p.manifest.encoder, encoder)) {
      throw new InputError(`holds features of encoder '${p.manifest.encoder.id}', but ${parts[0]!.dir} has '${encoder.id}': they cannot be merged`, manifestPath(p.dir));
    }
  }
  const existing = await readManifest(out);
  if (existing && Object.keys(existing.subsets).length > 0 && !sameEncoder(existing.encoder, encoder)) {
    throw new InputError(`already holds features of encoder '${existing.encoder.id}', the workers used '${encoder.id}'`, manifestPath(out));
  }

  const bySubset = new Map<string, { dir: string; entry: WorkerSubsetEntry }[]>();
  for (const p of parts) {
    for (const [name, entry] of Object.entries(p.manifest.subsets)) {
      if (!bySubset.has(name)) bySubset.set(name, []);
      bySubset.get(name)!.push({ dir: p.dir, entry: entry as WorkerSubsetEntry });
    }
  }

  const merged: Record<string, SubsetEntry> = {};
  const summary: MergeSummary = { out, parts: parts.length, subsets: {} };
  for (const [name, list] of [...bySubset].sort(([a], [b]) => (a < b ? -1 : 1))) {
    merged[name] = await mergeSubset(out, name, list);
    const screens = SPLIT_NAMES.reduce((n, s) => n + merged[name]!.screens[s], 0);
    summary.subsets[name] = { workers: list.length, shards: merged[name]!.shards.length, screens };
  }

  const now = new Date().toISOString();
  const manifest: Manifest = existing
    ? { ...existing, encoder, updated: now, subsets: { ...existing.subsets, ...merged } }
    : { ...parts[0]!.manifest, created: now, updated: now, encoder, subsets: merged };
  await writeManifest(out, manifest);
  return summary;
}

type WorkerPart = { dir: string; entry: WorkerSubsetEntry };

/** One subset's entry over its workers' parts: checked, shards renumbered in one-machine order. */
async function mergeSubset(out: string, name: string, list: WorkerPart[]): Promise<SubsetEntry> {
  const where = (dir: string) => `${manifestPath(dir)} (subset '${name}')`;
  for (const { dir, entry } of list) {
    if (!entry.complete) throw new InputError('this worker has not finished: re-run it (it resumes) before merging', where(dir));
  }
  checkWorkerSlots(name, list, where);
  checkSameSettings(list, where);
  const first = list[0]!.entry;
  return {
    inputs: list.flatMap((p) => p.entry.inputs),
    splitsFile: first.splitsFile,
    rowsPerShard: first.rowsPerShard,
    skipCorrupt: first.skipCorrupt,
    complete: true,
    started: list.map((p) => p.entry.started).sort()[0]!,
    finished: list.map((p) => p.entry.finished ?? '').sort().pop() || null,
    ...mergedCounts(list),
    shards: await mergedShards(out, list),
  };
}

/** With worker slots, every slot of i/N exactly once; sorts `list` by slot (the one-machine order). */
function checkWorkerSlots(name: string, list: WorkerPart[], where: (dir: string) => string): void {
  const slots = list.map((p) => p.entry.worker);
  if (!slots.every((w) => w !== undefined)) return;
  const count = slots[0]!.count;
  const seen = new Map<number, string>();
  for (const [k, w] of slots.entries()) {
    if (w!.count !== count) throw new InputError(`was written as worker ${w!.index}/${w!.count}, others as ?/${count}`, where(list[k]!.dir));
    if (seen.has(w!.index)) throw new InputError(`worker ${w!.index}/${count} appears twice (also in ${seen.get(w!.index)})`, where(list[k]!.dir));
    seen.set(w!.index, list[k]!.dir);
  }
  const absent = [...Array(count).keys()].filter((i) => !seen.has(i));
  if (absent.length > 0) throw new InputError(`workers ${absent.join(', ')} of ${count} are missing from the merge`, `subset '${name}'`);
  list.sort((a, b) => a.entry.worker!.index - b.entry.worker!.index);
}

/** The same shard size, split file and corrupt-record policy everywhere, and no input read twice. */
function checkSameSettings(list: readonly WorkerPart[], where: (dir: string) => string): void {
  const first = list[0]!.entry;
  const readBy = new Map<string, string>();
  for (const { dir, entry } of list) {
    if (entry.rowsPerShard !== first.rowsPerShard) throw new InputError(`--rows-per-shard ${entry.rowsPerShard} differs from ${first.rowsPerShard}`, where(dir));
    if (entry.splitsFile.sha256 !== first.splitsFile.sha256) throw new InputError(`split file ${entry.splitsFile.path} differs from ${first.splitsFile.path}`, where(dir));
    if (entry.skipCorrupt !== first.skipCorrupt) throw new InputError('--skip-corrupt differs between workers', where(dir));
    for (const f of entry.inputs) {
      if (readBy.has(f.path)) throw new InputError(`input ${f.path} was read by two workers (also ${readBy.get(f.path)})`, where(dir));
      readBy.set(f.path, dir);
    }
  }
}

/** Every worker's shards, split by split in worker order, renumbered, by path relative to `out`; sizes checked. */
async function mergedShards(out: string, list: readonly WorkerPart[]): Promise<ShardEntry[]> {
  const shards: ShardEntry[] = [];
  const next = zeroCounts();
  for (const split of SPLIT_NAMES) {
    for (const { dir, entry } of list) {
      for (const e of entry.shards.filter((x) => x.split === split).sort((a, b) => a.index - b.index)) {
        const path = join(dir, e.file);
        const size = await stat(path).then((s) => s.size, () => -1);
        if (size !== e.bytes) throw new InputError(size < 0 ? 'shard file is missing' : `shard file has ${size} bytes, the manifest says ${e.bytes}`, path);
        const file = fileFrom(out, dir, e.file);
        if (isAbsolute(file)) throw new InputError('shards must be reachable by a relative path from --out (same drive)', path);
        shards.push({ ...e, file, index: next[split]++ });
      }
    }
  }
  return shards;
}

function mergedCounts(list: readonly WorkerPart[]): Pick<SubsetEntry, 'screens' | 'episodes' | 'unassigned' | 'records'> {
  const total = (n: (e: WorkerSubsetEntry) => number) => list.reduce((acc, p) => acc + n(p.entry), 0);
  const perSplit = (pick: (e: SubsetEntry) => Record<string, number>) => {
    const sum = zeroCounts();
    for (const { entry } of list) for (const s of SPLIT_NAMES) sum[s] += pick(entry)[s] ?? 0;
    return sum;
  };
  return {
    screens: perSplit((e) => e.screens),
    episodes: perSplit((e) => e.episodes),
    unassigned: {
      episodes: total((e) => e.unassigned.episodes),
      screens: total((e) => e.unassigned.screens),
      examples: list.flatMap((p) => p.entry.unassigned.examples).slice(0, 10),
    },
    records: { read: total((e) => e.records.read), skipped: total((e) => e.records.skipped) },
  };
}
