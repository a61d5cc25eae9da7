/**
 * A TextReader that reads each distinct screenshot once: identical pixels (hashed) get the texts
 * already read. Evaluation sets ask many questions of one screen (the named-link set: several tasks
 * per rendered page), and OCR costs about a second a screen where hashing costs milliseconds.
 */
import { createHash } from 'node:crypto';
import { BoundedMap } from '../../util/bounded_map.js';
import type { RawImage } from '../types.js';
import type { ScreenText, TextReader } from './types.js';

/** Distinct screens remembered; the oldest is forgotten first. */
const REMEMBERED = 4096;

function screenKey(img: RawImage): string {
  return createHash('sha1').update(`${img.width}x${img.height}x${img.channels}:`).update(img.data).digest('base64');
}

export class DedupeReader implements TextReader {
  readonly id: string;
  private readonly seen = new BoundedMap<string, ScreenText[]>(REMEMBERED);

  constructor(private readonly inner: TextReader) {
    this.id = inner.id;
  }

  async read(images: RawImage[]): Promise<ScreenText[][]> {
    const keys = images.map(screenKey);
    const found = new Map(keys.flatMap((k) => (this.seen.has(k) ? [[k, this.seen.get(k)!] as const] : [])));
    const todo = [...new Set(keys.filter((k) => !found.has(k)))];
    const read = todo.length > 0 ? await this.inner.read(todo.map((k) => images[keys.indexOf(k)]!)) : [];
    todo.forEach((k, i) => {
      found.set(k, read[i]!);
      this.seen.set(k, read[i]!);
    });
    return keys.map((k) => found.get(k)!.map((t) => ({ ...t, box: [...t.box] as ScreenText['box'] })));
  }

  dispose(): Promise<void> | void {
    return this.inner.dispose?.();
  }
}
