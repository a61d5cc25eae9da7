/**
 * PP-OCRv4 on one thread's onnxruntime sessions: DB detection of text lines, then CTC recognition of
 * the lines. OcrReader (ocr.ts) runs it in-process or on worker threads (ocr_worker.ts); both paths
 * are this code, so they read alike.
 *
 * Detection runs on a reduced copy (longer side ≤ detLimitSide, again larger for small print) and
 * gives axis-aligned line boxes (ocr_detect.ts); each box is cropped from the full-resolution image,
 * resized to height 48 and recognised (ocr_recognize.ts). Both models are rewritten in memory as they
 * open (onnx_rewrite.ts): their convolutions' element-wise tails folded in, and the recogniser made
 * to give each step's best class.
 */
import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import type { RawImage } from '../types.js';
import { InputError } from '../../util/errors.js';
import { DB_DEFAULTS, dbBoxes, detectionSize, secondPassLimit, toSourceBox, type DbParams, type MapBox } from './ocr_detect.js';
import { cropResizeRgb, packBgr, resizeRgb, type PixelBox } from './ocr_image.js';
import { MODELS_PACKAGE, type OcrModelPaths } from './ocr_models.js';
import { BEST_PER_STEP, bestPerStep, foldConvTails, rewriteModel } from './onnx_rewrite.js';
import { REC_HEIGHT, ctcGreedy, planBatches, recWidth, type BatchLimits, type Decoded } from './ocr_recognize.js';

export interface AdaptiveDetection {
  minTextHeight: number;
  targetTextHeight: number;
}

/** Every setting that changes what the engine reads or how fast (OcrOptions resolved). */
export interface EngineSettings {
  detLimitSide: number;
  adaptive: AdaptiveDetection;
  db: DbParams;
  /** onnxruntime intra-op threads per session. */
  threads: number;
  rec: BatchLimits;
  /** Open the models with their convolutions' element-wise tails folded in (onnx_rewrite.ts): the same outputs up to rounding, faster. */
  foldConvTails: boolean;
}

export const ENGINE_DEFAULTS = {
  detLimitSide: 960,
  adaptive: { minTextHeight: 15, targetTextHeight: 20 } satisfies AdaptiveDetection,
  db: DB_DEFAULTS,
  rec: { maxBatch: 1, maxColumns: 512, maxSpread: 1.3, minWidth: 64 } satisfies BatchLimits,
  foldConvTails: true,
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

export class OcrEngine {
  private sessions?: Promise<Sessions>;

  constructor(
    private readonly paths: OcrModelPaths,
    private readonly chars: readonly string[],
    private readonly s: EngineSettings,
  ) {}

  /** Creates the ONNX sessions now (once); later calls return the same ones. */
  ready(): Promise<Sessions> {
    const o: ort.InferenceSession.SessionOptions = {
      intraOpNumThreads: this.s.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // Idle pool threads sleep instead of spinning: the cores are shared with the rest of the
      // pipeline (and other jobs), where spinning burns the time another thread needs.
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    };
    // The recogniser always ends in each step's best class (what decoding reads); the folds are optional.
    const open = async (path: string, recogniser: boolean) => {
      try {
        const { model } = rewriteModel(await readFile(path), (m) => {
          if (this.s.foldConvTails) foldConvTails(m.graph!);
          if (recogniser) bestPerStep(m);
        });
        return await ort.InferenceSession.create(model, o);
      } catch (err) {
        throw new InputError(`not a loadable ONNX model (${(err as Error).message}); reinstall ${MODELS_PACKAGE}`, path);
      }
    };
    this.sessions ??= Promise.all([open(this.paths.detection, false), open(this.paths.recognition, true)]).then(([det, rec]) => ({ det, rec }));
    return this.sessions;
  }

  /** Line boxes in source pixels (non-empty): one DB pass, and a larger one when the lines came out too small. */
  async detect(rgb: RawImage): Promise<PixelBox[]> {
    const { det } = await this.ready();
    let pass = await this.detectAt(det, rgb, this.s.detLimitSide);
    const { minTextHeight, targetTextHeight } = this.s.adaptive;
    const again = minTextHeight > 0
      ? secondPassLimit(pass.boxes.map((b) => b.y1 - b.y0), this.s.detLimitSide, Math.max(rgb.width, rgb.height), minTextHeight, targetTextHeight)
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
    const boxes = dbBoxes(prob.data as Float32Array, width!, height!, this.s.db);
    prob.dispose();
    return { boxes, width: width!, height: height! };
  }

  /** Text and confidence per box, in the boxes' order. */
  async recognise(rgb: RawImage, boxes: readonly PixelBox[]): Promise<Decoded[]> {
    const { rec } = await this.ready();
    const widths = boxes.map((b) => recWidth(b.x1 - b.x0, b.y1 - b.y0, REC_MAX_WIDTH));
    const crops = await Promise.all(boxes.map((b, i) => cropResizeRgb(rgb, b, widths[i]!, REC_HEIGHT)));
    const out: Decoded[] = new Array(boxes.length);
    for (const plan of planBatches(widths, this.s.rec)) {
      const n = plan.items.length;
      const x = new Float32Array(n * 3 * REC_HEIGHT * plan.width); // zero = mid-grey padding after normalisation
      plan.items.forEach((item, k) => packBgr(crops[item]!, widths[item]!, REC_HEIGHT, x, k, plan.width, REC_MEAN, REC_STD));
      const res = await rec.run({ [rec.inputNames[0]!]: new ort.Tensor('float32', x, [n, 3, REC_HEIGHT, plan.width]) });
      const [best, prob] = [res[BEST_PER_STEP.classes]!, res[BEST_PER_STEP.probs]!];
      const steps = best.dims[1]!;
      const [classes, probs] = [best.data as Int32Array, prob.data as Float32Array];
      plan.items.forEach((item, k) => {
        const at = k * steps;
        out[item] = ctcGreedy(classes.subarray(at, at + steps), probs.subarray(at, at + steps), this.chars, widths[item]! / plan.width);
      });
      best.dispose();
      prob.dispose();
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

/** Recognition cost of a line, for sharing lines between workers: its input columns. */
export function lineCost(b: PixelBox): number {
  return recWidth(b.x1 - b.x0, b.y1 - b.y0, REC_MAX_WIDTH);
}
