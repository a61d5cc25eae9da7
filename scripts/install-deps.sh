#!/usr/bin/env bash
# Installs the Debian packages autoui uses: OpenBLAS (headers + library) for the native matmul addon
# that `npm ci` builds (training ~2.5× faster than plain wasm), and with --test also headless
# Chromium for the page test. Idempotent. Without root it says what is missing; for the main job
# that is only slower (plain wasm), for the tests it is an error.
set -euo pipefail
tests=0
[ "${1:-}" = "--test" ] && tests=1
need=()
dpkg-query -W -f='${Status}' libopenblas-dev 2>/dev/null | grep -q 'ok installed' || need+=(libopenblas-dev)
[ $tests -eq 1 ] && { command -v chromium >/dev/null 2>&1 || need+=(chromium); }
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: cannot apt-get install ${need[*]} (needs root on Debian/Ubuntu)" >&2
  exit $tests
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
