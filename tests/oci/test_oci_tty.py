"""A container without a terminal never gets the operator's (issue 34, finding 5): mxc-oci started
from a shell on a terminal, the workload opening /dev/tty, could read the operator's next keystrokes
and change the terminal's settings.  Every process mxc-oci starts without process.terminal is in a
session of its own with no controlling terminal (runc's): /dev/tty gives ENXIO.  mxc-oci is run here
on a pty the test makes (pty.fork: a new session, the pty its controlling terminal), for run, run
--detach and exec.

With a terminal and no --console-socket, mxc-oci relays the container's pty through its own stdio
through the engine's one terminal relay (mxc_exec_relay_terminal): a window-size change of the
caller's terminal reaches the container's, as runc resizes on SIGWINCH (test_*_resizes_*), and the
container's output passes the engine's terminal filter (termfilter.h) as mxc's own attach does:
what acts on the operator's machine (an OSC 52 clipboard write, a title, a query whose reply the
terminal types into the operator's shell once the container is gone) is dropped, colours pass
(test_*_output_acting_on_the_operator_s_machine_is_dropped).

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_tty.py
"""
import fcntl
import os
import pty
import select
import struct
import termios
import time

import pytest

from test_oci import BUSYBOX, MXC_OCI, oci  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")

# the workload opens /dev/tty (no read: an open that worked would be the operator's terminal) and
# says what happened, in its own rootfs
PROBE = "if true < /dev/tty; then echo OPENED > /res; else echo REFUSED > /res; fi 2>/res.err; ls -l /proc/self/fd/0 >> /res.err"


def on_a_pty(oci, *args, stay_for=None):  # noqa: F811
    """mxc-oci ARGS with a pty as its controlling terminal and stdio: (returncode, what it wrote).
    The pty's session is led by a process of the test's that runs mxc-oci and, as an operator's
    shell does, stays (until stay_for exists: a detached workload's answer), so the terminal stays
    the session's while the workload runs."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            child = os.fork()
            if child == 0:
                os.execv(MXC_OCI, [MXC_OCI, "--root", oci.root, *args])
            _, ws = os.waitpid(child, 0)
            for _ in range(6000):
                if not stay_for or os.path.exists(stay_for):
                    break
                time.sleep(0.01)
            os._exit(os.waitstatus_to_exitcode(ws))
        finally:
            os._exit(127)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, ws = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(ws), out.decode(errors="replace")


def result(b, name="res"):
    """The probe's answer, once the workload has written it (a detached one runs on its own)."""
    res = os.path.join(b, "rootfs", name)
    for _ in range(6000):
        if os.path.exists(res) and open(res).read().endswith("\n"):
            break
        time.sleep(0.01)
    return open(res).read().strip(), open(res + ".err").read()


def test_run_without_a_terminal_has_no_controlling_terminal(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", PROBE], readonly=False)
    rc, out = on_a_pty(oci, "run", "--bundle", b, "t1")
    assert rc == 0, out
    res, err = result(b)
    assert res == "REFUSED" and "No such device or address" in err, (res, err, out)


def test_run_detach_without_a_terminal_has_no_controlling_terminal(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", PROBE], readonly=False)
    rc, out = on_a_pty(oci, "run", "--detach", "--bundle", b, "t2", stay_for=os.path.join(b, "rootfs", "res"))
    assert rc == 0, out
    res, err = result(b)
    assert res == "REFUSED" and "No such device or address" in err, (res, err, out)


def test_exec_without_a_terminal_has_no_controlling_terminal(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"], readonly=False)
    assert oci.create("t3", b)[0] == 0
    assert oci("start", "t3")[0] == 0
    rc, out = on_a_pty(oci, "exec", "t3", "sh", "-c", PROBE)
    assert rc == 0, out
    res, err = result(b)
    assert res == "REFUSED" and "No such device or address" in err, (res, err, out)
    rc, out = on_a_pty(oci, "exec", "--detach", "t3", "sh", "-c", PROBE.replace("/res", "/res2"),
                       stay_for=os.path.join(b, "rootfs", "res2"))
    assert rc == 0, out
    res, err = result(b, "res2")
    assert res == "REFUSED" and "No such device or address" in err, (res, err, out)


# the workload says its terminal's size, then again after every line it reads (EOF: it exits)
SIZES = "/bin/busybox stty size; while read l; do /bin/busybox stty size; done"


def resized_on_a_pty(oci, *args, first_size=b"30 100"):  # noqa: F811
    """mxc-oci ARGS on a pty the test makes, sized 30x100; once the workload said first_size, the
    test's terminal becomes 40x120 and a line is typed, until the workload says the new size (a
    bounded number of tries).  Then EOF ends it: (first size seen, new size seen, returncode)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
            child = os.fork()
            if child == 0:
                os.execv(MXC_OCI, [MXC_OCI, "--root", oci.root, *args])
            _, ws = os.waitpid(child, 0)
            os._exit(os.waitstatus_to_exitcode(ws))
        finally:
            os._exit(127)
    out = b""

    def read_for(want, tries=100):
        nonlocal out
        for _ in range(tries):
            if want in out:
                return True
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    return want in out
                if not chunk:
                    return want in out
                out += chunk
        return want in out

    first = read_for(first_size)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    second = False
    for _ in range(20):  # a line typed, the size said again: until it is the new one
        os.write(fd, b"x\r")
        if read_for(b"40 120", tries=20):
            second = True
            break
    os.write(fd, b"\x04")
    read_for(b"never", tries=100)  # to its end (EIO), bounded
    _, ws = os.waitpid(pid, 0)
    os.close(fd)
    return first, second, os.waitstatus_to_exitcode(ws), out.decode(errors="replace")


def test_run_terminal_resizes_with_the_callers(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", SIZES], lambda c: c["process"].update(terminal=True))
    first, second, rc, out = resized_on_a_pty(oci, "run", "--bundle", b, "t4")
    assert first and second, out
    assert rc == 0, out


def test_exec_terminal_resizes_with_the_callers(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"], readonly=False)
    assert oci.create("t5", b)[0] == 0
    assert oci("start", "t5")[0] == 0
    # an exec's process runs before mxc-oci received and sized its terminal (its first `stty size`
    # may see 0x0 and fail): its first line, whichever, says it is reading
    first, second, rc, out = resized_on_a_pty(oci, "exec", "--tty", "t5", "sh", "-c", SIZES, first_size=b"\n")
    assert first and second, out
    assert rc == 0, out


# what the workload prints to its terminal: an OSC 52 clipboard write, a cursor-position query
# (CSI 6n: the terminal answers on its input), a window title, and colours, between markers
EMIT = ("printf 'A\\033]52;c;cm0gLXJmIH4K\\007B\\033[6nC\\033[31mred\\033[0m\\033]0;title\\007D\\n'")


def assert_filtered(out):
    assert "A" in out and "D" in out, repr(out)
    assert "\x1b]52" not in out and "\x1b[6n" not in out and "\x1b]0;" not in out, repr(out)
    assert "ABC\x1b[31mred\x1b[0mD" in out, repr(out)  # the rest byte for byte


def test_run_terminal_output_acting_on_the_operator_s_machine_is_dropped(oci):  # noqa: F811
    """Review of issue 37: the relay copied the container's pty output as it was (the OSC 52
    write, the query and the title reached the caller's terminal)."""
    b = oci.bundle(["sh", "-c", EMIT], lambda c: c["process"].update(terminal=True))
    rc, out = on_a_pty(oci, "run", "--bundle", b, "t6")
    assert rc == 0, out
    assert_filtered(out)


def test_exec_terminal_output_acting_on_the_operator_s_machine_is_dropped(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("t7", b)[0] == 0
    assert oci("start", "t7")[0] == 0
    rc, out = on_a_pty(oci, "exec", "--tty", "t7", "sh", "-c", EMIT)
    assert rc == 0, out
    assert_filtered(out)
