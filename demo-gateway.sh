#!/usr/bin/env bash
# mxc-gateway (spec 002) end to end, as an operator drives it: a daemon on a
# unix socket, an OpenShell policy YAML, the spec's demo sandbox writing
# hello.txt in its granted cwd, a write outside the policy refused and the
# failed workload reported, a network rule refused synchronously without
# egress_proxy, the registry, and the OCSF audit log.  Nothing leaves the host.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
bash scripts/build.sh
T=$(mktemp -d /tmp/mxc-gw-demo-XXXXXX)
export MXC_GATEWAY_STATE=$T/state MXC_GATEWAY_SOCKET=$T/gw.sock MXC_STATE_DIR=$T/runtime \
       OPENSHELL_OCSF_JSON=1 OPENSHELL_OCSF_LOG_DIR=$T/ocsf
G=build/mxc-gateway
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
field() { "$G" sandbox get "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1]))' "$2"; }
settle() { for _ in $(seq 100); do [ "$(field "$1" status)" = running ] || return 0; sleep 0.1; done; }
mkdir -p "$T/work" && chmod 777 "$T/work"
cat > "$T/gateway.toml" <<TOML
[openshell.drivers.mxc]
mxc_exec_path = "$PWD/build/mxc-exec"
backend = "process"
TOML
printf 'version: 1\nfilesystem_policy:\n  include_workdir: true\n  read_only: [/usr]\n' > "$T/demo.yaml"
printf 'version: 1\nnetwork_policies:\n  gh:\n    endpoints:\n      - {host: api.github.com, port: 443}\n' > "$T/net.yaml"

say "serve: the daemon (socket $MXC_GATEWAY_SOCKET, owner-only)"
"$G" serve --config "$T/gateway.toml" > "$T/serve.log" 2>&1 &
GW=$!
# the trap runs under set -e: every step may fail (the gateway is usually stopped already) and the
# demo's own status is kept
trap 'rc=$?; kill "$GW" 2>/dev/null || true; wait "$GW" 2>/dev/null || true; rm -rf "$T"; exit $rc' EXIT
for _ in $(seq 100); do "$G" sandbox list >/dev/null 2>&1 && break; sleep 0.1; done
"$G" probe --config "$T/gateway.toml" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("probe:", r["version"], r["verdicts"])'

say "create: the spec's demo (the command writes hello.txt in the granted cwd)"
"$G" sandbox create --name demo --policy "$T/demo.yaml" \
    --driver-config-json "{\"mxc\":{\"command\":[\"sh\",\"-c\",\"echo hello from \$(id -un) > hello.txt; echo wrote hello.txt\"],\"cwd\":\"$T/work\"}}"
settle demo
echo "status $(field demo status), exit $(field demo exitCode); the host reads: $(cat "$T/work/hello.txt")"

say "a write outside the policy fails, and the driver reports the failed workload"
"$G" sandbox create --name outside --policy "$T/demo.yaml" \
    --driver-config-json "{\"mxc\":{\"command\":[\"sh\",\"-c\",\"echo x > /etc/evil\"],\"cwd\":\"$T/work\"}}" >/dev/null
settle outside
echo "status $(field outside status), exit $(field outside exitCode); its log: $("$G" sandbox logs outside)"

say "a network rule without egress_proxy is refused before anything exists"
"$G" sandbox create --name net --policy "$T/net.yaml" -- true || true

say "the registry, then delete"
"$G" sandbox list
"$G" sandbox delete demo && "$G" sandbox delete outside && "$G" sandbox list

say "the OCSF audit log (no command line, no secret in any record)"
kill $GW; wait $GW 2>/dev/null || true
python3 - "$T/ocsf/mxc-gateway-ocsf.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    what = r.get("finding_info", {}).get("title") or r.get("status_detail") or r.get("activity_name")
    print(r["class_uid"], r["class_name"], "|", r.get("unmapped", {}).get("sandbox", "-"), "|", what,
          "| exit %s" % r["exit_code"] if "exit_code" in r else "")
PY
