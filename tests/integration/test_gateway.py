"""Issue 16: mxc-gateway — the daemon and its client driven as an operator would, against real
sandboxes (root, real namespaces): configuration refusals before anything exists, the policy
mapped (and refused) before any sandbox, both backends, logs and exit codes, delete, restart
durability (kill -9 the gateway: its orphans are ended and marked lost), the socket's owner-only
access, mock mode and the probe.

NETWORK SAFETY: no packet leaves loopback: governed egress is checked by the proxy variables the
workload receives, never by connecting anywhere."""
import json
import os
import pathlib
import pty
import resource
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import DROP, MXC_EXEC, UID, live_pids_of_uids, owned_tmpdir, wait_until

BIN = os.path.dirname(MXC_EXEC)
GATEWAY = os.path.join(BIN, "mxc-gateway")
MXC = os.path.join(BIN, "mxc")


class Gateway:
    """One gateway: as root, or rootless (every command as UID, its files in a directory of
    UID's: the runtime's state, the gateway's state and socket, its policies and grants)."""

    def __init__(self, tmp, mxc, backend="process", extra="", env=None, rootless=False, tag=""):
        self.prefix = list(DROP) if rootless else []
        if rootless:
            self.base = owned_tmpdir("mxc-gw-rootless-")
            os.chmod(self.base, 0o755)
            tmp = pathlib.Path(self.base)
            base_env = {"MXC_STATE_DIR": self.base + "/mxc", "MXC_WORKSPACE_ROOT": self.base + "/ws"}
        else:
            self.base = None
            base_env = {}
        self.tmp = tmp
        self.rootless = rootless
        base_env.update(MXC_GATEWAY_STATE=str(tmp / ("gwstate" + tag)), MXC_GATEWAY_SOCKET=str(tmp / ("gw%s.sock" % tag)))
        base_env.update(env or {})
        self.env = mxc.env(base_env)
        self.sock = self.env["MXC_GATEWAY_SOCKET"]
        self.state = self.env["MXC_GATEWAY_STATE"]
        self.config = tmp / ("gateway%s.toml" % tag)
        self.config.write_text('[openshell.drivers.mxc]\nmxc_exec_path = "%s"\nbackend = "%s"\n%s'
                               % (MXC_EXEC, backend, extra))
        self.rw = str(tmp / ("rw" + tag))
        os.makedirs(self.rw, exist_ok=True)
        os.chmod(self.rw, 0o777)
        if rootless:
            os.chown(self.rw, UID, UID)
        self.proc = None

    def policy(self, text=None):
        """A policy file the gateway's user can read (by default: read-write its own grant)."""
        p = self.tmp / ("policy-%d.yaml" % time.monotonic_ns())
        p.write_text(text if text is not None else
                     "version: 1\nfilesystem_policy:\n  read_write:\n    - %s\n  read_only: [/usr]\n" % self.rw)
        os.chmod(str(p), 0o644)
        return p

    def start(self):
        self.proc = subprocess.Popen(self.prefix + [GATEWAY, "serve", "--config", str(self.config)], env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # serving once it answers (a killed gateway's socket file may still be there)
        assert wait_until(lambda: self.proc.poll() is not None or self("sandbox", "list").returncode == 0, 60)
        assert self.proc.poll() is None, self.proc.stdout.read()
        return self

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)

    def __call__(self, *args, env=None, prefix=None):
        return subprocess.run(list(self.prefix if prefix is None else prefix) + [GATEWAY] + list(args),
                              env=dict(self.env, **(env or {})), capture_output=True, text=True, timeout=120)

    def create(self, name, policy, *cmd, extra=()):
        return self("sandbox", "create", "--name", name, "--policy", str(policy), *extra, "--", *cmd)

    def logs(self, name):
        """The workload's log, without the ASan+UBSan build's stack-switch warning (mxc-exec's
        stderr shares the log; see tests/escape/test_caller_side.py)."""
        out = self("sandbox", "logs", name).stdout
        return "".join(line for line in out.splitlines(True)
                       if "ASan is ignoring requested __asan_handle_no_return" not in line
                       and not line.startswith("False positive error reports may follow")
                       and not line.startswith("For details see https://github.com/google/sanitizers/issues/189"))

    def record(self, name):
        r = self("sandbox", "get", name)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def wait_status(self, name, status):
        assert wait_until(lambda: (self.record(name) or {}).get("status") == status, 60), self.record(name)
        return self.record(name)


def _cwd(pid):
    try:
        return os.readlink("/proc/%d/cwd" % pid)
    except OSError:
        return ""


@pytest.fixture
def gw(tmp_path, mxc):
    made = []

    def make(**kw):
        g = Gateway(tmp_path, mxc, **kw)
        made.append(g)
        return g
    yield make
    for g in made:
        if g.proc and g.proc.poll() is None:
            for s in json.loads(g("sandbox", "list", "--json").stdout or "[]"):
                g("sandbox", "delete", s["name"])
        g.stop()
        if g.base:  # a rootless one-shot's cleaner may still be finishing (it remakes the state root)
            wait_until(lambda: (shutil.rmtree(g.base, ignore_errors=True), not os.path.exists(g.base))[1]
                       and not [p for p in live_pids_of_uids([UID]) if g.base in _cwd(p)], 30)
            shutil.rmtree(g.base, ignore_errors=True)


@pytest.fixture
def policy(tmp_path, host_dir):
    rw = host_dir("gw-rw")

    def make(text=None):
        p = tmp_path / ("policy-%d.yaml" % time.monotonic_ns())
        p.write_text(text if text is not None else
                     "version: 1\nfilesystem_policy:\n  read_write:\n    - %s\n  read_only: [/usr]\n" % rw)
        return p
    make.rw = rw
    return make


def sessions(mxc):
    r = subprocess.run([MXC, "ls", "--json"], env=mxc.env(), capture_output=True, text=True)
    return [s for s in json.loads(r.stdout) if s["kind"] == "session"]


# --------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize("body, why", [
    ("backend = \"process\"\n", "mxc_exec_path is required"),
    ("mxc_exec_path = \"mxc-exec\"\n", "absolute"),
    ("mxc_exec_path = \"/nonexistent/mxc-exec\"\n", "not an executable file"),
    ("mxc_exec_path = \"/bin/true\"\nfrobnicate = true\n", "unknown key frobnicate"),
    ("mxc_exec_path = \"/bin/true\"\negress_proxy_addr = \"0.0.0.0:3128\"\n", "loopback"),
])
def test_serve_refuses_a_bad_configuration_before_anything_exists(tmp_path, mxc, body, why):
    cfg = tmp_path / "g.toml"
    cfg.write_text("[openshell.drivers.mxc]\n" + body)
    sock = tmp_path / "gw.sock"
    r = subprocess.run([GATEWAY, "serve", "--config", str(cfg), "--socket", str(sock)], capture_output=True, text=True,
                       env=mxc.env({"MXC_GATEWAY_STATE": str(tmp_path / "st")}), timeout=30)
    assert r.returncode == 1 and why in r.stderr, r.stderr
    assert not sock.exists() and not (tmp_path / "st").exists()


def test_one_gateway_per_state_directory(gw):
    g = gw().start()
    r = subprocess.run([GATEWAY, "serve", "--config", str(g.config), "--socket", str(g.tmp / "other.sock")],
                       env=g.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "another gateway" in r.stderr, r.stderr


# --------------------------------------------------------------------------------------------
# the process backend


def test_a_sandbox_does_its_work_and_is_refused_the_rest(gw, policy, host_dir):
    g = gw().start()
    outside = host_dir("gw-outside")
    r = g.create("work", policy(), "sh", "-c",
                 "echo made > %s/out && echo logged; echo x > %s/no 2>/dev/null || echo refused; exit 7"
                 % (policy.rw, outside))
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] in ("running", "failed") and rec["backend"] == "process"
    rec = g.wait_status("work", "failed")  # the driver reports the failed workload
    assert rec["exitCode"] == 7 and rec["error"] == "the workload exited with status 7"
    assert open(os.path.join(policy.rw, "out")).read() == "made\n"
    assert not os.path.exists(os.path.join(outside, "no"))
    logs = g.logs("work")
    assert "logged" in logs and "refused" in logs
    table = g("sandbox", "list").stdout.splitlines()
    assert table[1].split() == ["work", "failed", "process", "7"]
    assert g("sandbox", "delete", "work").returncode == 0
    assert json.loads(g("sandbox", "list", "--json").stdout) == []
    r = g("sandbox", "get", "work")
    assert r.returncode == 1 and "HTTP 404" in r.stderr


def _api_walk(g, policy):
    """The same conversation with a gateway: create, wait, get, logs, list, delete, get. What it
    answered, with what varies between two daemons (times, pids, macs) left out."""
    said = []
    r = g.create("walk", policy(), "sh", "-c", "echo hello; env | grep -c ^LISTEN_ || true; exit 3")
    said.append(("create", r.returncode, sorted(json.loads(r.stdout)) if r.returncode == 0 else r.stderr))
    rec = g.wait_status("walk", "failed")
    said.append(("get", rec["status"], rec["exitCode"], rec["backend"], rec["error"]))
    said.append(("logs", g.logs("walk")))
    said.append(("list", g("sandbox", "list").stdout.split()))
    said.append(("delete", g("sandbox", "delete", "walk").returncode))
    r = g("sandbox", "get", "walk")
    said.append(("get after delete", r.returncode, "HTTP 404" in r.stderr))
    return said


def test_socket_activation_answers_the_same_api(gw, policy):
    """Issue 30: started by systemd's socket activation (systemd-socket-activate, which needs no
    systemd as PID 1, passes the listening socket as fd 3 with LISTEN_PID/LISTEN_FDS), the gateway
    answers the same API as the hand-started daemon; no workload sees LISTEN_* (or fd 3); a stop
    leaves the socket to its owner, and the next connection starts the gateway again."""
    by_hand = gw(tag="hand").start()
    expected = _api_walk(by_hand, policy)
    by_hand.stop()
    g = gw(tag="act")
    act = subprocess.Popen(["systemd-socket-activate", "-l", g.sock, "-E", "MXC_GATEWAY_STATE", "-E", "MXC_STATE_DIR",
                            GATEWAY, "serve", "--config", str(g.config)], env=g.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    g.proc = act
    try:
        assert wait_until(lambda: os.path.exists(g.sock), 30)
        assert _api_walk(g, policy) == expected
        assert expected[2][1].splitlines()[:2] == ["hello", "0"], expected  # no LISTEN_* in the workload
    finally:
        act.send_signal(signal.SIGTERM)
        out = act.communicate(timeout=30)[0].decode(errors="replace")
    assert "(socket activation)" in out, out
    assert os.path.exists(g.sock), "the activated gateway removed systemd's socket"
    # what is not one listening unix socket is refused, never served: fd 3 a file, or two sockets
    for fds, three in (("1", "3</dev/null"), ("2", "3</dev/null 4</dev/null")):
        r = subprocess.run(["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=%s exec "$0" serve --config "$1" %s' % (fds, three),
                            GATEWAY, str(g.config)], env=g.env, capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "socket activation" in r.stderr, (fds, r.stderr)


def test_names_are_unique_and_a_refused_policy_leaves_nothing(gw, policy, mxc):
    g = gw().start()
    assert g.create("one", policy(), "sleep", "30").returncode == 0
    r = g.create("one", policy(), "true")
    assert r.returncode == 1 and "exists" in r.stderr and "HTTP 409" in r.stderr
    net = policy("version: 1\nnetwork_policies:\n  gh:\n    endpoints: [{host: api.github.com, port: 443}]\n")
    r = g.create("two", net, "true")
    assert r.returncode == 1 and "egress_proxy" in r.stderr and "HTTP 400" in r.stderr
    for bad, why in (("version: 1\nnetwork_middlewares: {}\n", "network_middlewares"),
                     ("version: 1\nfilesystem_policy: {read_write: [/]}\n", "whole filesystem"),
                     ("version: 1\nprocess: {run_as_user: root}\n", "run_as_user"),
                     ("version: 2\n", "version")):
        r = g.create("two", policy(bad), "true")
        assert r.returncode == 1 and why in r.stderr, r.stderr
    # the runtime's own refusal also comes before anything exists (a grant over mxc's claims)
    r = g.create("two", policy("version: 1\nfilesystem_policy: {read_write: [/var/lib/mxc]}\n"), "true")
    assert r.returncode == 1 and "runtime refuses" in r.stderr, r.stdout + r.stderr
    names = [s["name"] for s in json.loads(g("sandbox", "list", "--json").stdout)]
    assert names == ["one"]
    r = g("sandbox", "create", "--name", "three", "--policy", str(policy()), "--provider", "github", "--", "true")
    assert r.returncode == 1 and "providers" in r.stderr


def test_driver_config_command_wins_and_keeps_argument_boundaries(gw, policy):
    g = gw().start()
    dcj = json.dumps({"mxc": {"command": ["printf", "[%s]\\n", "a b", "it's", "$HOME"], "cwd": policy.rw}})
    r = g("sandbox", "create", "--name", "dcj", "--policy", str(policy()), "--driver-config-json", dcj, "--no-tty",
          "--", "echo", "not-this")
    assert r.returncode == 0, r.stderr
    g.wait_status("dcj", "exited")
    assert g.logs("dcj").splitlines() == ["[a b]", "[it's]", "[$HOME]"]


def test_environment_seed_env_and_env_from(gw, policy, tmp_path):
    ef = tmp_path / "env"
    ef.write_text("# comment\nFROM_FILE=yes\nOVER=file\n")
    g = gw().start()
    r = g.create("env", policy(), "sh", "-c", 'echo "PATH=$PATH"; echo "F=$FROM_FILE O=$OVER X=$X"',
                 extra=("--env-from", str(ef), "--env", "OVER=flag", "--env", "X=1 2"))
    assert r.returncode == 0, r.stderr
    g.wait_status("env", "exited")
    out = g.logs("env").splitlines()
    assert out[0] == "PATH=" + os.environ["PATH"]
    assert out[1] == "F=yes O=flag X=1 2"


def test_minimal_env_seeds_nothing_from_the_gateway(gw, policy):
    """pc_minimal_env: none of the gateway's PATH/LANG/TZ reach the workload (the runtime's own
    baseline — HOME, USER, a PATH of its own — still applies)."""
    host = {"TZ": "Test/Zone", "LANG": "xx_TEST.UTF-8", "PATH": "/gateway/only:/usr/bin:/bin"}
    for minimal, seen in ((False, True), (True, False)):
        g = gw(extra="pc_minimal_env = true\n" if minimal else "", env=host).start()
        assert g.create("min", policy(), "/usr/bin/env", extra=("--env", "ONLY=this")).returncode == 0
        g.wait_status("min", "exited")
        env = dict(line.split("=", 1) for line in g.logs("min").splitlines() if "=" in line)
        assert env["ONLY"] == "this"
        assert (env.get("TZ") == "Test/Zone") == seen and (env.get("LANG") == "xx_TEST.UTF-8") == seen, env
        assert ("/gateway/only" in env.get("PATH", "")) == seen, env
        g("sandbox", "delete", "min")
        g.stop()


def test_governed_egress_gives_the_workload_only_its_proxy(gw, policy):
    g = gw(extra="egress_proxy = true\negress_proxy_addr = \"127.0.0.1:3128\"\n").start()
    net = policy("version: 1\nnetwork_policies:\n  gh:\n    endpoints:\n      - {host: api.github.com, port: 443}\n")
    r = g.create("gov", net, "sh", "-c", 'echo "P=$HTTPS_PROXY N=$NO_PROXY"')
    assert r.returncode == 0, r.stderr
    g.wait_status("gov", "exited")
    line = g.logs("gov").strip()
    assert line.startswith("P=http://mxc:") and line.endswith("@127.0.0.1:3128/ N="), line
    # egress_proxy with pc_network_allow and no rules: never a silent allow-all
    g2 = gw(extra="egress_proxy = true\npc_network_allow = true\n")
    g2.config.write_text(g2.config.read_text())
    g.stop()
    g2.start()
    r = g2.create("open", policy("version: 1\n"), "true")
    assert r.returncode == 1 and "allow-all" in r.stderr


# --------------------------------------------------------------------------------------------
# the isolation_session backend, restart durability


def test_session_backend_and_delete(gw, policy, mxc):
    g = gw(backend="isolation_session").start()
    r = g.create("s", policy(), "sh", "-c", "echo in-session; id -u")
    assert r.returncode == 0, r.stderr
    rec = g.wait_status("s", "exited")
    assert rec["exitCode"] == 0 and rec["sandboxId"].startswith("iso:")
    assert "in-session" in g.logs("s")
    assert [s["sandboxId"] for s in sessions(mxc)] == [rec["sandboxId"]]
    assert g("sandbox", "delete", "s").returncode == 0
    assert sessions(mxc) == []


def test_restart_ends_orphans_and_marks_them_lost(gw, policy, mxc):
    marker = "4242.%d" % (os.getpid() % 1000)
    g = gw(backend="isolation_session").start()
    assert g.create("orphan", policy(), "sh", "-c", "exec sleep %s" % marker).returncode == 0
    g.wait_status("orphan", "running")
    assert len(sessions(mxc)) == 1
    g.kill9()
    g.start()
    rec = g.record("orphan")
    assert rec["status"] == "lost" and "stopped and deprovisioned" in rec["error"], rec
    assert sessions(mxc) == []
    assert wait_until(lambda: subprocess.run(["pgrep", "-f", "sleep %s" % marker]).returncode != 0, 20)


def test_restart_ends_a_process_backend_orphan(gw, policy):
    marker = "4343.%d" % (os.getpid() % 1000)
    g = gw().start()
    assert g.create("p", policy(), "sh", "-c", "exec sleep %s" % marker).returncode == 0
    g.wait_status("p", "running")
    g.kill9()
    g.start()
    rec = g.record("p")
    assert rec["status"] == "lost" and "ended" in rec["error"], rec
    assert wait_until(lambda: subprocess.run(["pgrep", "-f", "sleep %s" % marker]).returncode != 0, 20)


# --------------------------------------------------------------------------------------------
# the socket, mock mode, the probe


def test_only_the_owner_reaches_the_socket(gw):
    open_dir = tempfile.mkdtemp(prefix="mxc-gw-sock-")  # every directory on the way traversable
    os.chmod(open_dir, 0o755)
    try:
        g = gw(env={"MXC_GATEWAY_SOCKET": os.path.join(open_dir, "gw.sock")})
        g.sock = os.path.join(open_dir, "gw.sock")
        g.start()
        assert os.stat(g.sock).st_mode & 0o777 == 0o600
        r = g("sandbox", "list", prefix=DROP)
        assert r.returncode == 1 and "no gateway answers" in r.stderr  # the mode refuses the connect
        os.chmod(g.sock, 0o666)  # even if the mode were opened, the peer check refuses
        r = g("sandbox", "list", prefix=DROP)
        assert r.returncode == 1 and "HTTP 403" in r.stderr, r.stderr
        assert g("sandbox", "list").returncode == 0
        g.stop()
    finally:
        shutil.rmtree(open_dir, ignore_errors=True)


def test_a_stale_socket_is_replaced_and_a_live_one_never(gw, tmp_path):
    g = gw()
    s = socket.socket(socket.AF_UNIX)
    s.bind(g.sock)  # bound, never listening: stale
    s.close()
    g.start()
    r = subprocess.run([GATEWAY, "serve", "--config", str(g.config)],
                       env=dict(g.env, MXC_GATEWAY_STATE=str(tmp_path / "st2")), capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and "served by another gateway" in r.stderr, r.stderr


def test_probe(gw):
    g = gw()
    r = g("probe", "--config", str(g.config))
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["config"] == "ok" and rep["executable"] is True and rep["version"].startswith("mxc-exec")
    assert rep["verdicts"] == {"configured": "PASS", "process": "PASS", "isolation_session": "PASS",
                               "filesystemDenialAudit": "SKIP"}  # said, not hidden (docs/gateway.md)
    assert rep["kernelAudit"] in (True, False, "unknown")
    assert rep["runtime"]["landlock"]["ok"] is True
    g.config.write_text("[openshell.drivers.mxc]\nmxc_exec_path = \"relative\"\n")
    r = g("probe", "--config", str(g.config))
    assert r.returncode == 1 and "absolute" in json.loads(r.stdout)["config"]


# --------------------------------------------------------------------------------------------
# providers: a static token substituted by the sandbox's own proxy, only at its endpoints
# (the HTTPS origins of test_proxy_tls.py, inside a test-made network namespace)

from test_proxy_tls import PROBE, SECRET, WORKLOAD, escapes_refused, gtls, tls  # noqa: E402,F401 (fixtures)
from test_proxy import world  # noqa: E402,F401 (fixture)

PROVIDER = ('[mxc.providers.github]\ntoken_env = "MXC_TEST_GH_SECRET"\nenv = "GITHUB_TOKEN"\nrevision = 3\n'
            'endpoints = ["api.example.test:8443/repos/"]\n')
GH_POLICY = ("version: 1\nfilesystem_policy:\n  include_workdir: true\n  read_only: [/usr]\n"
             "network_policies:\n  gh:\n    endpoints:\n      - {host: api.example.test, port: 8443}\n")


OTHER_ALLOWED = r'''
curl -sS -k --max-time 10 -o /dev/null -w "OTHER-ALLOWED %{http_code}\n" https://other.test:8443/x 2>&1
curl -sS -k --max-time 10 -o /dev/null -w "OTHER-TLS-PLACEHOLDER %{http_code}\n" \
     -H "Authorization: Bearer $GITHUB_TOKEN" https://other.test:8443/y 2>&1
curl -sS --max-time 10 -o /dev/null -D /tmp/h -w "OTHER-HTTP-PLACEHOLDER %{http_code}\n" \
     -H "Authorization: Bearer $GITHUB_TOKEN" http://other.test:8080/z 2>&1
tr -d '\r' < /tmp/h | grep -i '^x-mxc-deny-reason'
curl -sS -k --max-time 10 -o /dev/null -w "UNLISTED %{http_connect}\n" https://untrusted.example.test:8443/ 2>&1
exit 0
'''


def test_a_provider_token_reaches_only_its_endpoint(gtls, gw, policy, host_dir):  # noqa: F811
    """The spec's provider example through the gateway, with governed egress: the placeholder is
    seen inside, substituted only at its bound endpoint, refused at another allowed host (which
    itself works without it), and a host the policy does not list is refused."""
    work = host_dir("gw-work", 0o777)
    g = gw(extra="egress_proxy = true\n" + PROVIDER).start()
    dcj = json.dumps({"mxc": {"command": ["sh", "-c", WORKLOAD + OTHER_ALLOWED], "cwd": work}})
    pol = GH_POLICY + "  other:\n    endpoints:\n      - {host: other.test, ports: [8443, 8080]}\n"
    env = [a for p in PROBE for a in ("--env", p)]
    r = g("sandbox", "create", "--name", "gh", "--policy", str(policy(pol)), "--driver-config-json", dcj,
          "--provider", "github", "--env", "github_token=mine", *env)
    assert r.returncode == 0, r.stderr
    rec = g.wait_status("gh", "exited")
    out = g.logs("gh")
    lines = out.splitlines()
    assert "PLACEHOLDER=mxc:cred:github:3" in lines, out  # the provider's key won over --env github_token
    assert "BOUND 200" in lines and "OUTSIDE 403" in lines and "PY 200" in lines, out
    assert escapes_refused(lines, gtls["api"]), out  # issue 27 finding 7, on the gateway's sandboxes too
    # another allowed host works; the placeholder is refused there (plain HTTP: 403 with its reason) or,
    # inside a tunnel the proxy does not open, reaches it only as the placeholder; unlisted: 403
    assert "OTHER-ALLOWED 200" in lines and "OTHER-TLS-PLACEHOLDER 200" in lines, out
    assert "OTHER-HTTP-PLACEHOLDER 403" in lines and "x-mxc-deny-reason: credential-not-bound" in \
        [x.lower() for x in lines] and "UNLISTED 403" in lines, out
    assert any("Bearer mxc:cred:github:3" in h for h in gtls["other"].heads)
    assert not any(SECRET in h for h in gtls["other"].heads)
    assert SECRET not in out and "SECRET-IN-ENV" not in out and "SECRET-IN-FILES" not in out, out
    assert any("Bearer " + SECRET in h for h in gtls["api"].heads)
    assert rec["providers"] == ["github"] and SECRET not in json.dumps(rec)
    for root, _, files in os.walk(g.env["MXC_GATEWAY_STATE"]):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                assert SECRET.encode() not in fh.read(), f


@pytest.mark.parametrize("extra, name, why", [
    (PROVIDER, "nope", "not configured"),
    (PROVIDER.replace("revision = 3\n", "revision = 3\nexpires_at = \"2027-01-01\"\n"), "github", "expiring"),
    (PROVIDER.replace("api.example.test:8443", "other.test:8443"), "github", "do not allow: other.test:8443"),
    (PROVIDER.replace("MXC_TEST_GH_SECRET", "MXC_TEST_UNSET_TOKEN"), "github", "has no token"),
], ids=["unknown", "expiring", "endpoint-not-allowed", "no-token"])
def test_provider_refusals(gtls, gw, policy, host_dir, extra, name, why):  # noqa: F811
    g = gw(extra="egress_proxy = true\n" + extra).start()
    r = g.create("p", policy(GH_POLICY.replace("  include_workdir: true\n", "")), "true", extra=("--provider", name))
    assert r.returncode == 1 and why in r.stderr and "HTTP 400" in r.stderr, r.stderr
    assert json.loads(g("sandbox", "list", "--json").stdout) == []


def test_a_provider_needs_governed_egress(gw, policy):
    g = gw(extra=PROVIDER).start()
    r = g.create("p", policy(), "true", extra=("--provider", "github"))
    assert r.returncode == 1 and "needs governed egress" in r.stderr, r.stderr


# --------------------------------------------------------------------------------------------
# the OCSF audit sink


def ocsf(path):
    """The sink's whole records: a last line not yet ended by its newline is a record the
    daemon is writing right now (a reader may see part of a write to a regular file), and is
    read on the next look (a loaded CI read one cut at byte 282)."""
    try:
        with open(path) as f:
            lines = f.read().split("\n")[:-1]
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in lines if line.strip()]


def test_audit_records_launch_exit_network_and_refusals_without_secrets(gtls, gw, policy, host_dir, tmp_path):  # noqa: F811
    logs = tmp_path / "ocsf"
    work = host_dir("gw-audit", 0o777)
    g = gw(extra="egress_proxy = true\n" + PROVIDER,
           env={"OPENSHELL_OCSF_JSON": "1", "OPENSHELL_OCSF_LOG_DIR": str(logs)}).start()
    sink = str(logs / "mxc-gateway-ocsf.jsonl")
    dcj = json.dumps({"mxc": {"command": ["sh", "-c", WORKLOAD], "cwd": work}})
    r = g("sandbox", "create", "--name", "aud", "--policy", str(policy(GH_POLICY)), "--driver-config-json", dcj,
          "--provider", "github", *[a for p in PROBE for a in ("--env", p)])
    assert r.returncode == 0, r.stderr
    g.wait_status("aud", "exited")
    assert g.create("refused", policy("version: 1\nnetwork_middlewares: {}\n"), "true").returncode == 1

    def ready():
        recs = ocsf(sink)
        return any(x.get("class_uid") == 1007 and x.get("activity_id") == 2 for x in recs) and \
            any(x.get("class_uid") == 6003 for x in recs) and \
            any(x.get("class_uid") in (4001, 4002) for x in recs)
    assert wait_until(ready, 30), ocsf(sink)
    recs = ocsf(sink)
    mine = [x for x in recs if x.get("unmapped", {}).get("sandbox") == "aud"]
    assert {(x["class_uid"], x.get("activity_id")) for x in mine if x["class_uid"] == 1007} == {(1007, 1), (1007, 2)}
    assert [x["exit_code"] for x in mine if x["class_uid"] == 1007 and x["activity_id"] == 2] == [0]
    net = [x for x in mine if x["class_uid"] in (4001, 4002)]
    assert net, recs  # the proxy's decisions, attributed by the owner's generation key
    refused = [x for x in recs if x["class_uid"] == 6003]
    assert refused[0]["unmapped"]["sandbox"] == "refused" and "network_middlewares" in refused[0]["status_detail"]
    text = open(sink).read()
    assert SECRET not in text and "curl" not in text and "Bearer" not in text, text  # no secret, no command
    assert os.stat(sink).st_mode & 0o777 == 0o600


def test_audit_drops_are_counted_and_warned_not_blocking(gw, policy, tmp_path):
    """A forced queue of 3 records: the sink's first record (the finding that Landlock's denials are
    not collected) and five sandboxes left running by a killed gateway, reconciled at the next
    start-up (five `lost` records queued before the writer starts), so exactly three are dropped:
    one warning at once, the rest aggregated (here at shutdown); a create is answered meanwhile and
    its record fits again."""
    mock = {"OPENSHELL_MXC_MOCK_WXC": "1", "MXC_GATEWAY_MOCK_HOLD": "1"}
    g = gw(env=mock).start()
    for i in range(5):
        assert g.create("h%d" % i, policy(), "true").returncode == 0
    assert all(s["status"] == "running" for s in json.loads(g("sandbox", "list", "--json").stdout))
    g.kill9()
    logs = tmp_path / "ocsf"
    g = gw(env=dict(mock, OPENSHELL_OCSF_JSON="1", OPENSHELL_OCSF_LOG_DIR=str(logs), MXC_OCSF_QUEUE_MAX="3")).start()
    assert [s["status"] for s in json.loads(g("sandbox", "list", "--json").stdout)] == ["lost"] * 5
    r = g.create("refused", policy("version: 1\nnetwork_middlewares: {}\n"), "true")
    assert r.returncode == 1 and "network_middlewares" in r.stderr
    sink = str(logs / "mxc-gateway-ocsf.jsonl")
    assert wait_until(lambda: any(x["class_uid"] == 6003 for x in ocsf(sink)), 30), ocsf(sink)
    g.stop()
    out = g.proc.stdout.read().decode()
    warnings = [line for line in out.splitlines() if "audit queue is full" in line]
    assert warnings == [
        "mxc-gateway: warning: the audit queue is full: records were dropped (a coverage gap): "
        "1 since the last warning, 1 in all",
        "mxc-gateway: warning: the audit queue is full: records were dropped (a coverage gap): "
        "2 since the last warning, 3 in all"], out
    recs = ocsf(sink)
    lost = [x for x in recs if x["class_uid"] == 1007 and x.get("status_detail", "").startswith("the gateway restarted")]
    assert len(lost) == 2 and [x["class_uid"] for x in recs].count(6003) == 1, recs
    assert recs[0]["finding_info"]["title"] == "mxc-landlock-audit-unavailable", recs


# --------------------------------------------------------------------------------------------
# mock mode: the same scenarios, wired through an in-process mock of the executor


def mock_requests(g, name):
    """The runtime requests the mock says the real path would have sent, by phase."""
    out = {}
    for line in g.logs(name).splitlines():
        assert line.startswith("mock: would run "), line
        phase, body = line[len("mock: would run "):].split(" ", 1)
        out[phase] = json.loads(body)
    return out


@pytest.fixture
def mockgw(gw, monkeypatch):
    monkeypatch.setenv("MXC_TEST_GH_SECRET", "ghp_MOCK-SECRET-42")

    def make(extra="", hold=False, backend="process"):
        env = {"OPENSHELL_MXC_MOCK_WXC": "1"}
        if hold:
            env["MXC_GATEWAY_MOCK_HOLD"] = "1"
        g = gw(env=env, extra=extra, backend=backend)
        g.config.write_text(g.config.read_text().replace(MXC_EXEC, "/opt/not/installed/mxc-exec"))
        return g
    return make


def test_mock_demo_and_filesystem_wiring(mockgw, policy, host_dir):
    g = mockgw().start()
    outside = host_dir("gw-mock-outside")
    dcj = json.dumps({"mxc": {"command": ["sh", "-c", "echo hello > hello.txt; echo x > %s/no" % outside],
                              "cwd": policy.rw}})
    r = g("sandbox", "create", "--name", "demo", "--policy", str(policy()), "--driver-config-json", dcj)
    assert r.returncode == 0, r.stderr
    rec = g.wait_status("demo", "exited")
    assert rec["exitCode"] == 0
    req = mock_requests(g, "demo")["one-shot"]
    assert req["process"]["cwd"] == policy.rw and "hello.txt" in req["process"]["commandLine"]
    grants = json.dumps(req["filesystem"])
    assert policy.rw in grants and outside not in grants  # the outside write is the runtime's to refuse
    assert not os.path.exists(os.path.join(policy.rw, "hello.txt"))  # nothing ran
    r = g.create("m2", policy("version: 1\nnetwork_middlewares: {}\n"), "true")
    assert r.returncode == 1 and "network_middlewares" in r.stderr  # mapping refusals are the real ones
    assert g("sandbox", "delete", "demo").returncode == 0


def test_mock_network_and_provider_wiring(mockgw, policy):
    g = mockgw().start()
    r = g.create("n", policy(GH_POLICY.replace("  include_workdir: true\n", "")), "true")
    assert r.returncode == 1 and "egress_proxy" in r.stderr, r.stderr  # refused synchronously
    assert json.loads(g("sandbox", "list", "--json").stdout) == []
    g.stop()
    g = mockgw(extra="egress_proxy = true\n" + PROVIDER).start()
    r = g.create("gh", policy(GH_POLICY.replace("  include_workdir: true\n", "")), "true", extra=("--provider", "github"))
    assert r.returncode == 0, r.stderr
    g.wait_status("gh", "exited")
    req = mock_requests(g, "gh")["one-shot"]
    assert req["network"]["allowedHosts"] == ["api.example.test:8443"]
    cred = req["network"]["credentials"][0]  # the runtime gives the workload GITHUB_TOKEN=mxc:cred:github:3
    assert (cred["name"], cred["revision"], cred["env"], cred["host"], cred["port"], cred["pathPrefix"]) == \
        ("github", 3, "GITHUB_TOKEN", "api.example.test", 8443, "/repos/"), cred
    assert cred["secretEnv"].startswith("MXC_GATEWAY_SECRET_")  # a name; the value only in the real executor's env
    r = g.create("p", policy(GH_POLICY.replace("  include_workdir: true\n", "")), "true", extra=("--provider", "nope"))
    assert r.returncode == 1 and "not configured" in r.stderr
    for root, _, files in os.walk(g.env["MXC_GATEWAY_STATE"]):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                assert b"ghp_MOCK-SECRET-42" not in fh.read(), f


def test_mock_session_backend_restart_and_bad_config(mockgw, policy, tmp_path):
    g = mockgw(hold=True, backend="isolation_session").start()
    assert g.create("s", policy(), "sleep", "1000").returncode == 0
    assert g.record("s")["status"] == "running"
    assert list(mock_requests(g, "s")) == ["provision", "start", "exec"]
    g.kill9()
    g = mockgw(hold=True, backend="isolation_session").start()
    rec = g.record("s")
    assert rec["status"] == "lost" and "restarted" in rec["error"], rec
    g.stop()
    bad = tmp_path / "bad.toml"
    bad.write_text('[openshell.drivers.mxc]\nmxc_exec_path = "mxc-exec"\n')
    r = subprocess.run([GATEWAY, "serve", "--config", str(bad)], env=g.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "absolute" in r.stderr  # mock mode refuses it too, before anything exists


# --------------------------------------------------------------------------------------------
# issue 27 (containment, third round): the gateway's own files, terminals, rendezvous and records.
# Each surface: the process and isolation_session backends, root and rootless (the gateway and
# everything it runs as UID).

SURFACES = [("process", False), ("isolation_session", False), ("process", True), ("isolation_session", True)]
SURFACE_IDS = ["process-root", "session-root", "process-rootless", "session-rootless"]


def tree_bytes(path):
    """Bytes held by the files under path: each file's length, or its allocated blocks when
    fewer (a hole holds none; a file system's speculative preallocation is not content)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except FileNotFoundError:
                continue
            total += min(st.st_size, st.st_blocks * 512)
    return total


def flood_until(g, name, cap, done, timeout=60):
    """Polls until done(record) while the sandbox's directory stays under cap (fails at once,
    without waiting, when it does not: an unbounded log grows by hundreds of MB a second)."""
    d = os.path.join(g.state, name)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = tree_bytes(d)
        assert held <= cap, "the sandbox's files hold %d bytes, over the cap of %d" % (held, cap)
        rec = g.record(name) or {}
        if done(rec):
            return rec
        time.sleep(0.1)
    pytest.fail("not reached within %ss: %r" % (timeout, g.record(name)))


@pytest.mark.parametrize("backend, rootless", SURFACES, ids=SURFACE_IDS)
def test_an_endless_workload_leaves_its_log_under_the_cap_with_a_record_of_what_was_dropped(gw, backend, rootless):
    """Issue 27 #3: a one-shot wrote hundreds of MB into its gateway log in seconds. The log is
    capped: 2 files of MXC_GATEWAY_LOG_MAX (here lowered to 64 KiB) and a rate (here 32 KiB/s);
    what is dropped or discarded is said in the log itself and counted in the record."""
    cap = 65536
    g = gw(backend=backend, rootless=rootless,
           env={"MXC_GATEWAY_LOG_MAX": str(cap), "MXC_GATEWAY_LOG_RATE": "32768"}).start()
    assert g.create("flood", g.policy(), "yes", "mxc-flood-line").returncode == 0
    limit = 2 * cap + 16384  # log + log.1, the record and its temporary copy
    rec = flood_until(g, "flood", limit,
                      lambda r: r.get("logDroppedBytes", 0) > 0 and r.get("logDiscardedBytes", 0) > 0)
    out = g("sandbox", "logs", "flood").stdout
    assert "[mxc-gateway] the log reached its cap of 65536 bytes: what came before is in log.1" in out, out[:300]
    assert "older bytes were discarded" in out
    assert "bytes of output dropped: faster than the log's rate cap of 32768 bytes/s" in out
    assert "mxc-flood-line\n" in out and len(out) <= 2 * cap
    assert rec["status"] == "running"
    assert g("sandbox", "delete", "flood").returncode == 0
    assert not os.path.exists(os.path.join(g.state, "flood"))


def test_the_default_log_caps_hold_against_an_endless_workload(gw):
    """The documented caps themselves (8 MiB a file, two files, 1 MiB/s): an endless workload
    is dropped once its burst is spent, and the sandbox's files stay under 16 MiB."""
    g = gw().start()
    assert g.create("flood", g.policy(), "yes", "x" * 200).returncode == 0
    flood_until(g, "flood", (16 << 20) + 16384, lambda r: r.get("logDroppedBytes", 0) > 0)
    flood_until(g, "flood", (16 << 20) + 16384, lambda r: tree_bytes(os.path.join(g.state, "flood")) > (8 << 20))
    assert g("sandbox", "delete", "flood").returncode == 0


def max_rss_kib(argv, env):
    """The peak resident size of argv run once (its stdout thrown away), in KiB."""
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run(["/usr/bin/python3", "-c", probe] + argv, env=env, capture_output=True, text=True,
                         timeout=300).stdout.split()
    return int(out[0]), int(out[1])


def test_sandbox_logs_streams_whatever_the_logs_size(gw):
    """Issue 27 #3: `sandbox logs` held the whole file in the client's memory. A log of 256 MiB
    (one left from before the caps) is streamed: the client's and the daemon's peak memory stay
    far under its size."""
    g = gw().start()
    assert g.create("big", g.policy(), "true").returncode == 0
    g.wait_status("big", "exited")
    log = os.path.join(g.state, "big", "log")
    with open(log, "r+b") as f:
        f.truncate(256 << 20)  # sparse: nothing of it is on disk
    rc, rss = max_rss_kib([GATEWAY, "sandbox", "logs", "big"], g.env)
    assert rc == 0 and rss < 64 << 10, "the client's peak memory was %d KiB for a 256 MiB log" % rss
    hwm = int(open("/proc/%d/status" % g.proc.pid).read().split("VmHWM:")[1].split()[0])
    assert hwm < 128 << 10, "the daemon's peak memory was %d KiB" % hwm


HOSTILE = (r"printf 'A\033]52;c;ZXZpbA==\007B\033]0;pwned-title\007C\033[6nD\033P+q544e\033\\E\033[31mred\033[0m\n'")
ACTING = [b"\x1b]52", b"\x1b]0;", b"\x1b[6n", b"\x1bP+q"]


def on_a_terminal(g, *args):
    """The client run with its stdout and stderr on a terminal made here: what the terminal got."""
    master, slave = pty.openpty()
    p = subprocess.Popen(g.prefix + [GATEWAY] + list(args), env=g.env, stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=slave)
    os.close(slave)
    got = b""
    while True:
        r, _, _ = select.select([master], [], [], 30)
        if not r:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        got += data
    os.close(master)
    assert p.wait(timeout=30) == 0, got
    return got


@pytest.mark.parametrize("backend, rootless", SURFACES, ids=SURFACE_IDS)
def test_sandbox_logs_on_a_terminal_drops_what_acts_on_the_operators_machine(gw, backend, rootless):
    """Issue 27 #4: `sandbox logs` wrote the workload's bytes raw to the operator's terminal: a
    clipboard write (OSC 52), a title (OSC 0), a cursor report query (CSI 6n) and XTGETTCAP (DCS
    +q) arrived intact. On a terminal they are filtered as mxc filters (the engine's
    termfilter.c); colours pass; --raw, or output that is not a terminal, gives the bytes."""
    g = gw(backend=backend, rootless=rootless).start()
    assert g.create("esc", g.policy(), "sh", "-c", HOSTILE).returncode == 0
    g.wait_status("esc", "exited")
    screen = on_a_terminal(g, "sandbox", "logs", "esc")
    assert b"ABCDE\x1b[31mred\x1b[0m" in screen, screen
    for seq in ACTING:
        assert seq not in screen, (seq, screen)
    raw = on_a_terminal(g, "sandbox", "logs", "--raw", "esc")
    piped = subprocess.run(g.prefix + [GATEWAY, "sandbox", "logs", "esc"], env=g.env, capture_output=True).stdout
    for seq in ACTING:
        assert seq in raw and seq in piped, seq


# -- rendezvous points (finding 5): a second unprivileged uid is "another local user"

from test_rootless import STRANGER, VICTIM, as_uid, plant, predictable_names  # noqa: E402

FAKE_GATEWAY = r'''
import os, select, socket, sys
capture, paths = sys.argv[1], sys.argv[2:]
listeners = []
for p in paths:
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    os.chmod(p, 0o777)
    s.listen(8)
    listeners.append(s)
print("ready", flush=True)
while True:
    r, _, _ = select.select(listeners, [], [])
    for s in r:
        c, _ = s.accept()
        c.settimeout(2)
        got = b""
        try:
            while b"\r\n\r\n" not in got or len(got) < 4096:
                chunk = c.recv(65536)
                if not chunk:
                    break
                got += chunk
        except OSError:
            pass
        with open(capture, "ab") as f:
            f.write(got)
        body = b'{"name":"forged","status":"running","backend":"process","created":1}'
        c.sendall(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                  % (len(body), body))
        c.close()
'''


@pytest.fixture
def victim_env():
    """VICTIM's environment for the gateway: no XDG_RUNTIME_DIR, no MXC_GATEWAY_*, a home of its
    own; the /tmp names are cleared before and after."""
    def clear():
        for n in predictable_names(VICTIM):
            if os.path.isdir(n) and not os.path.islink(n):
                shutil.rmtree(n, ignore_errors=True)
            elif os.path.lexists(n):
                os.unlink(n)
    clear()
    base = tempfile.mkdtemp(prefix="mxc-gw-victim-")
    os.chmod(base, 0o755)
    home, state = os.path.join(base, "home"), os.path.join(base, "mxc")
    for d in (home, state):
        os.mkdir(d, 0o700)
        os.chown(d, VICTIM, VICTIM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MXC_GATEWAY_"))}
    env.update(HOME=home, MXC_STATE_DIR=state, MXC_WORKSPACE_ROOT=os.path.join(base, "ws"))
    yield {"env": env, "base": base, "home": home}
    clear()
    shutil.rmtree(base, ignore_errors=True)


def test_the_rootless_client_sends_nothing_to_a_socket_another_user_answers(victim_env):
    """Issue 27 #5: with XDG_RUNTIME_DIR unset the client used /tmp/mxc-gateway-UID.sock; another
    user bound that name first, captured the `--env-from` secrets and answered a forged 201 the
    client accepted. Now the default socket lives in a private directory (another user's
    /tmp/mxc-UID is passed over), and the client checks who answers (SO_PEERCRED: the caller or
    root) before it sends a byte — also on a path given explicitly."""
    env, base = victim_env["env"], victim_env["base"]
    plant(["/tmp/mxc-%d" % VICTIM])  # the stranger takes the private name too
    drop = tempfile.mkdtemp(prefix="mxc-gw-stranger-")
    os.chmod(drop, 0o777)
    capture = os.path.join(drop, "captured")
    socks = ["/tmp/mxc-gateway-%d.sock" % VICTIM, "/tmp/mxc-%d/mxc-gateway.sock" % VICTIM,
             os.path.join(drop, "gw.sock")]
    fake = subprocess.Popen(as_uid(STRANGER) + ["/usr/bin/python3", "-c", FAKE_GATEWAY, capture] + socks,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert fake.stdout.readline() == b"ready\n", fake.stderr.read()
        secrets = os.path.join(base, "secrets.env")
        with open(secrets, "w") as f:
            f.write("OPENAI_API_KEY=sk-the-victims-secret\n")
        os.chown(secrets, VICTIM, VICTIM)
        policy = os.path.join(base, "p.yaml")
        with open(policy, "w") as f:
            f.write("version: 1\n")
        os.chmod(policy, 0o644)
        create = ["sandbox", "create", "--name", "x", "--policy", policy, "--env-from", secrets, "--", "true"]
        for extra in ({}, {"MXC_GATEWAY_SOCKET": socks[2]}):
            r = subprocess.run(as_uid(VICTIM) + [GATEWAY] + create, env=dict(env, **extra), capture_output=True,
                               text=True, timeout=60)
            assert r.returncode != 0 and "forged" not in r.stdout, (extra, r.stdout, r.stderr)
            assert not os.path.exists(capture) or open(capture, "rb").read() == b"", open(capture, "rb").read()
            if extra:
                assert "answered by uid %d" % STRANGER in r.stderr and "nothing was sent" in r.stderr, r.stderr
            else:
                assert "no gateway answers on %s/.local/state/mxc/run-" % victim_env["home"] in r.stderr, r.stderr
    finally:
        fake.kill()
        fake.wait()
        shutil.rmtree(drop, ignore_errors=True)


def test_the_rootless_gateway_serves_from_a_private_directory_no_one_else_can_take(victim_env, tmp_path):
    """Issue 27 #5: the rootless state default /tmp/mxc-gateway-UID (and the socket's /tmp name)
    could be taken by another user first. Now both live in the caller's private directory: made
    0700 at /tmp/mxc-UID when nobody took it; passed over (for the home's) when someone did —
    the gateway serves either way, and its own client reaches it there."""
    env, base = victim_env["env"], victim_env["base"]
    cfg = os.path.join(base, "g.toml")
    with open(cfg, "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "%s"\n' % MXC_EXEC)
    policy = os.path.join(base, "p.yaml")
    with open(policy, "w") as f:
        f.write("version: 1\n")
    os.chmod(policy, 0o644)
    for taken in (False, True):
        if taken:
            plant(["/tmp/mxc-%d" % VICTIM, "/tmp/mxc-gateway-%d" % VICTIM])
            with socket.socket(socket.AF_UNIX) as s:  # and a socket at the old name, from the stranger
                s.bind("/tmp/mxc-gateway-%d.sock" % VICTIM)
            host = "".join(c if c.isascii() and (c.isalnum() or c == "-") else "_" for c in socket.gethostname())
            private = os.path.join(victim_env["home"], ".local/state/mxc", "run-" + host[:64])
        else:
            private = "/tmp/mxc-%d" % VICTIM
        srv = subprocess.Popen(as_uid(VICTIM) + [GATEWAY, "serve", "--config", cfg], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            client = lambda *a: subprocess.run(as_uid(VICTIM) + [GATEWAY] + list(a), env=env,  # noqa: E731
                                               capture_output=True, text=True, timeout=60)
            assert wait_until(lambda: srv.poll() is not None or client("sandbox", "list").returncode == 0, 30), \
                srv.stdout.read() if srv.poll() is not None else client("sandbox", "list").stderr
            for d in (private, private + "/mxc-gateway"):
                st = os.lstat(d)
                assert (st.st_uid, st.st_mode & 0o777) == (VICTIM, 0o700), d
            assert os.path.exists(private + "/mxc-gateway.sock")
            r = client("sandbox", "create", "--name", "t", "--policy", policy, "--", "echo", "served")
            assert r.returncode == 0, r.stderr
            assert wait_until(lambda: "served" in client("sandbox", "logs", "t").stdout, 30)
            assert client("sandbox", "delete", "t").returncode == 0
        finally:
            srv.send_signal(signal.SIGTERM)
            srv.wait(timeout=30)
        if not taken:
            shutil.rmtree(private)
    if os.path.exists("/tmp/mxc-gateway-%d.sock" % VICTIM):
        os.unlink("/tmp/mxc-gateway-%d.sock" % VICTIM)


# -- the gateway's own state (finding 6)

@pytest.mark.parametrize("rootless", [False, True], ids=["root", "rootless"])
def test_a_policy_cannot_grant_the_gateways_own_state_audit_or_socket(gw, rootless):
    """Issue 27 #6: `read_write: [<gateway state>]` was accepted, and the workload planted a
    record the restarted gateway acted on (and read other sandboxes' logs). A grant that is,
    covers or lies inside the gateway's state, audit directory or socket is refused before
    anything exists, read-only ones too."""
    g = gw(rootless=rootless)
    logs = str(g.tmp / "ocsf")
    g.env.update(OPENSHELL_OCSF_JSON="1", OPENSHELL_OCSF_LOG_DIR=logs)
    g.start()
    assert g.create("other", g.policy(), "sh", "-c", "echo other-sandbox-log").returncode == 0
    g.wait_status("other", "exited")
    state, sock = g.state, g.sock
    cases = [("read_write", state, "the gateway's state directory"),
             ("read_only", state, "the gateway's state directory"),
             ("read_only", os.path.join(state, "other"), "lies inside the gateway's state directory"),
             ("read_write", os.path.dirname(state), "covers the gateway's state directory"),
             ("read_only", logs, "the gateway's audit directory"),
             ("read_write", os.path.dirname(sock), "the gateway's"),
             ("read_only", sock, "the gateway's socket")]
    for field, path, why in cases:
        r = g.create("grab", g.policy("version: 1\nfilesystem_policy:\n  %s: [%s]\n" % (field, path)), "true")
        assert r.returncode == 1 and "HTTP 400" in r.stderr and why in r.stderr, (field, path, r.stderr)
    assert [s["name"] for s in json.loads(g("sandbox", "list", "--json").stdout)] == ["other"]
    # the workdir granted by include_workdir is judged the same
    dcj = json.dumps({"mxc": {"command": ["true"], "cwd": state}})
    r = g("sandbox", "create", "--name", "grab", "--policy",
          str(g.policy("version: 1\nfilesystem_policy: {include_workdir: true}\n")), "--driver-config-json", dcj)
    assert r.returncode == 1 and "the gateway's state directory" in r.stderr, r.stderr


def host_sleeper(prefix):
    """A process of the gateway's user that no gateway started: (Popen, pid, start time)."""
    p = subprocess.Popen(prefix + ["sleep", "300"])
    assert wait_until(lambda: open("/proc/%d/comm" % p.pid).read().strip() == "sleep", 10)
    start = int(open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[19])
    return p, p.pid, start


@pytest.mark.parametrize("rootless", [False, True], ids=["root", "rootless"])
def test_restart_acts_on_no_record_it_did_not_write(gw, rootless):
    """Issue 27 #6: after a restart the gateway signalled the host process a planted record.json
    named (and a planted sandboxId would have had another session stopped and deprovisioned).
    Records prove they were written by this gateway (an HMAC under a key in its state, 0600):
    a planted record, one without a mac, and one signed by another gateway are ignored with a
    warning; the process and the session they name are untouched."""
    a = gw(backend="isolation_session", rootless=rootless, tag="a").start()
    assert a.create("keep", a.policy(), "sleep", "300").returncode == 0
    sid = a.wait_status("keep", "running")["sandboxId"]
    b = gw(backend="isolation_session", rootless=rootless, tag="b")
    b.env.update({k: a.env[k] for k in ("MXC_STATE_DIR", "MXC_WORKSPACE_ROOT")})  # the same runtime
    b.start()
    b.stop()
    sleeper, pid, start = host_sleeper(b.prefix)
    try:
        owner = UID if rootless else 0
        planted = {"name": None, "backend": "isolation_session", "status": "running", "created": 1,
                   "commandLine": "x", "pid": pid, "pidStart": start, "sandboxId": sid}
        forged_mac = dict(planted, mac="0" * 64)
        with open(os.path.join(a.state, "keep", "record.json")) as f:
            other_gateways = json.load(f)  # genuine, but under a's key
        for name, rec in (("planted", planted), ("forged", forged_mac), ("keep", other_gateways)):
            d = os.path.join(b.state, name)
            os.makedirs(d, mode=0o700, exist_ok=True)
            p = os.path.join(d, "record.json")
            with open(p, "w") as f:
                json.dump(dict(rec, name=name), f)
            os.chmod(p, 0o600)
            for x in (d, p):
                os.chown(x, owner, owner)
        b.start()
        listed = json.loads(b("sandbox", "list", "--json").stdout)
        assert listed == [], listed
        time.sleep(0.5)  # what a restart does, it does before it serves; this only lets a signal land
        assert sleeper.poll() is None, "the planted record's pid was signalled"
        assert [s["sandboxId"] for s in sessions_in(a)] == [sid]
        assert a.record("keep")["status"] == "running"
        b.stop()
        out = b.proc.stdout.read().decode()
        for name in ("planted", "forged", "keep"):
            assert "%s/record.json is ignored" % name in out, out
        assert "integrity check fails" in out
    finally:
        sleeper.kill()
        sleeper.wait()
    assert a("sandbox", "delete", "keep").returncode == 0
    assert sessions_in(a) == []


def sessions_in(g):
    r = subprocess.run([MXC, "ls", "--json"], env=g.env, capture_output=True, text=True)
    return [s for s in json.loads(r.stdout) if s["kind"] == "session"]


# -- the OCSF audit sink is bounded too (finding 3's "every file a workload can make us write")

def test_the_audit_log_rotates_at_its_cap_and_says_so(gw, policy, tmp_path):
    """The sink's file is capped (MXC_OCSF_LOG_MAX, here lowered to 64 KiB; two files): a full
    file becomes .1, the older .1 is discarded, and the new file begins with the finding that
    says so."""
    logs = tmp_path / "ocsf"
    g = gw(env={"OPENSHELL_MXC_MOCK_WXC": "1", "OPENSHELL_OCSF_JSON": "1", "OPENSHELL_OCSF_LOG_DIR": str(logs),
                "MXC_OCSF_LOG_MAX": "65536"}).start()
    refused = policy("version: 1\nnetwork_middlewares: {}\n")
    sink = logs / "mxc-gateway-ocsf.jsonl"
    rotations = lambda: [x for x in ocsf(str(sink)) if x.get("finding_info", {}).get("title") ==  # noqa: E731
                         "mxc-gateway-audit-rotated"]
    # a reader tailing the log expects its name to exist at every moment: a rotation replaces the
    # file, it never leaves the name missing (a watcher stats it without pause all along)
    assert wait_until(lambda: os.path.exists(str(sink)), 10)
    missing, done = [], threading.Event()

    def watch():
        while not done.is_set():
            try:
                os.stat(str(sink))
            except FileNotFoundError:
                missing.append(time.monotonic())
    watcher = threading.Thread(target=watch)
    watcher.start()
    n = 0
    try:
        while not (os.path.exists(str(sink) + ".1") and rotations() and
                   rotations()[0]["unmapped"]["discardedBytes"] > 0):
            assert n < 2000, "no second rotation after %d records" % n
            assert os.path.getsize(str(sink)) <= 65536, os.path.getsize(str(sink))
            assert g.create("r%d" % n, refused, "true").returncode == 1
            n += 1
    finally:
        done.set()
        watcher.join()
    assert not missing, "the log's name was missing %d times during its rotations" % len(missing)
    assert os.path.getsize(str(sink)) <= 65536 and os.path.getsize(str(sink) + ".1") <= 65536
    first = ocsf(str(sink))[0]
    assert first["finding_info"]["title"] == "mxc-gateway-audit-rotated" and first["unmapped"]["capBytes"] == 65536
    assert os.stat(str(sink)).st_mode & 0o777 == 0o600


GOVERNED = "version: 1\nnetwork_policies:\n  gh:\n    endpoints:\n      - {host: api.example.test, port: 443}\n"
# denied by name at the sandbox's own proxy (loopback inside the sandbox): no packet leaves it
DENIED_LOOP = ('h=denied-%s.example.test; while :; do curl -s -o /dev/null -x "$HTTP_PROXY" "http://$h/"; done'
               % ("x" * 200))


def test_a_sandboxs_proxy_records_are_rate_capped_and_their_file_freed(gw, tmp_path):
    """A workload that makes its proxy decide without end: its records reach the sink at most at
    MXC_OCSF_SOURCE_RATE a second (here 5; a burst of ten seconds' worth), what is dropped is said
    as an mxc-proxy-audit-dropped finding, and the proxy's file in the gateway's state holds only
    what is not read yet (read parts are freed). (Governed egress is the process backend's
    alone: the spec's rule.)"""
    if not shutil.which("curl"):
        pytest.skip("curl is needed inside the sandbox")
    logs = tmp_path / "ocsf"
    g = gw(extra="egress_proxy = true\n",
           env={"OPENSHELL_OCSF_JSON": "1", "OPENSHELL_OCSF_LOG_DIR": str(logs), "MXC_OCSF_SOURCE_RATE": "5"}).start()
    t0 = time.monotonic()
    assert g.create("chatty", g.policy(GOVERNED), "sh", "-c", DENIED_LOOP).returncode == 0
    sink = str(logs / "mxc-gateway-ocsf.jsonl")
    pfile = os.path.join(g.state, "chatty", "proxy-audit.jsonl")

    def dropped():
        return [x for x in ocsf(sink) if x.get("finding_info", {}).get("title") == "mxc-proxy-audit-dropped"]
    assert wait_until(lambda: dropped() and os.path.exists(pfile) and os.path.getsize(pfile) > (256 << 10), 120), \
        (ocsf(sink)[-3:], os.path.exists(pfile) and os.path.getsize(pfile))
    assert tree_bytes(pfile) <= 64 << 10, "the proxy's file holds %d of its %d bytes" % (
        tree_bytes(pfile), os.path.getsize(pfile))
    d = dropped()[0]
    assert d["unmapped"]["sandbox"] == "chatty" and d["unmapped"]["dropped"] > 0 and d["unmapped"]["ratePerSecond"] == 5
    net = [x for x in ocsf(sink) if x.get("class_uid") in (4001, 4002)]
    assert 0 < len(net) <= 5 * 10 + 5 * (time.monotonic() - t0) + 5, len(net)
    assert g("sandbox", "delete", "chatty").returncode == 0
