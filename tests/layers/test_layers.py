"""The layer check (scripts/layers.py) on a scratch copy of the tree: it passes on the tree as
it is, and fails on each kind of include against the arrows that the baseline does not list
(a lower layer including a higher one, a front including another front, a front or the
network reaching an engine-internal header), on a baseline line that no longer occurs, and on
a file or header the rules do not classify.  No root, no build: python3 only.

  python3 -m pytest -q -p no:cacheprovider tests/layers
"""
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def tree(tmp_path):
    """src/, include/, tools/ and the check with its rules and baseline, copied."""
    for d in ("src", "include", "tools"):
        shutil.copytree(os.path.join(REPO, d), tmp_path / d)
    (tmp_path / "scripts").mkdir()
    for f in ("layers.py", "layers.json", "layers.baseline"):
        shutil.copy(os.path.join(REPO, "scripts", f), tmp_path / "scripts" / f)
    return tmp_path


def run(tree, *args):
    p = subprocess.run([sys.executable, str(tree / "scripts" / "layers.py"), *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def add_include(tree, path, header):
    with open(tree / path, "a", encoding="utf-8") as f:
        f.write(f'\n#include "{header}"\n')


def test_the_tree_passes(tree):
    rc, out = run(tree)
    assert rc == 0, out
    assert "0 new, 0 gone -> ok" in out


def test_the_repository_itself_passes():
    p = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "layers.py")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("src,header,kind,target", [
    # a lower layer including a higher one: the engine -> the network, base -> the engine
    ("src/lib/session.c", "stack.h", "upward", "src/net/stack.h"),
    ("src/base/fdio.c", "state.h", "upward", "src/lib/state.h"),
    ("src/base/error.h", "../net/netpolicy.h", "upward", "src/net/netpolicy.h"),
    # a front including another front, the proxy including src/net
    ("src/oci/main.c", "../ffi/ffi_internal.h", "sibling", "src/ffi/ffi_internal.h"),
    ("src/cli/mxc.c", "../gateway/table.h", "sibling", "src/gateway/table.h"),
    ("src/osdriver/main.c", "server.h", "sibling", "src/gateway/server.h"),
    ("src/proxy/proxy.c", "netpolicy.h", "sibling", "src/net/netpolicy.h"),
    # a front or the network reaching an engine-internal header it does not declare
    ("src/oci/main.c", "session.h", "internal", "src/lib/session.h"),
    ("src/cli/main.c", "fsview.h", "internal", "src/lib/fsview.h"),
    ("src/gateway/server.c", "stack.h", "internal", "src/net/stack.h"),
    ("src/net/thishost.c", "plan.h", "internal", "src/lib/plan.h"),
    ("tools/gen_seccomp.c", "harden.h", "internal", "src/lib/harden.h"),
])
def test_a_forbidden_include_fails(tree, src, header, kind, target):
    add_include(tree, src, header)
    rc, out = run(tree)
    assert rc == 1, out
    assert f"NEW {kind}: {src} -> {target}" in out
    assert "1 new, 0 gone -> FAIL" in out


@pytest.mark.parametrize("src,header", [
    ("src/oci/main.c", "procs.h"),          # everyone may use base
    ("src/net/stack.c", "error.h"),
    ("src/gateway/main.c", "mxc.h"),        # the engine's public header
    ("src/oci/main.c", "front.h"),          # the fronts' declared engine interface
    ("src/ffi/stream.c", "yamljson.h"),     # base (src/base)
    ("src/oci/store.c", "store.h"),         # a component's own header
    ("src/osdriver/spec.c", "policymap.h"), # openshell_policy: a base-layer component in src/gateway
    ("src/lib/exec.c", "fdio.h"),
])
def test_an_allowed_include_passes(tree, src, header):
    add_include(tree, src, header)
    rc, out = run(tree)
    assert rc == 0, out


def test_a_removed_violation_must_leave_the_baseline(tree):
    """A listed include that goes must leave the baseline (the tree's own baseline may list none:
    one is listed here, then removed)."""
    path = tree / "src" / "oci" / "main.c"
    baseline = tree / "scripts" / "layers.baseline"
    text = path.read_text(encoding="utf-8")
    add_include(tree, "src/oci/main.c", "session.h")
    rc, out = run(tree)
    assert rc == 1 and "NEW internal: src/oci/main.c -> src/lib/session.h" in out, out
    with open(baseline, "a", encoding="utf-8") as f:
        f.write("src/oci/main.c -> src/lib/session.h\n")
    listed = [ln for ln in baseline.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    rc, out = run(tree)
    assert rc == 0, out
    path.write_text(text, encoding="utf-8")
    rc, out = run(tree)
    assert rc == 1, out
    assert "GONE: src/oci/main.c -> src/lib/session.h" in out
    rc, out = run(tree, "--drop-stale")
    assert rc == 0, out
    rc, out = run(tree)
    assert rc == 0 and "the baseline lists %d" % (len(listed) - 1) in out, out


def test_an_unclassified_file_fails(tree):
    (tree / "src" / "newpart").mkdir()
    (tree / "src" / "newpart" / "newthing.c").write_text('#include "error.h"\n', encoding="utf-8")
    rc, out = run(tree)
    assert rc == 2, out
    assert "src/newpart/newthing.c: no component owns this file" in out


def test_an_unresolved_header_fails(tree):
    add_include(tree, "src/oci/main.c", "nosuch.h")
    rc, out = run(tree)
    assert rc == 2, out
    assert 'src/oci/main.c: #include "nosuch.h" resolves to no classified header' in out


def test_a_declared_interface_is_one_header_per_layer(tree):
    rules = tree / "scripts" / "layers.json"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(text.replace('"tools":   {"engine": "src/lib/seccomp_rules.h"}',
                                  '"tools":   {"engine": ["src/lib/seccomp_rules.h", "src/lib/harden.h"]}'),
                     encoding="utf-8")
    rc, out = run(tree)
    assert rc == 2, out
    assert "interfaces.tools.engine: one header" in out


NEEDS_BUILD = pytest.mark.skipif(not os.path.isdir(os.path.join(REPO, "build", "libmxc_engine.a.p")),
                                 reason="no build/ (meson setup build && ninja -C build)")


@NEEDS_BUILD
def test_the_symbol_check_passes_and_names_each_front():
    p = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "layers.py"), "--symbols",
                        os.path.join(REPO, "build")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    for comp in ("cli", "ffi", "gateway", "oci", "osdriver", "network"):
        assert f"\n  {comp}: " in p.stdout, p.stdout


def scratch_build(tree, tmp_path, src, code):
    """build/'s objects (linked) plus one scratch object compiled from src in the tree copy."""
    build = tmp_path / "scratch-build"
    build.mkdir()
    real = os.path.join(REPO, "build")
    for d in os.listdir(real):
        if d.endswith(".p") and os.path.isdir(os.path.join(real, d)):
            os.symlink(os.path.join(real, d), build / d)
    (tree / src).write_text(code, encoding="utf-8")
    (build / "scratch.p").mkdir()
    subprocess.run(["cc", "-c", str(tree / src), "-o", str(build / "scratch.p" / (src.replace("/", "_") + ".o"))],
                   check=True)
    return build


@NEEDS_BUILD
@pytest.mark.parametrize("src,symbol,line", [
    # a front calling an engine function its interface (src/lib/iface/front.h) does not list
    ("src/cli/scratch.c", "mxc_session_finish", "NEW internal symbol: cli -> mxc_session_finish (engine)"),
    # base calling the engine
    ("src/base/scratch.c", "mxc_plan_free", "NEW upward symbol: base -> mxc_plan_free (engine)"),
    # a front calling another front
    ("src/oci/scratch.c", "gw_table_dir", "NEW sibling symbol: oci -> gw_table_dir (gateway)"),
])
def test_a_forbidden_call_fails(tree, tmp_path, src, symbol, line):
    shutil.copy(os.path.join(REPO, "scripts", "layers.symbols"), tree / "scripts" / "layers.symbols")
    build = scratch_build(tree, tmp_path, src, f"extern void {symbol}(void);\nvoid scratch(void) {{ {symbol}(); }}\n")
    rc, out = run(tree, "--symbols", str(build))
    assert rc == 1, out
    assert line in out, out


@NEEDS_BUILD
def test_an_allowed_call_passes(tree, tmp_path):
    shutil.copy(os.path.join(REPO, "scripts", "layers.symbols"), tree / "scripts" / "layers.symbols")
    code = ("extern void mxc_termfilter_init(void), mxc_free(void), mxc_write_all(void);\n"
            "void scratch(void) { mxc_termfilter_init(); mxc_free(); mxc_write_all(); }\n")
    build = scratch_build(tree, tmp_path, "src/gateway/scratch.c", code)
    rc, out = run(tree, "--symbols", str(build))
    assert rc == 0, out
