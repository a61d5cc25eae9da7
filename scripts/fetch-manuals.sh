#!/usr/bin/env bash
# Makes the Debian HTML manuals that `autoui data web` renders available without root: for each
# package whose HTML is not installed under /usr/share, `apt-get download` its .deb and unpack it
# with `dpkg -x` into CACHE/PKG/ (default runs/manuals). Idempotent: a package already installed or
# unpacked is skipped. Never installs anything: `apt-get install nodejs-doc` would remove the
# machine's Node, so nodejs-doc too is only ever unpacked.
#
# Usage: scripts/fetch-manuals.sh [--cache DIR] [PKG ...]   (no PKG: every manual the web set knows)
set -euo pipefail

cache=runs/manuals
if [ "${1:-}" = "--cache" ]; then
  cache="$2"
  shift 2
fi

# package → a file that shows its HTML is present (relative to / or to CACHE/PKG).
declare -A probe=(
  [nodejs-doc]=usr/share/doc/nodejs/api/index.html
  [postgresql-doc-15]=usr/share/doc/postgresql-doc-15/html/index.html
  [git-doc]=usr/share/doc/git-doc/git.html
  [debian-reference-en]=usr/share/debian-reference/index.en.html
  [sphinx-doc]=usr/share/doc/sphinx-doc/html/index.html
  [python-flask-doc]=usr/share/doc/python-flask-doc/html/index.html
  [python-click-doc]=usr/share/doc/python-click-doc/html/index.html
  [python-requests-doc]=usr/share/doc/python-requests-doc/html/index.html
  [python-jinja2-doc]=usr/share/doc/python-jinja2-doc/html/index.html
  [clang-15-doc]=usr/share/doc/clang-15/html/index.html
  [zsh-doc]=usr/share/doc/zsh-common/html/index.html
  # Sphinx pages link their scripts into these shared packages (dh_sphinxdoc symlinks).
  [libjs-sphinxdoc]=usr/share/javascript/sphinxdoc/1.0/searchtools.js
  [libjs-jquery]=usr/share/javascript/jquery/jquery.js
  [libjs-underscore]=usr/share/javascript/underscore/underscore.js
)

if [ $# -eq 0 ]; then
  set -- "${!probe[@]}"
fi

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
missing=0
for pkg in "$@"; do
  file=${probe[$pkg]:-}
  if [ -z "$file" ]; then
    echo "fetch-manuals: unknown package '$pkg' (known: ${!probe[*]})" >&2
    exit 2
  fi
  if [ -e "/$file" ] || [ -e "$cache/$pkg/$file" ]; then
    continue
  fi
  work=$(mktemp -d "$cache/.dl-$pkg-XXXXXX")
  if ! (cd "$work" && apt-get download -qq "$pkg" >/dev/null 2>&1); then
    echo "fetch-manuals: cannot download $pkg (run 'apt-get update' once, or check that the package exists)" >&2
    rm -rf "$work"
    missing=1
    continue
  fi
  dpkg -x "$work"/"${pkg}"_*.deb "$work/root"
  rm -rf "$cache/$pkg"
  mv "$work/root" "$cache/$pkg" # whole folder swapped in, so a broken run never looks finished
  rm -rf "$work"
  echo "fetch-manuals: $pkg → $cache/$pkg" >&2
done
exit $missing
