"""Rootless mode: mxc run by an unprivileged user (DESIGN §4 "Identity").

Every sandbox is the caller's own uid behind a user namespace — said in the provision metadata
(`rootless: true`, `agentUserSid` = the caller's uid), not pretended. The containment that does
not depend on root still holds: the view, Landlock, seccomp, no capabilities, no_new_privs, the
PID namespace; resources fall back to rlimits where no cgroup is delegated.

The tests drop from root to a test uid with setpriv (no supplementary groups) and drive the real
CLI with real namespaces.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import DROP, MXC_EXEC, UID, Mxc, RootlessMxc, assert_error, assert_ok_envelope, live_pids_of_uids, owned_tmpdir, rl, wait_until  # noqa: F401,E501

def _grant_dir(rl, name):
    d = os.path.join(rl.scratch, name)
    os.mkdir(d)
    os.chown(d, UID, UID)
    return d


def test_probe_reports_rootless(rl):
    p = rl(argv=["--probe"])
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)["result"]
    assert res["root"] is False
    assert res["rootless"]["active"] is True, res
    assert res["backends"] == {"process": True, "isolation_session": True}, res


def test_oneshot_runs_as_the_caller_behind_a_user_namespace(rl):
    rw = _grant_dir(rl, "rw")
    r = rl.oneshot("id -u; cat /proc/self/uid_map; echo made > %s/out" % rw,
                   filesystem={"readwritePaths": [rw]})
    assert r.rc == 0, r.describe()
    lines = r.stdout.split("\n")
    assert lines[0] == "1000", lines  # an ordinary uid inside, never 0
    assert lines[1].split() == ["1000", str(UID), "1"], lines
    st = os.stat(os.path.join(rw, "out"))
    assert (st.st_uid, st.st_gid) == (UID, UID)


def test_oneshot_containment_holds_without_root(rl):
    rw = _grant_dir(rl, "rw")
    ro = _grant_dir(rl, "ro")
    hidden = _grant_dir(rl, "hidden")
    with open(os.path.join(hidden, "secret"), "w") as f:
        f.write("s")
    os.chown(os.path.join(hidden, "secret"), UID, UID)
    script = "; ".join([
        "cat /etc/shadow 2>/dev/null && echo SHADOW",
        "echo x > %s/f 2>/dev/null || echo ro-refused" % ro,
        "echo x > /usr/mxc-probe 2>/dev/null || echo usr-refused",
        "cat %s/secret 2>/dev/null || echo hidden-absent" % hidden,
        "grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status",
        "ls /proc | grep -c '^[0-9]'",
    ])
    r = rl.oneshot(script, filesystem={"readwritePaths": [rw], "readonlyPaths": [ro]})
    assert r.rc == 0, r.describe()
    out = r.stdout
    assert "SHADOW" not in out
    for word in ("ro-refused", "usr-refused", "hidden-absent"):
        assert word in out, out
    assert "CapEff:\t0000000000000000" in out and "CapBnd:\t0000000000000000" in out
    assert "NoNewPrivs:\t1" in out and "Seccomp:\t2" in out
    # a fresh PID namespace: only the shell and its children
    assert int(out.strip().split("\n")[-1]) <= 4, out


def test_no_new_user_namespace_and_no_mount_inside(rl):
    r = rl.oneshot("unshare -U true 2>&1; echo rc=$?; mount -t tmpfs x /tmp 2>&1; echo rc=$?")
    assert r.rc == 0, r.describe()
    assert r.stdout.count("rc=0") == 0, r.stdout


def test_rlimit_fallback_bounds_processes(rl):
    """No cgroup is delegated to this uid here: the process count falls back to RLIMIT_NPROC."""
    r = rl.oneshot("grep 'Max processes' /proc/self/limits", env=None)
    assert r.rc == 0, r.describe()
    fields = r.stdout.split()
    assert fields[2] == fields[3] == "512", r.stdout
    # the forking subshell is refused (dash gives up on the first failed fork); the sandbox
    # holds at most the limit (counted with shell builtins: there is no room for a fork)
    bomb = rl.oneshot("(i=0; while [ $i -lt 2000 ]; do sleep 5 & i=$((i+1)); done) 2>/dev/null; "
                      "echo survived; set -- /proc/[0-9]*; echo $#")
    assert bomb.rc == 0, bomb.describe()
    lines = bomb.stdout.strip().split("\n")
    assert lines[0] == "survived", bomb.stdout
    assert 100 < int(lines[-1]) <= 515, bomb.stdout


def test_rootless_denied_symlink_in_a_read_write_grant_masks_its_target(rl):
    """Issue 27, finding 10, rootless: the target of a denied link inside a read-write grant is masked
    too (one-shot and session exec)."""
    d = _grant_dir(rl, "rwlinks")
    with open(os.path.join(d, "secret"), "w") as f:
        f.write("RL-TARGET-SECRET\n")
    os.chown(os.path.join(d, "secret"), UID, UID)
    os.symlink(os.path.join(d, "secret"), os.path.join(d, "link"))
    os.lchown(os.path.join(d, "link"), UID, UID)
    fs = {"readwritePaths": [d], "deniedPaths": [os.path.join(d, "link")]}
    script = "cat %s/secret 2>&1; cat %s/link 2>&1; true" % (d, d)
    r = rl.oneshot(script, filesystem=fs)
    assert r.rc == 0 and "RL-TARGET-SECRET" not in r.stdout, r.describe()
    sid = rl.provision(filesystem=fs)["sandboxId"]
    try:
        assert_ok_envelope(rl.phase("start", sid))
        r = rl.exec(sid, script)
        assert r.rc == 0 and "RL-TARGET-SECRET" not in r.stdout, r.describe()
    finally:
        rl.phase("stop", sid)
        rl.phase("deprovision", sid)


def test_session_lifecycle_rootless(rl):
    res = rl.provision()
    md = res["metadata"]
    assert md["rootless"] is True
    assert md["agentUserSid"] == str(UID)
    ws = md["ephemeralWorkspacePath"]
    st = os.stat(ws)
    assert (st.st_uid, st.st_mode & 0o777) == (UID, 0o700)
    sid = res["sandboxId"]
    assert_ok_envelope(rl.phase("start", sid))
    assert_error(rl.phase("start", sid), "already_started")
    r = rl.exec(sid, "pwd; id -u; echo hi > note")
    assert (r.rc, r.stdout) == (0, "%s\n1000\n" % ws), r.describe()
    assert os.stat(os.path.join(ws, "note")).st_uid == UID
    assert_ok_envelope(rl.phase("stop", sid))
    assert_error(rl.exec(sid, "true"), "not_started")
    assert_ok_envelope(rl.phase("deprovision", sid))
    assert_error(rl.phase("start", sid), "stale_id")
    assert not os.path.exists(ws)


def test_rootless_sandboxes_do_not_see_each_other(rl):
    a = rl.provision()
    b = rl.provision()
    for s in (a, b):
        assert_ok_envelope(rl.phase("start", s["sandboxId"]))
    bws = b["metadata"]["ephemeralWorkspacePath"]
    assert rl.exec(b["sandboxId"], "echo mine > own").rc == 0
    r = rl.exec(a["sandboxId"], "cat %s/own 2>&1 || echo unreachable; ls %s 2>&1 | head -1"
                % (bws, os.path.dirname(bws)))
    assert r.rc == 0, r.describe()
    assert "mine" not in r.stdout and "unreachable" in r.stdout, r.stdout


def test_state_root_defaults_to_xdg_runtime_dir(rl):
    xdg = owned_tmpdir("mxc-rootless-xdg-")
    try:
        p = subprocess.run(DROP + ["env", "-u", "MXC_STATE_DIR", "XDG_RUNTIME_DIR=" + xdg, MXC_EXEC,
                                   "--experimental", "--config", "-"],
                           input=b'{"containment":"isolation_session","phase":"provision"}',
                           capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr
        res = json.loads(p.stdout)["result"]
        name = res["metadata"]["agentUserName"]
        assert os.path.isdir(os.path.join(xdg, "mxc", name)), os.listdir(xdg)
        q = subprocess.run(DROP + ["env", "-u", "MXC_STATE_DIR", "XDG_RUNTIME_DIR=" + xdg, MXC_EXEC,
                                   "--experimental", "--config", "-"],
                           input=json.dumps({"phase": "deprovision",
                                             "sandboxId": res["sandboxId"]}).encode(),
                           capture_output=True, timeout=60)
        assert q.returncode == 0, q.stdout
    finally:
        shutil.rmtree(xdg, ignore_errors=True)


def _probe_holders(mxc):
    p = subprocess.run([MXC_EXEC, "--probe"], capture_output=True, env=mxc.env({"MXC_SWEEP_MIN_AGE": "0"}),
                       timeout=60)
    return json.loads(p.stdout)["result"]["leftovers"]["holders"]


def test_root_gc_leaves_a_live_rootless_session_alone(rl, mxc):
    """A rootless holder runs as the caller's own uid, its claims in the caller's runtime
    directory: root's sweeper must not take it for an orphan of the reserved uid range (it
    would kill another user's processes). Counted first (the probe touches nothing), then
    root --gc with no minimum age, and the session still serves an exec."""
    before = _probe_holders(mxc)
    res = rl.provision()
    sid = res["sandboxId"]
    assert_ok_envelope(rl.phase("start", sid))
    assert rl.exec(sid, "echo up").stdout == "up\n"
    time.sleep(2)  # older than the minimum age of 0 s, counted in whole seconds
    after = _probe_holders(mxc)
    assert after <= before, "root's sweeper counts the rootless holder as a leftover (%d, %d before)" % (after, before)
    g = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, env=mxc.env({"MXC_SWEEP_MIN_AGE": "0"}),
                       timeout=120)
    assert g.returncode == 0, g.stdout
    r = rl.exec(sid, "echo alive")
    assert (r.rc, r.stdout) == (0, "alive\n"), r.describe()


# --------------------------------------------------------------------------------------------
# issue 27, finding 5: rendezvous points no other local user can take first. A uid of its own
# (VICTIM) so that the names planted here never meet another test's rootless runs; STRANGER is
# "another local user".

VICTIM, STRANGER = UID + 20, UID + 21


def as_uid(uid):
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]


def predictable_names(uid):
    """Every /tmp name a rootless caller used, or uses, for a rendezvous point."""
    return ["/tmp/mxc-claims-%d" % uid, "/tmp/mxc-%d" % uid, "/tmp/mxc-gateway-%d" % uid,
            "/tmp/mxc-gateway-%d.sock" % uid]


class VictimMxc(RootlessMxc):
    """The rootless runner as VICTIM, without XDG_RUNTIME_DIR (the case that falls back to /tmp)."""

    def __init__(self, state, scratch, home):
        super().__init__(state, scratch)
        self.home = home

    def argv(self, request, flags, via):
        return as_uid(VICTIM) + Mxc.argv(self, request, flags, via)

    def env(self, extra=None):
        env = super().env(extra)
        env.pop("XDG_RUNTIME_DIR", None)
        env["HOME"] = self.home
        return env


@pytest.fixture
def victim():
    """make(home=True) -> a VICTIM runner; the stranger's and the victim's /tmp names are
    removed before and after."""
    made = []

    def clear():
        for n in predictable_names(VICTIM):
            if os.path.isdir(n) and not os.path.islink(n):
                shutil.rmtree(n, ignore_errors=True)
            elif os.path.lexists(n):
                os.unlink(n)

    def make(home=True):
        dirs = []
        for prefix in ("mxc-victim-state-", "mxc-victim-scratch-", "mxc-victim-home-"):
            d = tempfile.mkdtemp(prefix=prefix)
            os.chown(d, VICTIM, VICTIM)
            os.chmod(d, 0o755 if "scratch" in prefix else 0o700)
            dirs.append(d)
        m = VictimMxc(dirs[0], dirs[1], dirs[2] if home else "/root")
        made.append((m, dirs))
        return m
    clear()
    yield make
    for m, dirs in made:
        m.cleanup()
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
            shutil.rmtree(d + ".ws", ignore_errors=True)
    clear()


def plant(names, uid=STRANGER, mode=0o755):
    """Another local user makes each of names first (a directory of theirs)."""
    for n in names:
        subprocess.run(as_uid(uid) + ["mkdir", "-m", "%o" % mode, n], check=True)


def test_another_user_cannot_deny_rootless_runs_by_taking_the_claims_name(victim):
    """Issue 27 #5: with XDG_RUNTIME_DIR unset the claims lived at /tmp/mxc-claims-UID, and another
    user who made that name first made every rootless run fail. Now the claims live in the
    caller's private directory, and a candidate someone else took is passed over: the run works,
    its claims in a 0700 directory of the caller's, nothing written into the stranger's."""
    m = victim()
    plant(["/tmp/mxc-claims-%d" % VICTIM, "/tmp/mxc-%d" % VICTIM])
    r = m.oneshot("id -u; echo ran")
    assert r.rc == 0 and "ran" in r.stdout, r.describe()
    run = [d for d in os.listdir(os.path.join(m.home, ".local/state/mxc")) if d.startswith("run-")]
    assert len(run) == 1, run
    claims = os.path.join(m.home, ".local/state/mxc", run[0], "mxc-claims")
    st = os.lstat(claims)
    assert (st.st_uid, st.st_mode & 0o777) == (VICTIM, 0o700)
    for n in ("/tmp/mxc-claims-%d" % VICTIM, "/tmp/mxc-%d" % VICTIM):
        assert os.stat(n).st_uid == STRANGER and os.listdir(n) == [], n
    # a session too (its claim lives as long as it does)
    res = m.provision(helper=False)
    assert_ok_envelope(m.phase("start", res["sandboxId"]))
    assert os.listdir(claims), "the session's claim"
    assert m.exec(res["sandboxId"], "echo in").stdout == "in\n"


def test_rootless_claims_default_to_a_private_tmp_directory(victim):
    """Nobody took the name: /tmp/mxc-UID is made 0700 by the caller and holds the claims; with
    every candidate taken and no home of its own, the run is refused, saying what to do."""
    m = victim()
    r = m.oneshot("echo ran")
    assert r.rc == 0, r.describe()
    st = os.lstat("/tmp/mxc-%d" % VICTIM)
    assert (st.st_uid, st.st_mode & 0o7777) == (VICTIM, 0o700)
    claims = "/tmp/mxc-%d/mxc-claims" % VICTIM
    assert os.path.isdir(claims)
    # the one-shot's cleaner (VICTIM's) released its claim and is gone
    assert wait_until(lambda: os.listdir(claims) == [] and live_pids_of_uids([VICTIM]) == [], 30)
    shutil.rmtree("/tmp/mxc-%d" % VICTIM)
    plant(["/tmp/mxc-%d" % VICTIM])
    r = victim(home=False).oneshot("echo ran")
    assert r.rc != 0 and "XDG_RUNTIME_DIR" in r.stdout + r.stderr, r.describe()
