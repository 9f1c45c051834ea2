"""process.oomScoreAdj as Kubernetes' CRI sends it (docs/oci.md "oomScoreAdj"): a pod's sandbox
container gets -998, a Guaranteed pod's containers -997.  mxc-oci (host root) writes the value before
the workload runs; the workload can raise it and return to it, never go below it; -1000
(OOM_SCORE_ADJ_MIN: the kernel never kills that process, not even in its own memory cgroup's OOM) is
refused.
"""
import os

import pytest

CAP_SYS_RESOURCE = 24


def _has_cap_sys_resource():
    with open("/proc/self/status") as f:
        eff = [int(l.split()[1], 16) for l in f if l.startswith("CapEff:")][0]
    return bool(eff >> CAP_SYS_RESOURCE & 1)


# lowering a process's oom_score_adj needs CAP_SYS_RESOURCE (runc's write fails the same way without it)
needs_cap = pytest.mark.skipif(not _has_cap_sys_resource(), reason="the runtime has no CAP_SYS_RESOURCE here "
                               "(a container host): no one can lower oom_score_adj")

from conftest import wait_until
from test_oci import oci  # noqa: F401  (the fixture)


def _adj(v):
    return lambda c: c["process"].update(oomScoreAdj=v)


def _running_pid(oci, cid, bundle):
    pidfile = os.path.join(oci.base, cid + ".pid")
    rc, _, err = oci.create(cid, bundle, "--pid-file", pidfile)
    assert rc == 0, err
    return int(open(pidfile).read())


def test_cri_s_negative_oom_score_adj_passes_the_config_check(oci):  # noqa: F811
    """-998 is no longer refused: it is written (or, where the runtime lacks CAP_SYS_RESOURCE, the
    kernel's refusal of the write is reported, naming the field, as runc reports it)."""
    b = oci.bundle(["true"], _adj(-998))
    rc, _, err = oci.create("c1", b)
    assert "is refused" not in err, err
    if not _has_cap_sys_resource():
        assert rc != 0 and "process.oomScoreAdj: Permission denied" in err, err
    else:
        assert rc == 0, err


@needs_cap
@pytest.mark.parametrize("value", [-998, -997, -999])
def test_cri_s_negative_oom_score_adj_is_applied_before_the_workload(oci, value):  # noqa: F811
    b = oci.bundle(["sh", "-c", "cat /proc/self/oom_score_adj; exec sleep 1000"], _adj(value))
    pid = _running_pid(oci, "c1", b)
    with open("/proc/%d/oom_score_adj" % pid) as f:
        assert int(f.read()) == value          # set while the init waits on the fifo, as host root
    rc, _, err = oci("start", "c1")
    assert rc == 0, err
    assert wait_until(lambda: open(os.path.join(b, "out")).read() == "%d\n" % value, 30)
    oci("kill", "c1", "KILL")


@needs_cap
def test_workload_cannot_go_below_what_the_runtime_set(oci):  # noqa: F811
    """The attack: a workload given -998 lowers itself to -1000 (never killed).  The kernel keeps
    the minimum the privileged writer set; raising and coming back to it is allowed."""
    script = ("echo -1000 > /proc/self/oom_score_adj 2>/dev/null && echo lowered-1000; "
              "echo -999 > /proc/self/oom_score_adj 2>/dev/null && echo lowered-999; "
              "echo 500 > /proc/self/oom_score_adj && echo -998 > /proc/self/oom_score_adj && echo back; "
              "cat /proc/self/oom_score_adj")
    b = oci.bundle(["sh", "-c", script], _adj(-998))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.split() == ["back", "-998"], out


def test_oom_score_adj_min_is_refused(oci):  # noqa: F811
    b = oci.bundle(["true"], _adj(-1000))
    rc, _, err = oci.create("c1", b)
    assert rc != 0 and "process.oomScoreAdj -1000 is refused" in err, err
