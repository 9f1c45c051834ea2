"""State-aware lifecycle of isolation_session: provision, start, exec, stop, deprovision (issue 4)."""
import os
import subprocess
import time

import pytest

from conftest import (MXC_EXEC, assert_error, assert_ok_envelope, oneshot_request, sandbox_pids_on_host, unique,
                      wait_until)


def test_full_lifecycle(mxc, state_dir):
    res = mxc.provision(helper=False)
    sid = res["sandboxId"]
    ws = res["metadata"]["ephemeralWorkspacePath"]
    assert os.path.isdir(ws)
    assert os.listdir(state_dir), "provision left no state"

    assert_ok_envelope(mxc.phase("start", sid))

    r = mxc.exec(sid, "echo hi")
    assert (r.rc, r.stdout) == (0, "hi\n"), r.describe()

    r = mxc.exec(sid, "exit 7")
    assert r.rc == 7, r.describe()
    assert r.stdout == "", r.describe()

    r = mxc.exec(sid, "kill -TERM $$")
    assert r.rc == 128 + 15, r.describe()

    r = mxc.exec(sid, "echo err >&2; echo out")
    assert r.rc == 0 and r.stdout == "out\n" and "err\n" in r.stderr, r.describe()

    # the workload's default cwd is the workspace, and it is writable
    r = mxc.exec(sid, "pwd; echo w > in-ws.txt && cat in-ws.txt")
    assert r.rc == 0 and r.stdout == "%s\nw\n" % ws, r.describe()
    assert open(os.path.join(ws, "in-ws.txt")).read() == "w\n"

    assert_ok_envelope(mxc.phase("stop", sid))
    # identity and workspace survive stop
    assert os.path.isdir(ws)
    assert_error(mxc.exec(sid, "echo no"), "not_started")

    assert_ok_envelope(mxc.phase("deprovision", sid))
    assert not os.path.exists(ws), "workspace left behind by deprovision"

    for phase in ("start", "stop", "deprovision"):
        assert_error(mxc.phase(phase, sid), "stale_id")
    assert_error(mxc.exec(sid, "true"), "stale_id")
    name = res["metadata"]["agentUserName"]
    for d, _, files in os.walk(state_dir):
        for f in files:
            p = os.path.join(d, f)
            try:
                data = open(p, "rb").read()
            except OSError:
                continue
            assert name.encode() not in data and sid.encode() not in data, \
                "state of a deprovisioned sandbox left behind: %s" % p


def test_env_and_cwd_per_exec(session):
    r = session.exec("echo $FOO; echo $BAR; pwd", env=["FOO=bar", "BAR=a=b=c", "NOEQUALS"],
                     cwd="/tmp")
    assert (r.rc, r.stdout) == (0, "bar\na=b=c\n/tmp\n"), r.describe()
    r = session.exec('echo "${FOO-unset}"')
    assert r.stdout == "unset\n", "env leaked from one exec to the next: " + r.describe()


def test_exec_cwd_outside_view_rejected(session):
    r = session.exec("pwd", cwd="/definitely/not/in/view")
    assert r.rc != 0
    assert_error(r, ["policy_validation", "backend_error", "malformed_request"])


def test_state_persists_across_execs(session):
    assert session.exec("echo kept > /tmp/persist").rc == 0
    r = session.exec("cat /tmp/persist")
    assert (r.rc, r.stdout) == (0, "kept\n"), r.describe()


def test_exec_stdin_reaches_workload(session):
    r = session.exec("cat; echo done", stdin=b"line-from-stdin\n")
    assert (r.rc, r.stdout) == (0, "line-from-stdin\ndone\n"), r.describe()


# ------------------------------------------------------------------------------------------------
# idempotence table


def test_second_start_already_started_session_still_works(session, mxc):
    assert session.exec("echo before > /tmp/marker").rc == 0
    err = assert_error(session.start(), "already_started")
    assert err["message"]
    r = session.exec("cat /tmp/marker")
    assert (r.rc, r.stdout) == (0, "before\n"), "second start disturbed the session: " + r.describe()


def test_second_stop_already_stopped_then_start_again(session):
    ws = session.workspace
    assert session.exec("echo persisted > %s/f" % ws).rc == 0
    assert_ok_envelope(session.stop())
    assert_error(session.stop(), "already_stopped")
    assert_ok_envelope(session.start())
    r = session.exec("cat %s/f; echo again" % ws)
    assert (r.rc, r.stdout) == (0, "persisted\nagain\n"), r.describe()
    # a restarted session is a fresh session: /tmp does not carry over
    r = session.exec("ls /tmp")
    assert r.rc == 0


def test_stop_before_start_is_already_stopped(session_factory):
    s = session_factory(start=False)
    assert_error(s.stop(), "already_stopped")


def test_exec_before_start_not_started(session_factory):
    s = session_factory(start=False)
    r = s.exec("echo should-not-run")
    assert_error(r, "not_started")
    assert "should-not-run" not in r.stdout


def test_deprovision_twice_stale(session_factory):
    s = session_factory(start=False)
    assert_ok_envelope(s.deprovision())
    assert_error(s.deprovision(), "stale_id")
    assert_error(s.start(), "stale_id")


def test_deprovision_of_running_session(session):
    marker = unique("mxc-depro")
    r = session.exec("setsid nohup sh -c 'while :; do sleep 1; done' %s >/dev/null 2>&1 &"
                     % marker)
    assert r.rc == 0, r.describe()
    assert sandbox_pids_on_host(marker), "background process did not start"
    ws = session.workspace
    assert_ok_envelope(session.deprovision())
    assert sandbox_pids_on_host(marker) == [], "process survived deprovision"
    assert not os.path.exists(ws)
    assert_error(session.exec("true"), "stale_id")


def test_stop_kills_every_process(session):
    marker = unique("mxc-stop")
    r = session.exec("sh -c 'while :; do sleep 1; done' %s >/dev/null 2>&1 &" % marker)
    assert r.rc == 0, r.describe()
    assert sandbox_pids_on_host(marker)
    assert_ok_envelope(session.stop())
    assert sandbox_pids_on_host(marker) == []


# ------------------------------------------------------------------------------------------------
# per-phase policy rules


def test_filesystem_after_provision_rejected(session, mxc):
    r = mxc({"phase": "exec", "sandboxId": session.id, "process": {"commandLine": "true"},
             "filesystem": {"readonlyPaths": ["/etc"]}})
    assert_error(r, "policy_validation")


def test_network_after_provision_rejected(session, mxc):
    r = mxc({"phase": "start", "sandboxId": session.id,
             "network": {"defaultPolicy": "block"}})
    assert_error(r, ["policy_validation", "already_started"])
    r = mxc({"phase": "exec", "sandboxId": session.id, "process": {"commandLine": "true"},
             "network": {"defaultPolicy": "block"}})
    assert_error(r, "policy_validation")


def test_containment_on_non_provision_phase(session, mxc):
    r = mxc({"phase": "stop", "sandboxId": session.id, "containment": "isolation_session"})
    assert_error(r, "malformed_request")
    # and the session was not stopped by the rejected request
    assert session.exec("true").rc == 0


def test_process_block_ignored_on_non_exec(session, mxc):
    r = mxc({"phase": "stop", "sandboxId": session.id, "process": {"commandLine": "false"}})
    assert_ok_envelope(r)


def test_oneshot_isolation_session_leaves_nothing(mxc, state_dir):
    r = mxc({"containment": "isolation_session", "process": {"commandLine": "echo once; pwd"}})
    assert r.rc == 0 and r.stdout.startswith("once\n"), r.describe()
    ws = r.stdout.splitlines()[1]
    assert not os.path.exists(ws) or ws in ("/", "/tmp"), "one-shot left its workspace"
    leftovers = [e for e in os.listdir(state_dir)
                 if os.path.exists(os.path.join(state_dir, e, "state.json"))]
    assert leftovers == [], leftovers


def test_agent_identity_distinct_per_sandbox(mxc):
    a = mxc.provision(helper=False)["metadata"]
    b = mxc.provision(helper=False)["metadata"]
    assert a["agentUserName"] != b["agentUserName"]
    assert a["ephemeralWorkspacePath"] != b["ephemeralWorkspacePath"]
    if os.geteuid() == 0:
        assert a["agentUserSid"] != b["agentUserSid"], (a, b)
        assert a["agentUserSid"] != "0"


def test_workload_runs_as_agent_uid(session):
    """What the workload creates is owned, on the host, by the agent's uid (agentUserSid)."""
    r = session.exec("echo me > %s/owner-probe" % session.workspace)
    assert r.rc == 0, r.describe()
    st = os.stat(os.path.join(session.workspace, "owner-probe"))
    if os.geteuid() == 0:
        assert str(st.st_uid) == session.metadata["agentUserSid"], (st.st_uid, session.metadata)
        assert st.st_uid != 0
        ws = os.stat(session.workspace)
        assert str(ws.st_uid) == session.metadata["agentUserSid"]


# --- the process one-shot returns once the workload's status is known; a detached cleaner
# waits out the kernel's teardown and removes the cgroup


def _oneshot_cgroups(pid):
    """The one-shot cgroups of the mxc-exec whose pid is pid (src/lib/oneshot.c names them
    oneshot-PID-STARTTIME-SERIAL): only this test's own, never another caller's on this host (a load beside
    the suite makes one-shots of its own)."""
    found = []
    for c in ("pids", "memory", "cpu"):
        d = "/sys/fs/cgroup/%s/mxc" % c
        if os.path.isdir(d):
            found += [os.path.join(d, n) for n in os.listdir(d) if n.startswith("oneshot-%d-" % pid)]
    return set(found)


def _start_time(pid):
    return int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19])


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup/pids"), reason="root's v1 pids hierarchy")
def test_gc_owns_a_oneshot_cgroup_by_pid_and_start_time(mxc):
    """A one-shot's cgroup (`oneshot-<pid>-<start time>-<serial>`) is its caller's while that very
    process lives: one named for a live pid with another start time (a reused pid: here an unrelated
    `sleep`) is an orphan --gc removes, where the bare pid kept it for as long as the stranger lived;
    the right start time is kept.  Earlier builds' names (`oneshot-<pid>-<serial>`) keep the bare
    pid's rule: kept while the pid lives, removed once it is gone.  Run under the pool's lock
    (--gc also sweeps the shared pool: here with it on, so only dead entries go)."""
    r = mxc(oneshot_request("true"))  # the mxc directory of the hierarchy exists
    assert r.rc == 0, r.describe()
    other = subprocess.Popen(["sleep", "60"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    base = "/sys/fs/cgroup/pids/mxc"
    start = _start_time(other.pid)
    kept = ["oneshot-%d-%d-1" % (other.pid, start), "oneshot-%d-1" % other.pid]
    swept = ["oneshot-%d-%d-1" % (other.pid, start + 1), "oneshot-%d-1" % dead.pid,
             "oneshot-%d-%d-1" % (dead.pid, start)]
    try:
        for n in kept + swept:
            os.mkdir(os.path.join(base, n))
        p = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, timeout=120,
                           env=mxc.env({"MXC_SWEEP_MIN_AGE": "0", "MXC_NETPOOL_SIZE": "2"}))
        assert p.returncode == 0, p
        assert [n for n in swept if os.path.exists(os.path.join(base, n))] == [], swept
        assert [n for n in kept if not os.path.isdir(os.path.join(base, n))] == [], kept
        assert other.poll() is None  # not in them: nothing of its was touched
    finally:
        other.kill()
        other.wait()
        for n in kept + swept:
            if os.path.isdir(os.path.join(base, n)):
                os.rmdir(os.path.join(base, n))


def _gone(paths, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if not [p for p in paths if os.path.exists(p)]:
            return True
        time.sleep(0.02)
    return False


def test_oneshot_leaves_no_cgroup_and_no_process(mxc):
    """A workload that leaves a background job behind: the CLI returns (its stdout reaches EOF:
    nothing of the sandbox, nor the cleaner, holds it), the job is dead, and the one-shot's
    cgroups go away."""
    marker = unique("bg")
    # a job that outlives the runner's own timeout: waiting for it would fail the run
    p = mxc.popen(oneshot_request("(exec -a %s sleep 600) & echo started" % marker), stdin=subprocess.DEVNULL)
    seen = set()
    # the cgroups exist while the run does: collected until the CLI ends, then they must go
    while p.poll() is None:
        seen |= _oneshot_cgroups(p.pid)
        time.sleep(0.01)
    out, err = p.communicate(timeout=30)
    assert (p.returncode, out) == (0, b"started\n"), (p.returncode, out, err)
    assert sandbox_pids_on_host(marker) == []
    leftover = _oneshot_cgroups(p.pid)
    assert _gone(seen | leftover), "one-shot cgroups left: %r" % sorted(c for c in seen | leftover if os.path.exists(c))


def test_oneshot_cgroup_removed_after_the_cli_is_killed(mxc):
    """kill -9 of mxc-exec mid one-shot: PID 1 dies by PDEATHSIG and the cleaner still removes
    the cgroup."""
    marker = unique("k9")
    p = mxc.popen({"process": {"commandLine": "(exec -a %s sleep 60) & sleep 60" % marker}},
                  stdin=subprocess.DEVNULL)
    assert wait_until(lambda: sandbox_pids_on_host(marker), 10), "workload never ran"
    created = _oneshot_cgroups(p.pid)
    assert created, "no one-shot cgroup seen"
    p.kill()
    p.wait(timeout=30)
    p.stdout.close()
    p.stderr.close()
    assert wait_until(lambda: sandbox_pids_on_host(marker) == [], 10)
    assert _gone(created), "cgroups left after kill -9: %r" % sorted(c for c in created if os.path.exists(c))
