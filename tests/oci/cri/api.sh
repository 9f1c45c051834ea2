#!/usr/bin/env bash
# Kubernetes' CRI API (runtime.v1) as Python gRPC stubs, for tests/oci/test_cri.py.
#
#   tests/oci/cri/api.sh OUTDIR      -> OUTDIR/api_pb2.py, OUTDIR/api_pb2_grpc.py
#
# The proto is not in this repository: it is the copy containerd vendors
# (vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto), taken from Debian's
# containerd source package (the installed containerd's version), fetched
# with apt-get source into a cache outside the tree (MXC_CRI_CACHE, default
# build/cri-api) and checked against the SHA-256 pinned below.  gogoproto's
# import and options (Go code generation only) are stripped; the stubs are
# made by Debian's python3-grpc-tools (grpc_tools.protoc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${1:?usage: api.sh OUTDIR}
cache=${MXC_CRI_CACHE:-$repo/build/cri-api}

# Debian bookworm's containerd 1.6.20~ds1-1+deb12u3
SRC_VERSION=1.6.20~ds1
DEB_VERSION=${SRC_VERSION}-1+deb12u3
ORIG=containerd_${SRC_VERSION}.orig.tar.xz
ORIG_SHA256=270136d05125f15636f036d4ea846581c0e49a1d3a5e6001115098f4b656d688
PROTO=containerd-1.6.20/vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto

fetch_source() {  # Debian's source package, pinned (tests/oci/debian-source.sh)
  bash "$here/../debian-source.sh" containerd "$DEB_VERSION" "$ORIG" "$ORIG_SHA256" "$cache" || exit 2
}

fetch_source
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
tar -C "$w" -xJf "$cache/$ORIG" "$PROTO"
sed -e '/gogoproto\/gogo\.proto/d' -e '/^option (gogoproto\./d' -e 's/ *\[(gogoproto\.[^]]*\]//' "$w/$PROTO" >"$w/api.proto"
! grep -q gogoproto "$w/api.proto" || { echo "cri-api: gogoproto options left in the proto" >&2; exit 2; }
mkdir -p "$out"
/usr/bin/python3 -m grpc_tools.protoc -I"$w" --python_out="$out" --grpc_python_out="$out" "$w/api.proto"
