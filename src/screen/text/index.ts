export type { ScreenText, TextReader } from './types.js';
export { parseScreenTexts, MAX_SCREEN_TEXTS } from './parse.js';

/** The built-in reader of screen text from pixels (PP-OCRv4 over onnxruntime), loaded on demand so pixel-only paths never load it. */
export async function loadTextReader(): Promise<import('./types.js').TextReader> {
  const { OcrReader } = await import('./ocr.js');
  return OcrReader.load();
}
