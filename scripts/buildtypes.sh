#!/usr/bin/env bash
# Builds the tree warning-free (-Werror) with gcc and clang at every meson
# buildtype the project ships or a user picks (issue 35): gcc debug is
# ./build and the ASan build, Debian's own flags are the package's build;
# here gcc release (-O3: its maybe-uninitialized analysis), gcc
# debugoptimized, gcc plain with dpkg-buildflags (hardening, fortify), clang
# debug and clang release, none of them a test build (no MXC_FAULT_ in
# their binaries: `strings`).  Each into a throwaway directory; exits non-zero on
# the first that fails, printing its errors.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d /tmp/mxc-buildtypes-XXXXXX)
trap 'rm -rf "$out"' EXIT
fail=0
one() { # name, env..., -- meson args...
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local t0=$SECONDS
    if env "${envs[@]}" meson setup "$out/$name" "$@" >"$out/$name.log" 2>&1 &&
       ninja -C "$out/$name" >>"$out/$name.log" 2>&1; then
        # a build that is not a test build reads no fault-injection variable (src/base/fault.h)
        if strings "$out/$name"/mxc-exec "$out/$name"/mxc-oci "$out/$name"/mxc "$out/$name"/mxc-gateway \
             "$out/$name"/mxc-proxy "$out/$name"/libmxc.so "$out/$name"/libmxc_ffi.so | grep -q MXC_FAULT_; then
            echo "FAILED $name: its binaries name MXC_FAULT_"; fail=1
        else
            echo "ok $name ($((SECONDS - t0)) s, no MXC_FAULT_ in its binaries)"
        fi
    else
        echo "FAILED $name:"; grep -E "error|warning" "$out/$name.log" | head -20; fail=1
    fi
    rm -rf "${out:?}/$name"
}
one gcc-release CC=gcc -- --buildtype=release
one gcc-debugoptimized CC=gcc -- --buildtype=debugoptimized
one gcc-plain-debian CC=gcc "CFLAGS=$(dpkg-buildflags --get CFLAGS)" "CPPFLAGS=$(dpkg-buildflags --get CPPFLAGS)" \
    "LDFLAGS=$(dpkg-buildflags --get LDFLAGS)" -- --buildtype=plain
one clang-debug CC=clang -- --buildtype=debug
one clang-release CC=clang -- --buildtype=release
exit $fail
