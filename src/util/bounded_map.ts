/**
 * A map that keeps at most `limit` entries and forgets the oldest insertion first: the memory of the
 * OCR readers (screens, lines) and the relative-position bucket tables. Written here rather than taken
 * from an LRU package because first-in first-out over a Map's insertion order is all these need, in
 * a dozen lines.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly limit: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    if (!this.entries.has(key) && this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
  }
}
