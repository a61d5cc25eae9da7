/**
 * The built-in encoder on worker threads: a batch is split into one chunk per thread. Why: the
 * feature pass is synchronous JavaScript, so on one thread `data prepare` uses one core while the
 * other idles; two workers keep both busy while the main thread reads records and writes shards.
 * Features are bit-identical to the in-process encoder (same code, each screen on one thread).
 * Uses piscina for the pool. The worker is the compiled builtin_worker.js beside this module; where
 * it does not exist (running from TypeScript sources), callers get the in-process encoder instead.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { RawImage } from '../types.js';
import { BUILTIN_INFO, BuiltinEncoder, checkRawImage } from './builtin.js';
import type { EncoderInfo, VisionEncoder } from './encoder.js';

const WORKER = new URL('./builtin_worker.js', import.meta.url);

/**
 * How long a pool nobody uses stays up. A worker's first two batches cost ~3× the later ones (its
 * start, then V8 optimising the feature code), ~0.3 s a pool: successive bulk calls in one process
 * (`data prepare` of each subset in the demo) share one warm pool instead of each paying it. Idle
 * piscina workers are unref'd, and so is the timer, so a lingering pool never keeps the process up.
 */
const LINGER_MS = 10_000;

interface SharedPool {
  pool: Piscina;
  users: number;
  linger?: NodeJS.Timeout;
}
const pools = new Map<number, SharedPool>();

function borrowPool(threads: number): Piscina {
  let p = pools.get(threads);
  if (!p) {
    p = { pool: new Piscina({ filename: fileURLToPath(WORKER), minThreads: threads, maxThreads: threads }), users: 0 };
    pools.set(threads, p);
  }
  clearTimeout(p.linger);
  p.users++;
  return p.pool;
}

function returnPool(threads: number): void {
  const p = pools.get(threads);
  if (!p || --p.users > 0) return;
  p.linger = setTimeout(() => {
    pools.delete(threads);
    void p.pool.destroy();
  }, LINGER_MS).unref();
}

export class ParallelEncoder implements VisionEncoder {
  readonly info: EncoderInfo = BUILTIN_INFO;
  private readonly pool: Piscina;
  private disposed = false;

  constructor(readonly threads: number) {
    this.pool = borrowPool(threads);
  }

  async encode(images: RawImage[]): Promise<Float32Array[]> {
    images.forEach((img, i) => checkRawImage(img, `image ${i} of the batch`));
    if (this.disposed) throw new Error('ParallelEncoder: encode after dispose');
    const size = Math.ceil(images.length / this.threads);
    const chunks = Array.from({ length: Math.ceil(images.length / size) }, (_, k) => images.slice(k * size, (k + 1) * size));
    const features = this.info.dim * this.info.patches;
    const outs = await Promise.all(chunks.map((c) => this.pool.run(c) as Promise<Float32Array>));
    return outs.flatMap((flat) => Array.from({ length: flat.length / features }, (_, i) => flat.subarray(i * features, (i + 1) * features)));
  }

  /** Gives the pool back; it stays warm for the next encoder of as many threads for LINGER_MS. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    returnPool(this.threads);
  }
}

/** The built-in encoder on `threads` workers when there are several and the compiled worker exists; else in-process. */
export function builtinEncoder(threads: number): VisionEncoder {
  return threads > 1 && existsSync(fileURLToPath(WORKER)) ? new ParallelEncoder(threads) : new BuiltinEncoder();
}
