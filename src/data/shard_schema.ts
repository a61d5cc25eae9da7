/**
 * The shard schema, written once: each field of a ShardRow names its Arrow columns, how a batch of
 * rows becomes those columns, and how a row is read back. Writing (encodeShard), checking
 * (readShardFile), streaming (shardRows) and bulk loading (loadShards) all go through this table.
 *
 * Columns are built straight from typed arrays (one `makeData` per column, no per-value builder
 * calls): shards hold hundreds of thousands of rows and the builders were the cost of writing them.
 */
import { Data, Field, FixedSizeList, Float32, Int32, Int8, List, RecordBatch, Schema, Type, Utf8, makeData, type DataType } from 'apache-arrow';
import type { EncoderInfo } from '../screen/vision/encoder.js';
import type { ScreenText } from '../screen/text/types.js';
import { InputError } from '../util/errors.js';
import { isActionTypeId, type ActionTypeId, type AitwAction, type Box, type SplitName, type UiAnnotations } from './types.js';

export const SHARD_FORMAT = 'autoui-shard/2';

/** One screen with its gold action, annotations, screen texts and episode context. */
export interface ShardRow {
  episodeId: string;
  subset: string;
  split: SplitName;
  stepId: number;
  episodeLength: number;
  goal: string;
  /** Size of the original screenshot (features do not keep it; patch layouts depend on it). */
  imageHeight: number;
  imageWidth: number;
  /** Encoder features, `patches × dim` row-major. */
  screen: Float32Array;
  action: AitwAction;
  annotations: UiAnnotations;
  /** The screen's text items from the text source `data prepare` used (OCR); [] when it used none. */
  texts: ScreenText[];
  /** Every action of the episode, by step id (`episodeActions[stepId]` is `action`). */
  episodeActions: AitwAction[];
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();
const item = (t: DataType): Field => new Field('item', t, false);
const listOf = (t: DataType) => () => new List(item(t));

function utf8Data(strings: readonly string[]): Data<Utf8> {
  const parts = strings.map((s) => textEncoder.encode(s));
  const offsets = new Int32Array(strings.length + 1);
  for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i]! + parts[i]!.length;
  const bytes = new Uint8Array(offsets[strings.length]!);
  parts.forEach((p, i) => bytes.set(p, offsets[i]!));
  return makeData({ type: new Utf8(), length: strings.length, nullCount: 0, valueOffsets: offsets, data: bytes });
}

const f32 = (values: ArrayLike<number>): Data<Float32> => makeData({ type: new Float32(), length: values.length, nullCount: 0, data: Float32Array.from(values) });
const i32 = (values: ArrayLike<number>): Data<Int32> => makeData({ type: new Int32(), length: values.length, nullCount: 0, data: Int32Array.from(values) });
const i8 = (values: ArrayLike<number>): Data<Int8> => makeData({ type: new Int8(), length: values.length, nullCount: 0, data: Int8Array.from(values) });

/** A List column over `child`, row i holding `lengths[i]` values. */
function listData(itemType: DataType, lengths: ArrayLike<number>, child: Data): Data<List> {
  const offsets = new Int32Array(lengths.length + 1);
  for (let i = 0; i < lengths.length; i++) offsets[i + 1] = offsets[i]! + lengths[i]!;
  return makeData({ type: new List(item(itemType)), length: lengths.length, nullCount: 0, valueOffsets: offsets, child });
}

function utf8Reader(d: Data): (i: number) => string {
  if (d.typeId !== Type.Utf8) throw new Error('expected a utf8 column');
  const offsets = d.valueOffsets as Int32Array;
  const bytes = d.values as Uint8Array;
  return (i) => textDecoder.decode(bytes.subarray(offsets[d.offset + i]!, offsets[d.offset + i + 1]!));
}

/** Typed, offset-aware access to the columns of one record batch. */
export class BatchColumns {
  constructor(
    private readonly batch: RecordBatch,
    readonly path: string,
  ) {}

  data(name: string): Data {
    const v = this.batch.getChild(name);
    if (!v || v.data.length !== 1) throw new Error(`column ${name}: expected one data chunk`);
    return v.data[0]!;
  }

  numbers(name: string): (i: number) => number {
    const d = this.data(name);
    const values = d.values as Int32Array | Int8Array | Float32Array;
    return (i) => values[d.offset + i]!;
  }

  strings(name: string): (i: number) => string {
    return utf8Reader(this.data(name));
  }

  /** A List column: row i's values as a copy (numbers) or an array (strings). */
  numberList(name: string): (i: number) => Float32Array | Int8Array {
    const { range, child } = this.list(name);
    const values = child.values as Float32Array | Int8Array;
    return (i) => {
      const [a, b] = range(i);
      return values.slice(child.offset + a, child.offset + b);
    };
  }

  stringList(name: string): (i: number) => string[] {
    const { range, child } = this.list(name);
    const at = utf8Reader(child);
    return (i) => {
      const [a, b] = range(i);
      return Array.from({ length: b - a }, (_, j) => at(a + j));
    };
  }

  /** The screen features of all rows of the batch (a view into its memory), `size` values per row. */
  screens(): { size: number; values: Float32Array } {
    const d = this.data('screen');
    const size = (d.type as FixedSizeList).listSize;
    const child = d.children[0]!;
    const base = child.offset + d.offset * size;
    return { size, values: (child.values as Float32Array).subarray(base, base + d.length * size) };
  }

  where(i: number): string {
    return `${this.path}#row ${i}`;
  }

  private list(name: string): { range: (i: number) => [number, number]; child: Data } {
    const d = this.data(name);
    const offsets = d.valueOffsets as Int32Array;
    return { range: (i) => [offsets[d.offset + i]!, offsets[d.offset + i + 1]!], child: d.children[0]! };
  }
}

/** One ShardRow field: its columns (name → Arrow type), writer and reader. */
interface FieldCodec<T> {
  columns: Record<string, (featureSize: number) => DataType>;
  /** `screens`: where the screen column's values go (values × featureSize; a new array when absent). */
  write(values: readonly T[], featureSize: number, screens?: Float32Array): Record<string, Data>;
  read(c: BatchColumns): (i: number) => T;
}

const utf8Field = (column: string): FieldCodec<string> => ({
  columns: { [column]: () => new Utf8() },
  write: (v) => ({ [column]: utf8Data(v) }),
  read: (c) => c.strings(column),
});

const int32Field = (column: string): FieldCodec<number> => ({
  columns: { [column]: () => new Int32() },
  write: (v) => ({ [column]: i32(v) }),
  read: (c) => c.numbers(column),
});

function actionType(v: number, where: string): ActionTypeId {
  if (!isActionTypeId(v)) throw new InputError(`action type ${v} is not a known AITW action type`, where);
  return v;
}

const ACTION_COLUMNS = { action_type: () => new Int8(), touch_y: () => new Float32(), touch_x: () => new Float32(), lift_y: () => new Float32(), lift_x: () => new Float32(), typed_text: () => new Utf8() };

const actionField: FieldCodec<AitwAction> = {
  columns: ACTION_COLUMNS,
  write: (v) => ({
    action_type: i8(v.map((a) => a.action_type)),
    touch_y: f32(v.map((a) => a.touch_yx[0])),
    touch_x: f32(v.map((a) => a.touch_yx[1])),
    lift_y: f32(v.map((a) => a.lift_yx[0])),
    lift_x: f32(v.map((a) => a.lift_yx[1])),
    typed_text: utf8Data(v.map((a) => a.typed_text)),
  }),
  read: (c) => {
    const [type, ty, tx, ly, lx, text] = [c.numbers('action_type'), c.numbers('touch_y'), c.numbers('touch_x'), c.numbers('lift_y'), c.numbers('lift_x'), c.strings('typed_text')];
    return (i) => ({ action_type: actionType(type(i), c.where(i)), touch_yx: [ty(i), tx(i)], lift_yx: [ly(i), lx(i)], typed_text: text(i) });
  },
};

/** Flattened (y, x, h, w) per box, as AITW stores them. */
function boxesOf(flat: ArrayLike<number>): Box[] {
  const out: Box[] = [];
  for (let j = 0; j + 3 < flat.length; j += 4) out.push([flat[j]!, flat[j + 1]!, flat[j + 2]!, flat[j + 3]!]);
  return out;
}

const annotationsField: FieldCodec<UiAnnotations> = {
  columns: { ui_positions: listOf(new Float32()), ui_text: listOf(new Utf8()), ui_types: listOf(new Utf8()) },
  write: (v) => ({
    ui_positions: listData(new Float32(), v.map((a) => a.positions.length * 4), f32(v.flatMap((a) => a.positions.flat()))),
    ui_text: listData(new Utf8(), v.map((a) => a.text.length), utf8Data(v.flatMap((a) => a.text))),
    ui_types: listData(new Utf8(), v.map((a) => a.types.length), utf8Data(v.flatMap((a) => a.types))),
  }),
  read: (c) => {
    const [pos, text, types] = [c.numberList('ui_positions'), c.stringList('ui_text'), c.stringList('ui_types')];
    return (i) => ({ positions: boxesOf(pos(i)), text: text(i), types: types(i) });
  },
};

const textsField: FieldCodec<ScreenText[]> = {
  columns: { text_items: listOf(new Utf8()), text_boxes: listOf(new Float32()), text_scores: listOf(new Float32()) },
  write: (v) => ({
    text_items: listData(new Utf8(), v.map((t) => t.length), utf8Data(v.flatMap((t) => t.map((x) => x.text)))),
    text_boxes: listData(new Float32(), v.map((t) => t.length * 4), f32(v.flatMap((t) => t.flatMap((x) => x.box)))),
    text_scores: listData(new Float32(), v.map((t) => t.length), f32(v.flatMap((t) => t.map((x) => x.score)))),
  }),
  read: (c) => {
    const [items, boxes, scores] = [c.stringList('text_items'), c.numberList('text_boxes'), c.numberList('text_scores')];
    return (i) => {
      const b = boxesOf(boxes(i));
      const s = scores(i);
      return items(i).map((text, j) => ({ text, box: b[j]!, score: s[j]! }));
    };
  },
};

const episodeActionsField: FieldCodec<AitwAction[]> = {
  columns: { episode_action_types: listOf(new Int8()), episode_touch: listOf(new Float32()), episode_lift: listOf(new Float32()), episode_typed_text: listOf(new Utf8()) },
  write: (v) => ({
    episode_action_types: listData(new Int8(), v.map((a) => a.length), i8(v.flatMap((a) => a.map((x) => x.action_type)))),
    episode_touch: listData(new Float32(), v.map((a) => a.length * 2), f32(v.flatMap((a) => a.flatMap((x) => x.touch_yx)))),
    episode_lift: listData(new Float32(), v.map((a) => a.length * 2), f32(v.flatMap((a) => a.flatMap((x) => x.lift_yx)))),
    episode_typed_text: listData(new Utf8(), v.map((a) => a.length), utf8Data(v.flatMap((a) => a.map((x) => x.typed_text)))),
  }),
  read: (c) => {
    const [types, touch, lift, texts] = [c.numberList('episode_action_types'), c.numberList('episode_touch'), c.numberList('episode_lift'), c.stringList('episode_typed_text')];
    return (i) => {
      const t = types(i), to = touch(i), li = lift(i), tx = texts(i);
      if (to.length !== 2 * t.length || li.length !== 2 * t.length || tx.length !== t.length) throw new InputError('episode action columns disagree in length', c.where(i));
      return Array.from(t, (type, s) => ({ action_type: actionType(type, c.where(i)), touch_yx: [to[2 * s]!, to[2 * s + 1]!], lift_yx: [li[2 * s]!, li[2 * s + 1]!], typed_text: tx[s]! }));
    };
  },
};

const screenField: FieldCodec<Float32Array> = {
  columns: { screen: (size) => new FixedSizeList(size, item(new Float32())) },
  write: (v, size, screens) => {
    const flat = screens ?? new Float32Array(v.length * size);
    if (flat.length !== v.length * size) throw new RangeError(`screen column: ${flat.length} values for ${v.length} rows of ${size}`);
    v.forEach((s, i) => flat.set(s, i * size));
    const child = makeData({ type: new Float32(), length: flat.length, nullCount: 0, data: flat });
    return { screen: makeData({ type: new FixedSizeList(size, item(new Float32())), length: v.length, nullCount: 0, child }) };
  },
  read: (c) => {
    const { size, values } = c.screens();
    return (i) => values.slice(i * size, (i + 1) * size);
  },
};

/** Every ShardRow field, in column order. */
export const FIELDS: { readonly [K in keyof ShardRow]: FieldCodec<ShardRow[K]> } = {
  episodeId: utf8Field('episode_id'),
  subset: utf8Field('subset'),
  split: utf8Field('split') as FieldCodec<SplitName>,
  stepId: int32Field('step_id'),
  episodeLength: int32Field('episode_length'),
  goal: utf8Field('goal'),
  imageHeight: int32Field('image_height'),
  imageWidth: int32Field('image_width'),
  screen: screenField,
  action: actionField,
  annotations: annotationsField,
  texts: textsField,
  episodeActions: episodeActionsField,
};
const FIELD_NAMES = Object.keys(FIELDS) as (keyof ShardRow)[];

/** The Arrow schema of a shard made by `encoder`; the encoder is also recorded in the schema metadata. */
export function shardSchema(encoder: EncoderInfo): Schema {
  const size = encoder.patches * encoder.dim;
  const fields = FIELD_NAMES.flatMap((f) => Object.entries(FIELDS[f].columns).map(([name, type]) => new Field(name, type(size), false)));
  return new Schema(fields, new Map([['autoui.format', SHARD_FORMAT], ['autoui.encoder', JSON.stringify(encoder)]]));
}

/** The columns of `rows`, by column name; the screens' values in `screens` when given (rows × featureSize). */
export function writeColumns(rows: readonly ShardRow[], featureSize: number, screens?: Float32Array): Map<string, Data> {
  const out = new Map<string, Data>();
  for (const f of FIELD_NAMES) {
    const codec = FIELDS[f] as FieldCodec<unknown>;
    for (const [name, data] of Object.entries(codec.write(rows.map((r) => r[f]), featureSize, screens))) out.set(name, data);
  }
  return out;
}

/** Per-field row readers of one record batch. */
export type RowReaders = { readonly [K in keyof ShardRow]: (i: number) => ShardRow[K] };

export function rowReaders(c: BatchColumns): RowReaders {
  return Object.fromEntries(FIELD_NAMES.map((f) => [f, FIELDS[f].read(c)])) as unknown as RowReaders;
}

/** Row i of a batch, every field. */
export function readRow(r: RowReaders, i: number): ShardRow {
  return Object.fromEntries(FIELD_NAMES.map((f) => [f, r[f](i)])) as unknown as ShardRow;
}
