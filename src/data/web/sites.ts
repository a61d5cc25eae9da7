/**
 * The sites `data web` renders: Debian HTML manuals (real pages nobody on the project wrote) and
 * generated phone apps. A manual is found installed under /usr/share or unpacked by
 * scripts/fetch-manuals.sh into a cache folder (CACHE/PKG/usr/share/...).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../../util/errors.js';

export type SiteKind = 'manual' | 'app';

export interface ManualSpec {
  site: string;
  /** The Debian package that ships it. */
  pkg: string;
  /** Its HTML folder, relative to the file-system root (or to CACHE/PKG). */
  htmlDir: string;
  /** Entry page, relative to htmlDir. */
  start: string;
  /** Client-side search at search.html (Sphinx) works from file://: the site gets search tasks. */
  sphinx: boolean;
  /** How goals name it ("find X in the Flask docs"). */
  label: string;
}

/**
 * Manuals of different generators (Node's own, DocBook, AsciiDoc, texinfo, several Sphinx themes),
 * each a few MB. clang is Sphinx with a theme and a subject no other site shares, which makes it the
 * default held-out manual (see DEFAULT_HELD_OUT).
 */
export const MANUALS: readonly ManualSpec[] = [
  { site: 'nodejs', pkg: 'nodejs-doc', htmlDir: 'usr/share/doc/nodejs/api', start: 'index.html', sphinx: false, label: 'Node.js' },
  { site: 'postgresql', pkg: 'postgresql-doc-15', htmlDir: 'usr/share/doc/postgresql-doc-15/html', start: 'index.html', sphinx: false, label: 'PostgreSQL' },
  { site: 'git', pkg: 'git-doc', htmlDir: 'usr/share/doc/git-doc', start: 'git.html', sphinx: false, label: 'Git' },
  { site: 'debian-reference', pkg: 'debian-reference-en', htmlDir: 'usr/share/debian-reference', start: 'index.en.html', sphinx: false, label: 'Debian Reference' },
  { site: 'zsh', pkg: 'zsh-doc', htmlDir: 'usr/share/doc/zsh-common/html', start: 'index.html', sphinx: false, label: 'Zsh' },
  { site: 'sphinx', pkg: 'sphinx-doc', htmlDir: 'usr/share/doc/sphinx-doc/html', start: 'index.html', sphinx: true, label: 'Sphinx' },
  { site: 'flask', pkg: 'python-flask-doc', htmlDir: 'usr/share/doc/python-flask-doc/html', start: 'index.html', sphinx: true, label: 'Flask' },
  { site: 'click', pkg: 'python-click-doc', htmlDir: 'usr/share/doc/python-click-doc/html', start: 'index.html', sphinx: true, label: 'Click' },
  // Sphinx, but its search is broken in Debian's package (the shared searchtools.js it links needs a
  // sphinx_highlight.js its pages do not load), so no search tasks.
  { site: 'requests', pkg: 'python-requests-doc', htmlDir: 'usr/share/doc/python-requests-doc/html', start: 'index.html', sphinx: false, label: 'Requests' },
  { site: 'jinja', pkg: 'python-jinja2-doc', htmlDir: 'usr/share/doc/python-jinja2-doc/html', start: 'index.html', sphinx: true, label: 'Jinja' },
  { site: 'clang', pkg: 'clang-15-doc', htmlDir: 'usr/share/doc/clang-15/html', start: 'index.html', sphinx: true, label: 'Clang' },
];

/** Packages whose files Sphinx pages link to through symlinks (dh_sphinxdoc); fetched like manuals. */
export const SHARED_SCRIPT_PACKAGES = ['libjs-sphinxdoc', 'libjs-jquery', 'libjs-underscore'] as const;

/** The default cache folder of scripts/fetch-manuals.sh, relative to the working directory. */
export const DEFAULT_MANUAL_CACHE = 'runs/manuals';

/** The folders a path under / may be found in: the root itself, then each cached package. */
export function searchRoots(cacheDir: string, pkgs: readonly string[]): string[] {
  return ['/', ...pkgs.map((p) => resolve(cacheDir, p))];
}

/** Absolute HTML folder of a manual; an InputError saying how to fetch it when it is nowhere. */
export function locateManual(spec: ManualSpec, cacheDir: string): string {
  for (const root of searchRoots(cacheDir, [spec.pkg])) {
    const dir = join(root, spec.htmlDir);
    if (existsSync(join(dir, spec.start))) return dir;
  }
  throw new InputError(
    `manual '${spec.site}' (Debian package ${spec.pkg}) is neither installed nor in ${cacheDir}; run scripts/fetch-manuals.sh --cache ${cacheDir} ${spec.pkg}`,
    '--sites',
  );
}

/**
 * Held out by default (test split only): clang, a Sphinx manual (so held-out tasks include search)
 * whose theme and subject no training site shares, and the app whose colour and names differ from
 * every training app.
 */
export const DEFAULT_HELD_OUT = ['clang', 'app-quartz'] as const;

export function manualSpec(site: string): ManualSpec | undefined {
  return MANUALS.find((m) => m.site === site);
}
