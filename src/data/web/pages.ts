/**
 * Copies a manual's HTML folder next to its records (OUT/SITE/pages/), so task suites are
 * self-contained and relocatable and the screens are rendered from exactly the files a suite ships.
 * Symlinks are copied as the files they point to; a link that dangles here (Debian points Sphinx
 * scripts into shared packages) is looked up under each search root (/ and the manual cache).
 * Pages without a viewport meta tag get one: a phone browser would otherwise lay them out 980 px
 * wide and zoom out to ~40 %, leaving text too small to read or tap.
 */
import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, readFile, readdir, readlink, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { replaceDirAtomic } from '../../util/atomic.js';

/** Files no rendered page needs: Sphinx sources and inventories, compressed and print copies. */
const SKIP = /^(_sources|\.buildinfo|objects\.inv)$|\.(gz|pdf|txt|md|json|epub|ps)$/i;

export const VIEWPORT_META = '<meta name="viewport" content="width=device-width, initial-scale=1">';

/** `html` with a viewport meta tag after <head> when it has none (bytes outside the insertion unchanged). */
export function withViewportMeta(html: string): string {
  if (/<meta[^>]+name\s*=\s*["']?viewport/i.test(html)) return html;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + VIEWPORT_META + html.slice(head.index + head[0].length);
  return VIEWPORT_META + html;
}

/** Where a symlink's target really is: as it says, else the same path under another search root. */
function resolveLink(link: string, target: string, roots: readonly string[]): string | undefined {
  const abs = isAbsolute(target) ? target : resolve(dirname(link), target);
  if (existsSync(abs)) return abs;
  const home = roots.filter((r) => abs === r || abs.startsWith(r.endsWith(sep) ? r : r + sep)).sort((a, b) => b.length - a.length)[0];
  if (!home) return undefined;
  const rel = relative(home, abs);
  for (const r of roots) if (existsSync(join(r, rel))) return join(r, rel);
  return undefined;
}

async function copyOne(src: string, dest: string): Promise<number> {
  if (/\.html?$/i.test(src)) {
    // latin1 round-trips every byte, so pages in any encoding keep their bytes.
    const text = withViewportMeta(await readFile(src, 'latin1'));
    await writeFile(dest, text, 'latin1');
    return text.length;
  }
  await copyFile(src, dest);
  return (await stat(dest)).size;
}

/** Deeper than any manual's folders; stops a symlink cycle. */
const MAX_DEPTH = 12;

async function copyTree(src: string, dest: string, roots: readonly string[], depth = 0): Promise<{ files: number; bytes: number }> {
  const out = { files: 0, bytes: 0 };
  if (depth > MAX_DEPTH) return out;
  await mkdir(dest, { recursive: true });
  for (const name of (await readdir(src)).sort()) {
    let from = join(src, name);
    if (SKIP.test(name)) continue;
    const st = await lstat(from);
    if (st.isSymbolicLink()) {
      const real = resolveLink(from, await readlink(from), roots);
      if (!real) continue; // nothing to copy; the page degrades as it would on a machine without it
      from = real;
    }
    const kind = await stat(from);
    if (kind.isDirectory()) {
      const sub = await copyTree(from, join(dest, name), roots, depth + 1);
      out.files += sub.files;
      out.bytes += sub.bytes;
    } else if (kind.isFile()) {
      out.bytes += await copyOne(from, join(dest, name));
      out.files++;
    }
  }
  return out;
}

/** Copies SRC into DEST (replaced whole, atomically); returns how many files and bytes it wrote. */
export async function copySitePages(src: string, dest: string, roots: readonly string[]): Promise<{ files: number; bytes: number }> {
  let result = { files: 0, bytes: 0 };
  await replaceDirAtomic(dest, async (tmp) => {
    result = await copyTree(src, tmp, roots);
  });
  return result;
}
