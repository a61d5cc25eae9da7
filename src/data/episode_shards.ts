/**
 * Writing episodes as AITW shards, shared by the data generators (`data synth`, `data web`):
 * PREFIX-NNNNN.tfrecord.gz files of whole episodes (an episode never spans two files), a seeded
 * ~80/10/10 split by episode, and removal of stale shards a previous run left behind.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TfRecordWriter } from './tfrecord.js';
import type { Splits } from './types.js';
import type { Rng } from '../util/rng.js';

/** ~80/10/10 by episode, shuffled by seed. */
export function splitEpisodes(ids: readonly string[], rng: Rng): Splits {
  const shuffled = rng.shuffle(ids);
  const n = shuffled.length;
  const nTest = Math.round(n * 0.1);
  const nVal = Math.round(n * 0.1);
  return {
    train: shuffled.slice(0, n - nVal - nTest),
    val: shuffled.slice(n - nVal - nTest, n - nTest),
    test: shuffled.slice(n - nTest),
  };
}

export function shardName(prefix: string, index: number): string {
  return `${prefix}-${String(index).padStart(5, '0')}.tfrecord.gz`;
}

/**
 * Appends episodes (their serialized tf.train.Examples) to DIR/PREFIX-NNNNN.tfrecord.gz, starting
 * a new file every `shardEpisodes` episodes. Each file appears only when closed (TfRecordWriter
 * renames it into place), so a crash leaves whole files or none.
 */
export class EpisodeShardWriter {
  readonly files: string[] = [];
  private writer: TfRecordWriter | undefined;
  private episodes = 0;

  constructor(
    private readonly dir: string,
    private readonly prefix: string,
    private readonly shardEpisodes: number,
  ) {
    if (!(Number.isInteger(shardEpisodes) && shardEpisodes >= 1)) throw new RangeError(`shardEpisodes must be a positive integer, got ${shardEpisodes}`);
  }

  async writeEpisode(records: readonly Uint8Array[]): Promise<void> {
    if (this.episodes % this.shardEpisodes === 0) {
      await this.writer?.close();
      const name = shardName(this.prefix, this.files.length);
      this.files.push(name);
      this.writer = await TfRecordWriter.open(join(this.dir, name), { gzip: true });
    }
    for (const r of records) await this.writer!.write(r);
    this.episodes++;
  }

  /** Closes the last file, then deletes PREFIX-NNNNN shards in DIR that this writer did not write. */
  async close(): Promise<string[]> {
    await this.writer?.close();
    const ours = new RegExp(`^${this.prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d{5}\\.tfrecord\\.gz$`);
    for (const f of await readdir(this.dir).catch(() => [] as string[])) if (ours.test(f) && !this.files.includes(f)) await rm(join(this.dir, f));
    return this.files;
  }

  /** Drops the file being written; files already closed stay. */
  async abort(): Promise<void> {
    await this.writer?.abort();
  }
}
