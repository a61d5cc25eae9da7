import {
  Data,
  Field,
  FixedSizeList,
  Float32,
  Int32,
  Int8,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Type,
  Utf8,
  makeData,
  tableFromIPC,
  tableToIPC,
  type DataType,
} from 'apache-arrow';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sameEncoder, type EncoderInfo } from '../screen/vision/encoder.js';
import { writeFileAtomic } from '../util/atomic.js';
import { InputError } from '../util/errors.js';
import { requireManifest, sha256Bytes, shardsOf, SPLIT_NAMES, type Manifest } from './manifest.js';
import { isActionTypeId, type AitwAction, type ActionTypeId, type Box, type SplitName, type UiAnnotations } from './types.js';

/**
 * Shard files: Apache Arrow IPC files, one row per screen (= AITW step), holding the frozen
 * encoder's features and everything training and evaluation need, so neither re-reads TFRecords.
 * Each row carries its whole episode's actions, so history (≤ 8 previous actions) and plan
 * (≤ 4 next action types) come from the row alone.
 */

export const SHARD_FORMAT = 'autoui-shard/1';

/** One screen with its gold action, annotations and episode context. */
export interface ShardRow {
  episodeId: string;
  subset: string;
  split: SplitName;
  stepId: number;
  episodeLength: number;
  goal: string;
  /** Size of the original screenshot (features do not keep it). */
  imageHeight: number;
  imageWidth: number;
  /** Encoder features, `patches × dim` row-major. */
  screen: Float32Array;
  action: AitwAction;
  annotations: UiAnnotations;
  /** Every action of the episode, by step id (`episodeActions[stepId]` is `action`). */
  episodeActions: AitwAction[];
}

// Columns in file order. Non-null everywhere: a missing value is a bug, not data.
const item = (t: DataType): Field => new Field('item', t, false);
const COLUMNS = {
  episode_id: () => new Utf8(),
  subset: () => new Utf8(),
  split: () => new Utf8(),
  step_id: () => new Int32(),
  episode_length: () => new Int32(),
  goal: () => new Utf8(),
  image_height: () => new Int32(),
  image_width: () => new Int32(),
  screen: (size: number) => new FixedSizeList(size, item(new Float32())),
  action_type: () => new Int8(),
  touch_y: () => new Float32(),
  touch_x: () => new Float32(),
  lift_y: () => new Float32(),
  lift_x: () => new Float32(),
  typed_text: () => new Utf8(),
  /** Flattened (y, x, h, w) per box, as AITW stores them. */
  ui_positions: () => new List(item(new Float32())),
  ui_text: () => new List(item(new Utf8())),
  ui_types: () => new List(item(new Utf8())),
  episode_action_types: () => new List(item(new Int8())),
  /** Flattened (y, x) per step. */
  episode_touch: () => new List(item(new Float32())),
  episode_lift: () => new List(item(new Float32())),
  episode_typed_text: () => new List(item(new Utf8())),
} as const;
type ColumnName = keyof typeof COLUMNS;
const COLUMN_NAMES = Object.keys(COLUMNS) as ColumnName[];

/** The Arrow schema of a shard made by `encoder`; the encoder is also recorded in the schema metadata. */
export function shardSchema(encoder: EncoderInfo): Schema {
  const fields = COLUMN_NAMES.map((name) => new Field(name, COLUMNS[name](encoder.patches * encoder.dim), false));
  return new Schema(
    fields,
    new Map([
      ['autoui.format', SHARD_FORMAT],
      ['autoui.encoder', JSON.stringify(encoder)],
    ]),
  );
}

// --- building columns straight from typed arrays (no per-value builder calls) ---

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

function utf8Data(strings: readonly string[]): Data<Utf8> {
  const parts = strings.map((s) => textEncoder.encode(s));
  const offsets = new Int32Array(strings.length + 1);
  for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i]! + parts[i]!.length;
  const bytes = new Uint8Array(offsets[strings.length]!);
  parts.forEach((p, i) => bytes.set(p, offsets[i]!));
  return makeData({ type: new Utf8(), length: strings.length, nullCount: 0, valueOffsets: offsets, data: bytes });
}

function listData(type: List, lengths: ArrayLike<number>, child: Data): Data<List> {
  const offsets = new Int32Array(lengths.length + 1);
  for (let i = 0; i < lengths.length; i++) offsets[i + 1] = offsets[i]! + lengths[i]!;
  return makeData({ type, length: lengths.length, nullCount: 0, valueOffsets: offsets, child });
}

const f32 = (values: ArrayLike<number>): Data<Float32> =>
  makeData({ type: new Float32(), length: values.length, nullCount: 0, data: Float32Array.from(values) });
const i32 = (values: ArrayLike<number>): Data<Int32> =>
  makeData({ type: new Int32(), length: values.length, nullCount: 0, data: Int32Array.from(values) });
const i8 = (values: ArrayLike<number>): Data<Int8> =>
  makeData({ type: new Int8(), length: values.length, nullCount: 0, data: Int8Array.from(values) });

/** Serialises rows into the bytes of one Arrow IPC file. Pure. */
export function encodeShard(rows: readonly ShardRow[], encoder: EncoderInfo): Uint8Array {
  const size = encoder.patches * encoder.dim;
  const schema = shardSchema(encoder);
  const n = rows.length;
  const screens = new Float32Array(n * size);
  rows.forEach((r, i) => {
    if (r.screen.length !== size)
      throw new RangeError(`episode ${r.episodeId} step ${r.stepId}: screen has ${r.screen.length} values, expected ${encoder.patches}×${encoder.dim}`);
    screens.set(r.screen, i * size);
  });
  const typeOf = (name: ColumnName): DataType => schema.fields[COLUMN_NAMES.indexOf(name)]!.type as DataType;
  const flat = <T>(get: (r: ShardRow) => readonly T[]): T[] => rows.flatMap(get);
  const lens = (get: (r: ShardRow) => { length: number }, per = 1): number[] => rows.map((r) => get(r).length * per);

  const columns: Record<ColumnName, Data> = {
    episode_id: utf8Data(rows.map((r) => r.episodeId)),
    subset: utf8Data(rows.map((r) => r.subset)),
    split: utf8Data(rows.map((r) => r.split)),
    step_id: i32(rows.map((r) => r.stepId)),
    episode_length: i32(rows.map((r) => r.episodeLength)),
    goal: utf8Data(rows.map((r) => r.goal)),
    image_height: i32(rows.map((r) => r.imageHeight)),
    image_width: i32(rows.map((r) => r.imageWidth)),
    screen: makeData({
      type: typeOf('screen') as FixedSizeList,
      length: n,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: n * size, nullCount: 0, data: screens }),
    }),
    action_type: i8(rows.map((r) => r.action.action_type)),
    touch_y: f32(rows.map((r) => r.action.touch_yx[0])),
    touch_x: f32(rows.map((r) => r.action.touch_yx[1])),
    lift_y: f32(rows.map((r) => r.action.lift_yx[0])),
    lift_x: f32(rows.map((r) => r.action.lift_yx[1])),
    typed_text: utf8Data(rows.map((r) => r.action.typed_text)),
    ui_positions: listData(typeOf('ui_positions') as List, lens((r) => r.annotations.positions, 4), f32(flat((r) => r.annotations.positions.flat()))),
    ui_text: listData(typeOf('ui_text') as List, lens((r) => r.annotations.text), utf8Data(flat((r) => r.annotations.text))),
    ui_types: listData(typeOf('ui_types') as List, lens((r) => r.annotations.types), utf8Data(flat((r) => r.annotations.types))),
    episode_action_types: listData(typeOf('episode_action_types') as List, lens((r) => r.episodeActions), i8(flat((r) => r.episodeActions.map((a) => a.action_type)))),
    episode_touch: listData(typeOf('episode_touch') as List, lens((r) => r.episodeActions, 2), f32(flat((r) => r.episodeActions.flatMap((a) => a.touch_yx)))),
    episode_lift: listData(typeOf('episode_lift') as List, lens((r) => r.episodeActions, 2), f32(flat((r) => r.episodeActions.flatMap((a) => a.lift_yx)))),
    episode_typed_text: listData(typeOf('episode_typed_text') as List, lens((r) => r.episodeActions), utf8Data(flat((r) => r.episodeActions.map((a) => a.typed_text)))),
  };
  const struct = makeData({
    type: new Struct(schema.fields),
    length: n,
    nullCount: 0,
    children: COLUMN_NAMES.map((c) => columns[c]),
  });
  return tableToIPC(new Table(schema, [new RecordBatch(schema, struct)]), 'file');
}

export interface WrittenShard {
  path: string;
  index: number;
  rows: number;
  bytes: number;
  sha256: string;
}

/** Writes one shard atomically (temp + rename) and returns its row count, size and sha256. */
export async function writeShard(path: string, index: number, rows: readonly ShardRow[], encoder: EncoderInfo): Promise<WrittenShard> {
  const bytes = encodeShard(rows, encoder);
  await writeFileAtomic(path, bytes);
  return { path, index, rows: rows.length, bytes: bytes.length, sha256: sha256Bytes(bytes) };
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
 * Buffers at most one shard.
 */
export class ShardWriter {
  private buffer: ShardRow[] = [];
  private shard = -1;
  private next = 0;
  readonly written: WrittenShard[] = [];

  constructor(private readonly opts: ShardWriterOptions) {
    if (!Number.isInteger(opts.rowsPerShard) || opts.rowsPerShard < 1)
      throw new RangeError(`rowsPerShard must be a positive integer, got ${opts.rowsPerShard}`);
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
      if (this.buffer.length > 0) {
        if (this.buffer.length !== n)
          throw new Error(`ShardWriter: shard ${this.shard} left with ${this.buffer.length}/${n} rows before row ${index}`);
        await this.flush();
      }
      this.shard = k;
    }
    if (index !== k * n + this.buffer.length)
      throw new Error(`ShardWriter: row ${index} arrived out of order (expected ${k * n + this.buffer.length})`);
    this.buffer.push(row);
    this.next = index + 1;
    if (this.buffer.length === n) await this.flush();
  }

  /** Writes the last, partial shard. */
  async close(): Promise<WrittenShard[]> {
    if (this.buffer.length > 0) await this.flush();
    return this.written;
  }

  private async flush(): Promise<void> {
    const shard = await writeShard(this.opts.pathFor(this.shard), this.shard, this.buffer, this.opts.encoder);
    this.buffer = [];
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

/** Parses a shard file and checks its schema (and its encoder, when `expect` is given). */
export async function readShardFile(path: string, expect?: EncoderInfo): Promise<ShardFile> {
  let table: Table;
  try {
    table = tableFromIPC(await readFile(path));
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

/** Typed, offset-aware access to the columns of one record batch. */
class BatchColumns {
  constructor(private readonly batch: RecordBatch) {}

  data(name: ColumnName): Data {
    const v = this.batch.getChild(name);
    if (!v || v.data.length !== 1) throw new Error(`column ${name}: expected one data chunk`);
    return v.data[0]!;
  }

  ints(name: ColumnName): (i: number) => number {
    const d = this.data(name);
    const values = d.values as Int32Array | Int8Array;
    return (i) => values[d.offset + i]!;
  }

  floats(name: ColumnName): (i: number) => number {
    const d = this.data(name);
    const values = d.values as Float32Array;
    return (i) => values[d.offset + i]!;
  }

  strings(name: ColumnName): (i: number) => string {
    return utf8Reader(this.data(name));
  }

  /** For a List column: [start, end) of row i inside the child, and the child. */
  list(name: ColumnName): { range: (i: number) => [number, number]; child: Data } {
    const d = this.data(name);
    const offsets = d.valueOffsets as Int32Array;
    return { range: (i) => [offsets[d.offset + i]!, offsets[d.offset + i + 1]!], child: d.children[0]! };
  }

  floatList(name: ColumnName): (i: number) => Float32Array {
    const { range, child } = this.list(name);
    const values = child.values as Float32Array;
    return (i) => {
      const [a, b] = range(i);
      return values.slice(child.offset + a, child.offset + b);
    };
  }

  intList(name: ColumnName): (i: number) => Int8Array {
    const { range, child } = this.list(name);
    const values = child.values as Int8Array;
    return (i) => {
      const [a, b] = range(i);
      return values.slice(child.offset + a, child.offset + b);
    };
  }

  stringList(name: ColumnName): (i: number) => string[] {
    const { range, child } = this.list(name);
    const at = utf8Reader(child);
    return (i) => {
      const [a, b] = range(i);
      const out: string[] = [];
      for (let j = a; j < b; j++) out.push(at(j));
      return out;
    };
  }

  /** Screen features of row i, as a view into the batch's memory. */
  screens(): { size: number; values: Float32Array; at: (i: number) => Float32Array } {
    const d = this.data('screen');
    const size = (d.type as FixedSizeList).listSize;
    const child = d.children[0]!;
    const values = child.values as Float32Array;
    const base = child.offset + d.offset * size;
    return { size, values: values.subarray(base, base + d.length * size), at: (i) => values.subarray(base + i * size, base + (i + 1) * size) };
  }
}

function utf8Reader(d: Data): (i: number) => string {
  if (d.typeId !== Type.Utf8) throw new Error('expected a utf8 column');
  const offsets = d.valueOffsets as Int32Array;
  const bytes = d.values as Uint8Array;
  return (i) => textDecoder.decode(bytes.subarray(offsets[d.offset + i]!, offsets[d.offset + i + 1]!));
}

function actionType(v: number, where: string): ActionTypeId {
  if (!isActionTypeId(v)) throw new InputError(`action type ${v} is not a known AITW action type`, where);
  return v;
}

/** Decodes one batch's per-row readers; shared by the row reader and the bulk loader. */
function rowReaders(batch: RecordBatch, path: string) {
  const c = new BatchColumns(batch);
  const touchY = c.floats('touch_y'), touchX = c.floats('touch_x'), liftY = c.floats('lift_y'), liftX = c.floats('lift_x');
  const epTypes = c.intList('episode_action_types'), epTouch = c.floatList('episode_touch'), epLift = c.floatList('episode_lift');
  const epText = c.stringList('episode_typed_text');
  const uiPos = c.floatList('ui_positions'), uiText = c.stringList('ui_text'), uiTypes = c.stringList('ui_types');
  const where = (i: number) => `${path}#row ${i}`;
  const typeOf = c.ints('action_type');
  const typedText = c.strings('typed_text');
  return {
    columns: c,
    episodeId: c.strings('episode_id'),
    subset: c.strings('subset'),
    split: c.strings('split'),
    stepId: c.ints('step_id'),
    episodeLength: c.ints('episode_length'),
    goal: c.strings('goal'),
    imageHeight: c.ints('image_height'),
    imageWidth: c.ints('image_width'),
    action: (i: number): AitwAction => ({
      action_type: actionType(typeOf(i), where(i)),
      touch_yx: [touchY(i), touchX(i)],
      lift_yx: [liftY(i), liftX(i)],
      typed_text: typedText(i),
    }),
    annotations: (i: number): UiAnnotations => {
      const flat = uiPos(i);
      const positions: Box[] = [];
      for (let j = 0; j + 3 < flat.length; j += 4) positions.push([flat[j]!, flat[j + 1]!, flat[j + 2]!, flat[j + 3]!]);
      return { positions, text: uiText(i), types: uiTypes(i) };
    },
    episodeActions: (i: number): AitwAction[] => {
      const types = epTypes(i), touch = epTouch(i), lift = epLift(i), texts = epText(i);
      if (touch.length !== 2 * types.length || lift.length !== 2 * types.length || texts.length !== types.length)
        throw new InputError('episode action columns disagree in length', where(i));
      return Array.from(types, (t, s) => ({
        action_type: actionType(t, where(i)),
        touch_yx: [touch[2 * s]!, touch[2 * s + 1]!],
        lift_yx: [lift[2 * s]!, lift[2 * s + 1]!],
        typed_text: texts[s]!,
      }));
    },
  };
}

/** The rows of one parsed shard file, in order. */
export function* shardRows(file: ShardFile): Generator<ShardRow> {
  for (const batch of file.batches) {
    const r = rowReaders(batch, file.path);
    const screens = r.columns.screens();
    for (let i = 0; i < batch.numRows; i++) {
      yield {
        episodeId: r.episodeId(i),
        subset: r.subset(i),
        split: r.split(i) as SplitName,
        stepId: r.stepId(i),
        episodeLength: r.episodeLength(i),
        goal: r.goal(i),
        imageHeight: r.imageHeight(i),
        imageWidth: r.imageWidth(i),
        screen: screens.at(i).slice(),
        action: r.action(i),
        annotations: r.annotations(i),
        episodeActions: r.episodeActions(i),
      };
    }
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

/** Streams the rows of a shard directory (subset by name, then split, then shard order). */
export async function* readShardDir(dir: string, opts: ShardSelection = {}): AsyncGenerator<ShardRow> {
  const m = await requireManifest(dir);
  const entries = selectShards(dir, m, opts.subset === undefined ? undefined : [opts.subset], opts.split, opts.allowIncomplete ?? false);
  for (const e of entries) {
    const file = await readShardFile(join(dir, e.file), m.encoder);
    if (file.rows !== e.rows) throw new InputError(`has ${file.rows} rows but the manifest says ${e.rows}`, file.path);
    yield* shardRows(file);
  }
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
}

export interface LoadOptions {
  split: SplitName;
  subsets?: readonly string[];
  /** Load UI annotations too (default true; training does not need them). */
  annotations?: boolean;
  allowIncomplete?: boolean;
}

/** Loads one split of a shard directory into typed arrays (all shards, one pass, one allocation for features). */
export async function loadShards(dir: string, opts: LoadOptions): Promise<ShardTable> {
  const m = await requireManifest(dir);
  const entries = selectShards(dir, m, opts.subsets, opts.split, opts.allowIncomplete ?? false);
  const rows = entries.reduce((s, e) => s + e.rows, 0);
  const size = m.encoder.patches * m.encoder.dim;
  let screens: Float32Array;
  try {
    screens = new Float32Array(rows * size);
  } catch {
    throw new InputError(
      `${rows} screens × ${size} features = ${((rows * size * 4) / 2 ** 30).toFixed(1)} GiB do not fit in one array; load fewer subsets`,
      dir,
    );
  }
  const withAnn = opts.annotations ?? true;
  const t: ShardTable = {
    encoder: m.encoder,
    split: opts.split,
    rows,
    screens,
    episodeId: new Array<string>(rows),
    subset: new Array<string>(rows),
    stepId: new Int32Array(rows),
    episodeLength: new Int32Array(rows),
    goal: new Array<string>(rows),
    imageHeight: new Int32Array(rows),
    imageWidth: new Int32Array(rows),
    actionType: new Int32Array(rows),
    touchYX: new Float32Array(rows * 2),
    liftYX: new Float32Array(rows * 2),
    typedText: new Array<string>(rows),
    episodeActions: new Array<AitwAction[]>(rows),
    annotations: withAnn ? new Array<UiAnnotations>(rows) : null,
  };
  let at = 0;
  for (const e of entries) {
    const file = await readShardFile(join(dir, e.file), m.encoder);
    if (file.rows !== e.rows) throw new InputError(`has ${file.rows} rows but the manifest says ${e.rows}`, file.path);
    for (const batch of file.batches) {
      const r = rowReaders(batch, file.path);
      const sc = r.columns.screens();
      screens.set(sc.values, at * size);
      for (let i = 0; i < batch.numRows; i++, at++) {
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
      }
    }
  }
  return t;
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
