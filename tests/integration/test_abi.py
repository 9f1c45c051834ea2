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
