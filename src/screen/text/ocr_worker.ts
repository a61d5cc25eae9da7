/**
 * A worker thread of OcrReader (ocr.ts): its own OcrEngine (onnxruntime sessions with one intra-op
 * thread), created on the first task from the reader's paths and settings (workerData). Answers are
 * envelopes, so an InputError (a model file that does not load) reaches the caller as one: errors
 * lose their class on the way out of a worker.
 */
import { workerData } from 'node:worker_threads';
import { InputError } from '../../util/errors.js';
import type { RawImage } from '../types.js';
import { OcrEngine, type EngineSettings } from './ocr_engine.js';
import type { PixelBox } from './ocr_image.js';
import type { OcrModelPaths } from './ocr_models.js';
import type { Decoded } from './ocr_recognize.js';

export interface OcrWorkerData {
  paths: OcrModelPaths;
  chars: string[];
  settings: EngineSettings;
}

export type Answer<T> = { ok: true; value: T } | { ok: false; input: { message: string; where?: string } };

const { paths, chars, settings } = workerData as OcrWorkerData;
const engine = new OcrEngine(paths, chars, settings);

async function answer<T>(f: () => Promise<T>): Promise<Answer<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    const where = e.where;
    return { ok: false, input: { message: where ? e.message.slice(where.length + 2) : e.message, ...(where ? { where } : {}) } };
  }
}

export function detect(image: RawImage): Promise<Answer<PixelBox[]>> {
  return answer(() => engine.detect(image));
}

export function recognise(task: { image: RawImage; boxes: PixelBox[] }): Promise<Answer<Decoded[]>> {
  return answer(() => engine.recognise(task.image, task.boxes));
}
