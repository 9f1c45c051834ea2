"""Issue 27, findings 1 and 2: the host-side network helpers a workload drives are bounded like the
workload.

1. mxc-proxy spun on EMFILE: a workload held ~1,200 idle connections to its proxy, the proxy had
   inherited its caller's soft RLIMIT_NOFILE (1024, systemd's default), accept4 failed and the
   event loop retried at once — one host core at 100 %, outside the sandbox's cgroup.
2. The proxy's audit file was unbounded: every refusal appended a record, so a flood of bad
   requests filled the (memory-backed) state root.

Driven both ways: mxc-proxy directly (as test_proxy.py does: its listener inside a namespace the
test made) for the mechanisms, and through the executor — a workload in a real governed sandbox,
one-shot and session — for the attacks themselves.  CPU is measured as the proxy's own counters
(utime + stime of /proc/PID/stat) over a window, compared with the window: no timing threshold.

NETWORK SAFETY: as test_proxy.py — every address is inside namespaces the test made (the `world`
fixture); names resolve from the test's hosts file; nothing else is ever addressed.
"""
import json
import os
import resource
import socket
import subprocess
import time

import pytest

from conftest import MXC_EXEC, assert_ok_envelope, wait_until
from netpool_util import POOL, comm as _comm, entry_cgroup, netns, pool_entries, pooled_stacks, procs_named, \
    sandbox_stacks
from test_cgroup_v2 import cgroup2_mount, v2root  # noqa: F401 (fixture)
from test_proxy import CLIENT, NET, WEB, Proxy, auth, governed, in_sandbox_ns, world  # noqa: F401 (fixtures)

CLK_TCK = os.sysconf("SC_CLK_TCK")
# what docs/security.md promises (src/proxy/auditlog.h, src/proxy/main.c)
AUDIT_MAX_BYTES = 16 << 20
DENIED_BURST, DENIED_PER_SEC = 500, 50
MAX_CONNECTIONS = 1024
PROXY_NOFILE = 8 * MAX_CONNECTIONS + 64
STACK_NOFILE = 8192


def cpu_ticks(pid):
    """utime + stime of the whole process (every thread), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_share(pid, seconds=3.0):
    """The share of one core the process used over a window: its own counters against the window."""
    t0, w0 = cpu_ticks(pid), time.monotonic()
    time.sleep(seconds)
    used, window = cpu_ticks(pid) - t0, time.monotonic() - w0
    return used / (window * CLK_TCK)


def proxy_pids():
    """mxc-proxy processes in this test's network namespace (where the executor runs them)."""
    return set(procs_named(lambda c: c == "mxc-proxy", netns()))


def soft_nofile(n):
    """A preexec_fn: the caller's soft RLIMIT_NOFILE at n (systemd's default is 1024)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


def as_nobody_with(nofile):
    """A preexec_fn: the proxy started as nobody with a hard descriptor limit it cannot raise."""
    def go():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
    return go


def records(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.endswith("\n")]


def decisions(recs):
    return [r for r in recs if r.get("class_uid") in (4001, 4002)]


def findings(recs, title):
    return [r for r in recs if r.get("class_uid") == 2004 and r["finding_info"]["title"] == title]


def dropped_total(recs):
    return sum(r["dropped"]["records"] for r in recs if r.get("class_uid") == 2004 and "dropped" in r)


def limits_of(pid):
    """/proc/PID/limits' "Max open files" as (soft, hard)."""
    for line in open("/proc/%d/limits" % pid):
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    return None


# ---- mxc-proxy itself ------------------------------------------------------------------------

def test_descriptor_exhaustion_backs_off_instead_of_spinning(world):
    """A proxy that has run out of descriptors (here: nobody, a hard limit of 128 it cannot raise)
    and still has 300 connections waiting does not retry accept4 at once: it sheds the oldest idle
    connection (one that has sent no complete head) for the newcomer, answers 503 with a
    descriptor kept in reserve when nothing can be shed, and otherwise waits for a descriptor to
    come back — under 5 % of a core, and the next request is served."""
    p = Proxy(world, ["%s:8080" % WEB], hostsFile=None, preexec_fn=as_nobody_with(128))
    held = []
    try:
        assert p.status() == "ok"
        with in_sandbox_ns(world):
            held = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(300)]
        share = cpu_share(p.p.pid)
        assert share < 0.05, "the proxy used %.0f %% of a core with its descriptors exhausted" % (100 * share)
        r = p.curl("http://%s:8080/next" % WEB)
        assert r.stdout.startswith("GET /next HTTP/1.1") and r.stdout.endswith("200 000"), r
    finally:
        for s in held:
            s.close()
        p.close()


def test_the_oldest_idle_connection_makes_room_at_the_cap_and_tunnels_do_not(world):
    """At the connection cap a newcomer takes the place of the oldest connection that has not
    sent its head (503 too-many-connections to that one); connections past their head (here,
    open tunnels) are never shed: with the cap full of them the newcomer gets the 503."""
    p = Proxy(world, ["%s:8080" % WEB], hostsFile=None, maxConnections=3)
    try:
        assert p.status() == "ok"
        with in_sandbox_ns(world):
            idle = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(3)]
        time.sleep(0.3)
        r = p.curl("http://%s:8080/in" % WEB)
        assert r.stdout.endswith("200 000"), r
        idle[0].settimeout(5)
        assert idle[0].recv(200).startswith(b"HTTP/1.1 503"), "the oldest idle connection was not the one shed"
        for s in idle:
            s.close()
        with in_sandbox_ns(world):
            tunnels = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(3)]
            for t in tunnels:
                t.sendall(("CONNECT %s:8080 HTTP/1.1\r\n%s\r\n" % (WEB, auth())).encode())
                t.settimeout(5)
                assert t.recv(200).startswith(b"HTTP/1.1 200"), "the tunnel did not open"
            extra = socket.create_connection(("127.0.0.1", 3128))
            extra.settimeout(5)
            assert extra.recv(200).startswith(b"HTTP/1.1 503"), "a tunnel was shed for a newcomer"
        for t in tunnels + [extra]:
            t.close()
    finally:
        p.close()


BAD_LOOP = ("import socket,sys\nfor i in range(int(sys.argv[1])):\n"
            "    s=socket.create_connection(('127.0.0.1',3128)); s.settimeout(5)\n"
            "    s.sendall(b'GET http://x.test/ HTTP/1.1\\r\\n\\r\\n' if i%2 else b'GET / HTTP/1.1\\r\\n\\r\\n')\n"
            "    s.recv(4096); s.close()\n")


def test_refusals_past_the_rate_are_counted_and_said(world):
    """Records of refusals beyond the audit's rate (here a burst of 10, then 5 a second) are
    not written: they are counted by disposition, and said in a summary record
    (mxc-proxy-audit-dropped, OCSF 2004) — at most once a second and when the proxy ends — so
    that what was written and what was counted add up to every decision."""
    p = Proxy(world, ["%s:8080" % WEB], hostsFile=None, auditDeniedBurst=10, auditDeniedPerSec=5)
    try:
        assert p.status() == "ok"
        t0 = time.monotonic()
        r = p.in_sandbox("python3", "-c", BAD_LOOP, "60")
        elapsed = time.monotonic() - t0
        assert r.returncode == 0, r
    finally:
        p.close()  # the proxy ends with its sandbox: the last count is written then
    recs = records(p.audit_path)
    written = decisions(recs)
    assert len(written) <= 10 + 5 * (elapsed + 1), len(written)
    assert {x["disposition"] for x in written} <= {"denied", "auth-failed"}, written
    drops = findings(recs, "mxc-proxy-audit-dropped")
    assert drops, recs
    assert len(written) + dropped_total(recs) == 60, (len(written), drops)
    assert all(d["sandbox"] == "t1" and d["dropped"]["cause"] == "rate" for d in drops), drops
    assert sum(d["dropped"].get("denied", 0) + d["dropped"].get("auth-failed", 0) for d in drops) == dropped_total(recs)


def test_the_audit_file_never_grows_past_its_size_cap(world):
    """auditMaxBytes: the file (whoever wrote what is in it) stops below it; the record that
    reaches the cap is replaced by mxc-proxy-audit-full, and the count of everything dropped
    after it is written when the proxy ends, in room kept for both."""
    p = Proxy(world, ["%s:8080" % WEB], hostsFile=None, auditMaxBytes=8192, auditDeniedBurst=1000)
    try:
        assert p.status() == "ok"
        r = p.in_sandbox("python3", "-c", BAD_LOOP, "100")
        assert r.returncode == 0, r
    finally:
        p.close()
    assert os.path.getsize(p.audit_path) <= 8192
    recs = records(p.audit_path)
    assert len(findings(recs, "mxc-proxy-audit-full")) == 1, recs[-3:]
    assert recs[-1]["finding_info"]["title"] == "mxc-proxy-audit-dropped" and recs[-1]["dropped"]["cause"] == "size"
    assert len(decisions(recs)) + dropped_total(recs) == 100


def test_the_proxy_sets_its_own_descriptor_limit(world):
    """Whatever its caller's limit (here a soft 1024), the proxy runs with the descriptors its
    connection cap needs (8 per connection + 64), soft and hard alike."""
    p = Proxy(world, ["%s:8080" % WEB], hostsFile=None, preexec_fn=soft_nofile(1024))
    try:
        assert p.status() == "ok"
        assert limits_of(p.p.pid) == (PROXY_NOFILE, PROXY_NOFILE)
    finally:
        p.close()


# ---- through the executor: a workload in a governed sandbox -----------------------------------

HOLD = r'''
import os, socket, sys, time, urllib.parse, urllib.request, urllib.error
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
sig = sys.argv[1]
held = [socket.create_connection((u.hostname, u.port)) for _ in range(int(sys.argv[2]))]
with open(sig + "/ready.tmp", "w") as f:
    f.write("%d\n" % len(held))
os.rename(sig + "/ready.tmp", sig + "/ready")
deadline = time.time() + 120
while not os.path.exists(sig + "/go") and time.time() < deadline:
    time.sleep(0.05)
try:
    r = urllib.request.urlopen("http://api.example.test:8080/after", timeout=20)
    print("AFTER", r.status, r.read().decode().split("|")[0])
except urllib.error.HTTPError as e:
    print("AFTER", e.code, e.headers.get("X-Mxc-Deny-Reason"))
except Exception as e:
    print("AFTER ERR", type(e).__name__, e)
'''

FLOOD = r'''
import os, socket, sys, time, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
end = time.time() + float(sys.argv[1])
bad = [b"GET / HTTP/1.1\r\n\r\n", b"GET http://api.example.test:8080/ HTTP/1.1\r\n\r\n"]  # 400, 407
kid = os.fork()  # two floods at once
n = 0
while time.time() < end:
    s = socket.create_connection((u.hostname, u.port))
    s.sendall(bad[n % 2])
    try:
        s.settimeout(5)
        s.recv(4096)
    except OSError:
        pass
    s.close()
    n += 1
if kid == 0:
    os._exit(0)
os.waitpid(kid, 0)
print("FLOODED", n)
'''


def _scripts(d):
    for name, text in (("client.py", CLIENT), ("hold.py", HOLD), ("flood.py", FLOOD)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(d, name), 0o644)


def _start_session(mxc, sid, preexec_fn=None):
    r = subprocess.run(mxc.argv({"phase": "start", "sandboxId": sid}, None, "stdin"),
                       input=json.dumps({"phase": "start", "sandboxId": sid}).encode(), capture_output=True,
                       env=mxc.env(), timeout=120, preexec_fn=preexec_fn)
    assert r.returncode == 0, (r.stdout, r.stderr)


def _provision(mxc, fs):
    return mxc.provision(filesystem=fs, network=NET)["sandboxId"]


@pytest.mark.parametrize("surface", ["oneshot", "session"])
def test_idle_connections_cost_the_proxy_no_cpu_and_it_keeps_serving(governed, host_dir, surface):
    """Finding 1, as reported: the caller that starts the sandbox has a soft RLIMIT_NOFILE of
    1024 (systemd's default) and the workload holds 1,200 idle connections to its proxy.  The
    proxy uses under 5 % of a core over a window while they are held (its own utime + stime),
    serves the workload's next allowed request, and a neighbouring governed sandbox's requests
    are unaffected meanwhile."""
    g, mxc = governed, governed["mxc"]
    _scripts(g["dir"])
    sig = host_dir("sig-" + surface, 0o777)
    # the neighbour: a governed session of its own, started normally
    nb = _provision(mxc, {"readonlyPaths": [g["dir"]]})
    _start_session(mxc, nb)
    before = proxy_pids()
    hold = "/usr/bin/python3 %s/hold.py %s 1200" % (g["dir"], sig)
    fs = {"readonlyPaths": [g["dir"]], "readwritePaths": [sig]}
    if surface == "oneshot":
        run = mxc.popen({"containment": "process", "network": NET, "filesystem": fs,
                         "process": {"commandLine": hold}}, preexec_fn=soft_nofile(1024))
    else:
        sid = _provision(mxc, fs)
        _start_session(mxc, sid, preexec_fn=soft_nofile(1024))
        run = mxc.popen({"phase": "exec", "sandboxId": sid, "process": {"commandLine": hold}})
    try:
        assert wait_until(lambda: os.path.exists(os.path.join(sig, "ready")) or run.poll() is not None, 60)
        assert run.poll() is None, run.communicate()
        mine = proxy_pids() - before
        assert len(mine) == 1, (mine, before)
        pid = mine.pop()
        share = cpu_share(pid)
        assert share < 0.05, "the proxy used %.0f %% of a core under 1,200 idle connections" % (100 * share)
        # the neighbour is served meanwhile
        r = mxc.exec(nb, "%s http://api.example.test:8080/neighbour" % g["cmd"])
        assert r.rc == 0 and "200 GET /neighbour HTTP/1.1" in r.stdout, r.describe()
    finally:
        open(os.path.join(sig, "go"), "w").close()
        out, err = run.communicate(timeout=120)
    assert "AFTER 200 GET /after HTTP/1.1" in out.decode(), (out, err[-2000:])


def _probe():
    return json.loads(subprocess.run([MXC_EXEC, "--probe"], capture_output=True).stdout)["result"]


def _tree_bytes(root):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(root) for f in fs
               if os.path.isfile(os.path.join(r, f)))


def test_a_minute_of_bad_requests_leaves_the_state_root_under_the_audit_cap(governed, mxc):
    """Finding 2, as reported, for a minute: a session's workload floods its proxy with bad
    requests (400s and 407s, two at a time).  The session's proxy-audit.jsonl takes refusals at
    the documented rate (a burst of 500, then 50 a second), the state root stays under the
    documented cap (16 MiB), and the file says how many records were dropped.  (With a CPU limit
    where the host has a cpu controller: the proxy's work is the sandbox's budget too.)"""
    g = governed
    _scripts(g["dir"])
    env = {"MXC_CPU_MAX": "0.5"} if _probe()["cgroups"]["cpu"] != "none" else None
    sid = mxc.provision(filesystem={"readonlyPaths": [g["dir"]]}, network=NET, env=env)["sandboxId"]
    assert_ok_envelope(mxc.phase("start", sid, env=env))
    t0 = time.monotonic()
    r = mxc.exec(sid, "/usr/bin/python3 %s/flood.py 60" % g["dir"], timeout=180)
    elapsed = time.monotonic() - t0
    assert r.rc == 0 and "FLOODED" in r.stdout, r.describe()
    audits = [os.path.join(d, f) for d, _, fs in os.walk(mxc.state_dir) for f in fs if f == "proxy-audit.jsonl"]
    assert len(audits) == 1, audits
    # while the session still runs: the summaries come at most a second after the drops
    assert wait_until(lambda: findings(records(audits[0]), "mxc-proxy-audit-dropped"), 10), records(audits[0])[-3:]
    recs = records(audits[0])
    written = decisions(recs)
    assert len(written) <= DENIED_BURST + DENIED_PER_SEC * (elapsed + 2), len(written)
    assert dropped_total(recs) > 0
    assert os.path.getsize(audits[0]) <= AUDIT_MAX_BYTES
    assert _tree_bytes(mxc.state_dir) < AUDIT_MAX_BYTES, _tree_bytes(mxc.state_dir)


def test_a_oneshots_audit_stops_at_its_size_cap(governed, tmp_path):
    """MXC_PROXY_AUDIT_MAX_BYTES (the caller's cap for the file it names, as the gateway does):
    a one-shot's flood leaves the file at or under it, with the record that says the rest is
    dropped and, once the proxy has ended with the sandbox, how many were."""
    g = governed
    _scripts(g["dir"])
    audit = tmp_path / "audit.jsonl"
    r = g["mxc"]({"network": NET, "filesystem": {"readonlyPaths": [g["dir"]]},
                  "process": {"commandLine": "/usr/bin/python3 %s/flood.py 5" % g["dir"]}},
                 env={"MXC_PROXY_AUDIT_FILE": str(audit), "MXC_PROXY_AUDIT_MAX_BYTES": "65536"})
    assert r.rc == 0 and "FLOODED" in r.stdout, r.describe()
    # the proxy ends with the sandbox (the caller may return first): its last record counts the rest
    last = lambda: (records(audit) or [{}])[-1]  # noqa: E731
    assert wait_until(lambda: last().get("dropped", {}).get("cause") == "size", 10), records(audit)[-3:]
    assert os.path.getsize(audit) <= 65536
    recs = records(audit)
    assert len(findings(recs, "mxc-proxy-audit-full")) == 1, recs[-3:]
    assert dropped_total(recs) > 0


def test_a_bad_proxy_limit_is_refused_before_anything_runs(governed):
    for var, value in (("MXC_PROXY_MAX_CONNECTIONS", "0"), ("MXC_PROXY_MAX_CONNECTIONS", "lots"),
                       ("MXC_PROXY_AUDIT_MAX_BYTES", "12")):
        r = governed["mxc"]({"network": NET, "process": {"commandLine": "echo RAN"}}, env={var: value})
        assert r.rc != 0 and "RAN" not in r.stdout and var in r.error["message"], (var, value, r.describe())


def _cgroup_dir(pid, hierarchy):
    """The host directory of pid's cgroup: v1's pids hierarchy, or the cgroup2 one."""
    for line in open("/proc/%d/cgroup" % pid):
        _, ctrls, path = line.rstrip("\n").split(":", 2)
        if hierarchy == "v1" and "pids" in ctrls.split(","):
            return "/sys/fs/cgroup/pids" + path
        if hierarchy == "v2" and ctrls == "":
            return cgroup2_mount() + path
    return None


def _holder_in(d):
    with open(os.path.join(d, "cgroup.procs")) as f:
        return any(_comm(p) == "mxc-holder" for p in f.read().split())


def _pooled_stacks():
    """pids of the pastas idle in model 1's pool (src/net/netpool.h) for this namespace, no sandbox's"""
    return pooled_stacks(netns())


def _pooled_cgroups():
    """{pasta pid: the entry's own cgroup's name} of the pool's ready entries that have one (v1)"""
    cgroups = {p: entry_cgroup(os.path.join(POOL, "ready", e)) for e, (_, p) in pool_entries().items()}
    return {p: cg for p, cg in cgroups.items() if cg}


def _refilling():
    """the pool's refillers running in this namespace (src/net/netpool.c)"""
    return procs_named(lambda c: c == "mxc-netpool-fil", netns())


def _sandbox_stacks():
    """pids of the pastas in this namespace that are a sandbox's (not the pool's idle ones)"""
    return sandbox_stacks(netns())


@pytest.mark.parametrize("hierarchy", ["v1", "v2"])
def test_the_helpers_are_charged_to_their_sandbox(governed, mxc, request, hierarchy):
    """mxc-proxy (governed egress) and pasta (model 1) run in a child cgroup of their sandbox's
    (`helpers`): the sandbox's pids, memory and CPU limits count them too (v1: each hierarchy's
    child; v2: a child without controllers of its own, charged to its parent), and they go with
    the sandbox.  Each with a descriptor limit of its own, whatever its caller's (soft 1024)."""
    if hierarchy == "v2":
        request.getfixturevalue("v2root")  # a private cgroup2 directory as MXC_CGROUP2_ROOT
    elif _probe()["cgroups"]["pids"] != "v1":
        pytest.skip("this host has no v1 pids hierarchy")
    helpers = _probe()["networkHelpers"]
    assert helpers["mxc-proxy"]["maxConnections"] == MAX_CONNECTIONS and helpers["pasta"]["openFiles"] == STACK_NOFILE
    before = proxy_pids()
    sid = mxc.provision(filesystem={"readonlyPaths": [governed["dir"]]}, network=NET)["sandboxId"]
    _start_session(mxc, sid, preexec_fn=soft_nofile(1024))
    (pid,) = proxy_pids() - before
    sid2 = mxc.provision(filesystem={"readonlyPaths": [governed["dir"]]}, network={"defaultPolicy": "allow"})["sandboxId"]
    # model 1's pool (src/net/netpool.h): a first model-1 start of the same rules (an entry holds its
    # plan's) fills it, so the session's pasta is one made ahead, in a cgroup of its entry's own that
    # the claim renames into the sandbox's (v1; v2: moved into its helpers; off: made at the start)
    r = mxc({"network": {"defaultPolicy": "allow"}, "process": {"commandLine": "true"}})
    assert r.rc == 0, r.describe()
    if os.environ.get("MXC_NETPOOL_SIZE", "0") != "0":
        # the refiller done: an entry it made after the snapshot below could be the one claimed
        assert wait_until(lambda: len(_pooled_stacks()) >= 1 and not _refilling(), 20)
    assert wait_until(lambda: not _sandbox_stacks(), 10)  # the one-shot's, gone with it
    pooled = _pooled_stacks()
    entry_cgroups = _pooled_cgroups()
    _start_session(mxc, sid2, preexec_fn=soft_nofile(1024))
    assert wait_until(lambda: not _refilling(), 10)  # a pasta it is starting is nobody's yet
    stacks = _sandbox_stacks()
    assert not pooled or stacks[0] in pooled, (stacks, pooled)  # the pool's, claimed
    assert len(stacks) == 1, stacks
    sandboxes = []
    for helper, nofile in ((pid, PROXY_NOFILE), (stacks[0], STACK_NOFILE)):
        d = _cgroup_dir(helper, hierarchy)
        assert os.path.basename(d) == "helpers" and _holder_in(os.path.dirname(d)), (helper, d)
        assert limits_of(helper) == (nofile, nofile)
        sandboxes.append(os.path.dirname(d))
    for s in (sid, sid2):
        assert_ok_envelope(mxc.phase("stop", s))
    for d in sandboxes:  # the helpers' cgroup went with the sandbox's
        assert wait_until(lambda: not os.path.exists(d), 10), d
    # v1: the claimed entry's own cgroup (its record names it) became the sandbox's, renamed: no
    # cgroup of that name is left, anywhere
    own = entry_cgroups.get(stacks[0])
    assert bool(own) == (hierarchy == "v1" and bool(pooled)), (own, entry_cgroups)
    if own:
        assert not [h for h in ("pids", "memory") if os.path.exists("/sys/fs/cgroup/%s/mxc/%s" % (h, own))], own
