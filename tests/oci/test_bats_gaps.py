"""Gaps runc's own bats suite (tests/oci/bats/run.sh) found in mxc-oci, one test each.

The suite drives mxc-oci exactly as it drives runc; each test here reproduces what a
bats test does that mxc-oci answered differently, without bats."""
import os
import stat

from test_oci import Oci, oci  # noqa: F401  (the fixture)


def test_existing_root_readable_by_others_is_accepted_but_not_a_writable_one(oci):
    # helpers.bash makes --root with `mkdir -p` (0755) and every bats test uses it; runc accepts
    # an existing root.  Only write access for others matters (they could plant a container
    # directory); each container's own directory stays 0700.
    os.makedirs(oci.root, mode=0o755)
    os.chmod(oci.root, 0o755)
    b = oci.bundle(["true"])
    rc, _, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    rc, out, err = oci("list", "-q")
    assert rc == 0, err
    for mode in (0o775, 0o757, 0o777):
        os.chmod(oci.root, mode)
        rc, _, err = oci("list")
        assert rc != 0 and "--root" in err, (oct(mode), err)
    os.chmod(oci.root, 0o755)
    rc, _, err = oci.create("c2", b)
    assert rc == 0, err
    assert stat.S_IMODE(os.stat(os.path.join(oci.root, "c2")).st_mode) == 0o700


def test_spec_asks_for_a_terminal_as_runc_s_does(oci):
    # every bats test starts from `runc spec` and passes --console-socket (or relies on run's
    # own terminal): runc's template has process.terminal true
    import json
    import tempfile
    d = tempfile.mkdtemp(dir=oci.base)
    rc, _, err = oci("spec", "--bundle", d)
    assert rc == 0, err
    with open(os.path.join(d, "config.json")) as f:
        assert json.load(f)["process"]["terminal"] is True


def test_run_with_a_terminal_and_no_console_socket_relays_it(oci):
    # start_hello.bats: `runc run` of a terminal process from a terminal: the runtime keeps the pty
    # master and relays it to its own stdio; the exit status is the process's
    import pty
    import subprocess
    from test_oci import MXC_OCI

    def mutate(c):
        c["process"]["terminal"] = True
        c["process"]["consoleSize"] = {"height": 25, "width": 90}
    b = oci.bundle(["sh", "-c", "read x; echo got-$x; tty; stty size; exit 3"], mutate=mutate)
    master, slave = pty.openpty()
    p = subprocess.Popen([MXC_OCI, "--root", oci.root, "run", "--bundle", b, "t1"], stdin=slave, stdout=slave,
                         stderr=subprocess.PIPE, start_new_session=True)
    os.close(slave)
    os.write(master, b"ping\n")
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break  # EIO: mxc-oci closed the terminal
        if not chunk:
            break
        out += chunk
    assert p.wait(timeout=60) == 3, p.stderr.read()
    os.close(master)
    text = out.decode(errors="replace")
    assert "got-ping" in text and "/dev/pts/0" in text and "25 90" in text, text
    assert not os.path.exists(os.path.join(oci.root, "t1"))
    assert not [n for n in os.listdir("/tmp") if n.startswith("mxc-oci-tty-")]
