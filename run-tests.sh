#!/usr/bin/env bash
# All tests: unit (plain and ASan+UBSan), the sandbox suites against the
# ASan+UBSan CLI, valgrind on the CLI, bounded
# fuzzing, the shared conformance cases (when ../shared exists), and the
# pytest integration and escape suites (root, real namespaces) — last, so
# its summary is the closing line.
set -uo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
bash scripts/build.sh
export MXC_STATE_DIR_BASE=$(mktemp -d /tmp/mxc-tests-XXXXXX)
fail=0
stage() { echo "== $*"; }

stage "unit tests"
meson test -C build --suite unit --print-errorlogs || fail=1

stage "unit tests under ASan+UBSan"
[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan >/dev/null && UBSAN_OPTIONS=halt_on_error=1 meson test -C build-asan --suite unit --print-errorlogs || fail=1

stage "sandbox suites against the ASan+UBSan mxc-exec"
# every real sandbox path (clone into namespaces, vfork-style spawn, relay,
# teardown) under the sanitizers; leak checking is off because LSan cannot
# follow a process into new namespaces
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 MXC_EXEC="$PWD/build-asan/mxc-exec" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration/test_lifecycle.py \
  tests/integration/test_session.py tests/integration/test_rootless.py tests/escape | tail -1 || fail=1

stage "valgrind on mxc-exec (sample requests)"
bash scripts/valgrind.sh || fail=1

stage "fuzzing (${MXC_FUZZ_SECONDS:-60} s per harness)"
bash tests/fuzz/run.sh "${MXC_FUZZ_SECONDS:-60}" || fail=1

if [ -f ../shared/conformance/run.py ]; then
  stage "shared conformance cases"
  (cd /tmp && python3 "$OLDPWD/../shared/conformance/run.py" "$OLDPWD/build/mxc-exec") || fail=1
fi

stage "integration and escape tests (pytest)"
/usr/bin/python3 -m pytest -q -rfE tests/
rc=$?
[ $rc -eq 0 ] && [ $fail -eq 0 ] && exit 0
[ $fail -ne 0 ] && echo "an earlier stage failed (see above)"
exit 1
