"""mxc-oci's cgroups (docs/oci.md, "cgroups"): linux.cgroupsPath with runc's cgroupfs meaning,
linux.resources really enforced (a fork bomb stopped by pids.limit, a memory hog killed), pause and
resume (a counter stops advancing), update of a live limit, ps and kill --all through the cgroup,
the cgroup gone after delete and after a create that failed once it was made.  cgroup v1 as this
(hybrid) host has it, and cgroup v2 in a private directory of its cgroup2 mount handed over as
MXC_CGROUP2_ROOT (the engine's way, tests/integration/test_cgroup_v2.py): there no controller is
delegated, so a limit is refused naming its field, and the freeze, kill and removal are v2's.

Run as root:  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_cgroups.py
"""
import json
import os
import subprocess
import time
import uuid

import pytest

from conftest import cgroup2_mount, wait_until
from test_oci import MXC_OCI, Oci, dead, oci  # noqa: F401  (the fixture)

V1 = ["pids", "memory", "cpu", "cpuacct", "cpuset", "freezer"]
# a hybrid host's controller-less cgroup2 hierarchy: the container is put there too (as runc), no limit
HYBRID = cgroup2_mount() == "/sys/fs/cgroup/unified"
if HYBRID:
    V1.append("unified")

CLAIMS = "/var/lib/mxc/claims"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup/pids"),
                                reason="needs root and the cgroup v1 pids hierarchy")


def uniq(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def v1_dirs(path):
    return [os.path.join("/sys/fs/cgroup", h) + path for h in V1]


def read(path):
    with open(path) as f:
        return f.read().strip()


def cgroup_of(pid, hierarchy):
    for line in open("/proc/%d/cgroup" % pid):
        _, ctrls, path = line.rstrip("\n").split(":", 2)
        if hierarchy in ctrls.split(",") or (hierarchy == "" and ctrls == ""):
            return path
    return None


@pytest.fixture
def parent(oci):
    """An absolute cgroupsPath parent of the test's own, removed (in every v1 hierarchy) after its
    containers are deleted."""
    p = "/" + uniq("mxctest-oci")
    yield p
    oci.cleanup()
    for d in v1_dirs(p):
        for dirpath, _, _ in sorted(os.walk(d, topdown=False), key=lambda t: -len(t[0])):
            try:
                os.rmdir(dirpath)
            except OSError:
                pass


def with_cg(path=None, resources=None):
    def mutate(c):
        if path is not None:
            c["linux"]["cgroupsPath"] = path
        if resources is not None:
            c["linux"]["resources"] = dict(c["linux"].get("resources") or {}, **resources)
    return mutate


def start(oci, cid, bundle):
    rc, _, err = oci.create(cid, bundle)
    assert rc == 0, err
    rc, _, err = oci("start", cid)
    assert rc == 0, err
    return oci.state(cid)["pid"]


def out_of(bundle):
    return open(os.path.join(bundle, "out")).read()


# --------------------------------------------------------------------------------------------
# cgroupsPath


def test_cgroups_path_absolute_holds_the_init_before_it_runs_and_goes_with_delete(oci, parent):
    path = parent + "/c1"
    b = oci.bundle(["sleep", "1000"], with_cg(path))
    rc, _, err = oci.create("c1", b)
    assert rc == 0, err
    pid = oci.state("c1")["pid"]
    # created, not started: the init (which has run nothing of the container's) is already in it
    for h in ("pids", "memory", "cpu", "freezer"):
        assert cgroup_of(pid, h) == path, h
        assert str(pid) in read("/sys/fs/cgroup/%s%s/cgroup.procs" % (h, path)).split()
    assert oci("start", "c1")[0] == 0
    rc, _, err = oci("delete", "--force", "c1")
    assert rc == 0, err
    assert not [d for d in v1_dirs(path) if os.path.exists(d)]


def test_cgroups_path_relative_and_empty_go_under_mxc_oci_s_parent(oci):
    b = oci.bundle(["sleep", "1000"], with_cg(""))
    cid = uniq("cgdef")
    pid = start(oci, cid, b)
    default = cgroup_of(pid, "pids")
    # a --root other than /run/mxc-oci gets a level of its own: ids are unique within a root only
    assert default.startswith("/mxc.oci/r") and default.endswith("/" + cid) and default.count("/") == 3, default
    b2 = oci.bundle(["sleep", "1000"], with_cg("rel/" + cid))
    pid2 = start(oci, cid + "r", b2)
    assert cgroup_of(pid2, "pids") == "/mxc.oci/rel/" + cid
    for c in (cid, cid + "r"):
        assert oci("delete", "--force", c)[0] == 0
    for h in V1:
        assert not os.path.exists("/sys/fs/cgroup/%s%s" % (h, default))
        assert not os.path.exists("/sys/fs/cgroup/%s%s" % (h, os.path.dirname(default)))  # its root's level too
        assert not os.path.exists("/sys/fs/cgroup/%s/mxc.oci/rel/%s" % (h, cid))
        try:
            os.rmdir("/sys/fs/cgroup/%s/mxc.oci/rel" % h)
        except OSError:
            pass


def test_the_same_id_under_two_roots_gets_two_cgroups(oci):
    other = Oci(os.path.join(oci.base, "second"))
    try:
        pids = [start(o, "same", o.bundle(["sleep", "1000"])) for o in (oci, other)]
        paths = [cgroup_of(p, "pids") for p in pids]
        assert paths[0] != paths[1], paths
    finally:
        other.cleanup()


@pytest.mark.parametrize("path", ["/a/../../etc", "../x", "/mxc/x", "/mxc-1234", "/"])
def test_cgroups_path_that_climbs_or_names_mxc_s_own_is_refused(oci, path):
    b = oci.bundle(["true"], with_cg(path))
    rc, _, err = oci.create(uniq("bad"), b)
    assert rc != 0 and "linux.cgroupsPath" in err, err
    assert not os.path.exists("/sys/fs/cgroup/pids/etc")


def test_cgroups_path_naming_a_cgroup_with_someone_else_s_processes_is_refused(oci, parent):
    # a stranger's cgroup (made here, with a process in it): joining it would put the container under its
    # limits and hand the stranger to our kill --all and delete
    d = "/sys/fs/cgroup/pids" + parent + "/busy"
    os.makedirs(d)
    p = subprocess.Popen(["sleep", "1000"])
    try:
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write(str(p.pid))
        b = oci.bundle(["true"], with_cg(parent + "/busy"))
        rc, _, err = oci.create(uniq("busy"), b)
        assert rc != 0 and "linux.cgroupsPath" in err and "processes" in err, err
        assert p.poll() is None  # untouched
        assert str(p.pid) in read(os.path.join(d, "cgroup.procs"))
    finally:
        p.kill()
        p.wait()
        wait_until(lambda: not read(os.path.join(d, "cgroup.procs")))
        os.rmdir(d)
        for x in v1_dirs(parent + "/busy"):
            if os.path.isdir(x):
                os.rmdir(x)


def test_no_cgroup_is_left_by_a_create_that_fails_after_making_it(oci, parent, monkeypatch):
    path = parent + "/fails"
    b = oci.bundle(["true"], with_cg(path, {"pids": {"limit": 10}}))
    monkeypatch.setenv("MXC_FAULT_OCI_AFTER_CGROUP", "1")
    rc, _, err = oci.create("fails", b)
    assert rc != 0 and "fault injected" in err, err
    assert not [d for d in v1_dirs(path) if os.path.exists(d)]
    # and every level it made (the test's parent did not exist before)
    assert not [d for d in v1_dirs(parent) if os.path.exists(d)]


def test_delete_force_of_a_create_killed_after_its_cgroup_removes_it(oci, parent, monkeypatch):
    path = parent + "/crashed"
    b = oci.bundle(["true"], with_cg(path))
    monkeypatch.setenv("MXC_FAULT_OCI_AFTER_CGROUP", "crash")
    rc, _, _ = oci.create("crashed", b)
    monkeypatch.delenv("MXC_FAULT_OCI_AFTER_CGROUP")
    assert rc != 0 and os.path.isdir("/sys/fs/cgroup/pids" + path)
    state = os.path.join(os.path.realpath(oci.root), "crashed")
    assert [n for n in os.listdir(CLAIMS) if n.startswith("range-") and state in open(os.path.join(CLAIMS, n)).read()]
    rc, _, err = oci("delete", "--force", "crashed")
    assert rc == 0, err
    assert not [d for d in v1_dirs(path) if os.path.exists(d)]
    assert not os.path.exists(os.path.join(oci.root, "crashed"))
    # ... and its range: the claim named the create that died (it is not left for the sweeper)
    assert not [n for n in os.listdir(CLAIMS) if n.startswith("range-") and state in open(os.path.join(CLAIMS, n)).read()]


# --------------------------------------------------------------------------------------------
# resources, enforced


def test_pids_limit_stops_a_fork_bomb(oci, parent):
    path = parent + "/bomb"
    # the bomb in a subshell (ash gives up at the first fork refused); the init survives it
    b = oci.bundle(["sh", "-c", "exec 2>&1; (for i in $(seq 40); do sleep 1000 & done; echo all-spawned); "
                    "echo bomb-ended; exec sleep 1000"], with_cg(path, {"pids": {"limit": 8}}))
    start(oci, "bomb", b)
    assert wait_until(lambda: "bomb-ended" in out_of(b), 30), out_of(b)
    assert "all-spawned" not in out_of(b)
    assert read("/sys/fs/cgroup/pids%s/pids.max" % path) == "8"
    rc, out, err = oci("ps", "--format", "json", "bomb")
    assert rc == 0, err
    assert 1 <= len(json.loads(out)) <= 8
    assert "fork" in out_of(b)  # the shell was told no
    assert int(read("/sys/fs/cgroup/pids%s/pids.events" % path).split()[-1]) > 0  # "max N": refused forks
    assert oci("delete", "--force", "bomb")[0] == 0


def test_memory_limit_kills_a_memory_hog(oci, parent):
    path = parent + "/hog"
    b = oci.bundle(["sh", "-c", "a=xxxxxxxx; while true; do a=$a$a; done"],
                   with_cg(path, {"memory": {"limit": 32 << 20}}))
    rc, _, err = oci("run", "--bundle", b, "hog", timeout=120)
    assert rc == 128 + 9, (rc, err)  # the kernel's OOM killer, inside the cgroup
    assert not [d for d in v1_dirs(path) if os.path.exists(d)]


def test_memory_and_cpu_limits_are_written(oci, parent):
    path = parent + "/lim"
    b = oci.bundle(["sleep", "1000"], with_cg(path, {
        "memory": {"limit": 64 << 20, "reservation": 32 << 20},
        "cpu": {"shares": 512, "quota": 50000, "period": 100000, "cpus": "0", "mems": "0"}}))
    start(oci, "lim", b)
    m, c = "/sys/fs/cgroup/memory" + path, "/sys/fs/cgroup/cpu" + path
    assert read(m + "/memory.limit_in_bytes") == str(64 << 20)
    assert read(m + "/memory.soft_limit_in_bytes") == str(32 << 20)
    if os.path.exists(m + "/memory.memsw.limit_in_bytes"):  # no swap unless asked
        assert read(m + "/memory.memsw.limit_in_bytes") == str(64 << 20)
    assert read(c + "/cpu.shares") == "512"
    assert read(c + "/cpu.cfs_quota_us") == "50000"
    assert read("/sys/fs/cgroup/cpuset%s/cpuset.cpus" % path) == "0"
    assert oci("delete", "--force", "lim")[0] == 0


@pytest.mark.parametrize("resources,field", [
    ({"memory": {"kernel": 1 << 20}}, "memory.kernel"),
    ({"memory": {"disableOOMKiller": True}}, "memory.disableOOMKiller"),
    ({"cpu": {"idle": 1}}, "cpu.idle"),
    ({"blockIO": {"weight": 100}}, "blockIO"),
    ({"hugepageLimits": [{"pageSize": "2MB", "limit": 1}]}, "hugepageLimits"),
    ({"unified": {"memory.high": "1"}}, "unified"),
    ({"pids": {"limit": "ten"}}, "pids.limit"),
])
def test_resources_not_delivered_are_refused_naming_the_field(oci, resources, field):
    b = oci.bundle(["true"], with_cg(None, resources))
    rc, _, err = oci.create(uniq("nores"), b)
    assert rc != 0 and ("linux.resources." + field) in err, err


def test_a_limit_with_cgroup_manager_disabled_is_refused(oci):
    b = oci.bundle(["true"], with_cg(None, {"pids": {"limit": 5}}))
    with open(os.path.join(b, "out"), "wb") as out:
        rc, _, err = oci("--cgroup-manager", "disabled", "create", "--bundle", b, uniq("dis"), out=out)
    assert rc != 0 and "linux.resources.pids" in err, err


def test_systemd_cgroup_is_refused_with_runc_s_words(oci):
    b = oci.bundle(["true"])
    for flags in (["--systemd-cgroup"], ["--cgroup-manager", "systemd"]):
        with open(os.path.join(b, "out"), "wb") as out:
            rc, _, err = oci(*flags, "create", "--bundle", b, uniq("sd"), out=out)
        assert rc != 0 and "systemd cgroup flag passed, but systemd support for managing cgroups is not available" \
            in err, err
    rc, _, err = oci("--cgroup-manager", "cgroupfs", "state", "nosuch")
    assert "does not exist" in err, err


# --------------------------------------------------------------------------------------------
# pause / resume, update, ps, kill --all, exec


def counter_bundle(oci, path):
    b = oci.bundle(["sh", "-c", "i=0; while true; do i=$((i+1)); echo $i > /tmp/n; done"], with_cg(path),
                   readonly=False)
    return b, os.path.join(b, "rootfs", "tmp", "n")


def count(f):
    try:
        return int(read(f) or 0)
    except (OSError, ValueError):
        return 0


def test_pause_freezes_the_container_and_resume_thaws_it(oci, parent):
    b, n = counter_bundle(oci, parent + "/p")
    start(oci, "p", b)
    assert wait_until(lambda: count(n) > 0, 30)
    rc, _, err = oci("pause", "p")
    assert rc == 0, err
    assert oci.state("p")["status"] == "paused"
    assert read("/sys/fs/cgroup/freezer%s/p/freezer.state" % parent) == "FROZEN"
    c1 = count(n)
    time.sleep(0.5)  # an observation window, not a threshold: nothing may move in it
    assert count(n) == c1
    rc, _, err = oci("exec", "p", "true")
    assert rc != 0 and "paused" in err, err
    assert oci("pause", "p")[0] != 0  # already paused
    # --ignore-paused: the exec'd process joins the frozen cgroup and runs once it is thawed
    procs = "/sys/fs/cgroup/freezer%s/p/cgroup.procs" % parent
    before = len(read(procs).split())
    late = subprocess.Popen([MXC_OCI, "--root", oci.root, "exec", "--ignore-paused", "p", "echo", "thawed"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert wait_until(lambda: len(read(procs).split()) > before, 30)  # it is in, frozen
    assert late.poll() is None
    rc, _, err = oci("resume", "p")
    assert rc == 0, err
    out, err = late.communicate(timeout=60)
    assert late.returncode == 0 and out == b"thawed\n", err
    assert oci.state("p")["status"] == "running"
    assert wait_until(lambda: count(n) > c1, 30)
    assert oci("resume", "p")[0] != 0  # not paused


def test_delete_force_and_kill_all_of_a_paused_container(oci, parent):
    b, n = counter_bundle(oci, parent + "/pk")
    pid = start(oci, "pk", b)
    assert oci("exec", "--detach", "pk", "sleep", "1000", out=subprocess.DEVNULL)[0] == 0
    rc, out, _ = oci("ps", "--format", "json", "pk")
    pids = json.loads(out)
    assert len(pids) >= 2 and pids[0] == pid
    assert oci("pause", "pk")[0] == 0
    rc, _, err = oci("kill", "--all", "pk", "KILL")
    assert rc == 0, err
    assert wait_until(lambda: all(dead(p) for p in pids), 30)
    rc, _, err = oci("delete", "--force", "pk")
    assert rc == 0, err
    assert not [d for d in v1_dirs(parent + "/pk") if os.path.exists(d)]


def test_exec_joins_the_container_s_cgroup(oci, parent):
    path = parent + "/ex"
    start(oci, "ex", oci.bundle(["sleep", "1000"], with_cg(path)))
    rc, out, err = oci("exec", "ex", "cat", "/proc/self/cgroup")
    assert rc == 0, err
    assert "pids:%s\n" % path in out, out


def test_exec_and_init_join_the_hybrid_s_cgroup2_hierarchy_which_goes_with_delete(oci, parent):
    """cgroups.bats `runc exec (cgroup v1+hybrid joins correct cgroup)`: on a hybrid host the `0::`
    line of /proc/PID/cgroup names the container's path, for the init and an exec'd process alike;
    nothing is limited there, and the directory goes with delete."""
    if not HYBRID:
        pytest.skip("not a hybrid host (no cgroup2 at /sys/fs/cgroup/unified)")
    path = parent + "/hy"
    pid = start(oci, "hy", oci.bundle(["sleep", "1000"], with_cg(path, {"pids": {"limit": 50}})))
    assert cgroup_of(pid, "") == path
    rc, out, err = oci("exec", "hy", "cat", "/proc/self/cgroup")
    assert rc == 0, err
    assert out.rstrip("\n").splitlines()[-1] == "0::" + path, out
    d = "/sys/fs/cgroup/unified" + path
    assert str(pid) in read(d + "/cgroup.procs").split()
    assert not read(d + "/cgroup.subtree_control")  # no controller enabled, nothing written
    assert oci("delete", "--force", "hy")[0] == 0
    assert not os.path.exists(d)


def rt_sched():
    return os.path.exists("/sys/fs/cgroup/cpu/cpu.rt_runtime_us")


def test_realtime_cpu_is_written_where_the_host_has_it_and_updated(oci, parent):
    """update.bats `update rt period and runtime`: cpu.rt_period_us/rt_runtime_us (v1, a kernel with
    CONFIG_RT_GROUP_SCHED), at create and by update (-r and --cpu-rt-*).  A new cgroup's runtime is 0
    and a child's cannot exceed it: the test's own parent level is given the root's budget first (as
    runc's test does; the host's settings are not touched)."""
    if not rt_sched():
        b = oci.bundle(["true"], with_cg(None, {"cpu": {"realtimeRuntime": 1000}}))
        rc, _, err = oci.create(uniq("nort"), b)
        assert rc != 0 and "linux.resources.cpu.realtimeRuntime" in err and "CONFIG_RT_GROUP_SCHED" in err, err
        return
    root = "/sys/fs/cgroup/cpu"
    period, runtime = read(root + "/cpu.rt_period_us"), read(root + "/cpu.rt_runtime_us")
    os.makedirs(root + parent)
    with open(root + parent + "/cpu.rt_runtime_us", "w") as f:
        f.write(runtime)
    path = parent + "/rt"
    b = oci.bundle(["sleep", "1000"], with_cg(path, {"cpu": {"realtimePeriod": int(period),
                                                             "realtimeRuntime": 400000}}))
    start(oci, "rt", b)
    d = root + path
    assert (read(d + "/cpu.rt_period_us"), read(d + "/cpu.rt_runtime_us")) == (period, "400000")
    res = os.path.join(oci.base, "rt.json")
    with open(res, "w") as f:
        json.dump({"cpu": {"realtimePeriod": 800001, "realtimeRuntime": 500001}}, f)
    rc, _, err = oci("update", "-r", res, "rt")
    assert rc == 0, err
    assert (read(d + "/cpu.rt_period_us"), read(d + "/cpu.rt_runtime_us")) == ("800001", "500001")
    rc, _, err = oci("update", "rt", "--cpu-rt-period", "900001", "--cpu-rt-runtime", "600001")
    assert rc == 0, err
    assert (read(d + "/cpu.rt_period_us"), read(d + "/cpu.rt_runtime_us")) == ("900001", "600001")
    # more than the parent's budget: the kernel's refusal, naming the field
    rc, _, err = oci("update", "rt", "--cpu-rt-runtime", str(int(runtime) * 2))
    assert rc != 0 and "linux.resources.cpu.realtimeRuntime" in err, err
    assert read(d + "/cpu.rt_runtime_us") == "600001"
    assert oci("delete", "--force", "rt")[0] == 0
    assert read(root + "/cpu.rt_runtime_us") == runtime and read(root + "/cpu.rt_period_us") == period


def test_update_changes_a_live_limit(oci, parent):
    path = parent + "/up"
    b = oci.bundle(["sleep", "1000"], with_cg(path, {"pids": {"limit": 100}}))
    start(oci, "up", b)
    rc, out, err = oci("exec", "up", "sh", "-c", "exec >/dev/null; sleep 100 & sleep 100 & sleep 100 & exec >&2; echo ok >&2")
    assert rc == 0 and "ok" in err, err
    rc, _, err = oci("update", "--pids-limit", "2", "--memory", "96m", "up")
    assert rc == 0, err
    assert read("/sys/fs/cgroup/pids%s/pids.max" % path) == "2"
    assert read("/sys/fs/cgroup/memory%s/memory.limit_in_bytes" % path) == str(96 << 20)
    # the init and the 3 sleeps are already 4 > 2: the exec'd shell itself cannot be forked
    rc, out, err = oci("exec", "up", "sh", "-c", "echo ran")
    assert rc != 0 and "ran" not in out, (out, err)
    res = os.path.join(oci.base, "res.json")
    with open(res, "w") as f:
        json.dump({"pids": {"limit": 200}, "cpu": {"shares": 256}}, f)
    rc, _, err = oci("update", "-r", res, "up")
    assert rc == 0, err
    assert read("/sys/fs/cgroup/pids%s/pids.max" % path) == "200"
    assert read("/sys/fs/cgroup/cpu%s/cpu.shares" % path) == "256"
    rc, out, err = oci("exec", "up", "sh", "-c", "echo ran")
    assert rc == 0 and "ran" in out, err
    m = "/sys/fs/cgroup/memory" + path
    if os.path.exists(m + "/memory.memsw.limit_in_bytes"):  # swap accounting (this host has it)
        rc, _, err = oci("update", "--memory", "64m", "--memory-swap", "128m", "--cpuset-cpus", "0", "up")
        assert rc == 0, err
        assert read(m + "/memory.limit_in_bytes") == str(64 << 20)
        assert read(m + "/memory.memsw.limit_in_bytes") == str(128 << 20)  # memory + swap, runc's meaning
        assert read("/sys/fs/cgroup/cpuset%s/cpuset.cpus" % path) == "0"
        rc, _, err = oci("update", "--memory-swap", "32m", "up")
        assert rc != 0 and "linux.resources.memory.swap" in err, err
    for flags, field in ((["--kernel-memory", "1m"], "memory.kernel"), (["--blkio-weight", "100"], "blockIO"),
                         (["--cpu-idle", "1"], "cpu.idle")):
        rc, _, err = oci("update", *flags, "up")
        assert rc != 0 and "linux.resources." + field in err, err


# --------------------------------------------------------------------------------------------
# cgroup v2, in a private directory of this host's cgroup2 mount


@pytest.fixture
def v2root(monkeypatch):
    base = cgroup2_mount()
    if not base:
        pytest.skip("no cgroup2 mount")
    root = os.path.join(base, uniq("mxctest-oci"))
    os.mkdir(root)
    monkeypatch.setenv("MXC_CGROUP2_ROOT", root)
    yield root
    for dirpath, dirs, _ in sorted(os.walk(root, topdown=False), key=lambda t: -len(t[0])):
        try:
            open(os.path.join(dirpath, "cgroup.kill"), "w").write("1")
        except OSError:
            pass
        wait_until(lambda: not read(os.path.join(dirpath, "cgroup.procs")), 5)
        os.rmdir(dirpath)


def test_v2_cgroup_pause_ps_and_removal(oci, v2root):
    b, n = counter_bundle(oci, "/pods/v2c")
    pid = start(oci, "v2c", b)
    d = v2root + "/pods/v2c"
    assert str(pid) in read(d + "/cgroup.procs").split()
    assert cgroup_of(pid, "").endswith("/pods/v2c")
    assert wait_until(lambda: count(n) > 0, 30)
    assert oci("pause", "v2c")[0] == 0
    assert oci.state("v2c")["status"] == "paused"
    assert read(d + "/cgroup.freeze") == "1"
    c1 = count(n)
    time.sleep(0.5)
    assert count(n) == c1
    assert oci("resume", "v2c")[0] == 0
    assert wait_until(lambda: count(n) > c1, 30)
    rc, out, _ = oci("ps", "--format", "json", "v2c")
    assert json.loads(out)[0] == pid
    assert oci("kill", "--all", "v2c", "KILL")[0] == 0  # its "0::" line names the directory exactly
    assert wait_until(lambda: dead(pid), 10)
    assert oci("delete", "--force", "v2c")[0] == 0
    assert not os.path.exists(d)


def test_v2_limit_without_its_controller_is_refused_naming_the_field(oci, v2root):
    # this host delegates no controller to its cgroup2 mount: nothing may be claimed that is not enforced
    b = oci.bundle(["true"], with_cg(None, {"pids": {"limit": 5}}))
    rc, _, err = oci.create(uniq("v2n"), b)
    assert rc != 0 and "linux.resources.pids.limit" in err and "subtree_control" in err, err
    assert os.listdir(v2root) == [] or not [x for x in os.listdir(v2root) if x.startswith("mxc.oci")] or \
        os.listdir(os.path.join(v2root, "mxc.oci")) == []


# --------------------------------------------------------------------------------------------
# mounts of type cgroup / cgroup2: the container's own cgroup namespace view, read-only


def cgroup_mount(kind="cgroup", ns=True):
    def mutate(c):
        if ns:
            c["linux"]["namespaces"].append({"type": "cgroup"})
        c["mounts"].append({"destination": "/sys/fs/cgroup", "type": kind, "source": kind,
                            "options": ["rw", "nosuid", "noexec", "nodev"]})
    return mutate


def test_cgroup_mount_is_the_container_s_own_view_read_only(oci, parent):
    path = parent + "/view"

    def mutate(c):
        cgroup_mount()(c)
        with_cg(path, {"pids": {"limit": 17}})(c)
    script = ("cat /proc/self/cgroup; cat /sys/fs/cgroup/pids/pids.max; ls /sys/fs/cgroup; "
              "mkdir /sys/fs/cgroup/pids/escape 2>&1; (echo 1 > /sys/fs/cgroup/pids/pids.max) 2>&1; "
              "touch /sys/fs/cgroup/new 2>&1; echo end")
    b = oci.bundle(["sh", "-c", script], mutate)
    rc, out, err = oci("run", "--bundle", b, "view")
    assert rc == 0, err
    lines = out.splitlines()
    assert "8:pids:/" in lines or any(l.endswith(":pids:/") for l in lines), out  # its cgroup is its root
    assert path not in out  # the host's path of it is not shown
    assert "17" in lines  # its own pids.max, not the host's root
    assert {"pids", "memory", "freezer"} <= set(lines)
    assert out.count("Read-only file system") == 3, out
    assert "blkio" not in lines and "devices" not in lines  # hierarchies it is not in: not shown


def test_cgroup_mount_without_a_cgroup_namespace_is_its_own_directory_read_only(oci, parent):
    # containerd's default spec (ctr run) asks for a cgroup mount with no cgroup namespace: runc's answer, a
    # read-only bind of the container's own directory of each hierarchy; nothing above it is reachable
    path = parent + "/bind"

    def mutate(c):
        cgroup_mount(ns=False)(c)
        with_cg(path, {"pids": {"limit": 19}})(c)
    script = ("cat /sys/fs/cgroup/pids/pids.max; ls /sys/fs/cgroup; ls /sys/fs/cgroup/pids/..; "
              "mkdir /sys/fs/cgroup/pids/escape 2>&1; (echo 1 > /sys/fs/cgroup/pids/pids.max) 2>&1; echo end")
    b = oci.bundle(["sh", "-c", script], mutate)
    rc, out, err = oci("run", "--bundle", b, "bind")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "19", out  # its own cgroup, not the host's root
    assert {"pids", "memory", "freezer"} <= set(lines) and "blkio" not in lines
    assert "mxc" not in lines and "mxc.oci" not in lines  # .. of the mount's root is the mount's root
    assert out.count("Read-only file system") == 2, out


def test_cgroup2_mount_on_a_v1_host_is_refused(oci):
    b = oci.bundle(["true"], cgroup_mount("cgroup2"))
    rc, _, err = oci.create(uniq("cgm"), b)
    assert rc != 0 and "type 'cgroup2'" in err and "this host's cgroups are v1" in err, err


def test_v2_cgroup2_mount_is_the_container_s_own_directory(oci, v2root):
    b = oci.bundle(["sh", "-c", "cat /proc/self/cgroup; ls /sys/fs/cgroup; mkdir /sys/fs/cgroup/x 2>&1; echo end"],
                   lambda c: (cgroup_mount("cgroup2")(c), with_cg("/v2m")(c)))
    rc, out, err = oci("run", "--bundle", b, "v2m")
    assert rc == 0, err
    assert "0::/\n" in out and "cgroup.procs" in out and "Read-only file system" in out, out
    assert "v2m" not in out
    # without a cgroup namespace: a read-only clone of its own directory
    b = oci.bundle(["sh", "-c", "cat /sys/fs/cgroup/cgroup.procs; mkdir /sys/fs/cgroup/x 2>&1; echo end"],
                   lambda c: (cgroup_mount("cgroup2", ns=False)(c), with_cg("/v2b")(c)))
    rc, out, err = oci("run", "--bundle", b, "v2b")
    assert rc == 0, err
    assert "Read-only file system" in out, out


def procs(path):
    """The live (not zombie) processes of path in the pids hierarchy."""
    try:
        listed = read("/sys/fs/cgroup/pids" + path + "/cgroup.procs").split()
    except OSError:
        return []
    return [int(p) for p in listed if not dead(int(p))]


def test_kill_all_and_delete_reach_every_process_of_more_than_512(oci, parent):
    """kill --all signals every process the cgroup lists, not the first 512 of cgroup.procs (the
    list is read whole): 700 sleepers of a host shell that joined the container's cgroup (outside its
    PID namespace, so none dies with the init), one pass of kill --all KILL leaves none, and delete
    --force removes the emptied cgroup."""
    path = parent + "/many"
    start(oci, "many", oci.bundle(["sleep", "1000"], with_cg(path)))
    d = "/sys/fs/cgroup/pids" + path
    sh = subprocess.Popen(["sh", "-c", "echo $$ > %s/cgroup.procs && i=0 && while [ $i -lt 700 ]; do "
                           "sleep 1000 & i=$((i+1)); done; wait" % d])
    try:
        assert wait_until(lambda: len(procs(path)) >= 702, 60), len(procs(path))
        rc, _, err = oci("kill", "--all", "many", "KILL")
        assert rc == 0, err
        assert wait_until(lambda: not procs(path), 10), "%d left" % len(procs(path))
        rc, _, err = oci("delete", "--force", "many")
        assert rc == 0, err
        assert not [x for x in v1_dirs(path) if os.path.exists(x)]
    finally:
        for p in procs(path):  # what the build under test missed
            try:
                os.kill(p, 9)
            except OSError:
                pass
        sh.kill()
        sh.wait()
