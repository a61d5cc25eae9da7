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
  /**
   * One AdamW step for one parameter tensor into pOut, mOut, vOut (all arrays one length):
   * g' = gradScale·g, m' = β1·m + (1−β1)·g', v' = β2·v + (1−β2)·g'², p' = (1 − decay)·p − lr·(m'/bc1)/(√(v'/bc2) + ε).
   */
  adamw(
    p: Float32Array, g: Float32Array, m: Float32Array, v: Float32Array,
    pOut: Float32Array, mOut: Float32Array, vOut: Float32Array,
    lr: number, beta1: number, beta2: number, bc1: number, bc2: number, epsilon: number, decay: number, gradScale: number,
  ): void;
  /** Σ x², accumulated in double. */
  sumSquares(x: Float32Array): number;
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
