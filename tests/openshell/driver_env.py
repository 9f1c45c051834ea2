"""What tests/openshell's suites share to run mxc-openshell-driver as OpenShell's gateway does: the
binary under test, the gRPC messages compiled from the pinned contract (the module fixture pb), one
driver process on its socket (Driver) and the directory it is given (make_base).

Environment: MXC_OPENSHELL_DRIVER, the binary under test (default <repo>/build/mxc-openshell-driver).
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

grpc = pytest.importorskip("grpc")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.realpath(os.environ.get("MXC_OPENSHELL_DRIVER",
                                         os.path.join(REPO, "build", "mxc-openshell-driver")))
PROTO = os.path.join(REPO, "proto", "openshell")
SVC = "/openshell.compute.v1.ComputeDriver/"
NOBODY = 65534

@pytest.fixture(scope="module")
def pb():
    """compute_driver_pb2, generated from the pinned proto into a temporary directory."""
    out = tempfile.mkdtemp(prefix="mxc-osd-pb-")
    try:
        subprocess.run(["protoc", "-I", PROTO, "-I", "/usr/include", "--python_out=" + out,
                        os.path.join(PROTO, "compute_driver.proto"), os.path.join(PROTO, "options.proto")],
                       check=True)
        sys.path.insert(0, out)
        import compute_driver_pb2
        yield compute_driver_pb2
    finally:
        if out in sys.path:
            sys.path.remove(out)
        sys.modules.pop("compute_driver_pb2", None)
        sys.modules.pop("options_pb2", None)
        shutil.rmtree(out, ignore_errors=True)


class Driver:
    """One mxc-openshell-driver process on its socket, and calls to it."""

    def __init__(self, pb, base, supervisor=True, extra=(), grant_roots=("/",)):
        """grant_roots: the operator's --grant-root directories ("/": any host path, what most tests
        grant from; test_driver.py's grant-root tests narrow it)."""
        self.pb, self.base = pb, base
        self.sock = os.path.join(base, "run", "driver.sock")
        self.state = os.path.join(base, "state")
        self.args = [DRIVER, "--socket", self.sock, "--state-dir", self.state]
        if supervisor:
            self.args += ["--supervisor", os.path.join(base, "openshell-sandbox")]
        for r in grant_roots:
            self.args += ["--grant-root", r]
        self.args += list(extra)
        self.proc = None
        self.channel = None

    def start(self):
        self.proc = subprocess.Popen(self.args, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("the driver exited: " + self.proc.stderr.read())
            if os.path.exists(self.sock):
                try:
                    with socket.socket(socket.AF_UNIX) as s:
                        s.connect(self.sock)
                    break
                except OSError:
                    pass
            time.sleep(0.02)
        self.channel = grpc.insecure_channel("unix:" + self.sock)
        return self

    def stop(self):
        if self.channel:
            self.channel.close()
            self.channel = None
        if not self.proc:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=10)
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        if rc != -signal.SIGKILL:  # a clean exit (and, under ASan, no report); a test's kill aside
            assert rc == 0 and "ERROR" not in err, err

    def call(self, method, request, reply_type):
        rpc = self.channel.unary_unary(SVC + method, request_serializer=lambda m: m if isinstance(m, bytes)
                                       else m.SerializeToString(), response_deserializer=reply_type.FromString)
        return rpc(request, timeout=10)

    def refused(self, method, request, reply_type):
        with pytest.raises(grpc.RpcError) as ei:
            self.call(method, request, reply_type)
        return ei.value.code(), ei.value.details()


def make_base(mode=0o755, prefix="mxc-osd-", under=None, supervisor=None):
    """A fresh directory (0755 by default: another user may look up the socket in run/) with run/,
    state/ and the supervisor the driver is given: /bin/true, or a script of the text supervisor."""
    base = tempfile.mkdtemp(prefix=prefix, dir=under)
    os.chmod(base, mode)
    os.mkdir(os.path.join(base, "run"), 0o755)
    os.mkdir(os.path.join(base, "state"), 0o700)
    sup = os.path.join(base, "openshell-sandbox")
    if supervisor is None:
        shutil.copy("/bin/true", sup)
    else:
        with open(sup, "w") as f:
            f.write(supervisor)
    os.chmod(sup, 0o755)
    return base
