#!/usr/bin/env bash
# Installs the system packages the test suite needs (headless Chromium for the page test; OpenBLAS
# headers and library for the native matmul addon that scripts/build-native.mjs builds).
# Idempotent: does nothing when they are already there.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
dpkg-query -W -f='${Status}' libopenblas-dev 2>/dev/null | grep -q 'ok installed' || need+=(libopenblas-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-test-deps: need root to apt-get install ${need[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
