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
    ("src/lib/fdio.c", "state.h", "upward", "src/lib/state.h"),
    ("src/lib/error.h", "../net/netpolicy.h", "upward", "src/net/netpolicy.h"),
    # a front including another front, the proxy including src/net
    ("src/oci/main.c", "../ffi/ffi_internal.h", "sibling", "src/ffi/ffi_internal.h"),
    ("src/cli/mxc.c", "../gateway/toml.h", "sibling", "src/gateway/toml.h"),
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
    ("src/oci/store.c", "store.h"),         # a component's own header
    ("src/lib/exec.c", "fdio.h"),
])
def test_an_allowed_include_passes(tree, src, header):
    add_include(tree, src, header)
    rc, out = run(tree)
    assert rc == 0, out


def test_a_removed_violation_must_leave_the_baseline(tree):
    path = tree / "src" / "gateway" / "main.c"
    listed = [ln for ln in (tree / "scripts" / "layers.baseline").read_text(encoding="utf-8").splitlines()
              if ln.strip() and not ln.startswith("#")]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('#include "yamljson.h"', ""), encoding="utf-8")
    rc, out = run(tree)
    assert rc == 1, out
    assert "GONE: src/gateway/main.c -> src/cli/yamljson.h" in out
    rc, out = run(tree, "--drop-stale")
    assert rc == 0, out
    rc, out = run(tree)
    assert rc == 0 and "the baseline lists %d" % (len(listed) - 1) in out, out


def test_an_unclassified_lib_file_fails(tree):
    (tree / "src" / "lib" / "newthing.c").write_text('#include "error.h"\n', encoding="utf-8")
    rc, out = run(tree)
    assert rc == 2, out
    assert "src/lib/newthing.c: no component owns this file" in out


def test_an_unresolved_header_fails(tree):
    add_include(tree, "src/oci/main.c", "nosuch.h")
    rc, out = run(tree)
    assert rc == 2, out
    assert 'src/oci/main.c: #include "nosuch.h" resolves to no classified header' in out


def test_a_declared_interface_is_one_header_per_layer(tree):
    rules = tree / "scripts" / "layers.json"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(text.replace('"tools": {"engine": "src/lib/seccomp_rules.h"}',
                                  '"tools": {"engine": ["src/lib/seccomp_rules.h", "src/lib/harden.h"]}'),
                     encoding="utf-8")
    rc, out = run(tree)
    assert rc == 2, out
    assert "interfaces.tools.engine: one header" in out


@pytest.mark.skipif(not os.path.isdir(os.path.join(REPO, "build", "libmxc_internal.a.p")),
                    reason="no build/ (meson setup build && ninja -C build)")
def test_the_symbol_report_names_each_front():
    p = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "layers.py"), "--symbols",
                        os.path.join(REPO, "build")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    for comp in ("cli", "ffi", "gateway", "oci", "network"):
        assert f"\n  {comp}: " in p.stdout, p.stdout
