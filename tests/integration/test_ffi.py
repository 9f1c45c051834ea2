"""libmxc_ffi.so's C ABI (tests/abi/test_ffi_abi.c) against real sandboxes and sessions."""
import contextlib
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.dirname(os.path.realpath(os.environ.get("MXC_EXEC", os.path.join(ROOT, "build", "mxc-exec"))))


@contextlib.contextmanager
def _state_root():
    """a state root of the test's own, and its workspace root (<it>.ws) removed with it"""
    with tempfile.TemporaryDirectory(prefix="mxc-ffi-") as st:
        try:
            yield st
        finally:
            shutil.rmtree(st + ".ws", ignore_errors=True)


def test_ffi_abi():
    with _state_root() as st:
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


# A caller with a large heap, as Node is, loading the library (argv[1]).
_CALLER_PRELUDE = r'''
import ctypes, json, os, sys
big = bytearray(256 << 20)
for i in range(0, len(big), 4096):
    big[i] = 1
lib = ctypes.CDLL(sys.argv[1])
class Err(ctypes.Structure):
    _fields_ = [(f, ctypes.c_char_p) for f in ("message", "operation", "native_code", "remediation")]
'''

# The session's holder must not be a copy of the caller.
_BIG_CALLER = _CALLER_PRELUDE + r'''
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
    with _state_root() as st:
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


# A one-shot through mxc_run_json from a caller with a large heap; argv: library, marker, mode
# ("run": print the result; "hold": the workload sleeps, the caller waits to be killed).
_BIG_ONESHOT = _CALLER_PRELUDE + r'''
class Run(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int32), ("exit_code", ctypes.c_int32), ("timed_out", ctypes.c_int32),
                ("stdout", ctypes.c_char_p), ("stderr", ctypes.c_char_p), ("error", Err),
                ("metadata", ctypes.c_char_p), ("warnings", ctypes.c_char_p)]
def run(cmd, timeout=None):
    proc = {"commandLine": cmd}
    if timeout:
        proc["timeout"] = timeout
    req = {"version": "1.0.0", "containment": "process", "process": proc,
           "network": {"egress": {"default": "deny"}, "ingress": {"default": "deny"}}}
    r = Run()
    st = lib.mxc_run_json(json.dumps(req).encode(), 0, ctypes.byref(r))
    out = {"st": st, "status": r.status, "exit": r.exit_code, "timedOut": bool(r.timed_out),
           "stdout": (r.stdout or b"").decode(), "stderr": (r.stderr or b"").decode(),
           "error": (r.error.message or b"").decode()}
    lib.mxc_run_result_free(ctypes.byref(r))
    return out
marker = sys.argv[2]
print(os.getpid(), flush=True)
if sys.argv[3] == "hold":
    run("exec sh -c 'sleep 1000' %s" % marker)
else:
    print(json.dumps({"slow": run("sleep 2; echo %s; echo err >&2; exit 3" % marker),
                      "timeout": run("sleep 1000", 300),
                      "bad": run("true; cd /nonexistent-%s" % marker)}), flush=True)
'''


def _descendants(pid):
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def _rss_kb(pid):
    """VmRSS of pid; 0 for posix_spawn's child before it execs (it shares the caller's memory, in
    the caller's PID namespace: a copy of the caller as a sandbox's PID 1 is in a namespace of its own)."""
    try:
        if ("python" in os.path.basename(os.readlink("/proc/%d/exe" % pid))
                and os.readlink("/proc/%d/ns/pid" % pid) == os.readlink("/proc/self/ns/pid")):
            return 0
        with open("/proc/%d/status" % pid) as f:
            return int(dict(l.split(":", 1) for l in f.read().splitlines())["VmRSS"].split()[0])
    except (OSError, KeyError, ValueError):
        return 0


def _big_caller(mode, marker, st):
    """(process, its pid, env) of _BIG_ONESHOT in mode, with its own state root st."""
    env = dict(os.environ, MXC_STATE_DIR=st, MXC_WORKSPACE_ROOT=st + ".ws")
    p = subprocess.Popen(["/usr/bin/python3", "-c", _BIG_ONESHOT, os.path.join(BUILD, "libmxc_ffi.so"), marker, mode],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return p, int(p.stdout.readline()), env


def test_oneshot_pid1_is_no_copy_of_an_in_process_caller():
    """A one-shot through mxc_run_json runs in a fresh mxc-exec (src/lib/fresh.h): from a caller with
    256 MB of touched heap, no process of the sandbox is a copy of it (a copy's page tables cost
    ~10 ms per run here).  The result is the in-process one's: exit code, output, timeout."""
    import json
    from conftest import unique, wait_until
    marker = unique("mxc-bigcaller")
    with _state_root() as st:
        p, caller, _ = _big_caller("run", marker, st)
        seen = {}

        def sandbox_running():
            for d in _descendants(caller):
                seen[d] = max(seen.get(d, 0), _rss_kb(d))
            return len(seen) >= 3  # the fresh mxc-exec, PID 1, the workload
        assert wait_until(sandbox_running, 60), "no sandbox under the caller"
        for d in _descendants(caller):
            seen[d] = max(seen.get(d, 0), _rss_kb(d))
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, out + err
        res = json.loads(out)
        assert seen and max(seen.values()) < 32 * 1024, seen
        slow = res["slow"]
        assert (slow["st"], slow["exit"], slow["timedOut"]) == (0, 3, False), slow
        assert slow["stdout"] == marker + "\n" and slow["stderr"] == "err\n", slow
        assert res["timeout"]["st"] == 0 and res["timeout"]["timedOut"], res["timeout"]
        assert res["bad"]["st"] == 0 and res["bad"]["exit"] == 2, res["bad"]


def test_oneshot_dies_with_its_in_process_caller():
    """The caller of mxc_run_json killed mid-run: the fresh mxc-exec, PID 1 and the workload go with it."""
    import signal
    from conftest import sandbox_pids_on_host, unique, wait_until
    marker = unique("mxc-callerdies")
    with _state_root() as st:
        p, caller, env = _big_caller("hold", marker, st)
        assert wait_until(lambda: sandbox_pids_on_host(marker), 60), "the workload never ran"
        tree = _descendants(caller)
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=30)
        assert wait_until(lambda: not sandbox_pids_on_host(marker), 30), "the workload outlived its caller"
        assert wait_until(lambda: not [d for d in tree if os.path.exists("/proc/%d" % d)], 30), tree
        # what the kill left (the run's claim and cgroup) is the sweeper's, as after a killed mxc-exec
        g = subprocess.run([os.path.join(BUILD, "mxc-exec"), "--gc"], capture_output=True, text=True,
                           env=dict(env, MXC_SWEEP_MIN_AGE="0"))
        assert g.returncode == 0, g.stdout + g.stderr
