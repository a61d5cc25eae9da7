/**
 * The project's optional native addons (native/, built by scripts/build-native.mjs) are found by
 * walking up from this module to the folder holding native/build/Release, so they load from src/
 * under tsx/vitest and from dist/src/ alike. Loading is best effort: a missing, unbuildable or
 * broken addon, or AUTOUI_NATIVE=0, gives undefined and callers keep their JavaScript code.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findAddon(name: string): string | undefined {
  const rel = join('native', 'build', 'Release', `${name}.node`);
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, rel);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** The addon `name` (e.g. 'autoui_blas'), or undefined. Each call loads again: callers keep what they get. */
export function loadAddon<T>(name: string): T | undefined {
  if (process.env.AUTOUI_NATIVE === '0') return undefined;
  const file = findAddon(name);
  if (!file) return undefined;
  try {
    return createRequire(import.meta.url)(file) as T;
  } catch {
    // e.g. built against another Node ABI, or a library it links removed since.
    return undefined;
  }
}
