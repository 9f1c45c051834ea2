"""cgroup v2, for real, and no cgroup migration on the call path (issue 12).

This host is hybrid: its controllers sit on v1 and its cgroup2 mount has none. The v2 path is
exercised in a private directory of the host's cgroup2 hierarchy handed to mxc as
MXC_CGROUP2_ROOT (what a systemd `Delegate=yes` unit or a container's own subtree gives a
runtime): every sandbox gets its own directory there, its first process is born inside with
clone3(CLONE_INTO_CGROUP), cgroup.kill is the kill-all, and the directory goes with the
sandbox. Controllers that are not enabled there are reported as "none" by --probe and the
rlimit fallback applies — nothing is claimed that is not enforced.

The migration tests trace mxc-exec (strace) and assert what it writes: a session exec touches
no cgroup file at all; a one-shot on v1 moves PID 1 by writing "0" to `tasks` (a single thread
moving itself takes no global lock), never a pid to cgroup.procs; on v2 nothing is moved.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import cgroup2_mount, MXC_EXEC, assert_ok_envelope, unique, wait_until


@pytest.fixture
def v2root(monkeypatch):
    base = cgroup2_mount()
    assert base, "this kernel has no cgroup2 mount: the v2 path cannot be tested here"
    # not "mxc-…": that prefix is what the sweeper reclaims
    root = os.path.join(base, "mxctest-%s" % unique("v2"))
    os.mkdir(root)
    monkeypatch.setenv("MXC_CGROUP2_ROOT", root)
    yield root
    for d in os.listdir(root):
        p = os.path.join(root, d)
        if os.path.isdir(p):
            try:
                open(os.path.join(p, "cgroup.kill"), "w").write("1")
            except OSError:
                pass
            wait_until(lambda: not open(os.path.join(p, "cgroup.procs")).read().strip(), 5)
            os.rmdir(p)
    os.rmdir(root)


def sandbox_dirs(root):
    return sorted(d for d in os.listdir(root) if d.startswith("mxc-") and os.path.isdir(os.path.join(root, d)))


def v2_cgroup_of(pid):
    for line in open("/proc/%d/cgroup" % pid):
        if line.startswith("0::"):
            return line[3:].strip()
    return None


def pids_of(marker):
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


def test_probe_says_which_controllers_v2_gives(mxc, v2root):
    probe = json.loads(subprocess.run([MXC_EXEC, "--probe"], capture_output=True, env=mxc.env()).stdout)["result"]
    enabled = open(os.path.join(v2root, "cgroup.subtree_control")).read().split()
    for c in ("pids", "memory", "cpu"):
        assert probe["cgroups"][c] == ("v2" if c in enabled else "none"), probe["cgroups"]
    if "pids" not in enabled:  # said, not pretended
        assert "RLIMIT_NPROC" in probe["rlimitFallback"], probe


def test_oneshot_is_born_in_its_own_v2_cgroup_and_leaves_nothing(mxc, v2root):
    marker = "%d%d" % (os.getpid(), int(time.time() * 1000) % 100000)
    p = mxc.popen({"process": {"commandLine": "sleep 3.%s; echo done" % marker}})
    try:
        assert wait_until(lambda: pids_of("sleep 3.%s" % marker), 10)
        pid = pids_of("sleep 3.%s" % marker)[0]
        dirs = sandbox_dirs(v2root)
        assert len(dirs) == 1 and dirs[0].startswith("mxc-oneshot-"), dirs
        rel = "/" + os.path.relpath(os.path.join(v2root, dirs[0]), cgroup2_mount())
        assert v2_cgroup_of(pid) == rel, (v2_cgroup_of(pid), rel)
        # PID 1 of the sandbox (the workload's parent) is in it too: the whole sandbox is
        ppid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
        assert v2_cgroup_of(ppid) == rel
    finally:
        out, err = p.communicate(timeout=30)
    assert p.returncode == 0 and b"done" in out, (out, err)
    assert wait_until(lambda: sandbox_dirs(v2root) == [], 10), sandbox_dirs(v2root)


def test_session_lives_in_its_v2_cgroup_and_stop_kills_what_escaped_the_exec(mxc, session_factory, v2root):
    s = session_factory()
    dirs = sandbox_dirs(v2root)
    assert len(dirs) == 1, dirs
    marker = "4%d" % (os.getpid() % 100000)
    r = s.exec("setsid sleep 1%s.5 </dev/null >/dev/null 2>&1 & echo started" % marker)
    assert r.rc == 0 and "started" in r.stdout, r.describe()
    assert wait_until(lambda: pids_of("sleep 1%s.5" % marker), 10)
    escaped = pids_of("sleep 1%s.5" % marker)[0]
    rel = "/" + os.path.relpath(os.path.join(v2root, dirs[0]), cgroup2_mount())
    assert v2_cgroup_of(escaped) == rel
    assert_ok_envelope(s.stop())
    assert wait_until(lambda: not os.path.exists("/proc/%d" % escaped) or
                      open("/proc/%d/stat" % escaped).read().rsplit(")", 1)[1].split()[0] == "Z", 5)
    assert sandbox_dirs(v2root) == []
    assert_ok_envelope(s.start())
    assert s.exec("echo again").stdout == "again\n"
    assert_ok_envelope(s.deprovision())
    assert sandbox_dirs(v2root) == []


def test_a_v2_root_that_is_no_cgroup2_directory_is_refused(mxc, monkeypatch, scratch):
    monkeypatch.setenv("MXC_CGROUP2_ROOT", scratch)
    r = mxc.oneshot("echo ran")
    assert r.rc != 0 and r.code == "backend_unavailable", r.describe()
    assert "MXC_CGROUP2_ROOT" in r.error["message"]
    assert "ran" not in r.stdout


def test_sweeper_reclaims_a_v2_cgroup_without_owner(mxc, v2root):
    orphan = os.path.join(v2root, "mxc-oneshot-999999999-1")
    os.mkdir(orphan)
    r = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, text=True,
                       env=mxc.env({"MXC_SWEEP_MIN_AGE": "0"}))
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(orphan), r.stdout


@pytest.mark.parametrize("name", ["mxc-oneshot-x", "mxc-oneshot-", "mxc-oneshot-12-x", "mxc-netpool-x", "mxc-netpool-1-2-3"])
def test_sweeper_keeps_a_cgroup_whose_name_mxc_never_makes(mxc, v2root, name):
    """A name of mxc's prefix but not of a form mxc makes (oneshot-<pid>[-<start>]-<serial>,
    netpool-<pid>-<start>) is another's, kept: --gc's bases include the host's cgroup2 root.  Before,
    such a name parsed as pid 0 or as no owner, and its processes were killed and it removed."""
    d = os.path.join(v2root, name)
    os.mkdir(d)
    try:
        r = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, text=True,
                           env=mxc.env({"MXC_SWEEP_MIN_AGE": "0"}))
        assert r.returncode == 0, r.stderr
        assert os.path.isdir(d), r.stdout
    finally:
        if os.path.isdir(d):
            os.rmdir(d)


def test_sweeper_reclaims_every_orphan_past_512(mxc, v2root):
    """One --gc examines every cgroup name: a fixed table of 512 left the rest unexamined by every
    --gc alike (readdir's order), beside 1000 idle sessions (issue 38)."""
    orphans = [os.path.join(v2root, "mxc-oneshot-999999999-%d" % i) for i in range(600)]
    try:
        for o in orphans:
            os.mkdir(o)
        r = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, text=True,
                           env=mxc.env({"MXC_SWEEP_MIN_AGE": "0"}))
        assert r.returncode == 0, r.stderr
        left = [o for o in orphans if os.path.exists(o)]
        assert not left, "%d of 600 orphan cgroups left" % len(left)
    finally:
        for o in orphans:
            if os.path.isdir(o):
                os.rmdir(o)


# ------------------------------------------------------------------------------------------------
# no migration on the call path


def strace_writes(mxc, argv, request, env=None):
    """The cgroup files mxc-exec (and every process it made) opened for writing, and whether
    one of them used CLONE_INTO_CGROUP.  A session's holder outlives the call: once mxc-exec has
    answered, strace is told to detach."""
    if not shutil.which("strace"):
        pytest.fail("strace is missing: scripts/deps.sh installs it")
    log = tempfile.mktemp(prefix="mxc-strace-", dir=mxc.scratch)
    p = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=openat,clone3", "-o", log, MXC_EXEC] + argv,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=mxc.env(env))
    p.stdin.write(json.dumps(request).encode())
    p.stdin.close()
    out = p.stdout.read()  # EOF: mxc-exec is done and nothing it left holds its stdout
    time.sleep(0.3)
    p.terminate()  # strace detaches from what is still running
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()  # the kernel detaches a dead tracer's tracees
        p.wait(timeout=30)
    text = open(log).read()
    rc = [int(m.group(1)) for m in re.finditer(r"^%d \+\+\+ exited with (\d+)" % p.pid, text, re.M)]
    rc = rc[0] if rc else None
    opened = [m.group(1) for m in re.finditer(r'openat\([^"]*"(/sys/fs/cgroup[^"]*)", ([^)]*)\)', text)
              if "O_WRONLY" in m.group(2) or "O_RDWR" in m.group(2)]
    return out, opened, "CLONE_INTO_CGROUP" in text


def test_session_exec_touches_no_cgroup_file(mxc, session):
    out, opened, _ = strace_writes(mxc, ["--experimental", "--config", "-"],
                                   {"phase": "exec", "sandboxId": session.id, "process": {"commandLine": "echo hi"}})
    assert out == b"hi\n", out
    assert opened == [], opened


def test_oneshot_on_v1_moves_no_pid(mxc):
    if cgroup2_mount() == "/sys/fs/cgroup":
        pytest.skip("a pure cgroup v2 host: the v1 path is not used here (the v2 test covers it)")
    out, opened, _ = strace_writes(mxc, ["--config", "-"], {"process": {"commandLine": "echo hi"}})
    assert out == b"hi\n", out
    assert any(o.endswith("/tasks") for o in opened), opened  # PID 1 moved itself
    assert not any(o.endswith("cgroup.procs") for o in opened), opened


def test_oneshot_and_start_on_v2_move_nothing(mxc, v2root):
    out, opened, into = strace_writes(mxc, ["--config", "-"], {"process": {"commandLine": "echo hi"}})
    assert out == b"hi\n", out
    assert into, "no clone3(CLONE_INTO_CGROUP) seen"
    assert not any(o.endswith(("cgroup.procs", "tasks")) for o in opened), opened
    prov = assert_ok_envelope(mxc({"containment": "isolation_session", "phase": "provision"}))
    out, opened, into = strace_writes(mxc, ["--experimental", "--config", "-"],
                                      {"phase": "start", "sandboxId": prov["sandboxId"]})
    assert json.loads(out) == {"result": {}}, out
    assert into, "no clone3(CLONE_INTO_CGROUP) seen"
    assert not any(o.endswith(("cgroup.procs", "tasks")) for o in opened), opened
    assert_ok_envelope(mxc({"phase": "deprovision", "sandboxId": prov["sandboxId"]}))
