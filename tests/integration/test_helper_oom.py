"""The sandbox's own OOM killer takes the workload, never the network helpers charged beside it
(pasta, mxc-proxy in the sandbox's `helpers` cgroup: src/base/helperbounds.h).  A workload that
runs its sandbox out of memory in processes each smaller than pasta must not cost the sandbox its
network while the workload lives on.  Run under the pool's lock (model 1 may use the shared pool):
  flock /run/mxc-pooltest.lock python3 -m pytest tests/integration/test_helper_oom.py

NETWORK SAFETY: the sandbox's only network is made from the test's own namespaces
(test_network_models.internet); nothing leaves them.
"""
import json
import os
import subprocess

import pytest

from conftest import MXC_EXEC, assert_ok_envelope, wait_until
from test_cgroup_v2 import cgroup2_mount, v2root  # noqa: F401 (fixture)
from test_network_models import WEB, client, internet, own_pool, rule, stacks_in  # noqa: F401 (fixtures)

V1_MEMORY = "/sys/fs/cgroup/memory/mxc"
LIMIT = 64 << 20
NET = {"egress": {"default": "deny", "allow": [rule("198.51.100.0/24", "tcp", 8080)]}}

# N processes that grow together, each by 1 MiB at a time up to EACH MiB — all smaller than pasta
# (~20 MiB resident) while the sandbox (64 MiB) runs out: a victim chosen by size alone is pasta.
HOG = r'''
import os, sys, time
N, EACH = int(sys.argv[1]), int(sys.argv[2])
kids = []
for i in range(N):
    pid = os.fork()
    if pid == 0:
        held = []
        for _ in range(EACH):
            held.append(bytearray(b"x" * (1 << 20)))
            time.sleep(0.05)
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
killed = sum(1 for k in kids if os.WTERMSIG(os.waitpid(k, 0)[1]) == 9)
print("KILLED", killed)
'''


def _probe(mxc):
    p = subprocess.run([MXC_EXEC, "--probe"], capture_output=True, env=mxc.env(), timeout=60)
    assert p.returncode == 0, p
    return json.loads(p.stdout)["result"]


def _oom_kills(name):
    with open(os.path.join(V1_MEMORY, name, "memory.oom_control")) as f:
        return int(dict(line.split() for line in f)["oom_kill"])


def _oom_score_adj(pid):
    with open("/proc/%d/oom_score_adj" % pid) as f:
        return int(f.read())


def _hierarchy(request, hierarchy):
    """v1: this host's hierarchies; v2: a private cgroup2 directory as MXC_CGROUP2_ROOT (test_cgroup_v2)"""
    if hierarchy == "v2":
        return request.getfixturevalue("v2root")
    if not os.path.isdir("/sys/fs/cgroup/memory"):
        pytest.skip("no v1 memory hierarchy here")
    return None


@pytest.mark.parametrize("hierarchy", ["v1", "v2"])
def test_the_sandboxs_oom_takes_the_workload_not_its_network(internet, mxc, client, own_pool, request,  # noqa: F811
                                                             hierarchy):
    """A model-1 session limited to 64 MiB whose exec runs it out of memory in processes each
    smaller than pasta: the OOM kills workload processes, pasta lives (its oom_score_adj -999, set
    by root: the workload cannot lower its own), and the next exec reaches the allowed address.
    Before: pasta (the biggest process) was the victim and the next exec's connect failed.  Where
    no score can be lowered (no CAP_SYS_RESOURCE: --probe's networkHelpers.oomScoreAdj), pasta is
    still the victim, and `mxc inspect` says so (networkHelpers "ended", its OOM kills).
    v2 is not tested: this host's cgroup2 has no memory controller, so no cgroup2 OOM can be made."""
    root = _hierarchy(request, hierarchy)
    if root and "memory" not in open(os.path.join(cgroup2_mount(), "cgroup.controllers")).read().split():
        pytest.skip("this host's cgroup2 has no memory controller: a sandbox's own OOM cannot be made on v2 "
                    "(the score is the same code on both; the v1 case shows it)")
    protected = _probe(mxc)["networkHelpers"]["oomScoreAdj"]["inEffect"]
    d, cmd = client
    env = {"MXC_MEMORY_MAX": str(LIMIT)}
    hog = os.path.join(d, "hog.py")
    with open(hog, "w") as f:
        f.write(HOG)
    os.chmod(hog, 0o644)
    p = mxc(dict(version="1.0.0", phase="provision", containment="isolation_session", network=NET,
                 filesystem={"readonlyPaths": [d]}), env=env)
    res = assert_ok_envelope(p)
    sid = res["sandboxId"]
    try:
        assert_ok_envelope(mxc(dict(version="1.0.0", phase="start", sandboxId=sid), env=env))
        run = lambda c: mxc(dict(version="1.0.0", phase="exec", sandboxId=sid, process={"commandLine": c}),  # noqa: E731
                            env=env, timeout=120)
        r = run("%s tcp:%s:8080" % (cmd, WEB))
        assert r.rc == 0 and "OK" in r.stdout, r.describe()
        (pasta,) = stacks_in(internet.ino)
        memcg = [l.split(":")[2] for l in open("/proc/%d/cgroup" % pasta).read().splitlines() if ":memory:" in l]
        assert memcg and memcg[0].endswith("/helpers"), memcg
        name = os.path.basename(os.path.dirname(memcg[0]))
        before = _oom_kills(name)
        r = run("/usr/bin/python3 %s 8 14" % hog)
        assert _oom_kills(name) > before, ("no OOM happened", r.describe())
        r = run("%s tcp:%s:8080" % (cmd, WEB))
        if not protected:
            # this host (a container without CAP_SYS_RESOURCE, --probe says so) cannot lower a
            # score: pasta keeps its caller's and is the victim — then said, not silent
            assert "tcp:%s:8080 FAIL" % WEB in r.stdout, r.describe()
            helpers = _inspect(mxc, sid)["networkHelpers"]
            assert helpers["state"] == "ended" and helpers["oomKills"] >= 1, helpers
            return
        assert r.rc == 0 and "tcp:%s:8080 OK" % WEB in r.stdout, ("the network is gone", r.describe())
        assert os.path.exists("/proc/%d" % pasta), "pasta was OOM-killed"
        assert _oom_score_adj(pasta) == -999
        assert _inspect(mxc, sid)["networkHelpers"] == {"state": "running", "oomKills": 0}
        # the workload cannot lower its own score below 0 (no CAP_SYS_RESOURCE over the host)
        r = run("sh -c 'echo -999 > /proc/self/oom_score_adj && echo LOWERED'")
        assert "LOWERED" not in r.stdout, r.describe()
    finally:  # before own_pool's teardown, which waits for the session's processes
        mxc(dict(version="1.0.0", phase="stop", sandboxId=sid))


def _inspect(mxc, sid):
    p = subprocess.run([os.path.join(os.path.dirname(MXC_EXEC), "mxc"), "inspect", sid], capture_output=True,
                       env=mxc.env(), timeout=60)
    assert p.returncode == 0, p
    return json.loads(p.stdout)


@pytest.mark.parametrize("hierarchy", ["v1", "v2"])
def test_a_network_helper_that_ended_is_said_by_inspect(internet, mxc, client, own_pool, request,  # noqa: F811
                                                        hierarchy):
    """pasta killed in a live model-1 session (as its OOM would): nothing restarts it and the
    session's next exec has no network; `mxc inspect` says so (networkHelpers "ended", where it
    said "running"), with the helpers' OOM kills on v1 (v2: the helpers' child has no memory
    controller of its own, so no count of its own is shown).  Before: nothing said it anywhere."""
    if hierarchy == "v1" and not os.path.isdir("/sys/fs/cgroup/pids"):
        pytest.skip("no v1 pids hierarchy here")
    v2 = _hierarchy(request, hierarchy) if hierarchy == "v2" else None
    d, cmd = client
    p = mxc(dict(version="1.0.0", phase="provision", containment="isolation_session", network=NET,
                 filesystem={"readonlyPaths": [d]}))
    sid = assert_ok_envelope(p)["sandboxId"]
    try:
        assert_ok_envelope(mxc(dict(version="1.0.0", phase="start", sandboxId=sid)))
        run = lambda c: mxc(dict(version="1.0.0", phase="exec", sandboxId=sid, process={"commandLine": c}))  # noqa: E731
        assert "tcp:%s:8080 OK" % WEB in run("%s tcp:%s:8080" % (cmd, WEB)).stdout
        helpers = _inspect(mxc, sid).get("networkHelpers")
        assert helpers and helpers["state"] == "running", helpers
        assert helpers.get("oomKills") == (None if v2 else 0), helpers
        (pasta,) = stacks_in(internet.ino)
        os.kill(pasta, 9)
        assert wait_until(lambda: _inspect(mxc, sid)["networkHelpers"]["state"] == "ended", 10), \
            _inspect(mxc, sid)
        r = run("%s tcp:%s:8080" % (cmd, WEB))
        assert "tcp:%s:8080 FAIL" % WEB in r.stdout, r.describe()  # no network, and nothing restarts it
    finally:
        mxc(dict(version="1.0.0", phase="stop", sandboxId=sid))
