import { RecordBatch, RecordBatchFileWriter, Schema, Struct, Table, makeData, tableFromIPC, tableToIPC } from 'apache-arrow';
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { sameEncoder, type EncoderInfo } from '../screen/vision/encoder.js';
import type { ScreenText } from '../screen/text/types.js';
import { tempPathFor } from '../util/atomic.js';
import { InputError } from '../util/errors.js';
import { requireManifest, shardsOf, SPLIT_NAMES, type Manifest, type ShardEntry } from './manifest.js';
import { BatchColumns, readRow, rowReaders, SHARD_FORMAT, shardSchema, writeColumns, type RowReaders, type ShardRow } from './shard_schema.js';
import type { ActionTypeId, AitwAction, SplitName, UiAnnotations } from './types.js';

export { SHARD_FORMAT, shardSchema, type ShardRow } from './shard_schema.js';

/**
 * Shard files: Apache Arrow IPC files, one row per screen (= AITW step), holding the frozen
 * encoder's features and everything training and evaluation need, so neither re-reads TFRecords.
 * Each row carries its whole episode's actions, so history (≤ 8 previous actions) and plan
 * (≤ 4 next action types) come from the row alone. The columns are defined once, in shard_schema.ts.
 */

/**
 * Rows per Arrow record batch inside a shard. ShardWriter serialises and writes one record batch
 * at a time, so a shard in the making holds about this many rows in memory (~15 MB of built-in
 * features) instead of all of its rows twice over (the rows, then the file's bytes); readers take
 * any number of batches.
 */
export const ROWS_PER_RECORD_BATCH = 64;

function checkScreens(rows: readonly ShardRow[], encoder: EncoderInfo): void {
  const size = encoder.patches * encoder.dim;
  for (const r of rows) {
    if (r.screen.length !== size)
      throw new RangeError(`episode ${r.episodeId} step ${r.stepId}: screen has ${r.screen.length} values, expected ${encoder.patches}×${encoder.dim}`);
  }
}

/** One Arrow record batch holding `rows`, its screens' values in `screens` when given. Pure but for filling `screens`. */
function recordBatch(rows: readonly ShardRow[], encoder: EncoderInfo, schema: Schema, screens?: Float32Array): RecordBatch {
  const columns = writeColumns(rows, encoder.patches * encoder.dim, screens);
  const struct = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children: schema.fields.map((f) => columns.get(f.name)!) });
  return new RecordBatch(schema, struct);
}

function recordBatches(rows: readonly ShardRow[], encoder: EncoderInfo, schema: Schema): RecordBatch[] {
  const out: RecordBatch[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_RECORD_BATCH) out.push(recordBatch(rows.slice(i, i + ROWS_PER_RECORD_BATCH), encoder, schema));
  return out;
}

/** Serialises rows into the bytes of one Arrow IPC file, laid out as ShardWriter writes it. Pure. */
export function encodeShard(rows: readonly ShardRow[], encoder: EncoderInfo): Uint8Array {
  checkScreens(rows, encoder);
  const schema = shardSchema(encoder);
  return tableToIPC(new Table(schema, recordBatches(rows, encoder, schema)), 'file');
}

export interface WrittenShard {
  path: string;
  index: number;
  rows: number;
  bytes: number;
  sha256: string;
}

/**
 * Arrays for record batches' screen columns, used again once a shard file has taken their bytes.
 * Why: a new ROWS_PER_RECORD_BATCH-row array (15 MB of built-in features) is a page fault per 4 KB
 * on first touch, and on a virtual machine those were the largest share of `data prepare`'s main
 * thread (README Performance). A few stay between writers and calls (the bench's five subsets, the
 * demo's stages); the rest go to the collector.
 */
class ScreenSlabs {
  private static readonly KEEP = 4;
  private readonly free = new Map<number, Float32Array[]>();

  take(length: number): Float32Array {
    return this.free.get(length)?.pop() ?? new Float32Array(length);
  }

  give(slab: Float32Array): void {
    const kept = this.free.get(slab.length) ?? [];
    if (kept.length < ScreenSlabs.KEEP) this.free.set(slab.length, [...kept, slab]);
  }
}
const slabs = new ScreenSlabs();

/**
 * One shard file in the making: record batches go through Arrow's file writer into a temp file
 * beside `path`, hashed on the way, and the file is renamed into place when finished, so a crash
 * leaves no partial shard under the final name. Arrow emits views of the column buffers, so nothing
 * is joined into one file-sized buffer, and a batch's screen slab goes back to `slabs` once the
 * file has taken every byte of it that the batch used (or, should Arrow have copied it, when the
 * file is finished).
 */
class OpenShard {
  private readonly arrow = new RecordBatchFileWriter();
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private readonly drained: Promise<void>;
  /** Slabs whose bytes the file has not yet all taken, by their buffer: the slab and the bytes still to come. */
  private readonly lent = new Map<ArrayBufferLike, { slab: Float32Array; left: number }>();

  private constructor(
    readonly path: string,
    private readonly tmp: string,
    file: FileHandle,
  ) {
    this.drained = (async () => {
      try {
        for await (const chunk of this.arrow) {
          this.hash.update(chunk);
          await file.write(chunk);
          this.bytes += chunk.byteLength;
          this.taken(chunk);
        }
      } finally {
        await file.close();
      }
    })();
    this.drained.catch(() => undefined); // awaited in finish(); this keeps a failed write from going unhandled meanwhile
  }

  static async open(path: string): Promise<OpenShard> {
    await mkdir(dirname(path), { recursive: true });
    const tmp = tempPathFor(path);
    return new OpenShard(path, tmp, await open(tmp, 'w'));
  }

  /** Queues `batch`; `screens` (a slab's first `usedBytes`) holds its screen column. */
  write(batch: RecordBatch, screens: { slab: Float32Array; usedBytes: number }): void {
    this.lent.set(screens.slab.buffer, { slab: screens.slab, left: screens.usedBytes });
    this.arrow.write(batch);
  }

  private taken(chunk: Uint8Array): void {
    const lent = this.lent.get(chunk.buffer);
    if (!lent || (lent.left -= chunk.byteLength) > 0) return;
    this.lent.delete(chunk.buffer);
    slabs.give(lent.slab);
  }

  /** Writes the footer, waits for the bytes to reach the file, and renames it into place. */
  async finish(): Promise<{ bytes: number; sha256: string }> {
    this.arrow.close();
    try {
      await this.drained;
      await rename(this.tmp, this.path);
    } catch (err) {
      await rm(this.tmp, { force: true });
      throw err;
    }
    for (const { slab } of this.lent.values()) slabs.give(slab);
    this.lent.clear();
    return { bytes: this.bytes, sha256: this.hash.digest('hex') };
  }
}

export interface ShardWriterOptions {
  encoder: EncoderInfo;
  rowsPerShard: number;
  /** Path of shard k, e.g. `DIR/general/train-00003.arrow`. */
  pathFor: (index: number) => string;
  /** Called after each shard is on disk (e.g. to record it in the manifest). */
  onShard?: (shard: WrittenShard) => Promise<void> | void;
}

/**
 * Rolling writer: row i of the stream goes to shard ⌊i / rowsPerShard⌋, so shard k always holds
 * the same rows for the same input — which is what lets `data prepare` resume by skipping whole
 * finished shards (`put` with the row's stream index; rows of skipped shards are never passed).
 * Holds the rows of the record batch being filled, and any batch the file has not yet taken.
 */
export class ShardWriter {
  private readonly schema: Schema;
  private pending: ShardRow[] = [];
  private file: OpenShard | null = null;
  private shard = -1;
  private rowsInShard = 0;
  private next = 0;
  readonly written: WrittenShard[] = [];

  constructor(private readonly opts: ShardWriterOptions) {
    if (!Number.isInteger(opts.rowsPerShard) || opts.rowsPerShard < 1)
      throw new RangeError(`rowsPerShard must be a positive integer, got ${opts.rowsPerShard}`);
    this.schema = shardSchema(opts.encoder);
  }

  /** Appends the next row of the stream. */
  add(row: ShardRow): Promise<void> {
    return this.put(this.next, row);
  }

  /** Places the row with stream index `index`; indices must rise by one within a shard. */
  async put(index: number, row: ShardRow): Promise<void> {
    const n = this.opts.rowsPerShard;
    const k = Math.floor(index / n);
    if (k !== this.shard) {
      if (this.rowsInShard > 0) throw new Error(`ShardWriter: shard ${this.shard} left with ${this.rowsInShard}/${n} rows before row ${index}`);
      this.shard = k;
    }
    if (index !== k * n + this.rowsInShard) throw new Error(`ShardWriter: row ${index} arrived out of order (expected ${k * n + this.rowsInShard})`);
    checkScreens([row], this.opts.encoder);
    this.pending.push(row);
    this.rowsInShard++;
    this.next = index + 1;
    if (this.pending.length === ROWS_PER_RECORD_BATCH) await this.writePending();
    if (this.rowsInShard === n) await this.finishShard();
  }

  /** Writes the last, partial shard. */
  async close(): Promise<WrittenShard[]> {
    if (this.rowsInShard > 0) await this.finishShard();
    return this.written;
  }

  private async writePending(): Promise<void> {
    if (this.pending.length === 0) return;
    this.file ??= await OpenShard.open(this.opts.pathFor(this.shard));
    const size = this.opts.encoder.patches * this.opts.encoder.dim;
    const slab = slabs.take(ROWS_PER_RECORD_BATCH * size);
    const screens = slab.subarray(0, this.pending.length * size);
    this.file.write(recordBatch(this.pending, this.opts.encoder, this.schema, screens), { slab, usedBytes: screens.byteLength });
    this.pending = [];
  }

  private async finishShard(): Promise<void> {
    await this.writePending();
    const { bytes, sha256 } = await this.file!.finish();
    const shard: WrittenShard = { path: this.file!.path, index: this.shard, rows: this.rowsInShard, bytes, sha256 };
    this.file = null;
    this.rowsInShard = 0;
    this.written.push(shard);
    await this.opts.onShard?.(shard);
  }
}

// --- reading ---

/** One parsed shard file. */
export interface ShardFile {
  path: string;
  encoder: EncoderInfo;
  rows: number;
  batches: RecordBatch[];
}

/**
 * One buffer that files are read into one after another, grown to the largest. Why: a new buffer
 * per shard file (half a GB for 2,048 built-in rows) is a page fault per 4 KB page, and on a
 * virtual machine those were most of a split's loading time. A table parsed from it views it: read
 * the next file only once what is kept of the last has been copied out (the row readers copy).
 */
export class ReadBuffer {
  private bytes = Buffer.alloc(0);

  async read(path: string): Promise<Uint8Array> {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      if (size > this.bytes.length) this.bytes = Buffer.allocUnsafe(size);
      for (let at = 0; at < size; ) {
        const { bytesRead } = await file.read(this.bytes, at, size - at, at);
        if (bytesRead === 0) throw new Error(`file ended at byte ${at} of ${size}`);
        at += bytesRead;
      }
      return this.bytes.subarray(0, size);
    } finally {
      await file.close();
    }
  }
}

/**
 * Parses a shard file and checks its schema (and its encoder, when `expect` is given); read into
 * `into` when given (see ReadBuffer), else into a buffer of its own.
 */
export async function readShardFile(path: string, expect?: EncoderInfo, into?: ReadBuffer): Promise<ShardFile> {
  let table: Table;
  try {
    table = tableFromIPC(into ? await into.read(path) : await readFile(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError('shard file is missing', path);
    throw new InputError(`not a readable Arrow IPC file (${(err as Error).message})`, path);
  }
  const meta = table.schema.metadata;
  if (meta.get('autoui.format') !== SHARD_FORMAT)
    throw new InputError(`not an autoui shard (schema metadata 'autoui.format' is ${JSON.stringify(meta.get('autoui.format'))})`, path);
  let encoder: EncoderInfo;
  try {
    encoder = JSON.parse(meta.get('autoui.encoder') ?? '') as EncoderInfo;
  } catch {
    throw new InputError(`schema metadata 'autoui.encoder' is not JSON`, path);
  }
  if (expect && !sameEncoder(encoder, expect))
    throw new InputError(`made by encoder ${encoder.id} (${encoder.patches}×${encoder.dim}), expected ${expect.id} (${expect.patches}×${expect.dim})`, path);
  const want = shardSchema(encoder);
  for (const f of want.fields) {
    const got = table.schema.fields.find((g) => g.name === f.name);
    if (!got) throw new InputError(`column '${f.name}' is missing`, path);
    if (String(got.type) !== String(f.type)) throw new InputError(`column '${f.name}' is ${String(got.type)}, expected ${String(f.type)}`, path);
  }
  return { path, encoder, rows: table.numRows, batches: table.batches };
}

/** The rows of one parsed shard file, in order. */
export function* shardRows(file: ShardFile): Generator<ShardRow> {
  for (const batch of file.batches) {
    const r = rowReaders(new BatchColumns(batch, file.path));
    for (let i = 0; i < batch.numRows; i++) yield readRow(r, i);
  }
}

export interface ShardSelection {
  split?: SplitName;
  subset?: string;
  /** Read subsets whose `data prepare` has not finished (default: refuse, naming them). */
  allowIncomplete?: boolean;
}

/** The manifest's shards for a selection, with checks that the selection exists and is finished. */
function selectShards(dir: string, m: Manifest, subsets: readonly string[] | undefined, split: SplitName | undefined, allowIncomplete: boolean) {
  const known = Object.keys(m.subsets).sort();
  for (const s of subsets ?? []) {
    if (!m.subsets[s]) throw new InputError(`subset '${s}' is not in this shard directory (it has: ${known.join(', ') || 'none'})`, dir);
  }
  if (split !== undefined && !SPLIT_NAMES.includes(split)) throw new InputError(`unknown split '${split}' (expected train, val or test)`, dir);
  const chosen = subsets ?? known;
  const unfinished = chosen.filter((s) => !m.subsets[s]!.complete);
  if (unfinished.length > 0 && !allowIncomplete)
    throw new InputError(`subset(s) ${unfinished.join(', ')} not fully prepared yet (re-run 'autoui data prepare' to finish)`, dir);
  return shardsOf(m, { split, subsets: chosen });
}

/**
 * The listed shard files in order, each checked against its manifest entry. They are read one
 * after another into one ReadBuffer: the next file is read only when the caller asks for it, so it
 * must be done with a file (copy out what it keeps) before it takes the next.
 */
async function* shardFiles(dir: string, encoder: EncoderInfo, entries: readonly ShardEntry[]): AsyncGenerator<ShardFile> {
  const buffer = new ReadBuffer();
  for (const e of entries) {
    const file = await readShardFile(join(dir, e.file), encoder, buffer);
    if (file.rows !== e.rows) throw new InputError(`has ${file.rows} rows but the manifest says ${e.rows}`, file.path);
    yield file;
  }
}

/** Streams the rows of a shard directory (subset by name, then split, then shard order). */
export async function* readShardDir(dir: string, opts: ShardSelection = {}): AsyncGenerator<ShardRow> {
  const m = await requireManifest(dir);
  const entries = selectShards(dir, m, opts.subset === undefined ? undefined : [opts.subset], opts.split, opts.allowIncomplete ?? false);
  for await (const file of shardFiles(dir, m.encoder, entries)) yield* shardRows(file);
}

/** Columnar, in-memory view of a split for training: typed arrays, random access by row. */
export interface ShardTable {
  encoder: EncoderInfo;
  split: SplitName;
  rows: number;
  /** Screen features, rows × patches × dim, row-major; see `screenAt`. */
  screens: Float32Array;
  episodeId: string[];
  subset: string[];
  stepId: Int32Array;
  episodeLength: Int32Array;
  goal: string[];
  imageHeight: Int32Array;
  imageWidth: Int32Array;
  actionType: Int32Array;
  /** (y, x) per row: rows × 2. */
  touchYX: Float32Array;
  liftYX: Float32Array;
  typedText: string[];
  /** The episode's actions for each row; rows of one episode share one array. */
  episodeActions: AitwAction[][];
  /** UI annotations per row (for evaluation); null when loaded with `annotations: false`. */
  annotations: UiAnnotations[] | null;
  /** Screen text items per row (as prepared); null when loaded with `texts: false`. */
  texts: ScreenText[][] | null;
}

export interface LoadOptions {
  split: SplitName;
  subsets?: readonly string[];
  /** Load UI annotations too (default true; training does not need them). */
  annotations?: boolean;
  /** Load the prepared screen texts (default true). */
  texts?: boolean;
  allowIncomplete?: boolean;
}

/** Loads one split of a shard directory into typed arrays (all shards, one pass, one allocation for features). */
export async function loadShards(dir: string, opts: LoadOptions): Promise<ShardTable> {
  const m = await requireManifest(dir);
  const entries = selectShards(dir, m, opts.subsets, opts.split, opts.allowIncomplete ?? false);
  const t = emptyTable(m.encoder, opts, entries.reduce((s, e) => s + e.rows, 0), dir);
  let at = 0;
  for await (const file of shardFiles(dir, m.encoder, entries)) {
    for (const batch of file.batches) {
      const c = new BatchColumns(batch, file.path);
      t.screens.set(c.screens().values, at * m.encoder.patches * m.encoder.dim);
      const r = rowReaders(c);
      for (let i = 0; i < batch.numRows; i++, at++) putRow(t, at, r, i);
    }
  }
  return t;
}

function emptyTable(encoder: EncoderInfo, opts: LoadOptions, rows: number, dir: string): ShardTable {
  const size = encoder.patches * encoder.dim;
  let screens: Float32Array;
  try {
    screens = new Float32Array(rows * size);
  } catch {
    throw new InputError(`${rows} screens × ${size} features = ${((rows * size * 4) / 2 ** 30).toFixed(1)} GiB do not fit in one array; load fewer subsets`, dir);
  }
  const strings = () => new Array<string>(rows);
  return {
    encoder, split: opts.split, rows, screens,
    episodeId: strings(), subset: strings(), goal: strings(), typedText: strings(),
    stepId: new Int32Array(rows), episodeLength: new Int32Array(rows), imageHeight: new Int32Array(rows), imageWidth: new Int32Array(rows),
    actionType: new Int32Array(rows), touchYX: new Float32Array(rows * 2), liftYX: new Float32Array(rows * 2),
    episodeActions: new Array<AitwAction[]>(rows),
    annotations: opts.annotations ?? true ? new Array<UiAnnotations>(rows) : null,
    texts: opts.texts ?? true ? new Array<ScreenText[]>(rows) : null,
  };
}

/** Row i of a batch into row `at` of the table (everything but the features, copied in bulk). */
function putRow(t: ShardTable, at: number, r: RowReaders, i: number): void {
  const id = r.episodeId(i);
  const sub = r.subset(i);
  // Consecutive rows of one episode share strings and the action list (memory stays per-episode).
  const prev = at > 0 && t.episodeId[at - 1] === id && t.subset[at - 1] === sub ? at - 1 : -1;
  t.episodeId[at] = prev >= 0 ? t.episodeId[prev]! : id;
  t.subset[at] = prev >= 0 ? t.subset[prev]! : sub;
  t.goal[at] = prev >= 0 ? t.goal[prev]! : r.goal(i);
  t.episodeActions[at] = prev >= 0 ? t.episodeActions[prev]! : r.episodeActions(i);
  t.stepId[at] = r.stepId(i);
  t.episodeLength[at] = r.episodeLength(i);
  t.imageHeight[at] = r.imageHeight(i);
  t.imageWidth[at] = r.imageWidth(i);
  const a = r.action(i);
  t.actionType[at] = a.action_type;
  t.touchYX.set(a.touch_yx, at * 2);
  t.liftYX.set(a.lift_yx, at * 2);
  t.typedText[at] = a.typed_text;
  if (t.annotations) t.annotations[at] = r.annotations(i);
  if (t.texts) t.texts[at] = r.texts(i);
}

/** Features of row i (a view, no copy). */
export function screenAt(t: ShardTable, i: number): Float32Array {
  const size = t.encoder.patches * t.encoder.dim;
  return t.screens.subarray(i * size, (i + 1) * size);
}

/** The gold action of row i. */
export function actionAt(t: ShardTable, i: number): AitwAction {
  return {
    action_type: t.actionType[i] as ActionTypeId,
    touch_yx: [t.touchYX[2 * i]!, t.touchYX[2 * i + 1]!],
    lift_yx: [t.liftYX[2 * i]!, t.liftYX[2 * i + 1]!],
    typed_text: t.typedText[i]!,
  };
}
