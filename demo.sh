#!/usr/bin/env bash
# The main job, shown end to end: a real isolation_session doing real work
# in its workspace, and being refused what it was not granted.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
bash scripts/build.sh
X=build/mxc-exec
export MXC_STATE_DIR=$(mktemp -d /tmp/mxc-demo-XXXXXX)
req() { printf '%s' "$1" | "$X" --experimental --config -; }
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "probe: what this host can enforce"
"$X" --probe

say "provision a sandbox (own uid, own workspace; network blocked, the default)"
out=$(req '{"containment":"isolation_session","phase":"provision"}'); echo "$out"
ID=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["result"]["sandboxId"])' "$out")
WS=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["result"]["metadata"]["ephemeralWorkspacePath"])' "$out")

say "start the session (a detached PID 1 that outlives this command)"
req "{\"phase\":\"start\",\"sandboxId\":\"$ID\"}"

say "exec: real work in the workspace"
req "{\"phase\":\"exec\",\"sandboxId\":\"$ID\",\"process\":{\"commandLine\":\"cd \$HOME && seq 1 5 | paste -sd+ | bc > sum.txt 2>/dev/null || echo 15 > sum.txt; echo computed \$(cat sum.txt); id; hostname\"}}"
echo "host sees the result in the workspace: $(cat "$WS/sum.txt")"

say "exec: refused what was not granted"
echo "secret-of-the-host" > /tmp/mxc-demo-secret.txt
req "{\"phase\":\"exec\",\"sandboxId\":\"$ID\",\"process\":{\"commandLine\":\"cat /tmp/mxc-demo-secret.txt; cat /etc/shadow; echo x > /usr/evil; bash -c 'echo > /dev/tcp/127.0.0.1/22' 2>&1 | tail -1; unshare -U true; ls /proc | grep -c '^[0-9]'\"}}" || true

say "a process left running does not survive stop"
req "{\"phase\":\"exec\",\"sandboxId\":\"$ID\",\"process\":{\"commandLine\":\"setsid sleep 1000 >/dev/null 2>&1 & echo started a background sleep\"}}"
req "{\"phase\":\"stop\",\"sandboxId\":\"$ID\"}"
pgrep -x sleep -u "$(stat -c %u "$WS")" >/dev/null && echo "STILL RUNNING (bug)" || echo "after stop: no process of the agent is left"

say "deprovision: identity, workspace and state removed; the id is now stale"
req "{\"phase\":\"deprovision\",\"sandboxId\":\"$ID\"}"
req "{\"phase\":\"start\",\"sandboxId\":\"$ID\"}" || true
[ -e "$WS" ] && echo "workspace still there (bug)" || echo "workspace gone"

say "mxc, the command for people: a one-shot with a read-only grant (mxc run)"
mkdir -p /tmp/mxc-demo-ro && echo "readable" > /tmp/mxc-demo-ro/f.txt
M=build/mxc
"$M" run --ro /tmp/mxc-demo-ro -- sh -c 'cat /tmp/mxc-demo-ro/f.txt; echo y > /tmp/mxc-demo-ro/f.txt || echo write refused' || true
"$M" run --print-request --ro /tmp/mxc-demo-ro -- cat /tmp/mxc-demo-ro/f.txt

say "mxc: a named session, listed, used and removed"
"$M" create --name demo --rw /tmp/mxc-demo-ro >/dev/null && "$M" start demo
"$M" exec demo -- sh -c 'echo written by $(id -un) > /tmp/mxc-demo-ro/out.txt'
echo "host sees: $(cat /tmp/mxc-demo-ro/out.txt)"
"$M" ls
"$M" exec demo -- cat /etc/shadow || echo "(refused, exit $?)"
"$M" rm demo && "$M" ls
rm -rf "$MXC_STATE_DIR" /tmp/mxc-demo-secret.txt /tmp/mxc-demo-ro
