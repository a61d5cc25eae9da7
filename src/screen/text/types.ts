import type { Box, RawImage } from '../types.js';

/**
 * A piece of text on a screen and where it is: what the model reads besides the pixels. The same
 * shape comes from AITW's annotations, from OCR of the pixels, and from a UI tree (DOM, Android's
 * uiautomator dump).
 */
export interface ScreenText {
  /** The text as shown (one line or one UI element's label), never empty. */
  text: string;
  /** Its box (y, x, height, width), normalised by the screen's height and width. */
  box: Box;
  /** Confidence in [0, 1]; 1 where the text comes from the UI itself (annotations, trees). */
  score: number;
}

/** Something that reads the texts of a screenshot. Implementations: OCR (ocr.ts); trees and annotations are parsed, not read. */
export interface TextReader {
  /** Identity recorded in shards and checkpoints, e.g. 'ocr:ppocr-v4'. */
  readonly id: string;
  /** The texts of each image, in input order; an image without text gives []. */
  read(images: RawImage[]): Promise<ScreenText[][]>;
  dispose?(): Promise<void> | void;
}
