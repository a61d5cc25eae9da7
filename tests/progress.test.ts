/** The progress bar's rate counts only this process's work: a resumed run starts at its step, not at 0. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatEta, progress } from '../src/util/progress.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function drawn(run: () => void): string {
  let out = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  run();
  return out;
}

describe('progress', () => {
  it('shows a resumed count and rates only the items done since', () => {
    vi.useFakeTimers({ now: 0 });
    const out = drawn(() => {
      const bar = progress({ label: 'train', total: 100, done: 40, unit: 'steps' });
      vi.advanceTimersByTime(2000);
      bar.tick(10);
      bar.stop();
    });
    expect(out).toContain('50/100 steps · 5.0 steps/s');
  });

  it('is silent when quiet', () => {
    const out = drawn(() => {
      const bar = progress({ label: 'x', total: 3, quiet: true });
      bar.tick();
      bar.stop();
    });
    expect(out).toBe('');
  });
});

describe('formatEta', () => {
  it('rounds the whole time to 5 s before splitting it, so no part reads 60', () => {
    expect(formatEta(839)).toBe('14m00s'); // cli-progress's own: 13m60s
    expect(formatEta(836)).toBe('13m55s');
    expect(formatEta(59)).toBe('1m00s');
    expect(formatEta(42)).toBe('40s');
    expect(formatEta(7.4)).toBe('7s');
    expect(formatEta(3900)).toBe('1h05m');
    expect(formatEta(7199)).toBe('2h00m');
    expect(formatEta(3599)).toBe('1h00m'); // not 60m00s
  });

  it("prints '?' for the 'INF' and 'NULL' cli-progress passes while it has no rate", () => {
    expect(formatEta('INF')).toBe('?');
    expect(formatEta('NULL')).toBe('?');
    expect(formatEta(Number.NaN)).toBe('?');
  });
});
