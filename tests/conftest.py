"""Shared fixtures for the mxc integration and escape suites.

Run as root from the repository root:  python3 -m pytest -q tests/

Environment:
  MXC_EXEC         the CLI under test (default <repo>/build/mxc-exec)
  MXC_TEST_HELPER  the probe binary (default <repo>/build/mxc-test-helper)

Every test gets its own MXC_STATE_DIR; every sandbox a test provisions through the `mxc`
fixture is stopped and deprovisioned at teardown (best effort) so that a failing test leaves
nothing behind.
"""
import base64
import collections
import fcntl
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import termios
import threading
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MXC_EXEC = os.path.realpath(os.environ.get("MXC_EXEC", os.path.join(REPO, "build", "mxc-exec")))
HELPER = os.path.realpath(os.environ.get("MXC_TEST_HELPER",
                                         os.path.join(REPO, "build", "mxc-test-helper")))
HELPER_DIR = os.path.dirname(HELPER)

# The closed set of error codes (DESIGN §2, upstream §8.1).
ERROR_CODES = {
    "malformed_request", "unsupported_containment", "unsupported_phase", "backend_unavailable",
    "malformed_id", "stale_id", "not_provisioned", "not_started", "already_started",
    "already_stopped", "policy_validation", "backend_error",
}

DEFAULT_TIMEOUT = 90


# --------------------------------------------------------------------------------------------
# helpers usable from tests


def parse_envelope(text):
    """The JSON object in text: the whole of it, or else its last non-empty line; None if neither."""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    text = text.strip()
    if not text:
        return None
    for candidate in (text, text.splitlines()[-1]):
        try:
            obj = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def h(*args):
    """Shell command line running the test helper with args."""
    return " ".join(shlex.quote(str(a)) for a in (HELPER,) + args)


def verb_result(out, verb):
    """RESULT of the first 'verb: RESULT' line in out (None if absent)."""
    for line in out.splitlines():
        line = line.strip("\r")
        if line.startswith(verb + ": "):
            return line[len(verb) + 2:].strip()
    return None


def errno_of(out, verb):
    """The first word of a verb's result: 'ok', 'EPERM', ..."""
    r = verb_result(out, verb)
    return r.split()[0] if r else None


def b64(obj):
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return base64.b64encode(data).decode()


def _killed(pid):
    """Whether pid can run no more code: a SIGKILL is pending for it (kill() queues it in the
    group's shared set, which keeps it until the process is released), it is exiting (PF_EXITING),
    or it is a zombie; also True when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/%d/status" % pid) as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
    except (OSError, IndexError):
        return True
    pending = int(status.get("ShdPnd", "0"), 16) | int(status.get("SigPnd", "0"), 16)
    return fields[0] in "ZXx" or int(fields[6]) & 0x4 or bool(pending & (1 << (signal.SIGKILL - 1)))


def sandbox_pids_on_host(marker):
    """Host pids whose command line contains marker (excluding pgrep itself) and that can still run
    code.  One that was sent SIGKILL is left out: a one-shot's PID 1 SIGKILLs the rest and reports
    before the kernel has torn them down, and the CLI returns then (docs/design-decisions.md), so
    under load a killed process may still be on its way out when the caller looks — it runs nothing."""
    p = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return [pid for pid in map(int, p.stdout.split()) if not _killed(pid)]


def cgroup2_mount():
    """Where this host mounts cgroup2 (a hybrid host too), or None."""
    for line in open("/proc/self/mounts"):
        _, mnt, fstype = line.split()[:3]
        if fstype == "cgroup2":
            return mnt
    return None


def wait_until(pred, timeout=10.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


class MxcResult(collections.namedtuple("MxcResult", "rc stdout stderr envelope")):
    """(rc, stdout, stderr, envelope); envelope is the stdout JSON object or None."""

    @property
    def error(self):
        env = self.envelope
        if isinstance(env, dict) and isinstance(env.get("error"), dict):
            return env["error"]
        return None

    @property
    def code(self):
        return self.error.get("code") if self.error else None

    @property
    def result(self):
        env = self.envelope
        if isinstance(env, dict) and isinstance(env.get("result"), dict):
            return env["result"]
        return None

    @property
    def stderr_envelope(self):
        return parse_envelope(self.stderr)

    def describe(self):
        return "rc=%r\nstdout=%r\nstderr=%r" % (self.rc, self.stdout[-3000:], self.stderr[-3000:])


def assert_ok_envelope(r):
    """A non-exec phase answered success: exit 0, stdout exactly one {"result":{...}} object."""
    assert r.rc == 0, r.describe()
    obj = json.loads(r.stdout)  # the whole of stdout is the one envelope
    assert isinstance(obj, dict) and set(obj) == {"result"}, r.describe()
    assert isinstance(obj["result"], dict), r.describe()
    return obj["result"]


def assert_error(r, code):
    """A failure with one {"error":{...}} envelope on stdout, non-zero exit, given code(s)."""
    codes = code if isinstance(code, (list, tuple, set)) else [code]
    assert r.rc != 0, "wanted error %s; %s" % (code, r.describe())
    obj = json.loads(r.stdout)  # the whole of stdout is the one envelope
    assert isinstance(obj, dict) and set(obj) == {"error"}, r.describe()
    err = obj["error"]
    assert err.get("code") in ERROR_CODES, r.describe()
    assert err.get("code") in codes, "wanted %s; %s" % (codes, r.describe())
    assert isinstance(err.get("message"), str) and err["message"].strip(), r.describe()
    return err


# --------------------------------------------------------------------------------------------
# the runner


class Mxc:
    """Callable runner: mxc(request, flags=None, stdin=None, timeout=...) -> MxcResult."""

    def __init__(self, state_dir, scratch):
        self.state_dir = state_dir
        self.scratch = scratch
        self.provisioned = []
        self._n = 0

    # -- plumbing
    def env(self, extra=None):
        # the workspaces apart from the state, as in production, per test
        env = dict(os.environ, MXC_STATE_DIR=self.state_dir, MXC_WORKSPACE_ROOT=self.state_dir + ".ws")
        if extra:
            env.update(extra)
        return env

    @staticmethod
    def default_flags(request):
        return ["--experimental"] if isinstance(request, dict) and "phase" in request else []

    @staticmethod
    def encode(request):
        if isinstance(request, bytes):
            return request
        if isinstance(request, str):
            return request.encode()
        return json.dumps(request).encode()

    def config_file(self, request):
        self._n += 1
        path = os.path.join(self.scratch, "request-%d.json" % self._n)
        with open(path, "wb") as f:
            f.write(self.encode(request))
        return path

    def argv(self, request, flags, via):
        flags = self.default_flags(request) if flags is None else list(flags)
        if via == "stdin":
            return [MXC_EXEC] + flags + ["--config", "-"]
        if via == "base64":
            return [MXC_EXEC] + flags + ["--config-base64",
                                         base64.b64encode(self.encode(request)).decode()]
        if via == "file":
            return [MXC_EXEC] + flags + ["--config", self.config_file(request)]
        if via == "none":
            return [MXC_EXEC] + flags
        raise ValueError(via)

    def _track(self, request, res):
        if isinstance(request, dict) and request.get("phase") == "provision" and res.result:
            sid = res.result.get("sandboxId")
            if sid:
                self.provisioned.append(sid)

    # -- entry points
    def __call__(self, request=None, flags=None, stdin=None, timeout=DEFAULT_TIMEOUT, env=None,
                 via=None, pass_fds=(), argv=None):
        """Run mxc-exec once.

        request: dict (sent as JSON), str/bytes (sent verbatim) or None (argv given in full).
        stdin:   bytes for the workload's stdin (the request then goes in a file) or None.
        via:     'stdin' (--config -, the default without stdin), 'file', 'base64'.
        """
        if argv is None:
            if via is None:
                via = "stdin" if stdin is None else "file"
            argv = self.argv(request, flags, via)
            data = self.encode(request) if via == "stdin" else (stdin or b"")
        else:
            argv = [MXC_EXEC] + list(argv)
            data = stdin or b""
        try:
            p = subprocess.run(argv, input=data, capture_output=True, env=self.env(env),
                               timeout=timeout, pass_fds=pass_fds)
        except subprocess.TimeoutExpired as e:
            pytest.fail("mxc-exec gave no answer within %ss: argv=%r stdout=%r stderr=%r"
                        % (timeout, argv[:4], e.stdout, e.stderr))
        out = p.stdout.decode(errors="replace")
        err = p.stderr.decode(errors="replace")
        res = MxcResult(p.returncode, out, err, parse_envelope(out))
        self._track(request, res)
        return res

    def popen(self, request, flags=None, env=None, stdin=subprocess.PIPE, pass_fds=(), **kw):
        """Start mxc-exec in the background (request in a file); caller owns the Popen."""
        argv = self.argv(request, flags, "file")
        return subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env(env), pass_fds=pass_fds,
                                **kw)

    def under_pty(self, request, flags=None, env=None, timeout=DEFAULT_TIMEOUT):
        """Run with stdin, stdout and stderr on a pty created here; returns (rc, output)."""
        argv = self.argv(request, flags, "file")
        master, slave = pty.openpty()
        try:
            p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                 env=self.env(env), start_new_session=True)
        finally:
            os.close(slave)
        chunks = []
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                r, _, _ = select.select([master], [], [], 0.2)
                if r:
                    try:
                        data = os.read(master, 65536)
                    except OSError:  # EIO: every slave fd closed
                        break
                    if not data:
                        break
                    chunks.append(data)
                elif p.poll() is not None:
                    # drain what is left without blocking
                    while select.select([master], [], [], 0.1)[0]:
                        try:
                            data = os.read(master, 65536)
                        except OSError:
                            data = b""
                        if not data:
                            break
                        chunks.append(data)
                    break
            else:
                p.kill()
                pytest.fail("mxc-exec under a pty gave no answer within %ss" % timeout)
            rc = p.wait(timeout=30)
        finally:
            os.close(master)
        if isinstance(request, dict) and request.get("phase") == "provision":
            pass
        return rc, b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")

    # -- state-aware conveniences
    def provision(self, filesystem=None, network=None, extra=None, env=None, pass_fds=(),
                  helper=True):
        req = {"containment": "isolation_session", "phase": "provision"}
        fs = dict(filesystem or {})
        if helper:
            fs["readonlyPaths"] = list(fs.get("readonlyPaths", [])) + [HELPER_DIR]
        if fs:
            req["filesystem"] = fs
        if network is not None:
            req["network"] = network
        if extra:
            req.update(extra)
        r = self(req, env=env, pass_fds=pass_fds)
        result = assert_ok_envelope(r)
        return result

    def phase(self, phase, sid, env=None, pass_fds=(), **extra):
        req = {"phase": phase, "sandboxId": sid}
        req.update(extra)
        return self(req, env=env, pass_fds=pass_fds)

    def exec(self, sid, cmd, env=None, cwd=None, timeout_ms=None, stdin=None, host_env=None,
             pass_fds=(), timeout=DEFAULT_TIMEOUT):
        proc = {"commandLine": cmd}
        if env is not None:
            proc["env"] = env
        if cwd is not None:
            proc["cwd"] = cwd
        if timeout_ms is not None:
            proc["timeout"] = timeout_ms
        return self({"phase": "exec", "sandboxId": sid, "process": proc}, stdin=stdin,
                    env=host_env, pass_fds=pass_fds, timeout=timeout)

    def oneshot(self, cmd, filesystem=None, network=None, env=None, cwd=None, timeout_ms=None,
                stdin=None, host_env=None, pass_fds=(), helper=True, timeout=DEFAULT_TIMEOUT,
                containment="process", extra=None):
        req = oneshot_request(cmd, filesystem=filesystem, network=network, env=env, cwd=cwd,
                              timeout_ms=timeout_ms, helper=helper, containment=containment)
        if extra:
            req.update(extra)
        return self(req, stdin=stdin, env=host_env, pass_fds=pass_fds, timeout=timeout)

    def cleanup(self):
        for sid in reversed(self.provisioned):
            for ph in ("stop", "deprovision"):
                try:
                    subprocess.run([MXC_EXEC, "--experimental", "--config", "-"],
                                   input=json.dumps({"phase": ph, "sandboxId": sid}).encode(),
                                   capture_output=True, env=self.env(), timeout=60)
                except (subprocess.TimeoutExpired, OSError):
                    pass


def oneshot_request(cmd, filesystem=None, network=None, env=None, cwd=None, timeout_ms=None,
                    helper=True, containment="process"):
    proc = {"commandLine": cmd}
    if env is not None:
        proc["env"] = env
    if cwd is not None:
        proc["cwd"] = cwd
    if timeout_ms is not None:
        proc["timeout"] = timeout_ms
    req = {"containment": containment, "process": proc}
    fs = dict(filesystem or {})
    if helper:
        fs["readonlyPaths"] = list(fs.get("readonlyPaths", [])) + [HELPER_DIR]
    if fs:
        req["filesystem"] = fs
    if network is not None:
        req["network"] = network
    return req


class Session:
    """A provisioned (and usually started) isolation session."""

    def __init__(self, mxc, result):
        self.mxc = mxc
        self.id = result["sandboxId"]
        self.metadata = result.get("metadata", {})
        self.workspace = self.metadata.get("ephemeralWorkspacePath")

    def start(self, **kw):
        return self.mxc.phase("start", self.id, **kw)

    def stop(self, **kw):
        return self.mxc.phase("stop", self.id, **kw)

    def deprovision(self, **kw):
        return self.mxc.phase("deprovision", self.id, **kw)

    def exec(self, cmd, **kw):
        return self.mxc.exec(self.id, cmd, **kw)


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="session", autouse=True)
def _binaries_present():
    missing = [p for p in (MXC_EXEC, HELPER) if not os.access(p, os.X_OK)]
    if missing:
        pytest.exit("not built: %s (run: meson setup build && ninja -C build)" % missing, 3)


CLAIMS_DIR = "/var/lib/mxc/claims"


def session_id(name):
    """The sandboxId of the session named name (the wire's iso: codec)."""
    body = json.dumps({"version": 1, "agentUserName": name}, separators=(",", ":")).encode()
    return "iso:" + base64.urlsafe_b64encode(body).decode().rstrip("=")


def claims(since=0):
    """(name, claim) of each uid claim of the host written at or after `since`."""
    try:
        entries = os.listdir(CLAIMS_DIR)
    except OSError:
        return
    for f in entries:
        path = os.path.join(CLAIMS_DIR, f)
        try:
            if since and os.stat(path).st_mtime < since:
                continue
            with open(path) as fh:
                yield f, json.load(fh)
        except (OSError, ValueError):
            continue


def claimed_sessions(state_root):
    """Names of the sessions under state_root that still hold a claim (a uid of the host)."""
    return [os.path.basename(c["stateDir"]) for _, c in claims()
            if c.get("kind") == "session" and os.path.dirname(c.get("stateDir") or "") == state_root]


SESSION_STARTED = time.time()


def _session_gone(state_dir):
    """No directory of the session, nor one a provision or deprovision is making or unmaking
    (.new.NAME.* / .tomb.NAME.*: its claim exists a moment before and after its directory)."""
    root, name = os.path.split(state_dir)
    if os.path.isdir(state_dir):
        return False
    try:
        if any(e.startswith((".new.%s." % name, ".tomb.%s." % name)) for e in os.listdir(root)):
            return False
    except OSError:
        pass
    return not os.path.isdir(state_dir)  # a provision's rename may have landed meanwhile


def leftover_claims(since):
    """Claims made since `since` whose sandbox is gone: a session whose state
    directory no longer exists, a one-shot whose process is dead."""
    out = []
    for f, c in claims(since):
        if c.get("kind") == "session":
            gone = _session_gone(c.get("stateDir") or "/nonexistent")
        else:
            gone = not os.path.exists("/proc/%d" % int(c.get("pid") or 0)) if c.get("pid") else True
        if gone and os.path.exists(os.path.join(CLAIMS_DIR, f)):  # still there once its sandbox is seen gone
            out.append("%s %s" % (f, c.get("stateDir") or c.get("kind")))
    return out


def pytest_collection_modifyitems(session, config, items):
    """The leftover count runs after every other test."""
    last = [i for i in items if i.name == "test_no_claim_outlives_its_sandbox"]
    items[:] = [i for i in items if i not in last] + last


@pytest.fixture
def state_dir():
    d = tempfile.mkdtemp(prefix="mxc-state-")
    os.chmod(d, 0o755)
    yield d
    # Zero leftovers: a session a test provisioned and never deprovisioned
    # would keep its claim (a host uid) after its state root is removed.
    # It is deprovisioned here, and the test fails for having left it.
    leaked = claimed_sessions(d)
    env = dict(os.environ, MXC_STATE_DIR=d, MXC_WORKSPACE_ROOT=d + ".ws")
    for name in leaked:
        for ph in ("stop", "deprovision"):
            subprocess.run([MXC_EXEC, "--experimental", "--config", "-"],
                           input=json.dumps({"phase": ph, "sandboxId": session_id(name)}).encode(),
                           capture_output=True, env=env, timeout=60)
    still = claimed_sessions(d)
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(d + ".ws", ignore_errors=True)
    assert not leaked, "the test left sessions provisioned: %s (still claimed after deprovision: %s)" % (leaked, still)


@pytest.fixture
def scratch():
    """A host directory for request files and grants; world-accessible so an agent uid can use it."""
    d = tempfile.mkdtemp(prefix="mxc-test-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def mxc(state_dir, scratch):
    m = Mxc(state_dir, scratch)
    yield m
    m.cleanup()


@pytest.fixture
def session_factory(mxc):
    """make(filesystem=None, network=None, start=True) -> Session (helper dir granted read-only)."""

    def make(filesystem=None, network=None, start=True, env=None, pass_fds=(), extra=None):
        s = Session(mxc, mxc.provision(filesystem=filesystem, network=network, env=env,
                                       pass_fds=pass_fds, extra=extra))
        if start:
            r = s.start(env=env, pass_fds=pass_fds)
            assert_ok_envelope(r)
        return s

    return make


@pytest.fixture
def session(session_factory):
    """A provisioned and started session; deprovisioned at teardown."""
    return session_factory()


class Sandbox:
    """One policy, run either as one-shot `process` requests or as execs in one live session."""

    def __init__(self, mxc, backend, filesystem=None, network=None, host_env=None, pass_fds=()):
        self.mxc = mxc
        self.backend = backend
        self.filesystem = filesystem
        self.network = network
        self.host_env = host_env
        self.pass_fds = pass_fds
        self.session = None
        if backend == "session":
            res = mxc.provision(filesystem=filesystem, network=network, env=host_env,
                                pass_fds=pass_fds)
            self.session = Session(mxc, res)
            assert_ok_envelope(self.session.start(env=host_env, pass_fds=pass_fds))

    def request(self, cmd, env=None, cwd=None, timeout_ms=None):
        if self.backend == "process":
            return oneshot_request(cmd, filesystem=self.filesystem, network=self.network,
                                   env=env, cwd=cwd, timeout_ms=timeout_ms)
        proc = {"commandLine": cmd}
        if env is not None:
            proc["env"] = env
        if cwd is not None:
            proc["cwd"] = cwd
        if timeout_ms is not None:
            proc["timeout"] = timeout_ms
        return {"phase": "exec", "sandboxId": self.session.id, "process": proc}

    def run(self, cmd, env=None, cwd=None, timeout_ms=None, stdin=None, host_env=None,
            pass_fds=None, timeout=DEFAULT_TIMEOUT):
        he = dict(self.host_env or {})
        he.update(host_env or {})
        return self.mxc(self.request(cmd, env=env, cwd=cwd, timeout_ms=timeout_ms), stdin=stdin,
                        env=he, pass_fds=self.pass_fds if pass_fds is None else pass_fds,
                        timeout=timeout)

    def under_pty(self, cmd, host_env=None):
        return self.mxc.under_pty(self.request(cmd), env=host_env)


@pytest.fixture(params=["process", "session"])
def backend(request):
    return request.param


@pytest.fixture
def sandbox(mxc, backend):
    """make(filesystem=None, network=None, host_env=None, pass_fds=()) -> Sandbox for the
    parametrised backend (one-shot `process`, or exec inside a live session)."""

    def make(filesystem=None, network=None, host_env=None, pass_fds=()):
        return Sandbox(mxc, backend, filesystem=filesystem, network=network, host_env=host_env,
                       pass_fds=pass_fds)

    return make


@pytest.fixture
def host_dir(scratch):
    """make(name, mode=0o777) -> a fresh host directory under the scratch dir."""

    def make(name, mode=0o777):
        p = os.path.join(scratch, name)
        os.makedirs(p, exist_ok=True)
        os.chmod(p, mode)
        return p

    return make


@pytest.fixture
def host_secret():
    """A host file outside every grant: /tmp/mxc-secret-XXXX holding a unique token (0644, so
    only the sandbox's view, not file permissions, keeps it out)."""
    fd, path = tempfile.mkstemp(prefix="mxc-secret-", dir="/tmp")
    token = "SECRET-" + base64.b32encode(os.urandom(10)).decode()
    os.write(fd, (token + "\n").encode())
    os.close(fd)
    os.chmod(path, 0o644)
    yield path, token
    os.unlink(path)


@pytest.fixture
def host_sleeper():
    """A host process (not in any sandbox) that tests try to reach; yields its pid."""
    p = subprocess.Popen(["sleep", "300"])
    yield p
    p.kill()
    p.wait()


def kill_tree_marker(marker):
    for pid in sandbox_pids_on_host(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def serve_tcp(addr, port, stop, handle, backlog=64, threaded=True):
    """Accepts on addr:port until stop is set, calling handle(conn) for each connection (in a
    thread of its own unless threaded=False); the listener closes when it stops.  The one accept
    loop of the tests' origins."""
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(backlog)
    s.settimeout(0.2)
    try:
        while not stop.is_set():
            try:
                c, _ = s.accept()
            except socket.timeout:
                continue
            if threaded:
                threading.Thread(target=handle, args=(c,), daemon=True).start()
            else:
                handle(c)
    finally:
        s.close()


def unique(prefix="mxc"):
    return "%s-%s" % (prefix, base64.b32encode(os.urandom(5)).decode().lower())


_ERRNO_WORD = re.compile(r"^[A-Z][A-Z0-9]+$")


def foreign_pidns_procs():
    """{(pid, pidns)} of host processes living in a PID namespace other than ours."""
    mine = os.readlink("/proc/self/ns/pid")
    out = set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            ns = os.readlink("/proc/%s/ns/pid" % p)
        except OSError:
            continue
        if ns != mine:
            out.add((int(p), ns))
    return out


def live_pids_of_uids(uids):
    """Host pids whose real uid is one of uids, zombies not counted (a zombie runs nothing;
    reaping it is its parent's business, pid 1's once orphaned)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            status = open("/proc/%s/status" % p).read()
        except OSError:
            continue
        uid = int(status.split("\nUid:")[1].split()[0])
        if uid in uids and "\nState:\tZ" not in status:
            out.append(int(p))
    return out


def read_all_bg(popen, timeout):
    """communicate() without closing stdin early: returns (rc, out, err) or fails on timeout."""
    import threading
    outs = {}

    def pump(name, f):
        outs[name] = f.read()

    ts = [threading.Thread(target=pump, args=("out", popen.stdout)),
          threading.Thread(target=pump, args=("err", popen.stderr))]
    for t in ts:
        t.start()
    try:
        rc = popen.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()
        for t in ts:
            t.join(5)
        pytest.fail("mxc-exec still running after %ss; stdout=%r stderr=%r"
                    % (timeout, outs.get("out"), outs.get("err")))
    for t in ts:
        t.join(10)
    return rc, outs.get("out", b"").decode(errors="replace"), outs.get("err", b"").decode(
        errors="replace")


# ------------------------------------------------------------------------------------------------
# rootless: every mxc-exec as an unprivileged uid

UID = int(os.environ.get("MXC_TEST_ROOTLESS_UID", "61234"))
DROP = ["setpriv", "--reuid=%d" % UID, "--regid=%d" % UID, "--clear-groups"]


class RootlessMxc(Mxc):
    """The same runner, but every mxc-exec runs as UID with no supplementary groups."""

    def argv(self, request, flags, via):
        return DROP + super().argv(request, flags, via)

    def __call__(self, request=None, flags=None, stdin=None, **kw):
        if kw.get("argv") is not None:
            p = subprocess.run(DROP + [MXC_EXEC] + list(kw.pop("argv")), capture_output=True,
                               env=self.env(kw.get("env")), timeout=60)
            return p
        return super().__call__(request, flags=flags, stdin=stdin, **kw)


def owned_tmpdir(prefix):
    d = tempfile.mkdtemp(prefix=prefix)
    os.chown(d, UID, UID)
    os.chmod(d, 0o700)
    return d


@pytest.fixture
def rl():
    state = owned_tmpdir("mxc-rootless-state-")
    scratch = owned_tmpdir("mxc-rootless-scratch-")
    os.chmod(scratch, 0o755)
    m = RootlessMxc(state, scratch)
    yield m
    m.cleanup()
    for d in (state, state + ".ws", scratch):  # .ws: its workspace root (Mxc.env)
        shutil.rmtree(d, ignore_errors=True)


class PtyScreen:
    """A person's terminal made here: a pty whose master the test reads (the screen) and writes
    (keys). Subclasses start their program (self.p) on the slave."""

    def __init__(self, rows=24, cols=80):
        self.master, self.slave = pty.openpty()
        self.resize(rows, cols)
        self.screen = b""
        self.p = None

    def resize(self, rows, cols):
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def read_until(self, needle, timeout=30):
        deadline = time.monotonic() + timeout
        while needle not in self.screen and time.monotonic() < deadline:
            r, _, _ = select.select([self.master], [], [], 0.2)
            if r:
                try:
                    self.screen += os.read(self.master, 65536)
                except OSError:
                    break
        return needle in self.screen

    def write(self, data):
        os.write(self.master, data)

    def finish(self, timeout=60):
        deadline = time.monotonic() + timeout
        while self.p.poll() is None and time.monotonic() < deadline:
            self.read_until(b"\0\0never", 0.2)
        self.read_until(b"\0\0never", 0.3)
        return self.p.wait(timeout=10)

    def lines(self):
        """The screen as text lines, without the one warning an ASan+UBSan build prints when its
        vfork-style child switches stacks (google/sanitizers#189): run-tests.sh runs the suites
        against that build too, and the warning is the sanitizer's, not the workload's."""
        out = []
        for line in self.screen.decode(errors="replace").replace("\r", "").splitlines():
            if "ASan is ignoring requested __asan_handle_no_return" in line or \
                    line.strip() == "False positive error reports may follow" or \
                    line.startswith("For details see https://github.com/google/sanitizers/issues/189"):
                continue
            out.append(line)
        return out

    def lflag(self):
        return termios.tcgetattr(self.slave)[3]

    def close(self):
        if self.p is not None and self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr) if self.p is not None else ():
            if f:
                f.close()
        os.close(self.master)
        os.close(self.slave)
