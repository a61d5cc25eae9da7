/** What a command prints on stdout while `run` runs, chunk by chunk (stdout is silenced meanwhile). */
import { vi } from 'vitest';

export async function captureStdout(run: () => Promise<unknown>): Promise<string[]> {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (chunks.push(String(chunk)), true));
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return chunks;
}
