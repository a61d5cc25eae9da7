/**
 * The optional OpenBLAS addon (native/blas.cc, built by scripts/build-native.mjs). Loading it is
 * best effort: absent, unbuildable or broken, `loadNativeBlas()` returns undefined and callers keep
 * the JS/wasm kernels.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The addon's exports (see native/blas.cc). */
export interface NativeBlas {
  /**
   * Row-major c[bi] = op(a[bi % batchA]) · op(b[bi % batchB]) for bi < batch, where op(x) = xᵀ when
   * its flag is set; a holds batchA [m, k] (or [k, m] if transA) matrices, b batchB [k, n] (or [n, k]),
   * c batch [m, n]. Writes c in place; throws if an array is shorter than its shape needs.
   */
  sgemm(
    a: Float32Array, b: Float32Array, c: Float32Array,
    batch: number, batchA: number, batchB: number,
    m: number, n: number, k: number,
    transA: boolean, transB: boolean,
  ): void;
  /** Threads for OpenBLAS and for spreading batches of small products. */
  setThreads(threads: number): void;
  threads(): number;
  /** OpenBLAS build string, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64". */
  config(): string;
}

const ADDON = join('native', 'build', 'Release', 'autoui_blas.node');
let cached: { blas: NativeBlas | undefined } | undefined;

/** The project root: the nearest ancestor holding native/ (works from src/ under tsx/vitest and from dist/src/). */
function findAddon(): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, ADDON);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/**
 * The addon with its threads set (default 2 = this machine's cores; AUTOUI_BLAS_THREADS overrides),
 * or undefined when it is not built, fails to load, or AUTOUI_NATIVE=0. Loaded once.
 */
export function loadNativeBlas(): NativeBlas | undefined {
  if (cached) return cached.blas;
  cached = { blas: undefined };
  if (process.env.AUTOUI_NATIVE === '0') return undefined;
  const file = findAddon();
  if (!file) return undefined;
  try {
    const blas = createRequire(import.meta.url)(file) as NativeBlas;
    // A fixed count, not "all cores": results must not depend on the machine for resume to be bit-exact.
    blas.setThreads(blasThreads());
    cached.blas = blas;
  } catch {
    // e.g. built against another Node ABI or libopenblas removed since: fall back silently.
  }
  return cached.blas;
}

function blasThreads(): number {
  const v = Number(process.env.AUTOUI_BLAS_THREADS);
  return Number.isInteger(v) && v >= 1 ? v : 2;
}
