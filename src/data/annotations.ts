import type { ScreenText } from '../screen/text/types.js';
import type { UiAnnotations } from './types.js';

/**
 * A record's UI annotations as screen texts: every annotation with text (AITW's OCR'd labels, a web
 * page's rendered text lines); untexted icon boxes carry no words and are left out. Pure.
 */
export function annotationTexts(ann: UiAnnotations): ScreenText[] {
  const out: ScreenText[] = [];
  ann.text.forEach((raw, i) => {
    const text = raw.trim();
    if (text !== '') out.push({ text, box: ann.positions[i]!, score: 1 });
  });
  return out;
}
