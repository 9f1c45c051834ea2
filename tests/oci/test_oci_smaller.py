"""Issue 34, finding 6: the smaller holes, one test each (docs/security.md rows name them).

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_smaller.py
"""
import json
import os

import pytest

from test_oci import BUSYBOX, MXC_OCI, oci  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")


def _no_ipc(c):
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "ipc"]
    c["mounts"] = [m for m in c["mounts"] if m["type"] != "mqueue"]


def test_host_ipc_namespace_is_refused(oci):  # noqa: F811
    """No ipc namespace: the host's shared memory and semaphores (before: the container ran in it)."""
    b = oci.bundle(["sh", "-c", "readlink /proc/self/ns/ipc"], _no_ipc)
    rc, out, err = oci("run", "--bundle", b, "s1")
    assert rc != 0 and out == "", (rc, out, err)
    assert "linux.namespaces has no ipc namespace: the host's IPC namespace is refused" in err, err


def test_host_ipc_namespace_joined_by_path_is_refused(oci):  # noqa: F811
    def join_host(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "ipc":
                n["path"] = "/proc/%d/ns/ipc" % os.getpid()   # the runtime's own: the host's
        c["mounts"] = [m for m in c["mounts"] if m["type"] != "mqueue"]
    b = oci.bundle(["true"], join_host)
    rc, _, err = oci("run", "--bundle", b, "s2")
    assert rc != 0 and "the IPC namespace is the host's: refused" in err, err


def test_fifo_as_a_namespace_path_is_refused_at_once(oci):  # noqa: F811
    """A FIFO named as a namespace path held create forever in open(2) (before: the call below
    timed out); it is opened O_PATH and must be an nsfs file."""
    fifo = os.path.join(oci.base, "ns-fifo")
    os.mkfifo(fifo)

    def join_fifo(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = fifo
    b = oci.bundle(["true"], join_fifo)
    rc, _, err = oci("run", "--bundle", b, "s3", timeout=120)
    assert rc != 0 and "linux.namespaces network path %s: not a namespace file (nsfs)" % fifo in err, err
    assert not os.path.exists(os.path.join(oci.root, "s3"))


@pytest.mark.parametrize("n", ["abc", "2000", "-3"])
def test_preserve_fds_error_names_what_was_given(oci, n):  # noqa: F811
    b = oci.bundle(["true"])
    for args in (("run", "--bundle", b, "--preserve-fds", n, "s4"), ("run", "--preserve-fds=" + n, "--bundle", b, "s4")):
        rc, _, err = oci(*args)
        assert rc != 0 and "--preserve-fds %s: not a count of descriptors" % n in err and "--preserve-fds -1:" not in err, err


def test_preserve_fds_error_in_exec_names_what_was_given(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("s5", b)[0] == 0
    rc, _, err = oci("exec", "--preserve-fds", "x1", "s5", "true")
    assert rc != 0 and "--preserve-fds x1: not a count" in err, err


def test_oversized_config_says_it_is_too_large(oci):  # noqa: F811
    """A 200 MB config.json said "File exists" (a stale errno)."""
    b = oci.bundle(["true"])
    with open(os.path.join(b, "config.json"), "r+") as f:
        f.truncate(200 << 20)
    rc, _, err = oci("run", "--bundle", b, "s6")
    assert rc != 0 and "too large: larger than the limit of 64 MiB" in err and "File exists" not in err, err


def test_log_symlink_in_the_bundle_is_refused(oci):  # noqa: F811
    """--log BUNDLE/log.json where the bundle's writer put a symlink: before, mxc-oci (root) made or
    appended a file at the link's target; now the log is opened O_NOFOLLOW and the call refused."""
    b = oci.bundle(["true"])
    victim = os.path.join(oci.base, "victim-file")
    os.symlink(victim, os.path.join(b, "log.json"))
    rc, _, err = oci("--log", os.path.join(b, "log.json"), "--log-format", "json", "run", "--bundle", b, "s7")
    assert rc != 0 and "log.json: a symbolic link: refused" in err, err
    assert not os.path.lexists(victim)
    assert not os.path.exists(os.path.join(oci.root, "s7"))


def test_log_hard_link_is_refused_and_a_plain_log_works(oci):  # noqa: F811
    b = oci.bundle(["true"])
    victim = os.path.join(oci.base, "victim-file")
    with open(victim, "w") as f:
        f.write("root's\n")
    os.link(victim, os.path.join(b, "log.json"))
    rc, _, err = oci("--log", os.path.join(b, "log.json"), "delete", "nothing-here")
    assert rc != 0 and "not a regular file with one link: refused" in err, err
    assert open(victim).read() == "root's\n"
    os.unlink(os.path.join(b, "log.json"))
    rc, _, err = oci("--log", os.path.join(b, "log.json"), "delete", "nothing-here")
    assert rc != 0 and "container does not exist" in open(os.path.join(b, "log.json")).read()


def test_list_shows_every_container_directory_even_a_half_made_one(oci, monkeypatch):  # noqa: F811
    """Creates killed before their state was written left directories `list` did not show (16
    killed, 11 listed): each is listed, as stopped, so that delete --force can be given its name."""
    live = oci.bundle(["sleep", "1000"])
    assert oci.create("s8-live", live)[0] == 0
    b = oci.bundle(["true"])
    monkeypatch.setenv("MXC_FAULT_OCI_AFTER_CGROUP", "crash")   # create dies as if killed (no cleanup)
    for k in range(3):
        assert oci.create("s8-half%d" % k, b)[0] != 0
    monkeypatch.delenv("MXC_FAULT_OCI_AFTER_CGROUP")
    dirs = sorted(d for d in os.listdir(oci.root) if d.startswith("s8-"))
    assert dirs == ["s8-half0", "s8-half1", "s8-half2", "s8-live"], dirs
    rc, out, err = oci("list", "--format", "json")
    assert rc == 0, err
    listed = {c["id"]: c["status"] for c in json.loads(out)}
    assert listed == {"s8-half0": "stopped", "s8-half1": "stopped", "s8-half2": "stopped", "s8-live": "created"}, out
    rc, out, _ = oci("list", "-q")
    assert out.split() == dirs
    rc, out, _ = oci("list")
    assert all(d in out for d in dirs), out
    for d in dirs:
        assert oci("delete", "--force", d)[0] == 0
    assert oci("list", "-q")[1] == ""


def test_own_maps_make_missing_mount_targets_in_a_root_owned_image(oci):  # noqa: F811
    """With a config's own uidMappings/gidMappings the rootfs is not idmapped: an image that is host
    root's on disk is not the container root's, and the init could not make a missing mount target
    ("Permission denied").  Host root makes those on the rootfs itself before the clone, owned by
    the container's root (as the init would have made them)."""
    base = 1500000000
    src = os.path.join(oci.base, "bind-src")
    os.makedirs(src)

    def userns(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": base, "size": 65536}]
        c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": base, "size": 65536}]
        c["mounts"].append({"destination": "/newdir", "type": "tmpfs", "source": "tmpfs"})
        c["mounts"].append({"destination": "/a/b/c", "type": "bind", "source": src, "options": ["rbind", "ro"]})
    b = oci.bundle(["sh", "-c", "grep -c ' /newdir \\| /a/b/c ' /proc/self/mountinfo"], userns, readonly=False)
    rc, out, err = oci("run", "--bundle", b, "s9")
    assert rc == 0 and out.strip() == "2", (rc, out, err)
    for p in ("newdir", "a", "a/b", "a/b/c"):
        st = os.lstat(os.path.join(b, "rootfs", p))
        assert (st.st_uid, st.st_gid) == (base, base), p


def _held_exec(oci, cid):  # noqa: F811
    """An exec held just before its execve (MXC_FAULT_OCI_EXEC_STOP): (Popen, host pid of the held)."""
    import subprocess
    import time
    held = subprocess.Popen([MXC_OCI, "--root", oci.root, "exec", cid, "true"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, MXC_FAULT_OCI_EXEC_STOP="1"))
    init = oci.state(cid)["pid"]
    ns = os.stat("/proc/%d/ns/pid" % init).st_ino
    for _ in range(6000):
        for p in os.listdir("/proc"):
            try:
                if p.isdigit() and int(p) != init and os.stat("/proc/%s/ns/pid" % p).st_ino == ns and \
                        "\nState:\tT" in open("/proc/%s/status" % p).read():
                    return held, int(p)
            except OSError:
                pass
        time.sleep(0.01)
    held.kill()
    raise AssertionError("the exec was not held")


def test_a_process_about_to_exec_in_the_container_is_never_the_host_s_binary(oci):  # noqa: F811
    """An image file "#!/proc/self/exe" run by exec executed the host's mxc-oci inside the container:
    at execve time the process's /proc/self/exe, which binfmt_script follows for the interpreter, was
    the host's binary.  mxc-oci now runs create/run/exec from a sealed memfd copy of itself
    (selfclone.h): what /proc/self/exe names then is that copy, never the host file."""
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("s10", b)[0] == 0
    assert oci("start", "s10")[0] == 0
    held, pid = _held_exec(oci, "s10")
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
        assert exe.startswith("/memfd:mxc-oci") and os.path.realpath(MXC_OCI) not in exe, exe
        import fcntl
        fd = os.open("/proc/%d/exe" % pid, os.O_RDONLY)
        try:
            seals = fcntl.fcntl(fd, 1034)   # F_GET_SEALS: sealed against every change
            assert seals & 0xf == 0xf, seals
        finally:
            os.close(fd)
        assert open("/proc/%d/comm" % pid).read().strip() == "mxc-oci"
    finally:
        held.kill()
        held.wait()


def test_a_shebang_to_proc_self_exe_runs_only_the_sealed_copy(oci):  # noqa: F811
    b = oci.bundle(["sleep", "1000"], readonly=False)
    with open(os.path.join(b, "rootfs", "x.sh"), "w") as f:
        f.write("#!/proc/self/exe version\n")
    os.chmod(os.path.join(b, "rootfs", "x.sh"), 0o755)
    assert oci.create("s11", b)[0] == 0
    assert oci("start", "s11")[0] == 0
    before = open(MXC_OCI, "rb").read()
    # the script's interpreter is what the exec'ing process was: the sealed copy, which then cannot be
    # opened for writing by anyone (sealed), the host's binary untouched
    rc, out, err = oci("exec", "s11", "/x.sh")
    assert open(MXC_OCI, "rb").read() == before
    if b"/ld-linux" in before:
        # a dynamically linked build (the ASan one): its copy needs a loader the busybox image lacks,
        # so the interpreter cannot start at all (ENOENT) — the host's binary never runs either
        assert rc != 0 and "No such file or directory" in err, (rc, out, err)
    else:
        assert rc == 0 and "mxc-oci version" in out, (rc, out, err)
