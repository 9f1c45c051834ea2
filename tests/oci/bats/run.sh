#!/usr/bin/env bash
# runc's own integration tests (bats), run once against runc and once against
# mxc-oci, compared test by test (issue 29).
#
#   tests/oci/bats/run.sh [FILE.bats ...]
#
# The tests are not in this repository: they come from Debian's runc source
# package (the version of the installed runc), fetched with apt-get source
# into a cache outside the tree (MXC_BATS_CACHE, default build/runc-bats) and
# checked against the SHA-256 pinned below.  What helpers.bash would download
# or build is made here without network: the busybox image from Debian's
# busybox-static, Debian's image from the host's installed Debian packages'
# files (make_debian_image), `recvtty` (runc's is Go, not packaged) by recvtty.py.
#
# A test that runc passes and mxc-oci does not is a regression unless
# docs/oci.md's section "runc's bats suite" lists it (a row naming the file
# and the test, with the guarantee or the pending feature that makes the
# difference); the script exits non-zero on an unlisted one.  A listed test
# that mxc-oci now passes is reported (the row can go).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
RUNC_REF=${RUNC_REF:-/usr/sbin/runc}
MXC_OCI=$(readlink -f "${MXC_OCI:-$repo/build/mxc-oci}")
cache=${MXC_BATS_CACHE:-$repo/build/runc-bats}

# Debian bookworm's runc 1.1.5+ds1-1+deb12u1 (the installed runc's source)
SRC_VERSION=1.1.5+ds1
ORIG=runc_${SRC_VERSION}.orig.tar.xz
ORIG_SHA256=e936cc563c4557178b3416aa1bb9e8231c53011beb8df67adedbfbaba4eacce7

# The suite's files run by default: the lifecycle and process interface
# (see docs/oci.md "runc's bats suite" for what is left out and why).
DEFAULT_FILES="create start start_detached start_hello run state kill delete exec ps list spec
  tty cwd umask root help version debug mask dev no_pivot mounts mounts_recursive seccomp userns
  pause update cgroups events seccomp-notify hooks"

[ "$(id -u)" -eq 0 ] || { echo "runc-bats: needs root" >&2; exit 2; }
for t in bats jq "$RUNC_REF" "$MXC_OCI" /bin/busybox; do
  command -v "$t" >/dev/null || { echo "runc-bats: $t is missing" >&2; exit 2; }
done

fetch_source() {  # Debian's source package, pinned (tests/oci/debian-source.sh)
  bash "$here/../debian-source.sh" runc "${SRC_VERSION}-1+deb12u1" "$ORIG" "$ORIG_SHA256" "$cache" || exit 2
}

# the busybox image helpers.bash untars into each bundle (runc's is Docker
# Hub's busybox: every applet in /bin, a few accounts in /etc)
make_busybox_image() {
  local r="$1/rootfs"
  # (no proc or sys: the image has none, and mask.bats plants symlinks there)
  mkdir -p "$r"/{bin,dev,etc,home,root,tmp,var/spool/mail,var/www,usr/sbin}
  chmod 1777 "$r/tmp"; chmod 700 "$r/root"
  cp /bin/busybox "$r/bin/busybox"
  local a
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
  cat >"$r/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
P
  cat >"$r/etc/group" <<'G'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
wheel:x:10:root
mail:x:12:
www-data:x:33:
operator:x:37:
staff:x:50:
users:x:100:
nogroup:x:65534:
G
  tar -C "$r" -cf "$1/busybox.tar" .
  rm -rf "$r"
}

# runc's seccomp agent (contrib/cmd/seccompagent, Go + libseccomp-golang through cgo) for the
# seccomp-notify tests: built offline from the same source with Debian's Go and its golang-*-dev
# packages (GOPATH mode: the +ds1 tarball keeps no vendor/), once, cached beside the source
build_seccomp_agent() {  # DEST (the tree's contrib/cmd/seccompagent, extracted)
  local bin="$cache/seccompagent-${SRC_VERSION}"
  if [ ! -x "$bin" ]; then
    command -v go >/dev/null || { echo "runc-bats: go is missing (scripts/deps.sh: golang-go)" >&2; exit 2; }
    local gc; gc=$(mktemp -d /tmp/runc-bats-go-XXXXXX)
    (cd "$1" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$gc" GOFLAGS= CGO_ENABLED=1 \
       go build -tags seccomp -o "$bin.tmp" .) || { rm -rf "$gc" "$bin.tmp"; echo "runc-bats: cannot build the seccomp agent" >&2; exit 2; }
    rm -rf "$gc"
    mv "$bin.tmp" "$bin"
  fi
  cp "$bin" "$1/seccompagent"
}

# runc's Debian image (DEBIAN_IMAGE: hooks.bats's; Docker Hub's debian, whose
# shell, ldconfig, grep and coreutils the tests use) made from the host's own
# installed Debian packages' files (dpkg -L): no download.  Cached in $cache
# with its manifest (those packages' versions) and its SHA-256: made again
# when either differs.  Docs, manuals, locales and gconv left out (small).
DEBIAN_PKGS="libc6 libc-bin dash bash coreutils grep sed libacl1 libattr1 libgmp10 libpcre2-8-0 libselinux1 libtinfo6"
make_debian_image() {  # WORKDIR: DEBIAN_TAR set to the image
  DEBIAN_TAR="$cache/debian.tar"
  local want
  # shellcheck disable=SC2086
  want=$(echo "format 1"; dpkg-query -W -f='${Package} ${Version} ${Architecture}\n' $DEBIAN_PKGS | sort) ||
    { echo "runc-bats: the Debian image's packages are not all installed: $DEBIAN_PKGS" >&2; exit 2; }
  if [ -f "$DEBIAN_TAR" ] && [ "$(cat "$DEBIAN_TAR.manifest" 2>/dev/null)" = "$want" ] &&
     [ "$(sha256sum <"$DEBIAN_TAR")" = "$(cat "$DEBIAN_TAR.sha256" 2>/dev/null)" ]; then
    return 0
  fi
  local stage="$1/debian" f l
  mkdir -p "$stage"/{etc,dev,proc,sys,root,tmp,run,home,var/tmp}
  chmod 1777 "$stage/tmp" "$stage/var/tmp"; chmod 700 "$stage/root"
  # the host's merged /usr (bin -> usr/bin ...): a package's /lib/x is the image's usr/lib/x
  for l in bin sbin lib lib32 lib64 libx32; do [ -L "/$l" ] && ln -s "$(readlink "/$l")" "$stage/$l"; done
  # shellcheck disable=SC2086
  dpkg -L $DEBIAN_PKGS | grep '^/' | grep -Ev '^/usr/share/(doc|man|info|locale|lintian)/|/gconv/' | sort -u |
    while IFS= read -r f; do
      { [ -L "$f" ] || [ -f "$f" ]; } || continue
      printf '%s/%s\n' "$(cd "${f%/*}/" && pwd -P)" "${f##*/}"
    done | sed 's|^/*||' | sort -u >"$1/debian.list"
  cat >"$stage/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
P
  printf 'root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n' >"$stage/etc/group"
  mkdir -p "$cache"
  tar -C / --no-recursion -cf "$DEBIAN_TAR.tmp" -T "$1/debian.list"
  tar -C "$stage" -rf "$DEBIAN_TAR.tmp" .
  rm -rf "$stage" "$1/debian.list"
  sha256sum <"$DEBIAN_TAR.tmp" >"$DEBIAN_TAR.sha256"
  printf '%s\n' "$want" >"$DEBIAN_TAR.manifest"
  mv "$DEBIAN_TAR.tmp" "$DEBIAN_TAR"
}

fetch_source
work=$(mktemp -d /tmp/runc-bats-XXXXXX)
# the cgroup tests' parent, left behind by runc's own pod tests in the
# hybrid's controller-less cgroup2 hierarchy: removed when empty (rmdir only)
cleanup() {
  rm -rf "$work"
  local h
  for h in /sys/fs/cgroup/*/runc-cgroups-integration-test; do
    [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  return 0
}
trap cleanup EXIT
tar -C "$work" -xJf "$cache/$ORIG" --strip-components=1 "runc-${SRC_VERSION%+*}/tests/integration" \
  "runc-${SRC_VERSION%+*}/contrib/cmd/seccompagent"
build_seccomp_agent "$work/contrib/cmd/seccompagent"
it="$work/tests/integration"
make_busybox_image "$work"
make_debian_image "$work"
# no download: the images are the ones made above
cat >"$it/get-images.sh" <<EOF2
#!/bin/bash
echo 'BUSYBOX_IMAGE="$work/busybox.tar"'
echo 'DEBIAN_IMAGE="$DEBIAN_TAR"'
EOF2
mkdir -p "$work/contrib/cmd/recvtty"
cp "$here/recvtty.py" "$work/contrib/cmd/recvtty/recvtty"
# helpers.bash starts recvtty in the background and goes on: a runtime that
# connects before it listens fails.  Wait for its socket (as a condition,
# for both runtimes alike).
sed -i 's|^\t("\$RECVTTY" --pid-file "\$dir/pid" --mode null "\$CONSOLE_SOCKET" &) &$|&\n\tlocal i; for i in $(seq 500); do [ -S "$CONSOLE_SOCKET" ] \&\& break; sleep 0.01; done|' "$it/helpers.bash"
grep -q 'S "$CONSOLE_SOCKET"' "$it/helpers.bash" || { echo "runc-bats: helpers.bash changed: recvtty wait not added" >&2; exit 2; }

# helpers.bash finds the v1 hierarchies with gawk's word boundaries (\< \>);
# gawk is not installed: a shim over mawk with the same meaning, on PATH for
# both runtimes alike (otherwise every cgroup test fails for runc too)
mkdir -p "$work/bin"
cat >"$work/bin/gawk" <<'EOF2'
#!/bin/bash
# gawk's \< and \> (word boundaries) for helpers.bash's one use, over mawk
prog=${1//\\</(^|[^A-Za-z0-9_])}
prog=${prog//\\>/([^A-Za-z0-9_]|$)}
shift
exec mawk "$prog" "$@"
EOF2
chmod +x "$work/bin/gawk"
command -v gawk >/dev/null || export PATH="$work/bin:$PATH"

files=("$@")
[ ${#files[@]} -gt 0 ] || read -ra files <<<"$(echo $DEFAULT_FILES)"

# bats per file, TAP: one line per test
run_suite() {  # RUNTIME OUTDIR
  local f
  mkdir -p "$2"
  for f in "${files[@]}"; do
    f=${f%.bats}
    # under a terminal of its own (script(1)), as runc's own CI runs it:
    # `run` of a terminal process without --console-socket uses the caller's
    (cd "$it" && RUNC="$1" OUT="$2/$f.tap" F="$f.bats" timeout 600 \
       script -qec 'bats --tap "$F" >"$OUT" 2>&1' /dev/null </dev/null >/dev/null 2>&1) || true
  done
}
echo "== runc's bats suite ($SRC_VERSION): ${files[*]}"
run_suite "$RUNC_REF" "$work/runc"
run_suite "$MXC_OCI" "$work/mxc"

# the tests docs/oci.md lists as differences: rows "| `FILE.bats` | `TEST` | ..."
listed=$(awk '/^## runc.s bats suite/{s=1;next} /^## /{s=0} s' "$repo/docs/oci.md" \
  | sed -n 's/^| `\([a-z_-]*\.bats\)` | `\([^`]*\)` |.*/\1\t\2/p')

# result of each test: ok, skip, fail
results() { sed -n -e 's/^ok [0-9]* \(.*\) # skip.*/skip\t\1/p' -e 's/^ok [0-9]* \(.*\)$/ok\t\1/p' \
  -e 's/^not ok [0-9]* \(.*\)$/fail\t\1/p' "$1"; }

rc=0
printf '%-22s %5s %9s %9s %6s\n' file tests runc-ok mxc-ok listed
for f in "${files[@]}"; do
  f=${f%.bats}
  # joined by name: TEST<tab>runc's result<tab>mxc-oci's (none: it did not run)
  awk -F'\t' 'NR==FNR{m[$2]=$1;next} {print $1"\t"$2"\t"($2 in m?m[$2]:"none")}' \
    <(results "$work/mxc/$f.tap") <(results "$work/runc/$f.tap") >"$work/$f.cmp"
  n=$(wc -l <"$work/$f.cmp")
  if [ "$n" -eq 0 ]; then echo "runc-bats: $f.bats gave no results:"; tail -5 "$work/runc/$f.tap" "$work/mxc/$f.tap"; rc=1; continue; fi
  rok=$(awk -F'\t' '$1=="ok"' "$work/$f.cmp" | wc -l)
  mok=$(awk -F'\t' '$3=="ok"' "$work/$f.cmp" | wc -l)
  nl=$(printf '%s\n' "$listed" | awk -F'\t' -v f="$f.bats" '$1==f' | wc -l)
  printf '%-22s %5s %9s %9s %6s\n' "$f.bats" "$n" "$rok" "$mok" "$nl"
  while IFS=$'\t' read -r r name m; do
    is_listed=no
    # a here-string, not a pipe: grep -q leaves at its first match, and under pipefail the
    # printf still writing into the closed pipe (SIGPIPE) made a listed test a "REGRESSION"
    grep -qxF "$f.bats	$name" <<<"$listed" && is_listed=yes
    if [ "$r" = ok ] && [ "$m" != ok ]; then
      if [ $is_listed = yes ]; then echo "   listed difference: $f.bats: $name"
      else echo "   REGRESSION (not listed in docs/oci.md): $f.bats: $name"; rc=1; fi
    elif [ $is_listed = yes ] && [ "$m" = ok ]; then
      echo "   listed but mxc-oci passes it now: $f.bats: $name"
    fi
  done <"$work/$f.cmp"
done
if [ -n "${MXC_BATS_KEEP:-}" ]; then trap - EXIT; echo "kept: $work"; fi
exit $rc
