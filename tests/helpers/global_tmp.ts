/**
 * Vitest global setup: every test file's temporary directories live under one per-run root that is removed
 * afterwards. Tests call `os.tmpdir()` (which reads TMPDIR) and so need no cleanup code of their own; before this,
 * each CI run left ~1 GB of synthetic sets and checkpoints in /tmp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'autoui-tests-'));
  // Forked workers inherit this environment, so their tmpdir() resolves under `root`.
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (!process.env.AUTOUI_KEEP_TEST_TMP) rmSync(root, { recursive: true, force: true });
  };
}
