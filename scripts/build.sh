#!/usr/bin/env bash
# Configures (once) and builds mxc into ./build.  --test makes it a test
# build (meson -Dfault_injection=true: the MXC_FAULT_* points the fault tests
# use are compiled in; such a build installs no program, src/base/fault.h);
# without it ./build is an ordinary build.
set -euo pipefail
cd "$(dirname "$0")/.."
faults=false
[ "${1:-}" = "--test" ] && faults=true
[ -f build/build.ninja ] || meson setup build >/dev/null
[ "$(meson introspect build --buildoptions | python3 -c 'import json,sys; print(str([o["value"] for o in json.load(sys.stdin) if o["name"]=="fault_injection"][0]).lower())')" = "$faults" ] ||
    meson configure build -Dfault_injection=$faults >/dev/null
ninja -C build >/dev/null
