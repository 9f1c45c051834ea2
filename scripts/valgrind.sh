#!/usr/bin/env bash
# valgrind --leak-check=full over mxc-exec for requests that exercise the
# parser, the policy layer and the envelope (no sandbox is created: valgrind
# cannot follow the namespace setup, and these paths are where the
# allocations are).
set -uo pipefail
cd "$(dirname "$0")/.."
# mxc-exec is static-pie in build/ (meson_options.txt), where valgrind cannot
# replace malloc: a dynamic build of its own for it
[ -f build-vg/build.ninja ] || meson setup build-vg -Dstatic_cli=false >/dev/null
ninja -C build-vg mxc-exec >/dev/null || exit 1
exe=build-vg/mxc-exec
st=$(mktemp -d)
reqs=(
  '{"process":{"commandLine":"true"},"lifecycle":{"destroyOnExit":false}}'
  '{"containment":"isolation_session","phase":"provision","ui":{"clipboard":"all"}}'
  '{"phase":"start","sandboxId":"iso:!!"}'
  '{"phase":"start","sandboxId":"iso:eyJ2ZXJzaW9uIjoxLCJhZ2VudFVzZXJOYW1lIjoibXhjLWRvZXMtbm90LWV4aXN0In0"}'
  '{"bad json'
  '{"process":{"commandLine":"true","env":["A=1"]},"filesystem":{"readonlyPaths":["/usr"]}}'
  '{"version":"1.0.0","process":{"commandLine":"x"}}'
  '{"version":"1.0.0","containment":"bubblewrap","process":{"commandLine":"x","env":["A=b"]},"network":{"egress":{"default":"deny","allow":[{"to":[{"cidr":"10.0.0.0/8","except":["10.1.0.0/16"]}],"ports":[{"port":80,"endPort":90}]}]}}}'
  '{"version":"1.0.0","process":{"commandLine":"x"},"bogus":1}'
  '{"version":"1.0.0","phase":"provision","containment":"isolation_session","network":{"egress":{"default":"allow"},"ingress":{"default":"allow","hostLoopback":"allow"}},"isolationSession":{"provision":{"appId":"a"}}}'
  '{"version":"1.1.0-alpha","containment":"hyperlight","process":{"commandLine":"x"}}'
)
flags=(--experimental --dry-run)
bad=0
for r in "${reqs[@]}"; do
  out=$(printf '%s' "$r" | MXC_STATE_DIR=$st valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$exe" "${flags[@]}" --config - 2>&1)
  if [ $? -eq 99 ]; then echo "valgrind errors for: $r"; echo "$out"; bad=1; fi
done
out=$(MXC_STATE_DIR=$st valgrind -q --leak-check=full --error-exitcode=99 "$exe" --probe 2>&1) || { [ $? -eq 99 ] && { echo "$out"; bad=1; }; }
out=$(MXC_STATE_DIR=$st valgrind -q --leak-check=full --error-exitcode=99 "$exe" --available-backends 2>&1) || { [ $? -eq 99 ] && { echo "$out"; bad=1; }; }
# libmxc_ffi.so: argument checks, refusals, telemetry (no sandbox: see above)
out=$(MXC_STATE_DIR=$st valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
      --errors-for-leak-kinds=definite,indirect --error-exitcode=99 build/test-ffi-abi "$PWD/build/libmxc_ffi.so" --no-sandbox 2>&1)
if [ $? -ne 0 ]; then echo "valgrind errors in test-ffi-abi --no-sandbox"; echo "$out"; bad=1; fi
# mxc, the command for people: flags, YAML, names, the listing (no sandbox runs)
printf 'filesystem:\n  readwritePaths: [/tmp]\nprocess: {timeout: 500}\n' > "$st/p.yaml"
mxc_cmds=(
  "run --print-request --policy $st/p.yaml --rw /srv --net allow --env K=V --timeout 2m -- ls -l"
  "create --print-request --name web --allow-host example.com"
  "create --name web"
  "ls"
  "ls --json"
  "inspect web"
  "rm web"
  "inspect nosuch"
  "run --bogus"
  "gc --json"
)
for c in "${mxc_cmds[@]}"; do
  # shellcheck disable=SC2086 # the command's words
  out=$(MXC_STATE_DIR=$st valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --error-exitcode=99 build/mxc $c 2>&1)
  if [ $? -eq 99 ]; then echo "valgrind errors for: mxc $c"; echo "$out"; bad=1; fi
done
# mxc-gateway: the configuration, the mapping's client side, the probe (no daemon: its
# threads run under the ASan stage instead)
printf '[openshell.drivers.mxc]\nmxc_exec_path = "%s"\nbackend = "process"\n' "$PWD/build/mxc-exec" > "$st/gw.toml"
printf '[openshell.drivers.mxc]\nmxc_exec_path = "rel"\n[x]\na = [1, "b", {c = 2}]\n' > "$st/bad.toml"
printf 'version: 1\nfilesystem_policy: {read_only: [/usr]}\n' > "$st/p.yaml"
gw_cmds=(
  "probe --config $st/gw.toml"
  "probe --config $st/bad.toml"
  "serve --config $st/bad.toml"
  "--socket $st/none.sock sandbox create --name x --policy $st/p.yaml --env A=1 -- true"
  "--socket $st/none.sock sandbox list"
  "sandbox frob"
)
for c in "${gw_cmds[@]}"; do
  # shellcheck disable=SC2086 # the command's words
  out=$(MXC_STATE_DIR=$st MXC_GATEWAY_STATE=$st/gws valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --trace-children=no build/mxc-gateway $c 2>&1)
  if [ $? -eq 99 ]; then echo "valgrind errors for: mxc-gateway $c"; echo "$out"; bad=1; fi
done
# the daemon itself, in mock mode with the audit sink on: its HTTP threads, the driver, the
# audit writer and its shutdown (clients run plain; only the daemon is under valgrind)
gw_env=(MXC_STATE_DIR=$st MXC_GATEWAY_STATE=$st/gwd MXC_GATEWAY_SOCKET=$st/gwd.sock OPENSHELL_MXC_MOCK_WXC=1
        OPENSHELL_OCSF_JSON=1 OPENSHELL_OCSF_LOG_DIR=$st/ocsf)
env "${gw_env[@]}" valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file="$st/gwd.vg" \
    build/mxc-gateway serve --config "$st/gw.toml" > "$st/gwd.out" 2>&1 & gwd=$!
for _ in $(seq 300); do env "${gw_env[@]}" build/mxc-gateway sandbox list >/dev/null 2>&1 && break; sleep 0.1; done
env "${gw_env[@]}" build/mxc-gateway sandbox create --name a --policy "$st/p.yaml" --env A=1 -- echo hi >/dev/null
env "${gw_env[@]}" build/mxc-gateway sandbox create --name b --policy "$st/bad.toml" -- true >/dev/null 2>&1
env "${gw_env[@]}" build/mxc-gateway sandbox logs a >/dev/null
env "${gw_env[@]}" build/mxc-gateway sandbox delete a >/dev/null
kill -TERM $gwd; wait $gwd
if [ $? -ne 0 ] || [ -s "$st/gwd.vg" ]; then echo "valgrind errors for: mxc-gateway serve"; cat "$st/gwd.vg" "$st/gwd.out"; bad=1; fi
rm -rf "$st"
[ $bad -eq 0 ] && echo "valgrind: clean"
exit $bad
