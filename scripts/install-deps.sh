#!/usr/bin/env bash
# Installs what autoui's main job and tests use from Debian, idempotently:
# - libopenblas-dev: the native kernels `npm ci` builds (training ~4× faster than plain wasm);
# - chromium-headless-shell: Chromium's headless mode alone (its package pulls in no full browser),
#   which renders real web screens (`autoui data web`), runs tasks live (`autoui run`), and the page
#   and report tests, at about half the CPU of the full chromium;
# - the HTML manuals the web screens come from (scripts/fetch-manuals.sh: downloaded and unpacked
#   into runs/manuals, never installed — installing nodejs-doc would remove the machine's Node).
# Without root it says what is missing: the main job then runs what it can (plain wasm; no web
# screens without Chromium), while for the tests (--test) a missing package is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0
[ "${1:-}" = "--test" ] && tests=1
need=()
dpkg-query -W -f='${Status}' libopenblas-dev 2>/dev/null | grep -q 'ok installed' || need+=(libopenblas-dev)
[ -x /usr/lib/chromium/chromium-headless-shell ] || [ -n "${CHROMIUM_PATH:-}" ] || need+=(chromium-headless-shell)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: cannot apt-get install ${need[*]} (needs root on Debian/Ubuntu)" >&2
    [ $tests -eq 1 ] && exit 1
  else
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi
# The tests render their own small pages; only the main job needs the manuals.
if [ $tests -eq 0 ]; then
  bash scripts/fetch-manuals.sh || echo "install-deps: some manuals could not be fetched; the demo leaves their sites out" >&2
fi
