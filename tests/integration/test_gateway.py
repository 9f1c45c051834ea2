"""Issue 16: mxc-gateway — the daemon and its client driven as an operator would, against real
sandboxes (root, real namespaces): configuration refusals before anything exists, the policy
mapped (and refused) before any sandbox, both backends, logs and exit codes, delete, restart
durability (kill -9 the gateway: its orphans are ended and marked lost), the socket's owner-only
access, mock mode and the probe.

NETWORK SAFETY: no packet leaves loopback: governed egress is checked by the proxy variables the
workload receives, never by connecting anywhere."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import DROP, MXC_EXEC, wait_until

BIN = os.path.dirname(MXC_EXEC)
GATEWAY = os.path.join(BIN, "mxc-gateway")
MXC = os.path.join(BIN, "mxc")


class Gateway:
    def __init__(self, tmp, mxc, backend="process", extra="", env=None):
        self.tmp = tmp
        self.sock = str(tmp / "gw.sock")
        self.env = mxc.env(dict({"MXC_GATEWAY_STATE": str(tmp / "gwstate"), "MXC_GATEWAY_SOCKET": self.sock},
                                **(env or {})))
        self.config = tmp / "gateway.toml"
        self.config.write_text('[openshell.drivers.mxc]\nmxc_exec_path = "%s"\nbackend = "%s"\n%s'
                               % (MXC_EXEC, backend, extra))
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([GATEWAY, "serve", "--config", str(self.config)], env=self.env,
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

    def __call__(self, *args, env=None, prefix=()):
        return subprocess.run(list(prefix) + [GATEWAY] + list(args), env=dict(self.env, **(env or {})),
                              capture_output=True, text=True, timeout=120)

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
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


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
