import * as tf from '@tensorflow/tfjs-core';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Where TensorFlow.js kernels run; the one place that chooses. */
export type BackendName = 'tensorflow' | 'wasm-blas' | 'wasm' | 'cpu-blas' | 'cpu';
const BACKEND_NAMES: readonly BackendName[] = ['tensorflow', 'wasm-blas', 'wasm', 'cpu-blas', 'cpu'];

export interface BackendInfo {
  backend: string;
  /** The package that provides it, e.g. `@tensorflow/tfjs-node-gpu`. */
  provider: string;
  tfjsVersion: string;
  threads: number;
  gpu: boolean;
}

const require = createRequire(import.meta.url);
let chosen: BackendInfo | undefined;

async function tryImport(name: string): Promise<boolean> {
  try {
    await import(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Picks the fastest backend that is installed: tfjs-node-gpu, tfjs-node (optional deps whose
 * installs need the internet), then wasm (the offline default), then the pure-JS cpu backend.
 * `prefer` (or AUTOUI_BACKEND) forces one. Idempotent.
 */
export async function initBackend(prefer: BackendName | undefined = envBackend()): Promise<BackendInfo> {
  if (chosen && (!prefer || chosen.backend === prefer)) return chosen;
  // wasm/cpu + native BLAS (src/native, built when OpenBLAS is installed) beat plain wasm ~2.5× on training.
  const candidates: Array<[BackendName, string]> = [
    ['tensorflow', '@tensorflow/tfjs-node-gpu'],
    ['tensorflow', '@tensorflow/tfjs-node'],
    ['wasm-blas', '@tensorflow/tfjs-backend-wasm'],
    ['wasm', '@tensorflow/tfjs-backend-wasm'],
    ['cpu-blas', '@tensorflow/tfjs-backend-cpu'],
    ['cpu', '@tensorflow/tfjs-backend-cpu'],
  ];
  for (const [backend, pkg] of candidates) {
    if (prefer && backend !== prefer) continue;
    if (!(await tryImport(pkg))) continue;
    const base = backend === 'wasm-blas' ? 'wasm' : backend === 'cpu-blas' ? 'cpu' : backend;
    if (!(await tf.setBackend(base))) continue;
    await tf.ready();
    if (base !== 'tensorflow') {
      // Imported here, not at the top: the kernels module loads the wasm backend, and importing
      // this file must not register a backend as a side effect.
      const { disableNativeKernels, enableNativeKernels } = await import('./native/kernels.js');
      const native = backend.endsWith('-blas');
      if (native && !enableNativeKernels([base as 'wasm' | 'cpu'])) continue;
      if (!native) disableNativeKernels([base as 'wasm' | 'cpu']);
    }
    const blas = backend.endsWith('-blas') ? (await import('./native/blas.js')).loadNativeBlas() : undefined;
    chosen = {
      backend,
      provider: blas ? `${pkg} + OpenBLAS (native/)` : pkg,
      tfjsVersion: tf.version_core,
      threads: blas ? blas.threads() : threadCount(base),
      gpu: pkg.endsWith('-gpu'),
    };
    return chosen;
  }
  throw new Error(`no TensorFlow.js backend could be initialised${prefer ? ` (asked for '${prefer}')` : ''}`);
}

function envBackend(): BackendName | undefined {
  const v = process.env.AUTOUI_BACKEND;
  if (v === undefined || v === '') return undefined;
  if ((BACKEND_NAMES as readonly string[]).includes(v)) return v as BackendName;
  throw new Error(`AUTOUI_BACKEND='${v}' is not one of ${BACKEND_NAMES.join(', ')}`);
}

function threadCount(backend: string): number {
  if (backend === 'wasm') {
    const b = tf.backend() as unknown as { wasm?: { _getThreadsCount?: () => number } };
    return b.wasm?._getThreadsCount?.() ?? 1;
  }
  return backend === 'cpu' ? 1 : Number(process.env.TF_NUM_INTRAOP_THREADS ?? 0) || 0;
}

/** Version of an installed package, found from its entry point (many packages do not export package.json). */
export function packageVersion(name: string): string | undefined {
  let dir: string;
  try {
    dir = dirname(require.resolve(name));
  } catch {
    return undefined;
  }
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === name) return pkg.version;
  }
  return undefined;
}
