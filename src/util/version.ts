import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * autoui's version: package.json's, the one string every record of provenance uses (manifests,
 * checkpoints, `--version`, `info`). Found by walking up from this module, which sits at a different
 * depth in the sources (tests) and in dist/ (the installed package).
 */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'autoui' && pkg.version) return pkg.version;
    } catch {
      // no package.json at this level: keep walking up
    }
  }
  throw new Error("autoui's package.json not found above " + fileURLToPath(import.meta.url));
}

export const AUTOUI_VERSION: string = packageVersion();
