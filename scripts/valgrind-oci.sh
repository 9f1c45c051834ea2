#!/usr/bin/env bash
# valgrind --leak-check=full over mxc-oci's paths that run in its own
# process: the documents (features, spec), the store (list, state, delete of
# nothing), and create up to where it would clone — a config refused at
# parse, and configs that pass parsing, the seccomp compile, the directory,
# the bind resolution and the range claim, then stop (valgrind does not
# know openat2: the rootfs open fails), so every cleanup path runs
# (the claim released, the directory removed).  No container is made:
# valgrind cannot follow the namespace setup (tests/oci runs that under ASan).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f build-vg/build.ninja ] || meson setup build-vg -Dstatic_cli=false >/dev/null
ninja -C build-vg mxc-oci >/dev/null || exit 1
exe=$PWD/build-vg/mxc-oci
st=$(mktemp -d)
trap 'rm -rf "$st"' EXIT
mkdir -p "$st/b/rootfs" "$st/bad" "$st/vol"
(cd "$st/b" && "$exe" spec >/dev/null)
python3 - "$st" <<'PY'
import json, sys
st = sys.argv[1]
c = json.load(open(st + "/b/config.json"))
c["process"]["terminal"] = False  # spec's is runc's (a terminal): create would stop at the console socket
c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
                         "syscalls": [{"names": ["mkdir", "nosuch"], "action": "SCMP_ACT_ERRNO",
                                       "args": [{"index": 1, "value": 0, "op": "SCMP_CMP_NE"}]}]}
c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 0"}
c["mounts"].append({"destination": "/vol", "type": "bind", "source": st + "/vol", "options": ["rbind"]})
c["annotations"] = {"a": "b"}
json.dump(c, open(st + "/b/config.json", "w"))
c["process"]["capabilities"]["bounding"].append("CAP_SYS_ADMIN")
json.dump(c, open(st + "/bad/config.json", "w"))
PY
cmds=(
  "features"
  "spec --bundle $st/b"
  "--root $st/r list --format json"
  "--root $st/r list"
  "--root $st/r --debug --log $st/log --log-format text list -q"
  "-h"
  "--root $st/r state nope"
  "--root $st/r delete --force nope"
  "--root $st/r create --bundle $st/bad c1"
  "--root $st/r create --bundle $st/b c1"
  "--root $st/r --log $st/log --log-format json kill c1 KILL"
  "--root $st/r exec c1 true"
  "--root $st/r create --bundle $st/b ../x"
)
bad=0
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086 # the command's words
  out=$(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=99 "$exe" $c 2>&1 </dev/null)
  if [ $? -eq 99 ]; then echo "valgrind errors for: mxc-oci $c"; echo "$out"; bad=1; fi
done
if ls /var/lib/mxc/claims 2>/dev/null | grep -q .; then
  for f in /var/lib/mxc/claims/range-*; do
    [ -e "$f" ] && grep -q "\"$st/" "$f" && { echo "a claim outlived a failed create: $f"; bad=1; }
  done
fi
# (@bpf is the root's seccomp cache, not a container: "@" is in no container id)
left=$(ls "$st/r" | grep -v '^@bpf$')
[ -z "$left" ] || { echo "a container directory outlived a failed create: $left"; bad=1; }
[ $bad -eq 0 ] && echo "valgrind (mxc-oci): clean"
exit $bad
