/**
 * Request queue + dynamic batching in front of one model: requests arriving while a batch runs
 * wait, and the next batch takes up to `maxBatch` of them at once, so concurrent clients share
 * each (sequential, CPU-bound) decode instead of queueing one by one. Bounded queue (new requests
 * are refused when full) and a deadline per request (a request that waited too long is refused
 * rather than run late), so overload degrades into fast errors, never into a hang.
 */

export interface BatcherOptions {
  /** Rows per batch (default 8). */
  maxBatch?: number;
  /** After the first request arrives at an idle batcher, wait this long for company (default 0: same tick only). */
  maxWaitMs?: number;
  /** Requests waiting at most (default 256). */
  maxQueue?: number;
  /** A request not started within this many ms is refused (default 30 000). */
  queueTimeoutMs?: number;
}

/** Why a request was refused without running; `status` is the HTTP answer (503). */
export class QueueError extends Error {
  override name = 'QueueError';
  readonly status = 503;
  constructor(
    message: string,
    readonly code: 'queue_full' | 'queue_timeout' | 'closed',
  ) {
    super(message);
  }
}

interface Pending<Req, Res> {
  req: Req;
  deadline: number;
  resolve: (r: Res) => void;
  reject: (e: unknown) => void;
}

export interface BatcherStats {
  batches: number;
  rows: number;
  maxBatchSeen: number;
  refused: number;
}

export class Batcher<Req, Res> {
  private readonly queue: Pending<Req, Res>[] = [];
  private running = false;
  private scheduled = false;
  private closed = false;
  private readonly opts: Required<BatcherOptions>;
  readonly stats: BatcherStats = { batches: 0, rows: 0, maxBatchSeen: 0, refused: 0 };

  /** `run` gets 1..maxBatch requests and must return one result per request, in order. */
  constructor(
    private readonly run: (reqs: Req[]) => Promise<Res[]>,
    opts: BatcherOptions = {},
  ) {
    this.opts = { maxBatch: 8, maxWaitMs: 0, maxQueue: 256, queueTimeoutMs: 30_000, ...opts };
    if (!Number.isInteger(this.opts.maxBatch) || this.opts.maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, got ${this.opts.maxBatch}`);
  }

  get pending(): number {
    return this.queue.length;
  }

  submit(req: Req): Promise<Res> {
    if (this.closed) return Promise.reject(new QueueError('the server is shutting down', 'closed'));
    if (this.queue.length >= this.opts.maxQueue) {
      this.stats.refused++;
      return Promise.reject(new QueueError(`too many requests waiting (${this.queue.length}); retry later`, 'queue_full'));
    }
    return new Promise<Res>((resolve, reject) => {
      this.queue.push({ req, deadline: Date.now() + this.opts.queueTimeoutMs, resolve, reject });
      this.schedule();
    });
  }

  /** Refuses new requests; waiting ones still run. Resolves when the queue is empty. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
  }

  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    const go = (): void => {
      this.scheduled = false;
      void this.drain();
    };
    if (this.opts.maxWaitMs > 0 && this.queue.length < this.opts.maxBatch) setTimeout(go, this.opts.maxWaitMs);
    else setImmediate(go);
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const now = Date.now();
        const batch: Pending<Req, Res>[] = [];
        while (batch.length < this.opts.maxBatch && this.queue.length > 0) {
          const p = this.queue.shift()!;
          if (p.deadline < now) {
            this.stats.refused++;
            p.reject(new QueueError(`waited more than ${this.opts.queueTimeoutMs} ms in the queue; retry later`, 'queue_timeout'));
          } else batch.push(p);
        }
        if (batch.length === 0) continue;
        this.stats.batches++;
        this.stats.rows += batch.length;
        this.stats.maxBatchSeen = Math.max(this.stats.maxBatchSeen, batch.length);
        try {
          const out = await this.run(batch.map((p) => p.req));
          if (out.length !== batch.length) throw new Error(`batch runner returned ${out.length} results for ${batch.length} requests`);
          batch.forEach((p, i) => p.resolve(out[i]!));
        } catch (err) {
          batch.forEach((p) => p.reject(err));
        }
        // Let I/O (new requests, responses) through between batches.
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.running = false;
    }
  }
}
