"""Model 1's pool of namespaces made ahead (src/net/netpool.h): what a failure, a dead maker or a
reused pid leaves behind, and what --gc then does.  Run under the pool's lock (tests share
/run/mxc-netpool):  flock /run/mxc-pooltest.lock python3 -m pytest tests/integration/test_netpool_faults.py

NETWORK SAFETY: every model-1 sandbox and pool entry here is made from the test's own namespaces
(test_network_models.internet); nothing leaves them.
"""
import json
import os
import subprocess

import pytest

from conftest import MXC_EXEC, assert_ok_envelope, wait_until
from netpool_util import entry_cgroup, start_time
from test_cgroup_v2 import cgroup2_mount, v2root  # noqa: F401 (fixture)
from test_network_models import (POOL, _discard_pool_of, _pool_entries, _starting, internet,  # noqa: F401
                                 own_pool, procs_named, refilling, v1)

NET = {"egress": {"default": "allow"}}
V1_PIDS = "/sys/fs/cgroup/pids/mxc"


def _gc(mxc, **env):
    p = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, env=mxc.env(dict(env, MXC_SWEEP_MIN_AGE="0")),
                       timeout=60)
    assert p.returncode == 0, p
    return json.loads(p.stdout)["result"]["swept"]


def _start_time(pid):
    """as an int: a gone process raises (TypeError), as a short read did"""
    return int(start_time(pid))


def _entry_cgroups(netns_ino):
    """{entry: its own cgroup's name (v1)} of the pool's ready entries for the namespace"""
    cgroups = {e: entry_cgroup(os.path.join(POOL, "ready", e)) for e in _pool_entries(netns_ino)}
    return {e: cg for e, cg in cgroups.items() if cg}


@pytest.fixture
def pool_on(monkeypatch):
    monkeypatch.setenv("MXC_NETPOOL_SIZE", "2")


@pytest.mark.skipif(not os.path.isdir("/sys/fs/cgroup/pids"), reason="no v1 pids hierarchy here")
def test_gc_owns_a_pool_cgroup_by_pid_and_start_time(internet, mxc, pool_on, own_pool):
    """A pool entry's cgroup (`netpool-...`) is its holder's while that very process lives: one named
    for a live pid that is another process (a reused pid: here an unrelated `sleep`, in the old
    bare-pid form and with a wrong start time) is an orphan --gc removes; a live entry's is kept."""
    r = mxc(dict(v1(NET), process={"commandLine": "true"}))
    assert r.rc == 0, r.describe()
    assert wait_until(lambda: len(_pool_entries(internet.ino)) >= 2 and not refilling(internet.ino), 15)
    live = _entry_cgroups(internet.ino)
    assert live, "the pool's entries have no cgroup of their own on v1"
    other = subprocess.Popen(["sleep", "60"])
    orphans = [os.path.join(V1_PIDS, "netpool-%d" % other.pid),
               os.path.join(V1_PIDS, "netpool-%d-%d" % (other.pid, _start_time(other.pid) + 1))]
    try:
        for d in orphans:
            os.mkdir(d)
        swept = _gc(mxc)
        assert swept["cgroups"] >= 2, swept
        assert [d for d in orphans if os.path.exists(d)] == [], orphans
        assert other.poll() is None  # not in them: nothing of its was touched
        for e, cg in live.items():
            assert os.path.isdir(os.path.join(V1_PIDS, cg)), (e, cg)
        assert set(_pool_entries(internet.ino)) == set(live)
    finally:
        other.kill()
        other.wait()
        for d in orphans:
            if os.path.isdir(d):
                os.rmdir(d)


def _error(r):
    """the error envelope's error: on stdout (a phase), else the last line of stderr (a one-shot)"""
    if r.error:
        return r.error
    at = r.stderr.rfind('{"error"')
    return json.loads(r.stderr[at:])["error"] if at >= 0 else None


def _claimed_of(netns_ino):
    d = os.path.join(POOL, "claimed")
    return [e for e in os.listdir(d) if e.startswith("%d-" % netns_ino)] if os.path.isdir(d) else []


@pytest.mark.parametrize("size", ["0", "2"])
def test_model1_memory_limit_below_the_stack_is_refused_saying_why(internet, mxc, own_pool, monkeypatch, size):
    """A model-1 sandbox whose memory limit cannot hold its network stack (pasta, charged to the
    sandbox) is refused before anything runs, naming the limit, the stack's need and what to do —
    pooled or not.  Before: "Device or resource busy" (pooled) or "pasta failed (signal 9)"."""
    monkeypatch.setenv("MXC_NETPOOL_SIZE", size)
    if size != "0":  # entries ready to be claimed
        r = mxc(dict(v1(NET), process={"commandLine": "true"}))
        assert r.rc == 0, r.describe()
        assert wait_until(lambda: len(_pool_entries(internet.ino)) >= 2 and not refilling(internet.ino), 15)
    for surface in ("process", "session"):
        env = {"MXC_MEMORY_MAX": str(16 << 20)}
        if surface == "process":
            r = mxc(dict(v1(NET), process={"commandLine": "echo RAN"}), env=env)
        else:
            p = mxc(dict(v1(NET), phase="provision", containment="isolation_session"), env=env)
            r = mxc(dict(phase="start", sandboxId=p.result["sandboxId"]), env=env) if p.rc == 0 else p
        assert r.rc != 0 and "RAN" not in r.stdout, r.describe()
        err = _error(r)
        assert err and err["code"] == "policy_validation", r.describe()
        assert "MXC_MEMORY_MAX" in err["message"] and "pasta" in err["message"], err
        assert "MiB" in err["message"] and err.get("remediation"), err
        assert _claimed_of(internet.ino) == [], surface
    # at the documented floor (src/base/helperbounds.h: 32 MiB) it runs, pooled or not
    r = mxc(dict(v1(NET), process={"commandLine": "echo RAN"}), env={"MXC_MEMORY_MAX": str(32 << 20)})
    assert r.rc == 0 and "RAN" in r.stdout, r.describe()


def _pids_alive(pids):
    return [p for p in pids if os.path.exists("/proc/%d" % p) and
            open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[0] not in "ZX"]


@pytest.mark.parametrize("surface", ["process", "session"])
def test_a_failed_pooled_start_leaves_no_claimed_entry(internet, mxc, pool_on, own_pool, surface):
    """A start that fails once it has claimed an entry and before its network adopted it (here a
    fault at the attach, MXC_FAULT_NETPOOL_ATTACH_FAILS): the claimed record is removed and the
    entry's pasta and holder ended at once, by the failing start — not left in claimed/ for --gc."""
    r = mxc(dict(v1(NET), process={"commandLine": "true"}))
    assert r.rc == 0, r.describe()
    assert wait_until(lambda: len(_pool_entries(internet.ino)) >= 2 and not refilling(internet.ino), 15)
    before = _pool_entries(internet.ino)
    env = {"MXC_FAULT_NETPOOL_ATTACH_FAILS": "1"}
    if surface == "process":
        r = mxc(dict(v1(NET), process={"commandLine": "echo RAN"}), env=env)
    else:
        p = mxc(dict(v1(NET), phase="provision", containment="isolation_session"))
        assert p.rc == 0, p.describe()
        r = mxc(dict(phase="start", sandboxId=p.result["sandboxId"]), env=env)
    assert r.rc != 0 and "RAN" not in r.stdout and "NETPOOL_ATTACH_FAILS" in json.dumps(_error(r)), r.describe()
    taken = {e: pp for e, pp in before.items() if e not in _pool_entries(internet.ino)}
    assert len(taken) == 1, (before, _pool_entries(internet.ino))
    assert _claimed_of(internet.ino) == []
    (holder, pasta), = taken.values()
    assert wait_until(lambda: not _pids_alive([holder, pasta]), 5), _pids_alive([holder, pasta])


def _v2_cgroup(pid):
    """pid's cgroup2 directory (its "0::" line under the cgroup2 mount), or None once it is gone"""
    try:
        for line in open("/proc/%d/cgroup" % pid):
            if line.startswith("0::"):
                return cgroup2_mount() + line.rstrip("\n")[3:]
    except OSError:
        pass
    return None


def test_model1_session_on_a_cgroupless_entry_starts_and_stops_clean(internet, mxc, pool_on, own_pool, v2root):
    """cgroup2 (a private hierarchy, MXC_CGROUP2_ROOT): the pool's entries have no cgroup of their own
    (v1's rename does not exist here), so a pooled start waits for its keeper to move the entry's
    pasta into the sandbox's helpers' cgroup.  The session's pasta is the claimed entry's, in
    <root>/mxc-<sandbox>/helpers; the sandbox reaches what its rules allow; stop leaves no pasta, no
    holder and no cgroup of the sandbox's."""
    r = mxc(dict(v1(NET), process={"commandLine": "true"}))
    assert r.rc == 0, r.describe()
    assert wait_until(lambda: len(_pool_entries(internet.ino)) >= 2 and not refilling(internet.ino), 15)
    before = _pool_entries(internet.ino)
    assert _entry_cgroups(internet.ino) == {}, "an entry made under cgroup2 has a cgroup of its own"
    res = mxc.provision(network=NET, extra={"version": "1.0.0"})
    sid, name = res["sandboxId"], res["metadata"]["agentUserName"]
    assert_ok_envelope(mxc.phase("start", sid))
    taken = {e: pp for e, pp in before.items() if e not in _pool_entries(internet.ino)}
    assert len(taken) == 1, (before, _pool_entries(internet.ino))
    (holder, pasta), = taken.values()
    assert _pids_alive([holder]) == [] and _pids_alive([pasta]) == [pasta]
    sandbox_cg = os.path.join(v2root, "mxc-" + name)
    assert _v2_cgroup(pasta) == os.path.join(sandbox_cg, "helpers"), (_v2_cgroup(pasta), sandbox_cg)
    r = mxc.exec(sid, "/usr/bin/python3 -c \"import socket; socket.create_connection(('198.51.100.7', 8080), 3)"
                      ".close(); print('REACHED')\"")
    assert r.rc == 0 and "REACHED" in r.stdout, r.describe()
    assert_ok_envelope(mxc.phase("stop", sid))
    assert wait_until(lambda: not _pids_alive([pasta]), 10), pasta
    assert wait_until(lambda: not os.path.exists(sandbox_cg), 10), os.listdir(sandbox_cg)
    assert [d for d in os.listdir(v2root) if d.startswith("mxc-")] == [], os.listdir(v2root)
    assert _claimed_of(internet.ino) == []


def _started_since(pid, t0):
    try:
        return _start_time(pid) >= t0
    except (TypeError, ValueError):
        return False


def _boot_ticks_now():
    return int(float(open("/proc/uptime").read().split()[0]) * os.sysconf("SC_CLK_TCK"))


def _pool_cgroups_since(t0):
    """v1 pool cgroups (netpool-<holder>-<start>) whose holder started at t0 or later"""
    out = []
    for h in ("pids", "memory"):
        d = "/sys/fs/cgroup/%s/mxc" % h
        for n in os.listdir(d) if os.path.isdir(d) else []:
            parts = n.split("-")
            if n.startswith("netpool-") and len(parts) == 3 and parts[2].isdigit() and int(parts[2]) >= t0:
                out.append(os.path.join(d, n))
    return out


@pytest.mark.parametrize("stage,hierarchy", [("forked", "v1"), ("ready", "v1"), ("pasta", "v1"), ("pasta", "v2")])
def test_a_refiller_killed_while_making_an_entry_leaks_nothing(internet, mxc, pool_on, own_pool, request, stage,
                                                               hierarchy):
    """The refiller killed (SIGKILL: MXC_FAULT_NETPOOL_REFILLER_DIES, test build) just after it forked
    the holder, once the holder's namespace is up, or once pasta runs on it but before the entry's
    record: after --gc no holder, no pasta, no pool cgroup and no record of it is left.  Before, the
    holder outlived its maker unrecorded (and with it pasta and its cgroup): nothing found them.
    cgroup2 (a private hierarchy): the entry has no cgroup whose removal would end its pasta."""
    if hierarchy == "v2":
        request.getfixturevalue("v2root")
    t0 = _boot_ticks_now() - 1
    r = mxc(dict(v1(NET), process={"commandLine": "true"}), env={"MXC_FAULT_NETPOOL_REFILLER_DIES": stage})
    assert r.rc == 0, r.describe()
    assert wait_until(lambda: not _starting(internet.ino), 15)  # the one-shot's cleaner forks the refill
    assert _pool_entries(internet.ino) == {}  # it died making its first
    swept = _gc(mxc)
    assert swept is not None

    def left():
        holders = [p for p in procs_named(lambda c: c == "mxc-netpool") if _started_since(p, t0)]
        pastas = procs_named(lambda c: c in ("pasta", "passt", "passt.avx2"), internet.ino)
        news = [e for e in os.listdir(POOL) if e.startswith(".new.")]
        return holders, pastas, _pool_cgroups_since(t0), news, _pool_entries(internet.ino), _claimed_of(internet.ino)
    assert wait_until(lambda: not any(left()), 10), left()


def test_a_holder_dead_before_it_is_told_to_stay_is_cleaned_by_its_refiller(internet, mxc, pool_on, own_pool):
    """The holder dead before the refiller tells it to stay (MXC_FAULT_NETPOOL_HOLDER_DIES, test build):
    the refiller's "stay" to a closed socket must not kill it (SIGPIPE: its signals are the default
    ones) — it removes the half-made record and the entry's cgroup itself, with no --gc.  Before,
    write(2) raised SIGPIPE and .new.<holder> (and on v1 its cgroup) stayed for --gc."""
    t0 = _boot_ticks_now() - 1
    r = mxc(dict(v1(NET), process={"commandLine": "true"}), env={"MXC_FAULT_NETPOOL_HOLDER_DIES": "1"})
    assert r.rc == 0, r.describe()
    assert wait_until(lambda: not _starting(internet.ino) and not refilling(internet.ino), 15)

    def left():
        news = [e for e in os.listdir(POOL) if e.startswith(".new.")]
        pastas = procs_named(lambda c: c in ("pasta", "passt", "passt.avx2"), internet.ino)
        return news, _pool_cgroups_since(t0), pastas, _pool_entries(internet.ino)
    assert wait_until(lambda: not any(left()), 10), left()
