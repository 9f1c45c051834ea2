"""Session behaviour: lifetime, teardown, timeouts, crash recovery, isolation (issue 4)."""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import (MXC_EXEC, assert_error, assert_ok_envelope, claimed_sessions, foreign_pidns_procs, h,
                      parse_envelope, read_all_bg, sandbox_pids_on_host, unique, verb_result,
                      wait_until)


# ------------------------------------------------------------------------------------------------
# lifetime


def test_session_survives_exit_of_starter(session_factory, mxc):
    s = session_factory(start=False)
    # start from a process in its own session and process group, then kill that whole group
    p = mxc.popen({"phase": "start", "sandboxId": s.id}, start_new_session=True,
                  stdin=subprocess.DEVNULL)
    rc, out, err = read_all_bg(p, 60)
    assert rc == 0, (out, err)
    assert set(json.loads(out)) == {"result"}, out
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    r = s.exec("echo alive")
    assert (r.rc, r.stdout) == (0, "alive\n"), r.describe()


def test_session_survives_binary_reinstall(session_factory, mxc, scratch):
    """Start with a copy of the binary, delete the copy, keep using the session."""
    build = os.path.dirname(MXC_EXEC)
    copy = tempfile.mkdtemp(prefix="mxc-bin-", dir=scratch)
    for f in [MXC_EXEC] + [g for g in glob.glob(os.path.join(build, "libmxc.so*"))
                           if not os.path.isdir(g)]:
        shutil.copy2(f, copy, follow_symlinks=False)
    exe = os.path.join(copy, os.path.basename(MXC_EXEC))
    s = session_factory(start=False)
    p = subprocess.run([exe, "--experimental", "--config", "-"],
                       input=json.dumps({"phase": "start", "sandboxId": s.id}).encode(),
                       capture_output=True, env=mxc.env(), timeout=60)
    assert p.returncode == 0, p
    shutil.rmtree(copy)
    r = s.exec("echo after-reinstall")
    assert (r.rc, r.stdout) == (0, "after-reinstall\n"), r.describe()
    assert_ok_envelope(s.stop())


def test_background_daemon_does_not_survive_stop(session):
    marker = unique("mxc-daemon")
    # setsid + nohup + double fork, detached from every fd of the exec
    r = session.exec("(setsid nohup sh -c 'while :; do sleep 1; done' %s "
                     ">/dev/null 2>&1 </dev/null &) ; echo launched" % marker)
    assert (r.rc, r.stdout) == (0, "launched\n"), r.describe()
    assert wait_until(lambda: sandbox_pids_on_host(marker), 5), "daemon never ran"
    # it outlives the exec that launched it, inside the live session
    r = session.exec("true")
    assert r.rc == 0 and sandbox_pids_on_host(marker)
    assert_ok_envelope(session.stop())
    assert sandbox_pids_on_host(marker) == [], "daemon survived stop"


def test_background_daemon_does_not_survive_oneshot(mxc):
    marker = unique("mxc-daemon1")
    r = mxc.oneshot("(setsid nohup sh -c 'while :; do sleep 1; done' %s "
                    ">/dev/null 2>&1 </dev/null &) ; echo launched" % marker)
    assert (r.rc, r.stdout) == (0, "launched\n"), r.describe()
    assert sandbox_pids_on_host(marker) == [], "daemon survived the one-shot's end"


# ------------------------------------------------------------------------------------------------
# timeout ladder: close stdin -> SIGTERM -> SIGKILL


def _run_with_timeout(mxc, sandbox, cmd, timeout_ms):
    sb = sandbox()
    p = mxc.popen(sb.request(cmd, timeout_ms=timeout_ms))  # stdin: a pipe we keep open
    try:
        rc, out, err = read_all_bg(p, 60)
    finally:
        if p.stdin:
            p.stdin.close()
    return sb, rc, out, err


def _assert_timed_out(rc, out, err, timeout_ms):
    assert rc == 255, (rc, out, err)
    env = parse_envelope(err)
    assert env is not None, "no timeout envelope on stderr: %r" % err
    e = env["error"]
    assert e["code"] == "backend_error", e
    assert e["message"] == "timed out after %d ms" % timeout_ms, e
    assert e.get("details") == {"timedOut": True, "timeoutMs": timeout_ms}, e
    assert parse_envelope(out) is None or "error" not in parse_envelope(out), \
        "timeout envelope went to stdout: %r" % out


def _session_still_works(sb):
    if sb.session:
        r = sb.run("echo still-here")
        assert (r.rc, r.stdout) == (0, "still-here\n"), r.describe()


def test_timeout_tier1_closes_stdin(mxc, sandbox):
    sb, rc, out, err = _run_with_timeout(
        mxc, sandbox, "read line; echo stdin-closed; exit 0", 800)
    assert "stdin-closed" in out, (out, err)
    _assert_timed_out(rc, out, err, 800)  # sticky: the deadline passed while it ran
    _session_still_works(sb)


def test_timeout_tier2_sigterm(mxc, sandbox):
    """A workload that ignores stdin EOF is ended by SIGTERM."""
    sb, rc, out, err = _run_with_timeout(
        mxc, sandbox, "trap 'echo got-sigterm; exit 0' TERM; echo armed; "
                      "while :; do sleep 0.1; done </dev/null", 800)
    assert out.startswith("armed\n"), (out, err)
    assert "got-sigterm" in out, (out, err)
    _assert_timed_out(rc, out, err, 800)
    _session_still_works(sb)


def test_timeout_tier3_sigkill(mxc, sandbox):
    """A workload trapping SIGTERM is ended by SIGKILL, with every process of the exec."""
    marker = unique("mxc-stubborn")
    cmd = ("exec sh -c 'trap \"\" TERM; echo armed; sleep 1000 & "
           "while :; do sleep 0.1; done' %s" % marker)
    sb, rc, out, err = _run_with_timeout(mxc, sandbox, cmd, 800)
    assert out.startswith("armed\n"), (out, err)
    _assert_timed_out(rc, out, err, 800)
    assert sandbox_pids_on_host(marker) == [], "a process of the timed-out exec survived"
    _session_still_works(sb)


def test_timeout_kills_escaped_process_group(mxc, sandbox):
    """A child that setsid()s into its own session is still a process of that exec."""
    marker = unique("mxc-escapee")
    cmd = ("setsid sh -c 'trap \"\" TERM; while :; do sleep 0.1; done' %s & "
           "trap '' TERM; while :; do sleep 0.1; done" % marker)
    sb, rc, out, err = _run_with_timeout(mxc, sandbox, cmd, 800)
    _assert_timed_out(rc, out, err, 800)
    assert sandbox_pids_on_host(marker) == [], "setsid'd child survived the timeout"
    _session_still_works(sb)


def test_no_timeout_when_workload_finishes(mxc, sandbox):
    sb = sandbox()
    r = sb.run("echo quick", timeout_ms=30000)
    assert (r.rc, r.stdout) == (0, "quick\n"), r.describe()
    assert r.stderr_envelope is None, r.describe()


def test_timeout_zero_means_none(mxc, sandbox):
    sb = sandbox()
    r = sb.run("sleep 1; echo slept", timeout_ms=0)
    assert (r.rc, r.stdout) == (0, "slept\n"), r.describe()


# ------------------------------------------------------------------------------------------------
# kill -9 of mxc-exec mid-phase


def _kill_after(p, delay):
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    p.stdout.close()
    p.stderr.close()
    if p.stdin:
        p.stdin.close()


def _sees(pid, path):
    """Whether process pid's mount namespace has path mounted (i.e. belongs to that sandbox)."""
    try:
        return (" %s " % path) in open("/proc/%d/mountinfo" % pid).read()
    except OSError:
        return False


@pytest.mark.parametrize("delay", [0.0, 0.003, 0.01, 0.03, 0.1, 0.3])
def test_kill9_mid_start(mxc, delay):
    before = foreign_pidns_procs()
    res = mxc.provision()
    sid, ws = res["sandboxId"], res["metadata"]["ephemeralWorkspacePath"]
    p = mxc.popen({"phase": "start", "sandboxId": sid}, stdin=subprocess.DEVNULL)
    _kill_after(p, delay)
    r = mxc.phase("start", sid)
    if r.rc != 0:
        assert_error(r, "already_started")
    r = mxc.exec(sid, "echo alive")
    assert (r.rc, r.stdout) == (0, "alive\n"), r.describe()
    assert_ok_envelope(mxc.phase("stop", sid))
    assert_ok_envelope(mxc.phase("deprovision", sid))
    assert_error(mxc.phase("start", sid), "stale_id")
    leaked = [pid for pid, _ in foreign_pidns_procs() - before if _sees(pid, ws)]
    assert not leaked, "processes of this sandbox left after deprovision: %r" % leaked
    name = res["metadata"]["agentUserName"]
    left = [d for d in _cgroup_dirs_of(name) if os.path.exists(d)]
    assert not left, "cgroups of this sandbox left after deprovision: %r" % left


def _cgroup_dirs_of(name):
    return (["/sys/fs/cgroup/%s/mxc/%s" % (c, name) for c in ("pids", "memory", "cpu")] +
            ["%s/mxc-%s" % (r, name) for r in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")])


@pytest.mark.parametrize("delay", [0.0, 0.003, 0.01, 0.03])
def test_kill9_mid_start_then_deprovision(mxc, delay):
    """A start killed at any point, then deprovision straight away: nothing of it remains —
    no process, no cgroup, no state."""
    res = mxc.provision()
    sid, name = res["sandboxId"], res["metadata"]["agentUserName"]
    p = mxc.popen({"phase": "start", "sandboxId": sid}, stdin=subprocess.DEVNULL)
    _kill_after(p, delay)
    assert_ok_envelope(mxc.phase("deprovision", sid))
    assert wait_until(lambda: not [d for d in _cgroup_dirs_of(name) if os.path.exists(d)], 5.0), \
        [d for d in _cgroup_dirs_of(name) if os.path.exists(d)]
    assert_error(mxc.phase("start", sid), "stale_id")


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05, 0.2])
def test_kill9_mid_provision(mxc, state_dir, delay):
    p = mxc.popen({"containment": "isolation_session", "phase": "provision"},
                  stdin=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    answer = p.stdout.read()
    p.stdout.close(), p.stderr.close()
    # whatever was left, a new sandbox can be provisioned and used
    res = mxc.provision()
    sid = res["sandboxId"]
    assert_ok_envelope(mxc.phase("start", sid))
    r = mxc.exec(sid, "echo alive")
    assert (r.rc, r.stdout) == (0, "alive\n"), r.describe()
    assert_ok_envelope(mxc.phase("deprovision", sid))
    # Zero leftovers (the state_dir fixture counts the claims of this state
    # root): an id the killed call delivered is its caller's to deprovision;
    # a sandbox whose answer never got out was finished by the sweep of the
    # phases above.  A kill that lands between the answer's write and its
    # record (session.h: mxc_session_answered) leaves the caller an id the
    # sweep has already finished: the killed call's answer was no promise
    # (its exit status says so), and deprovision says stale_id, leaving
    # nothing behind either way.
    try:
        delivered = json.loads(answer)["result"]["sandboxId"]
    except (ValueError, KeyError, TypeError):
        delivered = None
    if delivered:
        r = mxc.phase("deprovision", delivered)
        if r.rc != 0:
            assert p.returncode == -signal.SIGKILL, r.describe()
            assert_error(r, "stale_id")
    assert claimed_sessions(state_dir) == []


def test_kill9_mid_exec(session, mxc):
    marker = unique("mxc-midexec")
    ws = session.workspace
    p = mxc.popen({"phase": "exec", "sandboxId": session.id,
                   "process": {"commandLine": "touch %s/started; exec sh -c 'sleep 1000' %s"
                                              % (ws, marker)}})
    assert wait_until(lambda: os.path.exists(os.path.join(ws, "started")), 30), "exec never ran"
    _kill_after(p, 0)
    # the next call completes
    r = session.exec("echo alive")
    assert (r.rc, r.stdout) == (0, "alive\n"), r.describe()
    assert_ok_envelope(session.stop())
    assert sandbox_pids_on_host(marker) == [], "orphaned workload survived stop"
    assert_ok_envelope(session.start())
    assert session.exec("true").rc == 0
    assert_ok_envelope(session.deprovision())


@pytest.mark.parametrize("phase", ["stop", "deprovision"])
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05])
def test_kill9_mid_teardown(session, mxc, phase, delay):
    before_marker = unique("mxc-teardown")
    assert session.exec("sh -c 'sleep 1000' %s >/dev/null 2>&1 &" % before_marker).rc == 0
    p = mxc.popen({"phase": phase, "sandboxId": session.id}, stdin=subprocess.DEVNULL)
    _kill_after(p, delay)
    r = mxc.phase(phase, session.id)
    if r.rc != 0:
        assert_error(r, "already_stopped" if phase == "stop" else "stale_id")
    if phase == "stop":
        assert sandbox_pids_on_host(before_marker) == []
        assert_ok_envelope(session.start())
        assert session.exec("true").rc == 0
        assert_ok_envelope(session.deprovision())
    else:
        assert sandbox_pids_on_host(before_marker) == []
        assert_error(session.exec("true"), "stale_id")
        assert not os.path.exists(session.workspace)


# ------------------------------------------------------------------------------------------------
# isolation between sessions, and from the caller


def test_other_sandbox_workspace_unreachable(session_factory):
    a = session_factory()
    b = session_factory()
    token = unique("btoken")
    r = b.exec("echo %s > %s/token" % (token, b.workspace))
    assert r.rc == 0, r.describe()
    r = a.exec(h("read", b.workspace + "/token"))
    assert r.rc == 0, r.describe()
    assert verb_result(r.stdout, "read") in ("ENOENT", "EACCES"), r.describe()
    assert token not in r.stdout
    r = a.exec("ls -a %s 2>&1; ls -a %s 2>&1" % (b.workspace, os.path.dirname(b.workspace)))
    assert token not in r.stdout
    assert os.path.basename(b.workspace) not in r.stdout.replace(b.workspace, ""), r.describe()
    # on the host, the kernel's own permission checks keep the other agent out
    if os.geteuid() == 0:
        st = os.stat(b.workspace)
        assert st.st_mode & 0o007 == 0, oct(st.st_mode)
        assert str(st.st_uid) == b.metadata["agentUserSid"]


def test_caller_env_absent_inside_session(session_factory):
    secret = unique("SECRETVALUE")
    host_env = {"SECRET_TOKEN": secret, "SSH_AUTH_SOCK": "/tmp/" + secret}
    s = session_factory(env=host_env)
    r = s.exec("env; cat /proc/self/environ | tr '\\0' '\\n'; "
               "cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'", host_env=host_env)
    assert r.rc == 0, r.describe()
    assert secret not in r.stdout, r.describe()
    assert "SECRET_TOKEN" not in r.stdout and "SSH_AUTH_SOCK" not in r.stdout, r.describe()
    envs = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
    assert "PATH" in envs
    assert envs.get("HOME") == s.workspace, envs


def test_process_env_reaches_workload(session):
    r = session.exec("echo $MINE", env=["MINE=given"])
    assert (r.rc, r.stdout) == (0, "given\n"), r.describe()


def test_distinct_hostname(session):
    r = session.exec("hostname")
    assert r.rc == 0, r.describe()
    assert r.stdout.strip() != os.uname().nodename, r.describe()
