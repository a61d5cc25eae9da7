import cliProgress from 'cli-progress';

export interface Progress {
  /** Advance by `n` items; `fields` are shown after the counters (e.g. loss). */
  tick(n?: number, fields?: Record<string, string | number>): void;
  setTotal(total: number): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  total: number;
  /** Items done before this process started (a resumed run): shown in the count, left out of the rate. */
  done?: number;
  unit?: string;
  /** Silence it (e.g. under --json, or when stderr is not a terminal and CI wants quiet logs). */
  quiet?: boolean;
}

/**
 * An ETA as "1h05m", "13m55s" or "40s" (to 5 s above 10 s, as cli-progress does). cli-progress's own
 * rounds the seconds part alone to a multiple of 5 and so prints "13m60s"; this rounds the whole time first.
 * cli-progress hands over the strings 'INF' or 'NULL' while it has no rate to go by: "?" then.
 */
export function formatEta(seconds: number | string): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '?';
  const two = (v: number) => String(v).padStart(2, '0');
  const t = seconds > 10 ? 5 * Math.round(seconds / 5) : Math.max(0, Math.round(seconds));
  if (t >= 3600) {
    const m = Math.round(seconds / 60);
    return `${Math.floor(m / 60)}h${two(m % 60)}m`;
  }
  return t >= 60 ? `${Math.floor(t / 60)}m${two(t % 60)}s` : `${t}s`;
}

/**
 * A progress bar on stderr with items/s and ETA, so stdout stays clean for --json.
 * When stderr is not a TTY it degrades to a line every few seconds instead of redraws.
 */
export function progress(opts: ProgressOptions): Progress {
  if (opts.quiet) return { tick() {}, setTotal() {}, stop() {} };
  const unit = opts.unit ?? 'it';
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${opts.label} |{bar}| {value}/{total} ${unit} · {rate} ${unit}/s · ETA {eta_formatted}{extra}`,
      noTTYOutput: true,
      notTTYSchedule: 5000,
      etaBuffer: 50,
      hideCursor: true,
      barsize: 24,
      formatTime: formatEta,
    },
    cliProgress.Presets.shades_classic,
  );
  const start = Date.now();
  const before = opts.done ?? 0;
  let done = before;
  // cli-progress redraws from a timer, which never fires while a synchronous training or decoding
  // loop holds the event loop; so redraw from tick() itself at the same cadence.
  const every = process.stderr.isTTY ? 200 : 5000;
  let lastDraw = start;
  bar.start(opts.total, before, { rate: '0.0', extra: '' });
  return {
    tick(n = 1, fields) {
      done += n;
      const secs = (Date.now() - start) / 1000;
      const extra = fields
        ? ' · ' + Object.entries(fields).map(([k, v]) => `${k} ${typeof v === 'number' ? v.toPrecision(4) : v}`).join(' · ')
        : '';
      bar.update(done, { rate: (secs > 0 ? (done - before) / secs : 0).toFixed(1), extra });
      if (Date.now() - lastDraw >= every) {
        lastDraw = Date.now();
        bar.render();
      }
    },
    setTotal(total) {
      bar.setTotal(total);
    },
    stop() {
      bar.stop();
    },
  };
}
