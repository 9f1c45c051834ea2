"""libmxc_ffi.so's C ABI (tests/abi/test_ffi_abi.c) against real sandboxes and sessions."""
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.dirname(os.path.realpath(os.environ.get("MXC_EXEC", os.path.join(ROOT, "build", "mxc-exec"))))


def test_ffi_abi():
    with tempfile.TemporaryDirectory(prefix="mxc-ffi-") as st:
        p = subprocess.run([os.path.join(BUILD, "test-ffi-abi"), os.path.join(BUILD, "libmxc_ffi.so")],
                           capture_output=True, text=True, timeout=300, env=dict(os.environ, MXC_STATE_DIR=st))
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.strip().endswith(" 0 failed"), p.stdout


def test_ffi_exports_exactly_upstreams_symbols():
    p = subprocess.run(["nm", "-D", "--defined-only", os.path.join(BUILD, "libmxc_ffi.so")],
                       capture_output=True, text=True, check=True)
    syms = sorted(line.split()[2] for line in p.stdout.splitlines() if line.split()[1] == "T")
    assert len(syms) == 44 and all(s.startswith("mxc_") for s in syms), syms
    flags = subprocess.run(["readelf", "-d", os.path.join(BUILD, "libmxc_ffi.so")],
                           capture_output=True, text=True, check=True).stdout
    assert "NODELETE" in flags
