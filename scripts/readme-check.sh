#!/usr/bin/env bash
# readme-check.sh — runs every ```sh block of README.md in order, as a new
# user would, from a fresh clone of HEAD, as root; fails (exit 1) on the
# first command line that exits non-zero, naming the block, the README line
# and the status.  Prints each block's time and the total.
#
# Markers the README carries as visible comments at the end of a line:
#   # readme-check: skip (why)   the line is not run (the reason is printed)
#   # readme-check: tty          the line needs a terminal: it runs under
#                                script(1) with "exit" as its typed input
#
# What it leaves alone: the commands run in a private mount namespace where
# /run/containerd, /run/containers, /var/lib/containerd, /var/lib/containers
# and /var/log/containerd.log start empty and vanish with it (the containerd
# and the Podman storage the README uses are its own; a host's are neither
# seen nor touched); MXC_STATE_DIR is a directory of its own, so the
# README's sessions (`agent`) never meet the host's default state root.  The
# host-wide claims directory stays shared, as it must (uids are unique per
# host).  At the end, whatever a failed run left is removed: its sessions,
# the containerd it started (by pid) and that daemon's tasks, the clone.
#
#   usage: scripts/readme-check.sh [--keep]   (--keep: keep the clone and log)
#   MXC_README=FILE checks FILE's blocks instead, in the same clone (the checker's own test)
set -uo pipefail
{ # read whole before it runs: an edit of this file mid-run changes nothing
repo=$(cd "$(dirname "$0")/.." && pwd)
keep=${1:-}
[ "$(id -u)" = 0 ] || { echo "readme-check: run as root (the README's commands are root's)" >&2; exit 2; }
T=$(mktemp -d /var/tmp/mxc-readme-check-XXXXXX)
chmod 755 "$T"
t0=$(date +%s)
git clone -q "$repo" "$T/mxc" && git -C "$T/mxc" checkout -q "$(git -C "$repo" rev-parse HEAD)" || exit 1
mkdir -m 700 "$T/state"

# the README's blocks as one script: every logical line, then its status checked
awk -v T="$T" '
function flush(   marker, why) {
    if (line == "") return
    if (line ~ /# readme-check: skip/) {
        why = line; sub(/.*# readme-check: skip */, "", why)
        printf "echo \"  skipped (README.md:%d): %s\"\n", first, why
    } else if (line ~ /# readme-check: tty/) {
        cmd = line; sub(/ *# readme-check: tty.*/, "", cmd); sub(/ *#[^"'\'']*$/, "", cmd)
        gsub(/'\''/, "'\''\\'\'''\''", cmd)
        printf "printf '\''exit\\n'\'' | script -qefc '\''%s'\'' /dev/null\n", cmd
        printf "check %d %d $?\n", block, first
    } else {
        printf "%s\n", line
        printf "check %d %d $?\n", block, first
    }
    line = ""
}
/^```sh$/ { inblock = 1; block++; printf "begin %d %d\n", block, NR; next }
/^```$/ && inblock { flush(); inblock = 0; print "end"; next }
inblock {
    if (line == "") { first = NR; if ($0 ~ /^[ \t]*(#|$)/) next }
    if ($0 ~ /\\$/) { line = line $0 "\n"; next }
    line = line $0; flush()
}' "${MXC_README:-$T/mxc/README.md}" > "$T/blocks.sh"

cat > "$T/run.sh" <<'EOF'
# the harness around the README's blocks (sourced in the private namespace)
exec </dev/null
block_t0=0 blk=0
begin() { blk=$1; block_t0=$(date +%s); echo "== readme-check: block $1 (README.md:$2)"; }
end() { echo "== readme-check: block $blk ok, $(( $(date +%s) - block_t0 )) s"; }
check() {
    [ "$3" = 0 ] && return 0
    echo "readme-check: FAILED: block $1, README.md:$2 exited $3" >&2
    exit 1
}
cleanup() {
    # the sessions the README made (in its own state root), then the containerd it started and its tasks
    for s in $(build/mxc ls --json 2>/dev/null | python3 -c 'import json,sys
for s in json.load(sys.stdin):
    print(s["sandboxId"]) if s.get("kind") == "session" else None' 2>/dev/null); do
        build/mxc rm "$s" >/dev/null 2>&1 || true
    done
    if ctr version >/dev/null 2>&1; then
        for t in $(ctr task ls -q 2>/dev/null); do
            ctr task kill -s SIGKILL "$t" >/dev/null 2>&1; ctr task delete -f "$t" >/dev/null 2>&1
        done
        for c in $(ctr container ls -q 2>/dev/null); do ctr container rm "$c" >/dev/null 2>&1; done
    fi
    for p in $(jobs -p); do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    return 0
}
trap 'rc=$?; cleanup; exit $rc' EXIT
trap 'exit 130' INT TERM
EOF

cat > "$T/ns.sh" <<'EOF'
# private DIR NAME...: DIR becomes a tmpfs of this mount namespace holding every entry of the host's
# DIR bound back, except NAME..., which start absent and stay private
private() {
    local dir=$1 save e n; shift
    save=$(mktemp -d "$T/mnt-XXXXXX")
    mount --rbind "$dir" "$save" || return 1
    mount -t tmpfs -o mode=755 none "$dir" || return 1
    for e in "$save"/* "$save"/.[!.]*; do
        [ -e "$e" ] || [ -L "$e" ] || continue
        n=${e##*/}
        case " $* " in *" $n "*) continue ;; esac
        if [ -L "$e" ]; then ln -s "$(readlink "$e")" "$dir/$n"
        elif [ -d "$e" ]; then mkdir -p "$dir/$n" && mount --rbind "$e" "$dir/$n"
        else touch "$dir/$n" && mount --bind "$e" "$dir/$n"; fi 2>/dev/null && continue
        # gone in between (another program's transient entry): left out; anything else fails
        [ -e "$e" ] || [ -L "$e" ] || { rm -rf "${dir:?}/$n"; continue; }
        echo "readme-check: cannot bind $e back onto $dir/$n" >&2
        return 1
    done
    umount -l "$save" && rmdir "$save"
}
private /run containerd containers &&
private /var/lib containerd containers &&
private /var/log containerd.log || { echo "readme-check: cannot make the private mounts" >&2; exit 1; }
cd "$T/mxc"
. "$T/run.sh"
. "$T/blocks.sh"
EOF

echo "readme-check: $(grep -c '^begin ' "$T/blocks.sh") blocks of README.md at $(git -C "$T/mxc" rev-parse --short HEAD), in $T/mxc"
demo_left() { ls -d /tmp/mxc-demo-* /tmp/mxc-gw-demo-* 2>/dev/null | sort; }
before=$(demo_left)
T=$T MXC_STATE_DIR=$T/state unshare -m --propagation private bash "$T/ns.sh"
rc=$?
# the demos clean up after themselves (demo-gateway.sh once left its directory, and exited 1)
left=$(comm -13 <(echo "$before") <(demo_left) | grep . || true)
if [ -n "$left" ]; then
    echo "readme-check: FAILED: the demos left $(echo $left)" >&2
    [ $rc = 0 ] && rc=1
fi
echo "readme-check: $([ $rc = 0 ] && echo ok || echo FAILED) in $(( $(date +%s) - t0 )) s"
if [ "$keep" = --keep ]; then echo "readme-check: kept $T"; else rm -rf "$T"; fi
exit $rc
}
