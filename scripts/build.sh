#!/usr/bin/env bash
# Configures (once) and builds mxc into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
