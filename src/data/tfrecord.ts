import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline, type Readable, type Writable } from 'node:stream';
import { finished, pipeline as pipelineAsync } from 'node:stream/promises';
import { constants as bufferConstants } from 'node:buffer';
import { createGunzip, createGzip } from 'node:zlib';
import { tempPathFor } from '../util/atomic.js';
import { InputError } from '../util/errors.js';
import { maskedCrc32c } from './crc32c.js';

/** One TFRecord payload and its 0-based position in its file. */
export interface TfRecord {
  index: number;
  data: Uint8Array;
}

export interface ReadOptions {
  /** Skip bad records (and, when the framing or gzip stream breaks, the rest of the file) instead of throwing. */
  skipCorrupt?: boolean;
  /** Called once per skip; a skipped file tail counts as one skip. */
  onSkip?: (e: { file: string; index: number; reason: string }) => void;
}

/** `where` string used in every error about a record. */
export function recordWhere(file: string, index: number): string {
  return `${file}#record ${index}`;
}

const HEADER = 12; // uint64 length + uint32 masked CRC of the length
const FOOTER = 4; // uint32 masked CRC of the data
const MAX_RECORD = Math.min(bufferConstants.MAX_LENGTH, 2 ** 32 - 1);

/**
 * FIFO of stream chunks that hands out byte ranges, copying only when a range spans chunks
 * (hand-written because no maintained package does zero-copy framing over Node streams).
 */
class ChunkQueue {
  private chunks: Buffer[] = [];
  private head = 0;
  length = 0;

  push(b: Buffer): void {
    if (b.length === 0) return;
    this.chunks.push(b);
    this.length += b.length;
  }

  take(n: number): Buffer {
    if (n > this.length) throw new RangeError('ChunkQueue underflow');
    const first = this.chunks[0];
    if (n === 0 || first === undefined) return Buffer.alloc(0);
    if (first.length - this.head >= n) {
      const out = first.subarray(this.head, this.head + n);
      this.advance(first, n);
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length - this.head, n - off);
      c.copy(out, off, this.head, this.head + k);
      off += k;
      this.advance(c, k);
    }
    return out;
  }

  private advance(c: Buffer, k: number): void {
    this.head += k;
    this.length -= k;
    if (this.head === c.length) {
      this.chunks.shift();
      this.head = 0;
    }
  }
}

/** Ends iteration of one file (a skipped tail) after reporting it. */
class StopFile extends Error {}

async function openSource(path: string): Promise<Readable> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    throw new InputError(`cannot open TFRecord file (${(err as Error).message})`, path);
  }
  const head = Buffer.alloc(2);
  let bytesRead: number;
  try {
    ({ bytesRead } = await fh.read(head, 0, 2, 0));
  } catch (err) {
    await fh.close();
    throw new InputError(`cannot read TFRecord file (${(err as Error).message})`, path);
  }
  const file = fh.createReadStream({ start: 0, highWaterMark: 1 << 20 });
  const gzipped = bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  if (!gzipped) return file;
  // pipeline (not .pipe) so read errors reach the consumer through the gunzip stream.
  return pipeline(file, createGunzip({ chunkSize: 1 << 18 }), () => {});
}

/**
 * Streams the records of one TFRecord file (gzip detected by magic bytes), checking both CRCs.
 * Memory: the current record plus one stream chunk. Errors are InputErrors naming file and record.
 */
export async function* readTfRecords(path: string, opts: ReadOptions = {}): AsyncGenerator<TfRecord> {
  const source = await openSource(path);
  const q = new ChunkQueue();
  let index = 0;
  let len: number | undefined; // length of the current record once its header checked out

  const bad = (reason: string, fatal: boolean): void => {
    if (!opts.skipCorrupt) throw new InputError(reason, recordWhere(path, index));
    opts.onSkip?.({ file: path, index, reason: fatal ? `${reason}; skipped the rest of the file` : reason });
    if (fatal) throw new StopFile();
  };

  try {
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        q.push(chunk);
        for (;;) {
          if (len === undefined) {
            if (q.length < HEADER) break;
            const h = q.take(HEADER);
            const lo = h.readUInt32LE(0);
            const hi = h.readUInt32LE(4);
            if (maskedCrc32c(h.subarray(0, 8)) !== h.readUInt32LE(8)) {
              bad('corrupt record header: length CRC mismatch, cannot find the next record', true);
            }
            if (hi !== 0 || lo > MAX_RECORD) bad(`record length ${hi * 2 ** 32 + lo} bytes is too large`, true);
            len = lo;
          }
          if (q.length < len + FOOTER) break;
          const data = q.take(len);
          const crc = q.take(FOOTER).readUInt32LE(0);
          len = undefined;
          if (maskedCrc32c(data) !== crc) {
            bad('corrupt record: data CRC mismatch', false);
            index++;
            continue;
          }
          yield { index: index++, data };
        }
      }
    } catch (err) {
      if (err instanceof InputError || err instanceof StopFile) throw err;
      const e = err as NodeJS.ErrnoException;
      const isZlib = typeof e.code === 'string' && e.code.startsWith('Z_');
      bad(
        isZlib
          ? `gzip stream is corrupt or truncated (${e.message}), the rest of the file cannot be read`
          : `read error (${e.message})`,
        true,
      );
    }
    if (len !== undefined || q.length > 0) {
      const need = len === undefined ? HEADER : len + FOOTER;
      bad(`truncated record: file ends ${q.length} bytes into a ${need}-byte ${len === undefined ? 'header' : 'record body'}`, true);
    }
  } catch (err) {
    if (!(err instanceof StopFile)) throw err;
  } finally {
    source.destroy();
  }
}

/**
 * Writes TFRecord files (gzip by default) to a temp file renamed into place on close(),
 * so readers never see half a file.
 */
export class TfRecordWriter {
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly tmp: string,
    private readonly out: Writable,
    private readonly file: WriteStream,
    private readonly done: Promise<void>,
  ) {}

  static async open(path: string, opts: { gzip?: boolean; level?: number } = {}): Promise<TfRecordWriter> {
    await mkdir(dirname(path), { recursive: true });
    const tmp = tempPathFor(path);
    const file = createWriteStream(tmp, { flags: 'wx' });
    await once(file, 'open');
    let out: Writable;
    let done: Promise<void>;
    if (opts.gzip ?? true) {
      const gz = createGzip({ level: opts.level ?? 6, chunkSize: 1 << 18 });
      out = gz;
      done = pipelineAsync(gz, file);
    } else {
      out = file;
      done = finished(file);
    }
    done.catch(() => {}); // surfaced by write()/close(); avoid an unhandled rejection meanwhile
    return new TfRecordWriter(path, tmp, out, file, done);
  }

  /** Frames and writes one record; resolves once the stream accepts more (backpressure). */
  async write(data: Uint8Array): Promise<void> {
    if (this.closed) throw new Error(`TfRecordWriter for ${this.path} is closed`);
    if (data.length > MAX_RECORD) throw new RangeError(`record of ${data.length} bytes is too large`);
    // One copy per record, so callers may reuse `data` as soon as this resolves.
    const frame = Buffer.allocUnsafe(HEADER + data.length + FOOTER);
    frame.writeUInt32LE(data.length, 0);
    frame.writeUInt32LE(0, 4);
    frame.writeUInt32LE(maskedCrc32c(frame.subarray(0, 8)), 8);
    frame.set(data, HEADER);
    frame.writeUInt32LE(maskedCrc32c(data), HEADER + data.length);
    if (!this.out.write(frame)) await Promise.race([once(this.out, 'drain'), this.done]);
  }

  /** Flushes, closes and renames the temp file to `path`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.out.end();
      await this.done;
      if (!this.file.closed) await once(this.file, 'close');
      await rename(this.tmp, this.path);
    } catch (err) {
      await rm(this.tmp, { force: true });
      throw err;
    }
  }

  /** Drops everything written so far; `path` is left untouched. */
  async abort(): Promise<void> {
    this.closed = true;
    this.out.destroy();
    this.file.destroy();
    await this.done.catch(() => {});
    if (!this.file.closed) await once(this.file, 'close').catch(() => {});
    await rm(this.tmp, { force: true });
  }
}
