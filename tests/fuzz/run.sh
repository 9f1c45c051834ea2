#!/bin/sh
# run.sh [SECONDS] — build and run the libFuzzer harnesses over the pure
# engine sources, each for SECONDS (default 60; 0: each harness over its seed
# corpus once).  The sources they share are compiled once.  Everything is built and run
# in a temporary directory: the repository (and its seed corpus) is never
# written.  Exits non-zero if a harness fails to build or finds a crash; the
# temporary directory (with the crash artifacts) is then kept and printed.
#
# Needs clang (14) with the libFuzzer runtime (Debian: libclang-rt-14-dev)
# and jansson's development files (fuzz_pbcheck: protoc-c, libprotobuf-c-dev, libprotobuf-dev).
set -eu

SECONDS_EACH=${1:-60}
case $SECONDS_EACH in
    ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-clang}
command -v "$CC" >/dev/null 2>&1 || { echo "run.sh: $CC not found" >&2; exit 2; }
JANSSON_CFLAGS=$(pkg-config --cflags jansson libidn2 yaml-0.1) || { echo "run.sh: jansson, libidn2 or yaml-0.1 not found by pkg-config" >&2; exit 2; }
JANSSON_LIBS=$(pkg-config --libs jansson libidn2 yaml-0.1)

work=$(mktemp -d "${TMPDIR:-/tmp}/mxc-fuzz.XXXXXX")
status=0
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    if [ "$status" -eq 0 ]; then
        rm -rf "$work"
    else
        echo "run.sh: artifacts and logs kept in $work" >&2
    fi
}
trap cleanup EXIT
trap 'status=130; exit 130' INT TERM

CFLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE"
# every base file (base has no dependency beyond jansson and libyaml), and the engine and front files the harnesses reach
SOURCES="$(cd "$root" && echo src/base/*.c) src/lib/sandbox_id.c src/lib/request.c src/lib/request_v1.c src/lib/policy.c src/lib/netplan.c src/lib/netrules.c src/lib/termfilter.c src/net/netpolicy.c src/proxy/httphead.c src/proxy/hostpolicy.c src/gateway/toml.c src/gateway/config.c src/oci/config.c src/oci/apparmor.c src/oci/ocijson.c src/oci/cgroup.c src/oci/devices.c src/lib/cgroup.c src/lib/cgroup_dir.c src/lib/cgroup_limits.c src/oci/store.c src/oci/rootless.c src/osdriver/quantity.c tests/fuzz/stubs.c"

# fuzz_pbcheck reads the pinned OpenShell contract's C, generated here as the build does
# (proto/openshell/meson.build: protoc-c 1.4 reads the proto with proto3's "optional" dropped)
pb="$work/pb"
mkdir -p "$pb"
pbinc=$(pkg-config --variable=includedir protobuf) || { echo "run.sh: protobuf (libprotobuf-dev) not found by pkg-config" >&2; exit 2; }
sed 's/^[[:space:]]*optional /  /' "$root/proto/openshell/compute_driver.proto" >"$pb/compute_driver.proto"
cp "$root/proto/openshell/options.proto" "$pb/"
(cd "$pb" && protoc-c --c_out=. -I. -I"$pbinc" compute_driver.proto options.proto \
    "$pbinc/google/protobuf/struct.proto" "$pbinc/google/protobuf/descriptor.proto") || { echo "run.sh: protoc-c failed" >&2; exit 2; }
PBC="-I$pb src/osdriver/pbcheck.c $pb/compute_driver.pb-c.c $pb/google/protobuf/struct.pb-c.c $(pkg-config --cflags --libs libprotobuf-c)"

INC="-Iinclude -Isrc/base -Isrc/lib -Isrc/lib/iface -Isrc/lib/netiface -Isrc/net -Isrc/net/iface -Isrc/proxy -Isrc/gateway -Isrc/osdriver -Isrc/oci"
# the sources every harness links, compiled once (two at a time), not once per harness
obj="$work/obj"
mkdir -p "$obj"
export CC CFLAGS INC JANSSON_CFLAGS obj
# shellcheck disable=SC2016,SC2086 # expanded by the inner shell; word splitting of flag lists is intended
if ! (cd "$root" && printf '%s\n' $SOURCES | xargs -P 2 -I{} sh -c \
        'o="$obj/$(echo "{}" | tr / _).o"; $CC $CFLAGS $INC $JANSSON_CFLAGS -c "{}" -o "$o" || { echo "run.sh: {} does not compile" >&2; exit 255; }'); then
    status=1
    exit 1
fi
OBJS=$(echo "$obj"/*.o)

for h in request sandbox_id termfilter httphead hostpolicy yamljson toml oci_config quantity pbcheck; do
    extra=""
    [ "$h" = pbcheck ] && extra=$PBC
    echo "== fuzz_$h: building"
    # shellcheck disable=SC2086 # word splitting of flag lists is intended
    if ! (cd "$root" && $CC $CFLAGS $INC $JANSSON_CFLAGS "tests/fuzz/fuzz_$h.c" $OBJS $extra $JANSSON_LIBS \
            -o "$work/fuzz_$h"); then
        echo "run.sh: fuzz_$h does not build" >&2
        status=1
        continue
    fi
    mkdir -p "$work/corpus_$h" "$work/artifacts_$h"
    cp -R "$here/corpus/$h/." "$work/corpus_$h/"
    echo "== fuzz_$h: running for ${SECONDS_EACH}s"
    # 0 seconds: the seed corpus run once (libFuzzer's -max_total_time=0 would mean no limit at all)
    limit="-max_total_time=$SECONDS_EACH"
    [ "$SECONDS_EACH" -eq 0 ] && limit="-runs=0"
    if "$work/fuzz_$h" "$limit" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$work/artifacts_$h/" \
            "$work/corpus_$h" >"$work/fuzz_$h.log" 2>&1; then
        tail -n 12 "$work/fuzz_$h.log" | grep -E '^(stat::|Done|#[0-9]+.*DONE)' || true
        echo "== fuzz_$h: ok ($(find "$work/corpus_$h" -type f | wc -l) corpus entries)"
    else
        echo "== fuzz_$h: FAILED" >&2
        grep -E 'ERROR|oracle violated|SUMMARY|runtime error|Test unit written' "$work/fuzz_$h.log" >&2 || tail -n 40 "$work/fuzz_$h.log" >&2
        status=1
    fi
done

exit "$status"
