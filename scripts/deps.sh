#!/usr/bin/env bash
# Installs the Debian 12 packages mxc builds and tests with (idempotent).
set -euo pipefail
PKGS=(build-essential pkg-config meson ninja-build libjansson-dev libseccomp-dev
      python3 python3-pytest clang libclang-rt-14-dev valgrind iproute2 util-linux
      bubblewrap hyperfine strace procps
      passt libnftables-dev nftables  # src/net: pasta (the userspace stack), libnftables; nft for tests
      libidn2-dev curl tinyproxy-bin  # src/proxy: IDN as punycode; curl: its tests' client; bench/proxy.py's peer
      libyaml-dev groff-base  # src/cli: mxc --policy FILE.yaml; its man page's test
      libmicrohttpd-dev libcurl4-openssl-dev  # src/gateway: the daemon's API on a unix socket, its client
      libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev  # src/osdriver: gRPC's HTTP/2,
                                    # the messages, protoc-c, google/protobuf/struct.proto
      protobuf-compiler  # tests/openshell: protoc makes the Python messages from proto/openshell
      e2fsprogs  # src/osdriver: mke2fs formats each sandbox's capped writable layer (layer.h)
      libssl-dev openssl  # src/proxy: TLS interception (OpenSSL 3); openssl: the TLS tests' CA
      busybox-static podman  # tests/oci: the rootfs of the bundles mxc-oci runs; Podman 4.3 driving it
      uidmap  # rootless mxc-oci: newuidmap/newgidmap write a non-root caller's subordinate maps
      containerd runc crun bats jq  # tests/oci: containerd 1.6 + ctr (runc v2 shim); runc and crun as peers
                                    # (bench, runc's bats suite); bats, jq: that suite
      python3-grpcio python3-grpc-tools containernetworking-plugins  # tests/oci/test_cri.py: a CRI client
                                    # (stubs made from containerd's vendored CRI proto), CNI's bridge
      golang-go golang-github-seccomp-libseccomp-golang-dev golang-github-cyphar-filepath-securejoin-dev
      golang-github-opencontainers-specs-dev golang-github-sirupsen-logrus-dev golang-golang-x-sys-dev
                                    # tests/oci/bats/run.sh: runc's seccomp agent, built offline (GOPATH mode)
      docker-registry skopeo)  # tests/oci/critest/run.sh: critest's stand-in images, a registry on a test
                              # namespace's loopback (distribution 2.8), pushed by skopeo; golang-go builds critest
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
  # docker-registry's package enables a service (a registry on port 5000); the tests run their own
  # in a namespace of theirs and the host gets none: disabled and stopped when this install brought it
  if [[ " ${missing[*]} " == *" docker-registry "* ]] && command -v systemctl >/dev/null; then
    systemctl disable --now docker-registry.service >/dev/null 2>&1 || true
  fi
fi
