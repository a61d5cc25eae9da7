#!/usr/bin/env node
/**
 * Builds the optional addons (native/ → native/build/Release/autoui_blas.node, OpenBLAS and the
 * fused training kernels, and autoui_pixels.node, the built-in screen encoder) when the
 * machine has what it needs: OpenBLAS headers and library, Node's headers, and node-gyp. Never
 * fails an install: when something is missing or the build breaks it prints one line saying why
 * and exits 0, and the program falls back to the pure-JS/wasm kernels.
 * `--strict` makes a missing prerequisite or a failed build exit 1 (for CI, where it must build).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = join(root, 'native');
const strict = process.argv.includes('--strict');

function skip(reason) {
  console.log(`build-native: skipped (${reason}); the JS/wasm kernels run everything`);
  process.exit(strict ? 1 : 0);
}

/** Directories binding.gyp searches for cblas.h, plus the compilers' default one. */
const headerDirs = [
  '/usr/include/x86_64-linux-gnu/openblas-pthread',
  '/usr/include/aarch64-linux-gnu/openblas-pthread',
  '/usr/include/openblas',
  '/usr/local/include/openblas',
  '/opt/homebrew/opt/openblas/include',
  '/usr/local/opt/openblas/include',
];
const libDirs = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/lib', '/opt/homebrew/opt/openblas/lib', '/usr/local/opt/openblas/lib'];

function hasOpenBlasHeader() {
  // openblas_set_num_threads is declared only by OpenBLAS's own cblas.h, not by the generic one.
  return headerDirs.some((d) => existsSync(join(d, 'cblas.h')));
}

function hasOpenBlasLib() {
  return libDirs.some((d) => {
    try {
      return readdirSync(d).some((f) => /^libopenblas\.(so|dylib)$/.test(f));
    } catch {
      return false;
    }
  });
}

/** node-gyp: the one npm runs scripts with, a project-local copy, or the one bundled with npm. */
function findNodeGyp() {
  const candidates = [process.env.npm_config_node_gyp];
  try {
    candidates.push(createRequire(join(root, 'package.json')).resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    /* not a project dependency */
  }
  const prefix = dirname(dirname(process.execPath));
  candidates.push(join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  candidates.push(join(prefix, 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  return candidates.find((p) => p && existsSync(p));
}

if (process.env.AUTOUI_SKIP_NATIVE === '1') skip('AUTOUI_SKIP_NATIVE=1');
if (!hasOpenBlasHeader()) skip('OpenBLAS headers not found; on Debian/Ubuntu: apt-get install libopenblas-dev');
if (!hasOpenBlasLib()) skip('libopenblas not found; on Debian/Ubuntu: apt-get install libopenblas-dev');
const gyp = findNodeGyp();
if (!gyp) skip('node-gyp not found');

// Node's own headers when they sit next to the binary (distro and official builds): no download.
const args = [gyp, 'rebuild'];
const prefix = dirname(dirname(process.execPath));
if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);

const r = spawnSync(process.execPath, args, { cwd: nativeDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
if (r.status !== 0) {
  const lines = `${r.stderr ?? ''}${r.stdout ?? ''}`.split('\n').map((l) => l.trim());
  const why = lines.find((l) => /error/i.test(l) && !/^gyp ERR! (stack|cwd|node -v|node-gyp -v|System|command)/.test(l)) ?? `node-gyp exited with ${r.status ?? r.signal}`;
  skip(`build failed: ${why}`);
}
console.log('build-native: built native/build/Release/autoui_blas.node (OpenBLAS matmul and fused training kernels) and autoui_pixels.node (the built-in screen encoder)');
