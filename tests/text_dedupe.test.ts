/** DedupeReader (screen/text/dedupe.ts): identical screenshots are read once. */
import { describe, expect, it } from 'vitest';
import { DedupeReader } from '../src/screen/text/dedupe.js';
import type { RawImage } from '../src/screen/types.js';
import type { ScreenText, TextReader } from '../src/screen/text/types.js';

const image = (fill: number, width = 4): RawImage => ({ width, height: 2, channels: 3, data: new Uint8Array(width * 2 * 3).fill(fill) });

class CountingReader implements TextReader {
  readonly id = 'counting';
  readonly seen: number[] = [];
  async read(images: RawImage[]): Promise<ScreenText[][]> {
    images.forEach((img) => this.seen.push(img.data[0]!));
    return images.map((img) => [{ text: `screen ${img.data[0]}`, box: [0, 0, 1, 1], score: 1 }]);
  }
}

describe('DedupeReader', () => {
  it('reads each distinct screen once, across batches, and answers every image in order', async () => {
    const inner = new CountingReader();
    const r = new DedupeReader(inner);
    const first = await r.read([image(1), image(2), image(1)]);
    expect(first.map((t) => t[0]!.text)).toEqual(['screen 1', 'screen 2', 'screen 1']);
    const second = await r.read([image(2), image(3), image(1, 2)]);
    expect(second.map((t) => t[0]!.text)).toEqual(['screen 2', 'screen 3', 'screen 1']);
    expect(inner.seen).toEqual([1, 2, 3, 1]); // a different size is a different screen
    first[0]![0]!.box[0] = 0.5; // answers are copies: changing one changes no other
    expect(first[2]![0]!.box[0]).toBe(0);
    expect(r.id).toBe('counting');
  });
});
