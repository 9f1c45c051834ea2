"""The operator's terminal given to mxc-oci as stdio of a process without process.terminal never
reaches the container (review of issue 38's session).  runc passes its own stdio straight through:
called from an operator's terminal, the container held it, and a process of the container left
behind after `exec` (or a detached one) could read what the operator typed into their shell next
(passwords), change the terminal's settings and write escape sequences to it at any time later.
TIOCSTI was blocked by seccomp; nothing else was.

mxc-oci now gives such a process pipes in place of each of its stdio that is a terminal, and relays
them while it is attached (foreground `run`, `exec`), the output through the engine's terminal
filter (termfilter.h); when the process ends the relay stops and mxc-oci's ends are closed, so what
the container left running reads EOF and writes into a pipe without a reader.  A detached process
(`create`, `run --detach`, `exec --detach`) gets /dev/null there instead.  Pipes and files (what
containerd, Podman and CRI give) pass straight through, unchanged.

Here mxc-oci's stdin, stdout and stderr are the slave of a pty the test makes (pty.openpty); the
test holds the master, as the operator's terminal would.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_stdio_tty.py
"""
import os
import pty
import select
import subprocess
import termios
import time

import pytest

from conftest import wait_until
from test_oci import BUSYBOX, MXC_OCI, oci  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")

# what each of the process's fds 0-2 is, into /res: "N tty" or "N notty", then its link
PROBE = ("r=''; for n in 0 1 2; do if [ -t $n ]; then t=tty; else t=notty; fi; "
         "r=\"$r$n $t\\n$(readlink /proc/$$/fd/$n)\\n\"; done; printf \"$r\" > /res.tmp; mv /res.tmp /res")


def drain(master, out, wait=0.0):
    """What the master has to read now (and for wait seconds more), appended to out."""
    deadline = time.monotonic() + wait
    while True:
        left = max(0.0, deadline - time.monotonic())
        if not select.select([master], [], [], left)[0]:
            return out
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: no slave open any more
            return out
        if not chunk:
            return out
        out += chunk


def on_tty(oci, *args, typed=b"", timeout=60):  # noqa: F811
    """mxc-oci ARGS with a pty's slave as its stdin, stdout and stderr; typed written to the
    master once it runs.  (returncode, what reached the master, the master: still open)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([MXC_OCI, "--root", oci.root, *args], stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    if typed:
        os.write(master, typed)
    out, deadline = b"", time.monotonic() + timeout
    while p.poll() is None and time.monotonic() < deadline:
        out = drain(master, out, 0.05)
    if p.poll() is None:
        p.kill()
    p.wait()
    return p.returncode, drain(master, out), master


def probe(b, name="res"):
    res = os.path.join(b, "rootfs", name)
    assert wait_until(lambda: os.path.exists(res), timeout=30), "the probe never answered"
    lines = open(res).read().split("\n")
    return {lines[i].split()[0]: (lines[i].split()[1], lines[i + 1]) for i in range(0, 6, 2)}


def assert_no_terminal(fds, want):
    for n in "012":
        kind, link = fds[n]
        assert kind == "notty" and "/dev/pts" not in link and link.startswith(want), fds


def test_run_process_gets_pipes_not_the_operator_s_terminal(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", PROBE], readonly=False)
    rc, out, master = on_tty(oci, "run", "--bundle", b, "s1")
    os.close(master)
    assert rc == 0, out
    assert_no_terminal(probe(b), "pipe:")


def test_run_relays_input_output_exit_code_and_eof(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", "read l; echo \"got [$l]\"; echo to-err >&2; cat; echo after-eof; exit 7"])
    rc, out, master = on_tty(oci, "run", "--bundle", b, "s2", typed=b"typed\nmore\n\x04")
    os.close(master)
    assert rc == 7, out
    assert b"got [typed]" in out and b"to-err" in out and b"after-eof" in out, out


def test_run_output_is_whole_when_the_process_ends(oci):  # noqa: F811
    """What the process wrote before it exited is all copied (its pipe drained at its end)."""
    b = oci.bundle(["sh", "-c", "seq 1 30000"])
    rc, out, master = on_tty(oci, "run", "--bundle", b, "s11")
    os.close(master)
    assert rc == 0, out[-200:]
    lines = out.split(b"\r\n")
    assert lines[-2:] == [b"30000", b""] and lines.count(b"15000") == 1, out[-200:]


def test_run_relaying_forwards_signals(oci):  # noqa: F811
    """A signal to mxc-oci while it relays reaches the process, as before; its status is run's."""
    b = oci.bundle(["sh", "-c", "trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 0.1; done"])
    master, slave = pty.openpty()
    p = subprocess.Popen([MXC_OCI, "--root", oci.root, "run", "--bundle", b, "s12"], stdin=slave, stdout=slave,
                         stderr=slave)
    os.close(slave)
    try:
        out, deadline = b"", time.monotonic() + 30
        while b"ready" not in out and time.monotonic() < deadline:
            out = drain(master, out, 0.05)
        p.send_signal(15)
        while p.poll() is None and time.monotonic() < deadline + 30:
            out = drain(master, out, 0.05)
        out = drain(master, out)
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
        os.close(master)
    assert p.returncode == 3 and b"got-term" in out, (p.returncode, out)


def test_detached_run_and_create_get_dev_null(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", PROBE], readonly=False)
    rc, out, master = on_tty(oci, "run", "--detach", "--bundle", b, "s3")
    assert rc == 0, out
    assert_no_terminal(probe(b), "/dev/null")
    b2 = oci.bundle(["sh", "-c", PROBE], readonly=False)
    rc, out, master2 = on_tty(oci, "create", "--bundle", b2, "s4")
    assert rc == 0, out
    assert oci("start", "s4")[0] == 0
    assert_no_terminal(probe(b2), "/dev/null")
    os.close(master)
    os.close(master2)


def test_exec_process_gets_pipes_and_detached_exec_dev_null(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"], readonly=False)
    assert oci.create("s5", b)[0] == 0
    assert oci("start", "s5")[0] == 0
    rc, out, master = on_tty(oci, "exec", "s5", "sh", "-c", PROBE)
    os.close(master)
    assert rc == 0, out
    assert_no_terminal(probe(b), "pipe:")
    rc, out, master = on_tty(oci, "exec", "--detach", "s5", "sh", "-c", PROBE.replace("/res", "/res2"))
    assert rc == 0, out
    assert_no_terminal(probe(b, "res2"), "/dev/null")
    os.close(master)


# left behind by an exec: once mxc-oci returned, it waits, reads a line from its stdin, turns the
# terminal's echo off, and writes a marker and an OSC 52 clipboard write; what it read into /leak
# (its stdin taken back: a shell gives a background list /dev/null; SIGPIPE ignored, to go on)
LEFTOVER = ("exec 4<&0; ( exec 0<&4 4<&-; trap '' PIPE; sleep 1; read -t 3 l; echo \"read:[$l]\" > /leak.tmp; "
            "/bin/busybox stty -echo; echo LEAKED; printf '\\033]52;c;cm0gLXJmIH4K\\007' >&2; "
            "mv /leak.tmp /leak ) & exit 0")


def test_a_process_left_behind_by_exec_cannot_reach_the_terminal(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"], readonly=False)
    assert oci.create("s6", b)[0] == 0
    assert oci("start", "s6")[0] == 0
    rc, out, master = on_tty(oci, "exec", "s6", "sh", "-c", LEFTOVER)
    try:
        assert rc == 0, out
        try:
            os.write(master, b"hunter2\n")  # the operator types into their shell, after exec returned
        except OSError:
            pass
        leak = os.path.join(b, "rootfs", "leak")
        assert wait_until(lambda: os.path.exists(leak), timeout=30), "the leftover never finished"
        out = drain(master, out, 0.5)
        assert "hunter2" not in open(leak).read(), open(leak).read()
        assert b"LEAKED" not in out and b"\x1b]52" not in out, out
        assert termios.tcgetattr(master)[3] & termios.ECHO, "the leftover turned echo off"
    finally:
        os.close(master)


EMIT = "printf 'A\\033]52;c;cm0gLXJmIH4K\\007B\\033[6nC\\033[31mred\\033[0m\\033]0;title\\007D\\n'"


def assert_filtered(out):
    out = out.decode(errors="replace")
    assert "\x1b]52" not in out and "\x1b[6n" not in out and "\x1b]0;" not in out, repr(out)
    assert out.count("ABC\x1b[31mred\x1b[0mD") == 2, repr(out)  # the rest byte for byte, both streams


def test_run_output_acting_on_the_operator_s_machine_is_dropped(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", EMIT + "; " + EMIT + " >&2"])
    rc, out, master = on_tty(oci, "run", "--bundle", b, "s7")
    os.close(master)
    assert rc == 0, out
    assert_filtered(out)


def test_exec_output_acting_on_the_operator_s_machine_is_dropped(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("s8", b)[0] == 0
    assert oci("start", "s8")[0] == 0
    rc, out, master = on_tty(oci, "exec", "s8", "sh", "-c", EMIT + "; " + EMIT + " >&2")
    os.close(master)
    assert rc == 0, out
    assert_filtered(out)


def test_pipes_and_files_pass_straight_through(oci):  # noqa: F811
    """What containerd, Podman and CRI give (pipes, files): the process's own, unchanged."""
    b = oci.bundle(["sh", "-c", "for n in 0 1 2; do readlink /proc/$$/fd/$n; done"])
    with open(os.path.join(oci.base, "err"), "wb") as err:
        p = subprocess.Popen([MXC_OCI, "--root", oci.root, "run", "--bundle", b, "s9"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=err)
        given = [os.readlink("/proc/self/fd/%d" % f.fileno()) for f in (p.stdin, p.stdout)]
        out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    links = out.decode().split()
    assert links[:2] == given and given[0].startswith("pipe:"), (links, given)
    assert links[2] == os.path.join(oci.base, "err"), links


def test_a_background_run_is_not_stopped_by_the_relay(oci):  # noqa: F811
    """mxc-oci in a background job of its terminal (a shell's `&`) reads none of the terminal's input
    (a read would stop it, SIGTTIN, as any job's): what the operator types is their shell's."""
    b = oci.bundle(["sh", "-c", "sleep 1; echo done"])
    pid, fd = pty.fork()
    if pid == 0:
        try:
            child = os.fork()
            if child == 0:
                os.setpgid(0, 0)  # a job of its own, not the terminal's foreground one
                os.execv(MXC_OCI, [MXC_OCI, "--root", oci.root, "run", "--bundle", b, "s10"])
            _, ws = os.waitpid(child, os.WUNTRACED)
            os._exit(0 if os.WIFEXITED(ws) and os.WEXITSTATUS(ws) == 0 else 1)
        finally:
            os._exit(127)
    try:
        time.sleep(0.3)
        os.write(fd, b"typed for the shell\n")
        out = drain(fd, b"", 30)
    finally:
        _, ws = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(ws) == 0 and b"done" in out, out


def test_run_output_is_whole_on_a_non_blocking_terminal(oci):  # noqa: F811
    """The operator's terminal left O_NONBLOCK by another program (its open file description is
    shared) and read slowly: the relay waits for room instead of dropping the rest of a chunk (a
    cut inside a sequence it let through would leave the terminal mid-sequence for the next one:
    review of this session's changes)."""
    import fcntl
    b = oci.bundle(["sh", "-c", "head -c 600000 /dev/zero | tr '\\0' x; echo END"])
    master, slave = pty.openpty()
    fcntl.fcntl(slave, fcntl.F_SETFL, fcntl.fcntl(slave, fcntl.F_GETFL) | os.O_NONBLOCK)
    p = subprocess.Popen([MXC_OCI, "--root", oci.root, "run", "--bundle", b, "s13"], stdin=slave, stdout=slave,
                         stderr=slave)
    os.close(slave)
    try:
        time.sleep(1.5)  # nobody reads: the terminal's buffer fills
        out, deadline = b"", time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            out = drain(master, out, 0.05)
        out = drain(master, out)
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
        os.close(master)
    assert p.returncode == 0 and out.count(b"x") == 600000 and b"END" in out, (p.returncode, out.count(b"x"))
