"""The in-process C ABI (spec 000, "In-process callers") against a live session."""
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ABI = os.path.join(ROOT, "build", "test-exec-abi")


def test_exec_abi_streaming_waiter_terminator_attached():
    with tempfile.TemporaryDirectory(prefix="mxc-abi-") as st:
        p = subprocess.run([ABI], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, MXC_STATE_DIR=st))
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.strip().endswith(" 0 failed"), p.stdout


def test_no_large_static_thread_local_storage():
    """No TLS block of ours in the CLI or the libraries: the loader zeroes that block in every
    process that starts the CLI and in every thread of a process that loads a library (a Node
    caller's threads included).  A 132 KiB relay buffer there cost 33 page faults per CLI start;
    the relay allocates its buffers per run now (exec.c, relay_buf).  What is left is libc's own
    (about 100 bytes, in the static-pie CLI)."""
    from conftest import MXC_EXEC
    build = os.path.dirname(MXC_EXEC)
    for f in ("mxc-exec", "libmxc.so", "libmxc_ffi.so"):
        p = subprocess.run(["readelf", "-lW", os.path.join(build, f)], capture_output=True, text=True, check=True)
        for l in p.stdout.splitlines():
            if l.split()[:1] == ["TLS"]:
                assert int(l.split()[5], 16) < 4096, (f, l)  # MemSiz
