import type { Command } from 'commander';
import { cpus } from 'node:os';
import { initBackend, packageVersion, type BackendName } from '../backend.js';
import { pixelKernels } from '../screen/vision/builtin/native.js';
import { AUTOUI_VERSION } from '../util/version.js';
import { printJson } from './common.js';

export function registerInfo(program: Command): void {
  program
    .command('info')
    .description('print the TensorFlow.js backend in use, the built-in encoder\'s code, library versions and thread count')
    .option('--backend <name>', 'force a backend: tensorflow | wasm-blas | wasm | cpu-blas | cpu (default: fastest installed)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { backend?: BackendName; json?: boolean }) => {
      const b = await initBackend(opts.backend);
      const info = {
        autoui: AUTOUI_VERSION,
        node: process.versions.node,
        backend: b.backend,
        backendPackage: b.provider,
        gpu: b.gpu,
        threads: b.threads,
        builtinEncoder: pixelKernels() ? 'C++ (autoui_pixels)' : 'JavaScript',
        cpus: cpus().length,
        versions: Object.fromEntries(
          [
            '@tensorflow/tfjs-core',
            '@tensorflow/tfjs-backend-wasm',
            '@tensorflow/tfjs-node',
            '@tensorflow/tfjs-node-gpu',
            '@huggingface/transformers',
            'sharp',
            'apache-arrow',
          ].map((p) => [p, packageVersion(p) ?? null]),
        ),
      };
      if (opts.json) return printJson(info);
      for (const [k, v] of Object.entries(info)) {
        if (k === 'versions') for (const [p, ver] of Object.entries(v as Record<string, string | null>)) console.log(`${p.padEnd(28)} ${ver ?? '(not installed)'}`);
        else console.log(`${k.padEnd(28)} ${String(v)}`);
      }
    });
}
