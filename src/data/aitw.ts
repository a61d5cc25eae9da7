import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import { InputError } from '../util/errors.js';
import { decodeExample, encodeExample, type Feature, type Features } from './example.js';
import { decodeScreen, encodePng } from './image.js';
import { readTfRecords, recordWhere } from './tfrecord.js';
import { isActionTypeId, type AitwEpisode, type AitwStep, type Box, type YX } from './types.js';

/** Where a step came from, for error messages and provenance. */
export interface StepSource {
  file: string;
  record: number;
}
export type SourcedStep = AitwStep & { source: StepSource };

/** AITW feature names (docs/design.md, "AITW on disk"). */
export const F = {
  episodeId: 'episode_id',
  episodeLength: 'episode_length',
  stepId: 'step_id',
  goal: 'goal_info',
  image: 'image/encoded',
  height: 'image/height',
  width: 'image/width',
  channels: 'image/channels',
  uiPositions: 'image/ui_annotations_positions',
  uiText: 'image/ui_annotations_text',
  uiTypes: 'image/ui_annotations_ui_types',
  actionType: 'results/action_type',
  touch: 'results/yx_touch',
  lift: 'results/yx_lift',
  typedText: 'results/type_action',
  activity: 'current_activity',
  deviceType: 'device_type',
  apiLevel: 'android_api_level',
} as const;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const textBytes = (s: string): Uint8Array => Buffer.from(s, 'utf8');

/** Typed, validated access to the features of one record; every error names the record and feature. */
class FeatureReader {
  constructor(
    private readonly f: Features,
    private readonly where: string,
  ) {}

  private get(name: string, kind: 'bytes'): Uint8Array[];
  private get(name: string, kind: 'float' | 'int64'): number[];
  private get(name: string, kind: Feature['kind']): Uint8Array[] | number[] {
    const feat = this.f.get(name);
    if (!feat) throw new InputError(`missing feature '${name}'`, this.where);
    if (feat.kind !== kind)
      throw new InputError(`feature '${name}' is a ${feat.kind} list, expected a ${kind} list`, this.where);
    return feat.value;
  }

  private one<T>(name: string, values: T[]): T {
    if (values.length !== 1)
      throw new InputError(`feature '${name}' has ${values.length} values, expected exactly 1`, this.where);
    return values[0]!;
  }

  private str(name: string, b: Uint8Array): string {
    try {
      return utf8.decode(b);
    } catch {
      throw new InputError(`feature '${name}' is not valid UTF-8 text`, this.where);
    }
  }

  bytes(name: string): Uint8Array {
    return this.one(name, this.get(name, 'bytes'));
  }
  text(name: string): string {
    return this.str(name, this.bytes(name));
  }
  texts(name: string): string[] {
    return this.get(name, 'bytes').map((b) => this.str(name, b));
  }
  int(name: string, min = -Infinity): number {
    const v = this.one(name, this.get(name, 'int64'));
    if (v < min) throw new InputError(`feature '${name}' is ${v}, expected ≥ ${min}`, this.where);
    return v;
  }
  floats(name: string, length?: number): number[] {
    const v = this.get(name, 'float');
    if (length !== undefined && v.length !== length)
      throw new InputError(`feature '${name}' has ${v.length} values, expected ${length}`, this.where);
    return v;
  }
}

/** Decodes and validates one AITW step record (every feature: present, right kind, right length). */
export async function stepFromExample(f: Features, where: string): Promise<AitwStep> {
  const r = new FeatureReader(f, where);
  const episodeId = r.text(F.episodeId);
  const episodeLength = r.int(F.episodeLength, 1);
  const stepId = r.int(F.stepId, 0);
  if (stepId >= episodeLength)
    throw new InputError(`feature '${F.stepId}' is ${stepId} but '${F.episodeLength}' is ${episodeLength}`, where);
  const goal = r.text(F.goal);
  const height = r.int(F.height, 1);
  const width = r.int(F.width, 1);
  const channels = r.int(F.channels, 1);
  const encoded = r.bytes(F.image);

  const flat = r.floats(F.uiPositions);
  if (flat.length % 4 !== 0)
    throw new InputError(`feature '${F.uiPositions}' has ${flat.length} values, not a multiple of 4 (y, x, h, w)`, where);
  const positions: Box[] = [];
  for (let i = 0; i < flat.length; i += 4) positions.push([flat[i]!, flat[i + 1]!, flat[i + 2]!, flat[i + 3]!]);
  const text = r.texts(F.uiText);
  const types = r.texts(F.uiTypes);
  if (text.length !== positions.length || types.length !== positions.length)
    throw new InputError(
      `UI annotation counts disagree: ${positions.length} boxes in '${F.uiPositions}', ${text.length} in '${F.uiText}', ${types.length} in '${F.uiTypes}'`,
      where,
    );

  const actionType = r.int(F.actionType);
  if (!isActionTypeId(actionType))
    throw new InputError(`feature '${F.actionType}' is ${actionType}, not a known AITW action type`, where);
  const action = {
    action_type: actionType,
    touch_yx: r.floats(F.touch, 2) as YX,
    lift_yx: r.floats(F.lift, 2) as YX,
    typed_text: r.text(F.typedText),
  };
  const currentActivity = r.text(F.activity);
  const deviceType = r.text(F.deviceType);
  const androidApiLevel = r.int(F.apiLevel);
  const image = await decodeScreen(encoded, height, width, channels, where);
  return {
    episodeId,
    episodeLength,
    stepId,
    goal,
    image,
    annotations: { positions, text, types },
    action,
    currentActivity,
    deviceType,
    androidApiLevel,
  };
}

/** Encodes a step as an AITW tf.train.Example; `png` stores the screen losslessly compressed. */
export async function exampleFromStep(step: AitwStep, opts: { imageFormat?: 'raw' | 'png' } = {}): Promise<Uint8Array> {
  const { image } = step;
  if (image.data.length !== image.height * image.width * image.channels)
    throw new RangeError(
      `episode ${step.episodeId} step ${step.stepId}: image has ${image.data.length} bytes, expected ${image.height}×${image.width}×${image.channels}`,
    );
  const encoded = opts.imageFormat === 'png' ? await encodePng(image) : image.data;
  return exampleFromEncodedStep({ ...step, image: { height: image.height, width: image.width, channels: image.channels, encoded } });
}

/** A step whose screen is already encoded (raw pixels, PNG or JPEG bytes, as `image/encoded` holds them). */
export type EncodedStep = Omit<AitwStep, 'image'> & { image: { height: number; width: number; channels: number; encoded: Uint8Array } };

/** Encodes a step whose screen bytes are ready as an AITW tf.train.Example (no pixel work). */
export function exampleFromEncodedStep(step: EncodedStep): Uint8Array {
  const { image, annotations: a, action } = step;
  if (a.text.length !== a.positions.length || a.types.length !== a.positions.length)
    throw new RangeError(`episode ${step.episodeId} step ${step.stepId}: UI annotation lists differ in length`);
  const features: Features = new Map<string, Feature>([
    [F.episodeId, { kind: 'bytes', value: [textBytes(step.episodeId)] }],
    [F.episodeLength, { kind: 'int64', value: [step.episodeLength] }],
    [F.stepId, { kind: 'int64', value: [step.stepId] }],
    [F.goal, { kind: 'bytes', value: [textBytes(step.goal)] }],
    [F.image, { kind: 'bytes', value: [image.encoded] }],
    [F.height, { kind: 'int64', value: [image.height] }],
    [F.width, { kind: 'int64', value: [image.width] }],
    [F.channels, { kind: 'int64', value: [image.channels] }],
    [F.uiPositions, { kind: 'float', value: a.positions.flat() }],
    [F.uiText, { kind: 'bytes', value: a.text.map(textBytes) }],
    [F.uiTypes, { kind: 'bytes', value: a.types.map(textBytes) }],
    [F.actionType, { kind: 'int64', value: [action.action_type] }],
    [F.touch, { kind: 'float', value: [...action.touch_yx] }],
    [F.lift, { kind: 'float', value: [...action.lift_yx] }],
    [F.typedText, { kind: 'bytes', value: [textBytes(action.typed_text)] }],
    [F.activity, { kind: 'bytes', value: [textBytes(step.currentActivity)] }],
    [F.deviceType, { kind: 'bytes', value: [textBytes(step.deviceType)] }],
    [F.apiLevel, { kind: 'int64', value: [step.androidApiLevel] }],
  ]);
  return encodeExample(features);
}

/**
 * Counters filled while reading. `records`: records decoded into steps; `skipped`: bad records,
 * unreadable file tails (one each) and, for episodes, the steps of dropped episodes; `files`: files opened.
 */
export interface ReadStats {
  records: number;
  skipped: number;
  files: number;
}

export interface AitwReadOptions {
  skipCorrupt?: boolean;
  stats?: ReadStats;
  /** Told about every skip (bad record, file tail, dropped episode). */
  onSkip?: (e: { file: string; index: number; reason: string }) => void;
}

/** Streams validated steps from TFRecord files, in file order then record order. */
export async function* readAitwSteps(paths: string[], opts: AitwReadOptions = {}): AsyncGenerator<SourcedStep> {
  const stats = opts.stats ?? { records: 0, skipped: 0, files: 0 };
  const onSkip = (e: { file: string; index: number; reason: string }): void => {
    stats.skipped++;
    opts.onSkip?.(e);
  };
  for (const file of paths) {
    stats.files++;
    for await (const rec of readTfRecords(file, { skipCorrupt: opts.skipCorrupt, onSkip })) {
      const where = recordWhere(file, rec.index);
      let step: AitwStep;
      try {
        step = await stepFromExample(decodeExample(rec.data), where);
      } catch (err) {
        if (!(err instanceof InputError)) throw err;
        // decodeExample knows nothing of files: add the location if it is missing.
        const e = err.where ? err : new InputError(err.message, where);
        if (!opts.skipCorrupt) throw e;
        onSkip({ file, index: rec.index, reason: e.message });
        continue;
      }
      stats.records++;
      yield { ...step, source: { file, record: rec.index } };
    }
  }
}

/** An episode being assembled; steps are dropped (only counted) once it is known to be bad. */
interface Pending {
  id: string;
  length: number;
  goal: string;
  first: StepSource;
  last: StepSource;
  steps: SourcedStep[];
  count: number;
  broken?: { reason: string; at: StepSource };
}

/**
 * Groups consecutive steps into episodes, checking step_id runs 0..n-1 in order, n == episode_length,
 * one goal per episode and no episode id seen twice. Holds one episode in memory.
 */
export async function* readAitwEpisodes(paths: string[], opts: AitwReadOptions = {}): AsyncGenerator<AitwEpisode> {
  const stats = opts.stats ?? { records: 0, skipped: 0, files: 0 };
  const seen = new Set<string>();
  let cur: Pending | undefined;

  const fail = (p: Pending, reason: string, at: StepSource): void => {
    const where = recordWhere(at.file, at.record);
    const msg = `episode '${p.id}' (starting at ${recordWhere(p.first.file, p.first.record)}): ${reason}`;
    if (!opts.skipCorrupt) throw new InputError(msg, where);
    if (!p.broken) p.broken = { reason: msg, at };
    p.steps = [];
  };

  const finish = (p: Pending): AitwEpisode | undefined => {
    if (!p.broken && p.count !== p.length)
      fail(p, `ends after ${p.count} steps but episode_length is ${p.length}`, p.last);
    if (p.broken) {
      stats.skipped += p.count;
      opts.onSkip?.({ file: p.broken.at.file, index: p.broken.at.record, reason: `${p.broken.reason}; skipped its ${p.count} steps` });
      return undefined;
    }
    return { episodeId: p.id, goal: p.goal, steps: p.steps.map(({ source: _source, ...s }) => s) };
  };

  for await (const s of readAitwSteps(paths, { ...opts, stats })) {
    if (cur && s.episodeId === cur.id) {
      cur.count++;
      cur.last = s.source;
      if (cur.broken) continue;
      if (s.stepId !== cur.count - 1) fail(cur, `step_id ${s.stepId} where ${cur.count - 1} was expected`, s.source);
      else if (s.episodeLength !== cur.length)
        fail(cur, `episode_length ${s.episodeLength} differs from ${cur.length} of its first step`, s.source);
      else if (s.goal !== cur.goal) fail(cur, `goal differs from the goal of its first step`, s.source);
      else cur.steps.push(s);
      continue;
    }
    if (cur) {
      const ep = finish(cur);
      if (ep) yield ep;
    }
    cur = { id: s.episodeId, length: s.episodeLength, goal: s.goal, first: s.source, last: s.source, steps: [s], count: 1 };
    if (seen.has(s.episodeId)) fail(cur, 'appears again after other episodes (its steps must be consecutive)', s.source);
    else if (s.stepId !== 0) fail(cur, `starts with step_id ${s.stepId} instead of 0`, s.source);
    seen.add(s.episodeId);
  }
  if (cur) {
    const ep = finish(cur);
    if (ep) yield ep;
  }
}


const DIR_PATTERNS = ['**/*.tfrecord*', '**/*.gz'];
// Our own writers' temp files (`x.tfrecord.gz.tmp-<pid>-<hex>`) are never inputs.
const IGNORE = ['**/*.tmp-*'];
const isTemp = (f: string): boolean => /\.tmp-[^/]*$/.test(f);

/**
 * Expands files, directories (every *.tfrecord* and *.gz below them) and glob patterns into a
 * sorted, de-duplicated file list. Each pattern must match something.
 */
export async function expandInputs(patterns: string[]): Promise<string[]> {
  if (patterns.length === 0) throw new InputError('no input files given');
  const out = new Set<string>();
  for (const p of patterns) {
    const st = await stat(p).catch(() => undefined);
    if (st?.isFile()) {
      out.add(p);
    } else if (st?.isDirectory()) {
      const found = (await glob(DIR_PATTERNS, { cwd: p, onlyFiles: true, ignore: IGNORE, expandDirectories: false })).filter(
        (f) => !isTemp(f),
      );
      if (found.length === 0) throw new InputError('directory holds no *.tfrecord* or *.gz files', p);
      for (const f of found) out.add(join(p, f));
    } else if (isDynamicPattern(p)) {
      const found = (await glob(p, { onlyFiles: true, expandDirectories: false, absolute: isAbsolute(p) })).filter(
        (f) => !isTemp(f),
      );
      if (found.length === 0) throw new InputError('pattern matches no files', p);
      for (const f of found) out.add(f);
    } else {
      throw new InputError('no such file or directory', p);
    }
  }
  return [...out].sort();
}
