"""Rootless Podman on mxc-oci (issue 36 item 5; docs/oci.md "Rootless"): a throwaway local account
(useradd -m, userdel -r at the end) with a test-added subordinate range, Podman 4.3 as that user
with its default rootless storage in its home (vfs here) and a busybox-static image imported from
a tarball (nothing pulled), no network.  Podman runs the runtime inside its own user namespace,
where the caller is uid 0: mxc-oci is rootless there too ("nested": the ids that namespace maps,
the rootfs from the caller's own containers storage, no cgroup, an empty read-only tmpfs for the
cgroup mount Podman always asks for).

Run as root:  MXC_OCI=$PWD/build/mxc-oci python3 -m pytest -q -p no:cacheprovider tests/oci/test_podman_rootless.py
"""
import os
import pwd
import shutil
import subprocess
import tarfile
import tempfile

import pytest

from conftest import wait_until
from subid import add_subids, remove_subids
from test_oci import BUSYBOX, MXC_OCI, make_rootfs

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK) or not shutil.which("podman")
                                or not os.access("/usr/bin/newuidmap", os.X_OK) or not shutil.which("useradd"),
                                reason="needs root, podman, busybox-static, uidmap and useradd")

NAME = "mxcrlpod"
UIDNO = 61253
SUB = 1376256
NSUB = 65536
IMAGE = "localhost/mxc-rl-bb:1"


def _ours():
    """Live processes of the account or its range (Podman's pause process among them)."""
    out = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit():
                st = os.stat("/proc/" + p)
                with open("/proc/%s/stat" % p) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                if state != "Z" and (st.st_uid == UIDNO or SUB <= st.st_uid < SUB + NSUB):
                    out.append(int(p))
        except (OSError, IndexError):
            pass
    return out


@pytest.fixture(scope="module")
def pod():
    subprocess.run(["userdel", "-r", NAME], capture_output=True)
    subprocess.run(["useradd", "-m", "-u", str(UIDNO), "-s", "/bin/sh", "-K", "SUB_UID_COUNT=0", "-K",
                    "SUB_GID_COUNT=0", NAME], check=True, capture_output=True)
    line = "%s:%d:%d" % (NAME, SUB, NSUB)
    base = tempfile.mkdtemp(prefix="mxc-rlpod-", dir="/var/tmp")
    try:
        add_subids(line)
        pw = pwd.getpwnam(NAME)
        os.chmod(base, 0o755)
        run = os.path.join(base, "run")
        os.mkdir(run, 0o700)
        os.chown(run, pw.pw_uid, pw.pw_gid)
        rootfs = os.path.join(base, "rootfs")
        make_rootfs(rootfs)
        tarball = os.path.join(base, "bb.tar")
        with tarfile.open(tarball, "w") as t:
            t.add(rootfs, arcname=".")
        os.chmod(tarball, 0o644)
        env = {"HOME": pw.pw_dir, "USER": NAME, "XDG_RUNTIME_DIR": run, "PATH": "/usr/bin:/bin"}
        drop = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--init-groups"]

        def p(*args, timeout=120, check=True, runtime=True):
            r = subprocess.run(drop + ["podman"] + (["--runtime", MXC_OCI] if runtime else []) + list(args),
                               capture_output=True, text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL,
                               cwd=base)
            if check:
                assert r.returncode == 0, r.stdout + r.stderr
            return r
        p.uid, p.gid, p.run = pw.pw_uid, pw.pw_gid, run
        p("import", tarball, IMAGE, runtime=False)
        yield p
        p("rm", "-a", "-f", check=False)
    finally:
        for pid in _ours():  # Podman's pause process (catatonit), the account's alone
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        wait_until(lambda: not _ours(), 10)
        remove_subids(line)
        subprocess.run(["userdel", "-r", NAME], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _uid_of(pid):
    with open("/proc/%d/status" % pid) as f:
        return [int(l.split()[1]) for l in f if l.startswith("Uid:")][0]


def test_rootless_podman_run_says_0_inside(pod):
    r = pod("run", "--rm", "--network", "none", IMAGE, "sh", "-c", "id -u; ls /sys/fs/cgroup | wc -l")
    assert r.stdout.split() == ["0", "0"], r.stdout + r.stderr


def test_rootless_podman_run_exec_stop_rm(pod):
    """run -d, exec (0 inside, the caller outside), a container as its uid 1 (the caller's first
    subordinate id outside), stop, rm; nothing left in the runtime's state."""
    pod("run", "-d", "--name", "s1", "--network", "none", IMAGE, "sleep", "1000")
    pod("run", "-d", "--name", "s2", "--user", "1:1", "--network", "none", IMAGE, "sleep", "1000")
    r = pod("exec", "s1", "id", "-u")
    assert r.stdout.strip() == "0"
    p1 = int(pod("inspect", "-f", "{{.State.Pid}}", "s1").stdout)
    p2 = int(pod("inspect", "-f", "{{.State.Pid}}", "s2").stdout)
    assert _uid_of(p1) == pod.uid
    assert _uid_of(p2) == SUB
    pod("stop", "-t", "2", "s1", "s2")
    pod("rm", "s1", "s2")
    assert pod("ps", "-a", "-q").stdout.strip() == ""
    state = os.path.join(pod.run, "mxc-oci")
    assert not os.path.isdir(state) or [e for e in os.listdir(state) if e != "@bpf"] == []  # @bpf: the profile cache
    assert wait_until(lambda: not [p for p in _ours() if _uid_of(p) >= SUB], 10)


def test_rootless_podman_container_sees_no_host_process_or_file(pod):
    """The escape suite's core probes through rootless Podman: a host process (root's) is neither
    listed nor signalled, the caller's own file outside the image is not there, /proc/sys is not
    writable, no capability over the host."""
    host = subprocess.Popen(["sleep", "1000"])
    secret = os.path.join(os.path.dirname(pod.run), "caller-secret")
    try:
        with open(secret, "w") as f:
            f.write("caller-only\n")
        os.chown(secret, pod.uid, pod.gid)
        script = "; ".join(["ls /proc | grep -c '^[0-9]'", "kill -0 %d 2>/dev/null && echo SIGNALLED" % host.pid,
                            "cat %s /proc/1/root%s 2>/dev/null" % (secret, secret),
                            "echo x > /proc/sys/kernel/hostname 2>/dev/null && echo SYSWROTE",
                            "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status"])
        r = pod("run", "--rm", "--network", "none", IMAGE, "sh", "-c", script)
        out = r.stdout
        assert int(out.split()[0]) <= 4, out
        assert "SIGNALLED" not in out and "caller-only" not in out and "SYSWROTE" not in out, out
        assert host.poll() is None
    finally:
        host.kill()
        host.wait()
