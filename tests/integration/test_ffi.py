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


# A caller with a large heap, as Node is: the session's holder must not be a copy of it.
_BIG_CALLER = r'''
import ctypes, json, os, sys
big = bytearray(256 << 20)
for i in range(0, len(big), 4096):
    big[i] = 1
lib = ctypes.CDLL(sys.argv[1])
class Err(ctypes.Structure):
    _fields_ = [(f, ctypes.c_char_p) for f in ("message", "operation", "native_code", "remediation")]
class Phase(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int32), ("response", ctypes.c_char_p), ("error", Err)]
def phase(req):
    r = Phase()
    st = lib.mxc_run_state_aware_json(json.dumps(dict(req, version="1.0.0")).encode(), 0, 1, ctypes.byref(r))
    out = {"st": st, "status": r.status, "response": r.response and json.loads(r.response),
           "error": [r.error.message and r.error.message.decode(), r.error.operation and r.error.operation.decode()]}
    lib.mxc_state_aware_result_free(ctypes.byref(r))
    return out
net = {"egress": {"default": "deny"}, "ingress": {"default": "deny"}}
p = phase({"containment": "isolation_session", "phase": "provision", "network": net})
sid, name = p["response"]["result"]["sandboxId"], p["response"]["result"]["metadata"]["agentUserName"]
s = phase({"phase": "start", "sandboxId": sid})
again = phase({"phase": "start", "sandboxId": sid})
stale = phase({"phase": "start", "sandboxId": sid[:-4] + "AAAA"})
print(json.dumps({"sid": sid, "name": name, "start": s, "again": again, "stale": stale}))
'''


def test_session_holder_is_no_copy_of_an_in_process_caller():
    """Started through the C ABI by a process with 256 MB of touched heap, the holder is a copy of a
    fresh mxc-exec (src/lib/fresh.h), not of the caller: it would otherwise keep the caller's whole
    address space copy-on-write for the session's life, and every exec would fork it.  Errors of the
    phase come back as the C ABI's own (status and detail), as from an in-process start."""
    import json
    with tempfile.TemporaryDirectory(prefix="mxc-ffi-") as st:
        env = dict(os.environ, MXC_STATE_DIR=st, MXC_WORKSPACE_ROOT=st + ".ws")
        p = subprocess.run(["/usr/bin/python3", "-c", _BIG_CALLER, os.path.join(BUILD, "libmxc_ffi.so")],
                           capture_output=True, text=True, timeout=120, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        out = json.loads(p.stdout)
        try:
            assert out["start"]["st"] == 0 and out["start"]["response"] == {"result": {}}, out
            assert out["again"]["st"] != 0 and "already started" in out["again"]["error"][0], out
            assert out["stale"]["st"] != 0, out
            holder = int(open(os.path.join(st, out["name"], "holder")).read().split()[0])
            status = dict(l.split(":", 1) for l in open("/proc/%d/status" % holder).read().splitlines())
            rss_kb = int(status["VmRSS"].split()[0])
            size_kb = int(status["VmSize"].split()[0])
            assert rss_kb < 32 * 1024 and size_kb < 128 * 1024, (rss_kb, size_kb)
        finally:
            subprocess.run([os.path.join(BUILD, "mxc-exec"), "--experimental", "--config", "-"],
                           input=json.dumps({"phase": "deprovision", "sandboxId": out["sid"]}).encode(),
                           env=env, capture_output=True)
