"""Resource limits: the CPU limit (MXC_CPU_MAX) next to the pids and memory limits.

MXC_CPU_MAX is host configuration, read where the plan is built: for a one-shot the request
itself, for a session the `start` phase (the holder's cgroup is made there; every exec joins
it).  The checks read the sandbox's cgroup from the host, where the sandbox cannot lie.
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import (MXC_EXEC, assert_error, assert_ok_envelope, live_pids_of_uids, oneshot_request, read_all_bg,
                      wait_until)

PERIOD_US = 100000

# About one second of wall clock spent computing (forks of date included): at 0.2 CPU the
# group runs out of its 20 ms per 100 ms period in every period of it.
BUSY_LOOP = ('s=$(date +%s%N); '
             'while [ $(( $(date +%s%N) - s )) -lt 1000000000 ]; do '
             'j=0; while [ $j -lt 500 ]; do j=$((j+1)); done; done; echo busy-done')


def _probe_cpu_mode(mxc):
    r = mxc(argv=["--probe"])
    assert r.rc == 0, r.describe()
    return json.loads(r.stdout)["result"]["cgroups"]["cpu"]


def _v2_root_with_cpu():
    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        try:
            if "cpu" in open(os.path.join(root, "cgroup.controllers")).read().split():
                return root
        except OSError:
            pass
    return None


class CpuCgroup:
    """The host's view of one sandbox's cpu cgroup (v1: its own hierarchy; v2: the one dir)."""

    def __init__(self, mode, name):
        self.mode = mode
        if mode == "v1":
            self.dir = "/sys/fs/cgroup/cpu/mxc/%s" % name
        else:
            self.dir = "%s/mxc-%s" % (_v2_root_with_cpu(), name)

    def read(self, f):
        return open(os.path.join(self.dir, f)).read()

    def exists(self):
        return os.path.isdir(self.dir)

    def quota_period(self):
        if self.mode == "v1":
            return int(self.read("cpu.cfs_quota_us")), int(self.read("cpu.cfs_period_us"))
        quota, period = self.read("cpu.max").split()
        return (-1 if quota == "max" else int(quota)), int(period)

    def limited(self):
        """Whether the sandbox has a cpu limit of its own on this host."""
        if self.mode == "v1":
            return self.exists()
        return os.path.exists(os.path.join(self.dir, "cpu.max")) and self.quota_period()[0] != -1

    def stat(self):
        return dict((k, int(v)) for k, v in (l.split() for l in self.read("cpu.stat").splitlines()))


@pytest.fixture
def cpu_mode(mxc):
    mode = _probe_cpu_mode(mxc)
    if mode == "none":
        pytest.skip("this host has no cpu cgroup controller (probe: cgroups.cpu = none)")
    return mode


def _oneshot_holding(mxc, cmd, cpu_max):
    """Starts a one-shot whose workload runs cmd, prints 'ready' and waits for its stdin to
    close; returns (popen, cgroup name)."""
    req = oneshot_request("%s; echo ready; read _; true" % cmd)
    p = mxc.popen(req, env={"MXC_CPU_MAX": cpu_max})
    start = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[19]
    return p, "oneshot-%d-%s-1" % (p.pid, start)  # the first one-shot of that mxc-exec (pid, start time)


# ------------------------------------------------------------------------------------------------
# the limit is applied and it bites


def test_session_cpu_limit_throttles_every_exec(session_factory, cpu_mode):
    s = session_factory(env={"MXC_CPU_MAX": "0.2"})
    cg = CpuCgroup(cpu_mode, s.metadata["agentUserName"])
    assert cg.limited(), "no cpu cgroup for a sandbox started with MXC_CPU_MAX=0.2: %s" % cg.dir
    assert cg.quota_period() == (20000, PERIOD_US)
    # the busy loop is an exec: it runs in the sandbox's cpu cgroup, not only the holder
    r = s.exec(BUSY_LOOP)
    assert (r.rc, r.stdout) == (0, "busy-done\n"), r.describe()
    st = cg.stat()
    assert st["nr_throttled"] > 0, st
    assert_ok_envelope(s.stop())
    assert not cg.limited(), "the cpu cgroup outlived stop: %s" % cg.dir


def test_session_cpu_limit_is_taken_at_start(session_factory, cpu_mode):
    """A limit given at provision only is not one: the holder's cgroup is made at start."""
    s = session_factory(start=False, env={"MXC_CPU_MAX": "0.5"})
    assert_ok_envelope(s.start(env={"MXC_CPU_MAX": "1.5"}))
    cg = CpuCgroup(cpu_mode, s.metadata["agentUserName"])
    assert cg.quota_period() == (150000, PERIOD_US)
    assert_ok_envelope(s.deprovision())
    assert not cg.limited(), "the cpu cgroup outlived deprovision: %s" % cg.dir


def test_oneshot_cpu_limit_throttles(mxc, cpu_mode):
    p, name = _oneshot_holding(mxc, BUSY_LOOP, "0.2")
    cg = CpuCgroup(cpu_mode, name)
    try:
        line = p.stdout.readline()
        assert line == b"busy-done\n", (line, p.stderr.read() if p.poll() is not None else b"")
        assert p.stdout.readline() == b"ready\n"
        assert cg.quota_period() == (20000, PERIOD_US)
        st = cg.stat()
        assert st["nr_throttled"] > 0, st
    finally:
        p.stdin.close()
        rc, out, err = read_all_bg(p, 60)
    assert rc == 0, (out, err)
    # the CLI returns on the workload's status; a detached cleaner removes the cgroup once
    # PID 1's teardown is done (throttled to 0.2 CPU here)
    assert wait_until(lambda: not cg.limited(), 30), "the one-shot's cpu cgroup outlived it: %s" % cg.dir


# ------------------------------------------------------------------------------------------------
# no limit: no cpu cgroup at all


def test_no_cpu_limit_no_cpu_cgroup_session(session_factory, cpu_mode):
    s = session_factory(env={"MXC_CPU_MAX": ""})  # empty is unset
    cg = CpuCgroup(cpu_mode, s.metadata["agentUserName"])
    r = s.exec("echo hi")
    assert (r.rc, r.stdout) == (0, "hi\n"), r.describe()
    assert not cg.limited(), "a cpu cgroup for a sandbox without MXC_CPU_MAX: %s" % cg.dir


def test_no_cpu_limit_no_cpu_cgroup_oneshot(mxc, cpu_mode):
    p, name = _oneshot_holding(mxc, "true", "")
    cg = CpuCgroup(cpu_mode, name)
    try:
        assert p.stdout.readline() == b"ready\n"
        if cpu_mode == "v1" and os.path.isdir("/sys/fs/cgroup/pids/mxc"):
            # the sandbox's cgroups exist while it runs (the check below is not vacuous) ...
            assert os.path.isdir("/sys/fs/cgroup/pids/mxc/%s" % name)
        # ... but no cpu one
        assert not cg.limited(), "a cpu cgroup for a one-shot without MXC_CPU_MAX: %s" % cg.dir
    finally:
        p.stdin.close()
        rc, out, err = read_all_bg(p, 60)
    assert rc == 0, (out, err)


def test_cpu_limit_without_a_cpu_controller_is_refused(mxc):
    """An unprivileged caller has no writable cpu controller here: the limit is refused, the
    workload is not run unlimited instead."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv is not installed")
    uid = int(os.environ.get("MXC_TEST_ROOTLESS_UID", "61234"))
    drop = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]

    def run(cpu_max, *flags):
        p = subprocess.run(drop + [MXC_EXEC] + list(flags), capture_output=True, timeout=60,
                           input=json.dumps(oneshot_request("echo ran", helper=False)).encode(),
                           env=dict(mxc.env({"MXC_CPU_MAX": cpu_max}), MXC_STATE_DIR="/nonexistent"))
        return p.returncode, p.stdout.decode()

    rc, out = run("", "--probe")
    if rc != 0 or json.loads(out)["result"]["cgroups"]["cpu"] != "none":
        pytest.skip("uid %d has a cpu controller here" % uid)
    rc, out = run("", "--config", "-")
    if (rc, out) != (0, "ran\n"):
        pytest.skip("no unprivileged one-shot on this build/host: %r" % out)
    rc, out = run("0.5", "--config", "-")
    err = json.loads(out)["error"]
    assert rc != 0 and err["code"] == "backend_unavailable", out
    assert "MXC_CPU_MAX" in err["message"] and "cgroups.cpu" in err["message"], err
    assert err.get("remediation"), err


# ------------------------------------------------------------------------------------------------
# bad values fail the request, precisely


BAD_VALUES = ["abc", "0", "-1", "0.0", "1e2", " 1", "1024.5", "0x10", ".5", "2.", "0.000001"]


@pytest.mark.parametrize("value", BAD_VALUES)
def test_invalid_cpu_max_fails_oneshot(mxc, value):
    r = mxc.oneshot("echo ran", host_env={"MXC_CPU_MAX": value})
    err = assert_error(r, "backend_error")
    assert err["message"].startswith('MXC_CPU_MAX="%s" is ' % value), err
    assert "ran" not in r.stdout + r.stderr, r.describe()
    assert "MXC_CPU_MAX" in err.get("remediation", ""), err


def test_invalid_cpu_max_message(mxc):
    r = mxc.oneshot("true", host_env={"MXC_CPU_MAX": "abc"})
    err = assert_error(r, "backend_error")
    assert err["message"] == ('MXC_CPU_MAX="abc" is not a CPU limit: it must be a plain decimal '
                              'number of CPUs (at most 5 decimals), greater than 0 and at most 1024 '
                              '(e.g. 0.5, 1.5, 2)'), err
    r = mxc.oneshot("true", host_env={"MXC_CPU_MAX": "0.005"})
    err = assert_error(r, "backend_error")
    assert err["message"] == ('MXC_CPU_MAX="0.005" is below 0.01, the smallest CPU limit the kernel '
                              'takes (1 ms per 100 ms)'), err


@pytest.mark.parametrize("value", ["abc", "0", "-1"])
def test_invalid_cpu_max_fails_start(session_factory, value):
    s = session_factory(start=False)
    err = assert_error(s.start(env={"MXC_CPU_MAX": value}), "backend_error")
    assert err["message"].startswith('MXC_CPU_MAX="%s" is not a CPU limit' % value), err
    assert_error(s.exec("true"), "not_started")  # not started unlimited instead
    assert_ok_envelope(s.start(env={"MXC_CPU_MAX": ""}))


@pytest.mark.parametrize("value", ["abc", "0", "-1"])
def test_invalid_cpu_max_fails_dry_run(mxc, value):
    r = mxc(oneshot_request("true"), flags=["--dry-run"], env={"MXC_CPU_MAX": value})
    err = assert_error(r, "backend_error")
    assert "MXC_CPU_MAX" in err["message"], err


# ------------------------------------------------------------------------------------------------
# the plan says it


@pytest.mark.parametrize("value,shown", [("0.5", 0.5), ("1.5", 1.5), ("2", 2), ("0.25", 0.25),
                                         ("", None), (None, None)])
def test_dry_run_shows_cpu_max(mxc, monkeypatch, value, shown):
    monkeypatch.delenv("MXC_CPU_MAX", raising=False)
    r = mxc(oneshot_request("true"), flags=["--dry-run"],
            env=None if value is None else {"MXC_CPU_MAX": value})
    assert r.rc == 0, r.describe()
    assert r.result["plan"]["cpuMax"] == shown, r.describe()
    if shown is not None:  # the decimal as given, not 0.20000000000000001
        assert re.search(r'"cpuMax":%s(\.0)?[,}]' % re.escape(value), r.stdout), r.stdout


def test_probe_cpu_mode_matches_the_host(mxc):
    mode = _probe_cpu_mode(mxc)
    assert mode in ("v1", "v2", "none")
    if mode == "v1":
        assert os.access("/sys/fs/cgroup/cpu/cgroup.procs", os.W_OK)
    elif mode == "v2":
        assert _v2_root_with_cpu()
    else:
        assert not _v2_root_with_cpu() and not os.path.exists("/sys/fs/cgroup/cpu/cgroup.procs")


# --- MXC_PIDS_MAX / MXC_MEMORY_MAX: as strict as MXC_CPU_MAX, and enforced


@pytest.mark.parametrize("name,value", [("MXC_PIDS_MAX", "abc"), ("MXC_PIDS_MAX", "0"), ("MXC_PIDS_MAX", "-5"),
                                        ("MXC_PIDS_MAX", "7"), ("MXC_PIDS_MAX", "64k"),
                                        ("MXC_MEMORY_MAX", "1G"), ("MXC_MEMORY_MAX", "1000"),
                                        ("MXC_MEMORY_MAX", " 1073741824")])
def test_invalid_pids_or_memory_limit_fails(mxc, name, value):
    r = mxc(oneshot_request("echo ran"), env={name: value})
    assert "ran" not in r.stdout, r.describe()
    assert_error(r, "backend_error")
    assert r.error["message"].startswith('%s="%s" is not a limit' % (name, value)), r.error


def test_pids_limit_from_the_host_is_enforced(mxc):
    """MXC_PIDS_MAX=64: the sandbox holds at most 64 processes, counted with shell builtins."""
    r = mxc(oneshot_request("(i=0; while [ $i -lt 500 ]; do sleep 5 & i=$((i+1)); done) 2>/dev/null; "
                            "set -- /proc/[0-9]*; echo $#"), env={"MXC_PIDS_MAX": "64"})
    assert r.rc == 0, r.describe()
    n = int(r.stdout.strip().split("\n")[-1])
    assert 30 < n <= 64, r.stdout


def test_a_cgroup_that_cannot_be_made_fails_the_start_and_leaves_nothing(mxc, session_factory):
    """On v1 a session's cgroup is made while its monitor clones the holder (off the start's path):
    a limit the kernel refuses there (EACCES on every write of memory.limit_in_bytes, injected by
    strace) fails the start with the cgroup's error, and leaves no holder, no monitor and no cgroup
    behind; the next start, uninjected, runs a session that works."""
    if not shutil.which("strace"):
        pytest.fail("strace is missing: scripts/deps.sh installs it")
    if not os.path.exists("/sys/fs/cgroup/memory/cgroup.procs"):
        pytest.fail("no v1 memory hierarchy on this host")
    s = session_factory(start=False)
    name, uid = s.metadata["agentUserName"], int(s.metadata["agentUserSid"])
    limit = "/sys/fs/cgroup/memory/mxc/%s/memory.limit_in_bytes" % name
    log = os.path.join(mxc.scratch, "strace-limit-fail")
    p = subprocess.run(["strace", "-qq", "-o", log, "-P", limit, "-e", "trace=write",
                        "-e", "inject=write:error=EACCES", MXC_EXEC, "--experimental", "--config", "-"],
                       input=json.dumps({"phase": "start", "sandboxId": s.id}).encode(), capture_output=True,
                       env=mxc.env({"MXC_MEMORY_MAX": "536870912"}), timeout=60)
    assert p.returncode != 0, (p.stdout, p.stderr)
    env = json.loads(p.stdout)
    assert "error" in env and "cgroup" in json.dumps(env["error"]).lower(), env
    assert wait_until(lambda: live_pids_of_uids({uid}) == [], 10), "the holder outlived its failed start"
    for ctl in ("pids", "memory", "cpu"):
        assert not os.path.exists("/sys/fs/cgroup/%s/mxc/%s" % (ctl, name)), ctl
    r = s.start(env={"MXC_MEMORY_MAX": "536870912"})
    assert_ok_envelope(r)
    r = s.exec("echo alive")
    assert (r.rc, r.stdout) == (0, "alive\n"), r.describe()
    assert_ok_envelope(s.stop())


def test_a_memory_limit_write_interrupted_by_a_signal_is_made_again(mxc, session_factory):
    """The kernel's memory controller gives up a limit write with EINTR while any signal is
    pending — a SIGCHLD from another child of the caller (Node's libuv has a handler) was
    enough to fail a sandbox at cgroup.memory.  strace makes it certain: the first three writes
    of the limit answer EINTR (injected, as the kernel would), the fourth goes through, and
    start succeeds with the limit in place."""
    if not shutil.which("strace"):
        pytest.fail("strace is missing: scripts/deps.sh installs it")
    if not os.path.exists("/sys/fs/cgroup/memory/cgroup.procs"):
        pytest.fail("no v1 memory hierarchy on this host; the v2 limit shares the same write")
    s = session_factory(start=False)
    limit = "/sys/fs/cgroup/memory/mxc/%s/memory.limit_in_bytes" % s.metadata["agentUserName"]
    log = os.path.join(mxc.scratch, "strace-limit")
    p = subprocess.run(["strace", "-qq", "-o", log, "-P", limit, "-e", "trace=write",
                        "-e", "inject=write:error=EINTR:when=1..3", MXC_EXEC, "--experimental", "--config", "-"],
                       input=json.dumps({"phase": "start", "sandboxId": s.id}).encode(), capture_output=True,
                       env=mxc.env({"MXC_MEMORY_MAX": "536870912"}), timeout=60)
    trace = open(log).read()
    assert trace.count("EINTR") == 3, trace
    assert p.returncode == 0 and p.stdout.strip() == b'{"result":{}}', (p.returncode, p.stdout, p.stderr, trace)
    assert open(limit).read().strip() == "536870912"
    r = s.exec("echo alive")
    assert r.rc == 0 and r.stdout == "alive\n", r.describe()
