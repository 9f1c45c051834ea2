"""The function-length check (scripts/funclen.py) on a scratch copy of src/: it passes on the tree
as it is, fails on a new function over 150 lines with no reason, passes when `long: <reason>` is
written above it, and fails on a baseline line whose function got short.  python3 only.

  python3 -m pytest -q -p no:cacheprovider tests/layers/test_funclen.py
"""
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def tree(tmp_path):
    shutil.copytree(os.path.join(REPO, "src"), tmp_path / "src")
    (tmp_path / "scripts").mkdir()
    for f in ("funclen.py", "funclen.baseline"):
        shutil.copy(os.path.join(REPO, "scripts", f), tmp_path / "scripts" / f)
    return tmp_path


def run(tree, *args):
    p = subprocess.run([sys.executable, str(tree / "scripts" / "funclen.py"), *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def long_function(name, above=""):
    body = "".join(f"\tx += {i};\n" for i in range(160))
    return f"\n{above}static int {name}(int x)\n{{\n{body}\treturn x;\n}}\n"


def test_the_repository_passes():
    rc, out = run_repo()
    assert rc == 0, out


def run_repo():
    p = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "funclen.py")],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def test_a_new_long_function_fails(tree):
    with open(tree / "src/base/fdio.c", "a", encoding="utf-8") as f:
        f.write(long_function("too_long"))
    rc, out = run(tree)
    assert rc == 1, out
    assert "NEW: src/base/fdio.c: too_long is 164 lines" in out


@pytest.mark.parametrize("above", [
    "/* long: one table of cases, read top to bottom */\n",
    "/* What it does.\n * long: a state machine whose states share locals */\n",
    "// long: generated\n",
])
def test_a_written_reason_passes(tree, above):
    with open(tree / "src/base/fdio.c", "a", encoding="utf-8") as f:
        f.write(long_function("explained", above))
    rc, out = run(tree)
    assert rc == 0, out


def test_a_shortened_function_must_leave_the_baseline(tree):
    base = tree / "scripts" / "funclen.baseline"
    with open(base, "a", encoding="utf-8") as f:
        f.write("src/base/fdio.c: mxc_write_all   # scratch\n")
    rc, out = run(tree)
    assert rc == 1 and "GONE: src/base/fdio.c: mxc_write_all" in out, out
    rc, out = run(tree, "--drop-stale")
    assert rc == 0, out
    rc, out = run(tree)
    assert rc == 0, out
