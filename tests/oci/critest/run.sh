#!/usr/bin/env bash
# Kubernetes' CRI conformance suite, critest (cri-tools v1.26.1), on containerd 1.6 with the runtime
# entries of docs/kubernetes.md: once with runtime handler "runc", once with "mxc"; per spec compared.
#
#   run.sh [CRI_TOOLS_GIT [BUILD_DIR]]
#
# CRI_TOOLS_GIT: a git directory of cri-tools holding tag v1.26.1 (default $CRI_TOOLS_GIT, else the
# local mirror); the tag must resolve to the commit pinned below.  critest is built offline from the
# tag's vendored code with Debian's Go (cri-tools' Makefile's target: go test -c ./cmd/critest,
# CGO_ENABLED=0, -mod=vendor) and cached in BUILD_DIR (default build/critest).
# tests/oci/critest/critest.py makes the node (containerd in a network namespace of its own, a
# registry on that namespace's loopback serving stand-ins of critest's images) and runs critest.
#
# A spec runc passes and mxc fails must be in ALLOWED below, with its reason, and a row of docs/oci.md's
# "Kubernetes' critest" section: host namespaces, privileged containers and capabilities outside mxc's
# set -- and, marked "mxc's guarantee", the guarantees of docs/oci.md that are none of those three.
# Any other is a failure (exit 1).  An allowed spec mxc now passes is reported (its row can go).
# Without the cri-tools git directory the script says "skipped: no cri-tools source" and exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
GIT=${1:-${CRI_TOOLS_GIT:-/work/.mirror/kubernetes-sigs+cri-tools/repo}}
BUILD=${2:-$repo/build/critest}
TAG=v1.26.1
COMMIT=300f0781645f12437b43fba5dd232733e0f2f82f   # cri-tools v1.26.1
export MXC_OCI=$(readlink -f "${MXC_OCI:-$repo/build/mxc-oci}")

# spec (critest's full name) <TAB> reason -- each a row of docs/oci.md "critest"
ALLOWED=$(cat <<'EOF'
[k8s.io] Security Context NamespaceOption runtime should support HostPID	host namespaces: the host's PID namespace is refused
[k8s.io] Security Context NamespaceOption runtime should support HostIpc is true	host namespaces: the host's IPC namespace is refused
[k8s.io] Security Context NamespaceOption runtime should support HostNetwork is true	host namespaces: CAP_NET_RAW (the CRI's default set) refused in the host's network namespace
[k8s.io] Streaming runtime should support streaming interfaces runtime should support portforward in host network	host namespaces: a host-network pod (CAP_NET_RAW refused there)
[k8s.io] Security Context bucket runtime should support Privileged is true	privileged: the host's devices (linux.devices) and every capability
[k8s.io] Container Mount Propagation runtime should support mount propagation mount with 'rprivate' should not support propagation	privileged: critest makes the container privileged to mount in it
[k8s.io] Container Mount Propagation runtime should support mount propagation mount with 'rshared' should support propagation from host to container and vice versa	privileged: critest makes the container privileged to mount in it
[k8s.io] Container Mount Propagation runtime should support mount propagation mount with 'rslave' should support propagation from host to container	privileged: critest makes the container privileged to mount in it
[k8s.io] Security Context SeccompProfilePath runtime should ignore a seccomp profile that blocks setting hostname when privileged	privileged
[k8s.io] Security Context bucket runtime should support adding capability	capabilities outside mxc's set: CAP_NET_ADMIN
[k8s.io] Security Context bucket runtime should support adding ALL capabilities	capabilities outside mxc's set: ALL
[k8s.io] Security Context SeccompProfilePath docker/default runtime should support setting hostname with docker/default seccomp profile and SYS_ADMIN	capabilities outside mxc's set: CAP_SYS_ADMIN
[k8s.io] Security Context SeccompProfilePath runtime should not block setting host name with unconfined seccomp and SYS_ADMIN	capabilities outside mxc's set: CAP_SYS_ADMIN
[k8s.io] Security Context SeccompProfilePath runtime should support an seccomp profile that blocks setting hostname with SYS_ADMIN	capabilities outside mxc's set: CAP_SYS_ADMIN
[k8s.io] Security Context SeccompProfilePath should support seccomp unconfined on the container	mxc's guarantee, not one of the three classes: the baseline seccomp filter is always loaded (Seccomp: 2), unconfined or not
[k8s.io] Security Context SeccompProfilePath should support seccomp default which is unconfined on the container	mxc's guarantee, not one of the three classes: the baseline seccomp filter is always loaded (Seccomp: 2), unconfined or not
[k8s.io] Container runtime should support adding volume and device runtime should support starting container with volume [Conformance]	mxc's guarantee, not one of the three classes: critest's hostPath is host root's, mode 0700 (ioutil.TempDir); the container's root is not host root
[k8s.io] Container runtime should support adding volume and device runtime should support starting container with volume when host path is a symlink [Conformance]	mxc's guarantee, not one of the three classes: critest's hostPath is host root's, mode 0700 (ioutil.TempDir); the container's root is not host root
EOF
)

if ! git --git-dir="$GIT" rev-parse -q --git-dir >/dev/null 2>&1; then
  echo "critest: skipped: no cri-tools source (no git directory at $GIT; set CRI_TOOLS_GIT)"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "critest: needs root" >&2; exit 2; }
for t in go cc containerd containerd-shim-runc-v2 docker-registry skopeo nsenter unshare curl; do
  command -v "$t" >/dev/null || { echo "critest: $t missing (scripts/deps.sh)" >&2; exit 2; }
done
[ -x "$MXC_OCI" ] || { echo "critest: no mxc-oci at $MXC_OCI" >&2; exit 2; }
got=$(git --git-dir="$GIT" rev-parse --verify -q "$TAG^{commit}") ||
  { echo "critest: $GIT has no tag $TAG" >&2; exit 2; }
[ "$got" = "$COMMIT" ] || { echo "critest: $TAG is $got in $GIT, not the pinned $COMMIT" >&2; exit 1; }

critest=$BUILD/critest-$COMMIT
if [ ! -x "$critest" ]; then
  echo "critest: building cri-tools $TAG ($COMMIT) offline with $(go version | cut -d' ' -f3)"
  src=$BUILD/src-$COMMIT
  rm -rf "$src" && mkdir -p "$src"
  git --git-dir="$GIT" archive "$COMMIT" | tar -x -C "$src"
  (cd "$src" && env HOME="$BUILD" GOCACHE="$BUILD/gocache" GOPATH="$BUILD/gopath" GOFLAGS=-mod=vendor GOPROXY=off \
     GO111MODULE=on CGO_ENABLED=0 go test -c -o "$critest.tmp" -trimpath \
     -ldflags "-X github.com/kubernetes-sigs/cri-tools/pkg/version.Version=${TAG#v}" ./cmd/critest)
  mv "$critest.tmp" "$critest"
  rm -rf "$src" "$BUILD/gocache" "$BUILD/gopath"
fi

out=$BUILD/results
rm -rf "$out" && mkdir -p "$out"
# an IPC namespace of its own: critest's HostIpc specs leave shared memory segments in the node's
unshare --ipc /usr/bin/python3 "$here/critest.py" "$critest" "$out" runc mxc

# the comparison
fails=0 listed=0 guarantees=0 fixed=()
while IFS=$'\t' read -r spec; do
  reason=$(awk -F'\t' -v s="$spec" '$1 == s { print $2 }' <<<"$ALLOWED")
  if [ -n "$reason" ]; then
    echo "  allowed: $spec -- $reason"; listed=$((listed + 1))
    case $reason in "mxc's guarantee"*) guarantees=$((guarantees + 1));; esac
  else
    echo "  NOT ALLOWED: $spec"; fails=$((fails + 1))
  fi
done < <(comm -12 <(awk -F'\t' '$1 == "passed" { print $2 }' "$out/runc.results" | sort) \
                  <(awk -F'\t' '$1 == "failed" { print $2 }' "$out/mxc.results" | sort))
while IFS=$'\t' read -r spec _; do
  [ -n "$spec" ] || continue
  grep -qxF "passed	$spec" "$out/mxc.results" && fixed+=("$spec")
done <<<"$ALLOWED"
for s in "${fixed[@]}"; do echo "  now passes on mxc (its row can go): $s"; done
runc_pass=$(grep -c '^passed' "$out/runc.results" || true)
mxc_pass=$(grep -c '^passed' "$out/mxc.results" || true)
if [ "$fails" -eq 0 ]; then
  echo "critest: runc passes $runc_pass specs, mxc $mxc_pass; of the $listed runc passes and mxc does not, $((listed - guarantees)) are host namespaces, privileged or capabilities outside mxc's set, $guarantees mxc's guarantees outside those classes (docs/oci.md \"Kubernetes' critest\")"
else
  echo "critest: FAILED: $fails spec(s) runc passes and mxc fails are not allowed differences (runc $runc_pass passed, mxc $mxc_pass)"
  exit 1
fi
