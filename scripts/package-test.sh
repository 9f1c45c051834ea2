#!/usr/bin/env bash
# package-test.sh — the Debian package, end to end (issue 30), as root on a
# Debian 12 machine: builds the source package's .debs from a clean clone of
# HEAD with Debian's own tools and packages (dpkg-buildpackage -us -uc -b),
# lintian (no error), installs them with apt-get, verifies every systemd unit,
# runs `mxc run -- id` and the published Node SDK against the installed files
# (not the build tree), upgrades a live session to a rebuilt newer version
# (exec and deprovision still served), then purges and checks that nothing of
# ours is left.  Prints "N passed, N failed" last.
#
# The install, upgrade and purge never touch the host's own mxc (issue 39):
# they run in an isolated root — a private mount namespace (unshare --mount)
# where /usr, /etc, /var and /run are overlays whose upper layers live in a
# tmpfs of that namespace alone, so every file dpkg, apt and the maintainer
# scripts write (dpkg's database included) is thrown away with it; the
# sandboxes made there take their uids from a range of their own
# (MXC_UID_BASE), since their claims live in the overlay's copy of the
# registry.  Before and after, on the host: the checksums of every file of
# ours, the dpkg status of our packages, and two live sessions made by the
# build's mxc-exec (one in the default state root, one in a custom
# MXC_STATE_DIR) that must still answer an exec.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive
passed=0 failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAILED: $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
OURS=(/run/mxc /var/lib/mxc /var/log/mxc /lib/systemd/system/mxc-* /usr/lib/tmpfiles.d/mxc.conf
      /etc/systemd/system/*/mxc-* /usr/bin/mxc* /usr/bin/lxc-exec /usr/lib/"$arch"/libmxc*
      /usr/lib/"$arch"/mxc-ffi /usr/include/mxc*.h /etc/mxc)

if [ "${MXC_PKG_ISOLATED:-}" != 1 ]; then
  need=(debhelper lintian dpkg-dev fakeroot)
  missing=()
  for p in "${need[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] || { apt-get update -qq; apt-get install -y -qq "${missing[@]}" >/dev/null; }
  exec_bin=${MXC_EXEC:-$repo/build/mxc-exec}
  [ -x "$exec_bin" ] || { echo "FAILED: no $exec_bin to make the host's witness sessions (build first)"; exit 1; }
  host=$(mktemp -d /tmp/mxc-pkg-host-XXXXXX)
  # the host's mxc as it is: our packages' status, every file of ours by checksum (the package's own,
  # the stand-in planted below, a witness file in /var/lib/mxc), the roots themselves by inode; what
  # is in the roots changes as the host's sandboxes and gateway run, so the sessions are checked by
  # answering instead
  snapshot() {
    dpkg-query -W -f='${Package} ${Version} ${Status}\n' mxc libmxc0 libmxc-ffi1 libmxc-dev 2>/dev/null
    find "${OURS[@]}" -maxdepth 0 -printf '%p %y %m %i\n' 2>/dev/null
    find "${OURS[@]}" -path /run/mxc -prune -o -path /var/lib/mxc -prune -o -path /var/log/mxc -prune -o -type f -print0 2>/dev/null |
      sort -z | xargs -0r sha256sum
    [ -f /var/lib/mxc/.pkgtest-witness ] && sha256sum /var/lib/mxc/.pkgtest-witness
  }
  fake=
  if [ ! -e /usr/bin/mxc-exec ]; then # no installed mxc here: a stand-in, so that a purge would show
    fake=/usr/bin/mxc-exec
    printf '#!/bin/sh\necho "the host'"'"'s own mxc-exec (package-test.sh witness)"\n' >"$fake" && chmod 755 "$fake"
  fi
  mkdir -p /var/lib/mxc && head -c 64 /dev/urandom | base64 >/var/lib/mxc/.pkgtest-witness
  custom=$(mktemp -d /tmp/mxc-pkg-custom-XXXXXX)
  witness() { # witness STATE_DIR PHASE [SID]: one phase of a witness session (STATE_DIR "" = the default root)
    local req
    case $2 in
      provision) req='{"phase":"provision","containment":"isolation_session"}' ;;
      exec) req="{\"phase\":\"exec\",\"sandboxId\":\"$3\",\"process\":{\"commandLine\":\"echo alive\"}}" ;;
      *) req="{\"phase\":\"$2\",\"sandboxId\":\"$3\"}" ;;
    esac
    (cd / && if [ -n "$1" ]; then export MXC_STATE_DIR=$1; else unset MXC_STATE_DIR; fi
     echo "$req" | "$exec_bin" --experimental --config - 2>&1)
  }
  sids=() roots=()
  for r in "" "$custom"; do
    sid=$(witness "$r" provision | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["sandboxId"])')
    witness "$r" start "$sid" >/dev/null
    sids+=("$sid") roots+=("$r")
  done
  cleanup_host() {
    for i in "${!sids[@]}"; do witness "${roots[$i]}" deprovision "${sids[$i]}" >/dev/null; done
    rm -f /var/lib/mxc/.pkgtest-witness ${fake:+"$fake"}
    rm -rf "$host" "$custom"
  }
  trap cleanup_host EXIT
  for i in "${!sids[@]}"; do
    out=$(witness "${roots[$i]}" exec "${sids[$i]}")
    check "the host's witness session in ${roots[$i]:-the default state root} answers before the stage ($out)" \
      test "$out" = alive
  done
  snapshot >"$host/before"
  MXC_PKG_ISOLATED=1 unshare --mount --propagation private bash "$0" "$@"
  rc=$?
  snapshot >"$host/after"
  check "the host's mxc is as it was: our packages' status and files, by checksum$(diff "$host/before" "$host/after" |
        sed 's/^/\n    /' | tr -d '\0')" cmp -s "$host/before" "$host/after"
  for i in "${!sids[@]}"; do
    out=$(witness "${roots[$i]}" exec "${sids[$i]}")
    check "the host's witness session in ${roots[$i]:-the default state root} still answers an exec ($out)" \
      test "$out" = alive
  done
  echo "the host: $passed passed, $failed failed; the isolated root: exit $rc"
  [ "$failed" -eq 0 ] && [ "$rc" -eq 0 ]
  exit
fi

# ---- in the isolated root (a private mount namespace): overlays over what dpkg and mxc write
work=$(mktemp -d /tmp/mxc-pkg-XXXXXX)
mkdir "$work/iso" && mount -t tmpfs -o mode=700 mxc-pkg-iso "$work/iso" || { echo "FAILED: no tmpfs for the isolated root"; exit 1; }
for d in /usr /etc /var /run; do
  u="$work/iso${d}"
  mkdir -p "$u/upper" "$u/work" &&
    mount -t overlay "mxc-pkg-iso$d" -o "lowerdir=$d,upperdir=$u/upper,workdir=$u/work" "$d" ||
    { echo "FAILED: no overlay over $d for the isolated root"; exit 1; }
done
# a fresh machine's mxc in here: the host's own state (its live sandboxes' claims, sessions, logs) is
# removed from the overlays only (whiteouts in the throwaway upper layers; the host's files stay), or
# the package's purge, which rightly keeps the claims of live sandboxes of other state roots, would
# keep /var/lib/mxc for the host's (the parallel load's, the witness sessions')
rm -rf /run/mxc /var/lib/mxc /var/log/mxc
# the claims made in here are the overlay's: a range of their own keeps them off the host's sandboxes' uids
export MXC_UID_BASE=2100327680 MXC_UID_COUNT=65536
purge() { apt-get purge -y -qq mxc libmxc0 libmxc-ffi1 libmxc-dev >/dev/null 2>&1 || true; }
# the tmpfs goes with this namespace; the build trees under $work are the host's /tmp
trap 'purge; umount -l "$work/iso" 2>/dev/null; rm -rf "$work"' EXIT

build() { # build DIR VERSION: a clean clone of HEAD at DIR, its changelog at VERSION, built
  git clone -q "$repo" "$1" && (cd "$1" && git checkout -q "$(git -C "$repo" rev-parse HEAD)")
  if [ "$2" != current ]; then
    sed -i "1s/([^)]*)/($2)/" "$1/debian/changelog"
  fi
  (cd "$1" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b >"$1.build.log" 2>&1) ||
    { tail -n 40 "$1.build.log"; return 1; }
}

purge
check "dpkg-buildpackage -us -uc -b from a clean clone" build "$work/old" current
debs=("$work"/*.deb)
lint=$(lintian --tag-display-limit 0 "$work"/mxc_*.deb "$work"/libmxc0_*.deb "$work"/libmxc-ffi1_*.deb \
       "$work"/libmxc-dev_*.deb 2>&1 | grep -v "running with root privileges")
echo "$lint" | sed 's/^/  lintian: /'
check "lintian reports no error" bash -c '! grep -q "^E:" <<<"$1"' _ "$lint"
# issue 35: the packaged, root-run programs read no fault-injection variable (src/base/fault.h)
no_faults() { local x; x=$(mktemp -d); for d in "$@"; do dpkg-deb -x "$d" "$x"; done
  ! grep -rl MXC_FAULT_ "$x"/usr/bin "$x"/usr/lib 2>/dev/null | grep -q .; local rc=$?; rm -rf "$x"; return $rc; }
check "no packaged binary names MXC_FAULT_" no_faults "$work"/mxc_*.deb "$work"/libmxc0_*.deb "$work"/libmxc-ffi1_*.deb
quiet() { local log; log=$(mktemp); "$@" >"$log" 2>&1; local rc=$?; [ $rc -eq 0 ] || tail -n 30 "$log"; rm -f "$log"; return $rc; }
check "apt-get install ./*.deb" quiet apt-get install -y -qq "$work"/mxc_*.deb "$work"/libmxc0_*.deb \
  "$work"/libmxc-ffi1_*.deb "$work"/libmxc-dev_*.deb
# the gateway as its units start it: systemd's listening socket (systemd-socket-activate needs no systemd
# as PID 1), the packaged configuration, the installed binaries
gsock=$(mktemp -u /tmp/mxc-pkg-gw-XXXXXX.sock)
MXC_GATEWAY_STATE=$work/gwstate systemd-socket-activate -l "$gsock" -E MXC_GATEWAY_STATE \
  /usr/bin/mxc-gateway serve --config /etc/mxc/gateway.toml >"$work/gw.log" 2>&1 &
gpid=$!
for _ in $(seq 100); do [ -S "$gsock" ] && break; sleep 0.1; done
out=$(MXC_GATEWAY_STATE=$work/gwstate /usr/bin/mxc-gateway --socket "$gsock" sandbox list --json 2>&1)
check "the installed gateway, socket-activated with /etc/mxc/gateway.toml, answers ($out)" test "$out" = "[]"
kill -TERM "$gpid" 2>/dev/null; wait "$gpid" 2>/dev/null; rm -f "$gsock"
units=(/lib/systemd/system/mxc-*)
check "systemd-analyze verify ${units[*]##*/}" systemd-analyze verify "${units[@]}"
check "tmpfiles.d made the roots with their modes" bash -c \
  '[ "$(stat -c %a /var/lib/mxc/claims)" = 700 ] && [ "$(stat -c %a /var/lib/mxc/workspaces)" = 711 ] &&
   [ "$(stat -c %a /run/mxc)" = 700 ]'
out=$(cd / && /usr/bin/mxc run -- id 2>&1)
check "installed mxc run -- id: the agent, uid 1000 inside ($out)" grep -q "^uid=1000" <<<"$out"
check "the installed files are the ones used (no build tree)" bash -c \
  '! ldd /usr/bin/mxc-exec | grep -q "/work\|build"'
sdk_log=$(mktemp)
if MXC_EXEC_BIN=/usr/bin/mxc-exec bash "$repo/tests/sdk/run.sh" "/usr/lib/$arch/mxc-ffi" >"$sdk_log" 2>&1; then
  ok "the published SDK against the installed libmxc_ffi ($(grep -c '^✔' "$sdk_log") passed)"
else
  tail -n 40 "$sdk_log"; bad "the published SDK against the installed libmxc_ffi"
fi
rm -f "$sdk_log"

# an upgrade under a live session: provisioned and started by the old package
sid=$(echo '{"version":"1.0.0","phase":"provision","containment":"isolation_session","network":{"egress":{"default":"deny"},"ingress":{"default":"deny","hostLoopback":"deny"}}}' |
      /usr/bin/mxc-exec --config - | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["sandboxId"])')
echo "{\"phase\":\"start\",\"sandboxId\":\"$sid\"}" | /usr/bin/mxc-exec --experimental --config - >/dev/null
check "a rebuilt newer version builds" build "$work/new" "0.1.0+upgrade1"
check "apt-get install of the newer version (an upgrade)" quiet apt-get install -y -qq "$work"/mxc_0.1.0+upgrade1_*.deb \
  "$work"/libmxc0_0.1.0+upgrade1_*.deb "$work"/libmxc-ffi1_0.1.0+upgrade1_*.deb "$work"/libmxc-dev_0.1.0+upgrade1_*.deb
check "the newer version is the one installed" bash -c '[ "$(dpkg-query -W -f="\${Version}" mxc)" = 0.1.0+upgrade1 ]'
out=$(echo "{\"phase\":\"exec\",\"sandboxId\":\"$sid\",\"process\":{\"commandLine\":\"echo survived\"}}" |
      /usr/bin/mxc-exec --experimental --config - 2>&1)
check "the session started by the old package serves an exec after the upgrade ($out)" test "$out" = survived
out=$(echo "{\"phase\":\"deprovision\",\"sandboxId\":\"$sid\"}" | /usr/bin/mxc-exec --experimental --config - 2>&1)
check "... and its deprovision ($out)" test "$out" = '{"result":{}}'

purge
left=$(ls -d "${OURS[@]}" 2>/dev/null)
check "purge leaves no file of ours${left:+: $left}" test -z "$left"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
