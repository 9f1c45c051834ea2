"""Rootless mxc-oci (issue 36, first stage; src/oci/rootless.h): run by a throwaway local account
(useradd, userdel at the end) with a test-added subordinate range in /etc/subuid and /etc/subgid
(the lines removed in a finally).  The container's 0 is the caller's uid, 1.. its subordinate
range (as rootless Podman and runc map it), written by newuidmap/newgidmap; the state in the
caller's $XDG_RUNTIME_DIR/mxc-oci; no cgroup here (hybrid v1: none delegated), so linux.resources
limits are refused by name; binds, namespaces joined by path and extra devices refused by name
(this stage); the escape suite's core probes inside; nothing left behind.

Run as root:  MXC_OCI=$PWD/build/mxc-oci python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_rootless.py
"""
import json
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import tempfile

import pytest

from conftest import HELPER, errno_of, verb_result, wait_until
from subid import add_subids, remove_subids
from test_oci import BUSYBOX, MXC_OCI, add_helper, make_rootfs

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK)
                                or not os.access("/usr/bin/newuidmap", os.X_OK) or not shutil.which("useradd"),
                                reason="needs root, busybox-static, uidmap (newuidmap) and useradd")

NAME = "mxcrltest"
SUB = 1310720  # the account's subordinate range (uids and gids), 65536 ids
NSUB = 65536
UIDNO = 61251  # the account's uid: no other test's (tests/conftest.py's setpriv uid is 61234)


class Rootless:
    def __init__(self, base, uid, gid):
        self.base, self.uid, self.gid = base, uid, gid
        self.run = os.path.join(base, "run")
        self.root = os.path.join(self.run, "mxc-oci")
        self.n = 0

    def __call__(self, *args, timeout=60, root=None):
        """(rc, stdout, stderr) of mxc-oci as the account, its default --root (XDG_RUNTIME_DIR's); the
        output through files (a created container's init keeps them open)."""
        env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": self.run}
        argv = ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid, "--clear-groups", MXC_OCI]
        argv += ["--root", root] if root else []
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            r = subprocess.run(argv + list(args), env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                               timeout=timeout)
            out.seek(0)
            err.seek(0)
            return r.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace")

    def bundle(self, args, mutate=None, helper=False, rootless_spec=True):
        """A bundle the account owns: busybox rootfs, config.json from its own `mxc-oci spec --rootless`."""
        self.n += 1
        b = os.path.join(self.base, "bundle%d" % self.n)
        os.makedirs(b)
        make_rootfs(os.path.join(b, "rootfs"))
        if helper:
            add_helper(b)
        subprocess.run(["chown", "-R", "%d:%d" % (self.uid, self.gid), b], check=True)
        rc, _, err = self("spec", "--bundle", b, *(["--rootless"] if rootless_spec else []))
        assert rc == 0, err
        p = os.path.join(b, "config.json")
        with open(p) as f:
            c = json.load(f)
        c["process"]["args"] = args
        c["process"]["terminal"] = False
        if mutate:
            mutate(c)
        with open(p, "w") as f:
            json.dump(c, f)
        os.chown(p, self.uid, self.gid)
        return b

    def pids(self):
        """Live processes (not zombies) of the account's uid or its range."""
        out = []
        for p in os.listdir("/proc"):
            try:
                if p.isdigit():
                    st = os.stat("/proc/" + p)
                    with open("/proc/%s/stat" % p) as f:
                        state = f.read().rsplit(")", 1)[1].split()[0]
                    if state != "Z" and (st.st_uid == self.uid or SUB <= st.st_uid < SUB + NSUB):
                        out.append(int(p))
            except (OSError, IndexError):
                pass
        return out


@pytest.fixture
def rl():
    subprocess.run(["userdel", "-r", NAME], capture_output=True)  # a leftover of a killed run
    subprocess.run(["useradd", "-M", "-U", "-u", str(UIDNO), "-s", "/usr/sbin/nologin", "-K", "SUB_UID_COUNT=0",
                    "-K", "SUB_GID_COUNT=0", NAME], check=True, capture_output=True)
    line = "%s:%d:%d" % (NAME, SUB, NSUB)
    base = None
    r = None
    try:
        pw = pwd.getpwnam(NAME)
        add_subids(line)
        base = tempfile.mkdtemp(prefix="mxc-rl-", dir="/var/tmp")
        os.chmod(base, 0o755)
        r = Rootless(base, pw.pw_uid, pw.pw_gid)
        os.mkdir(r.run, 0o700)
        os.chown(r.run, r.uid, r.gid)
        yield r
    finally:
        if r is not None:
            if os.path.isdir(r.root):
                for cid in os.listdir(r.root):
                    r("delete", "--force", cid)
            wait_until(lambda: not r.pids(), 10)
            leftover = r.pids()
            for p in leftover:
                try:
                    os.kill(p, 9)
                except OSError:
                    pass
        remove_subids(line)
        subprocess.run(["userdel", "-r", NAME], capture_output=True)
        if base:
            shutil.rmtree(base, ignore_errors=True)
    assert r is None or not leftover, "processes left behind: %s" % leftover


def _maps(pid, f):
    with open("/proc/%d/%s" % (pid, f)) as fh:
        return [l.split() for l in fh.read().splitlines()]


def _mounts_naming(path):
    with open("/proc/self/mountinfo") as f:
        return [l for l in f if path in l]


def test_lifecycle_as_a_normal_user(rl):
    """create/start/exec/kill/delete of the account's own bundle; 0 inside is the caller outside;
    the maps are the caller's uid and its subordinate range; the state is in its runtime dir."""
    b = rl.bundle(["sleep", "1000"])
    rc, _, err = rl("create", "--bundle", b, "c1")
    assert rc == 0, err
    assert os.path.isdir(os.path.join(rl.root, "c1"))
    st = os.stat(rl.root)
    assert st.st_uid == rl.uid and st.st_mode & 0o077 == 0
    rc, out, err = rl("state", "c1")
    assert rc == 0, err
    s = json.loads(out)
    assert s["status"] == "created" and s["owner"] == NAME
    pid = s["pid"]
    assert _maps(pid, "uid_map") == [["0", str(rl.uid), "1"], ["1", str(SUB), str(NSUB)]]
    assert _maps(pid, "gid_map") == [["0", str(rl.gid), "1"], ["1", str(SUB), str(NSUB)]]
    assert rl("start", "c1")[0] == 0
    with open("/proc/%d/status" % pid) as f:
        uids = [l.split()[1:] for l in f if l.startswith("Uid:")][0]
    assert uids == [str(rl.uid)] * 4  # the process's uid on the host: the caller's
    rc, out, err = rl("exec", "c1", "sh", "-c", "id -u; id -g")
    assert rc == 0, err
    assert out.split() == ["0", "0"]
    assert rl("kill", "c1", "KILL")[0] == 0
    assert wait_until(lambda: json.loads(rl("state", "c1")[1])["status"] == "stopped", 30)
    rc, _, err = rl("delete", "c1")
    assert rc == 0, err
    assert os.listdir(rl.root) == []
    assert not _mounts_naming(rl.base)
    assert not os.path.exists("/var/lib/mxc/claims/" + "c1")


def test_a_file_written_as_container_uid_1_is_the_first_subordinate_id(rl):
    def as_uid1(c):
        c["process"]["user"] = {"uid": 1, "gid": 1}
        c["root"]["readonly"] = False
    b = rl.bundle(["sh", "-c", "id -u; echo x > /w/f"], as_uid1)
    w = os.path.join(b, "rootfs", "w")
    os.mkdir(w)
    os.chmod(w, 0o777)
    os.chown(w, rl.uid, rl.gid)
    rc, out, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.split() == ["1"]
    st = os.stat(os.path.join(w, "f"))
    assert (st.st_uid, st.st_gid) == (SUB, SUB)


def test_spec_rootless_runs_unchanged_and_id_is_0(rl):
    b = rl.bundle(["id", "-u"])
    rc, out, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.strip() == "0"


@pytest.mark.parametrize("field,mutate,words", [
    ("linux.resources.memory", lambda c: c["linux"].update(resources={"memory": {"limit": 1 << 28}}),
     ["linux.resources.memory", "refused", "needs a cgroup"]),
    ("linux.resources.pids", lambda c: c["linux"].update(resources={"pids": {"limit": 10}}),
     ["linux.resources.pids", "refused"]),
    ("mounts idmap", lambda c: c["mounts"].append({"destination": "/h", "type": "bind", "source": "/etc",
                                                   "options": ["rbind", "ro", "idmap"]}),
     ["mounts[", "an idmapped mount is refused rootless"]),
    ("mounts beyond the caller's reach", lambda c: c["mounts"].append(
        {"destination": "/h", "type": "bind", "source": "/root/.bashrc", "options": ["bind", "ro"]}),
     ["mounts[", "/root/.bashrc"]),
    ("uidMappings of host root", lambda c: c["linux"].update(
        uidMappings=[{"containerID": 0, "hostID": 0, "size": 1}], gidMappings=[{"containerID": 0, "hostID": 0, "size": 1}])
        or c["linux"]["namespaces"].append({"type": "user"}),
     ["linux.uidMappings[0]", "host uid 0: refused"]),
    ("uidMappings beyond the range", lambda c: c["linux"].update(
        uidMappings=[{"containerID": 0, "hostID": SUB, "size": NSUB + 1}],
        gidMappings=[{"containerID": 0, "hostID": SUB, "size": 1}]) or c["linux"]["namespaces"].append({"type": "user"}),
     ["linux.uidMappings[0]", "refused"]),
    ("namespace path", lambda c: [n.update(path="/proc/1/ns/net") for n in c["linux"]["namespaces"]
                                  if n["type"] == "network"],
     ["joined by path is not supported rootless"]),
    ("io.mxc.network", lambda c: c.update(annotations={"io.mxc.version": "1", "io.mxc.network": "{}"}),
     ["io.mxc.", "refused rootless"]),
])
def test_what_needs_host_root_is_refused_by_name(rl, field, mutate, words):
    b = rl.bundle(["true"], mutate)
    rc, _, err = rl("create", "--bundle", b, "c1")
    assert rc != 0, field
    for w in words:
        assert w in err, (field, err)
    assert os.listdir(rl.root) == []


def test_the_cgroup_mount_without_a_cgroup_is_an_empty_read_only_tmpfs(rl):
    """The full template (its /sys/fs/cgroup mount; rootless Podman always asks for one): no cgroup
    here, so nothing of the host's hierarchy is shown: an empty read-only tmpfs stands in, said
    on stderr."""
    b = rl.bundle(["sh", "-c", "ls -A /sys/fs/cgroup | wc -l; touch /sys/fs/cgroup/x 2>/dev/null && echo WROTE; "
                   "grep ' /sys/fs/cgroup ' /proc/self/mounts"], rootless_spec=False)
    rc, out, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].strip() == "0" and "WROTE" not in out, out
    assert lines[1].split()[2] == "tmpfs" and "ro" in lines[1].split()[3].split(","), out
    assert "warning" in err and "an empty read-only tmpfs stands in" in err, err


def test_root_s_state_and_another_user_s_root_are_refused(rl):
    """No write to a root-owned place: /run/mxc-oci (root's default) is not the account's."""
    b = rl.bundle(["true"])
    rc, _, err = rl("run", "--bundle", b, "c1", root="/run/mxc-oci")
    assert rc != 0, err
    other = os.path.join(rl.base, "others")
    os.mkdir(other, 0o755)  # root's
    rc, _, err = rl("run", "--bundle", b, "c1", root=other)
    assert rc != 0 and "not a directory of this user" in err, err
    rc, _, err = rl("--rootless", "false", "state", "x")
    assert rc != 0 and "--rootless false" in err


def test_subordinate_maps_written_by_the_setuid_helpers_only_for_the_caller_s_range(rl):
    """A config's own maps inside the caller's range are honoured (the helpers write them)."""
    def own(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": rl.uid, "size": 1},
                                     {"containerID": 1, "hostID": SUB + 100, "size": 10}]
        c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": rl.gid, "size": 1},
                                     {"containerID": 1, "hostID": SUB + 100, "size": 10}]
    b = rl.bundle(["cat", "/proc/self/uid_map"], own)
    rc, out, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert [l.split() for l in out.splitlines()] == [["0", str(rl.uid), "1"], ["1", str(SUB + 100), "10"]]


# --------------------------------------------------------------------------------------------
# the escape suite's core probes (tests/oci/test_oci_escape.py) inside a rootless container


def hc(*args):
    return " ".join(shlex.quote(str(a)) for a in ("mxc-test-helper",) + args)


@pytest.fixture
def host_sleeper():
    p = subprocess.Popen(["sleep", "1000"])
    yield p
    p.kill()
    p.wait()


@pytest.mark.skipif(not os.access(HELPER, os.X_OK), reason="needs build/mxc-test-helper")
def test_escape_probes_inside_a_rootless_container(rl, host_sleeper):
    """Host processes (root's, another user's) invisible and unreachable; host files outside the
    rootfs (the caller's own too) invisible; /proc/sys read-only, /proc's sensitive files masked;
    no capability over the host; the runtime's binary not the container's."""
    mine = os.path.join(rl.base, "caller-secret")
    with open(mine, "w") as f:
        f.write("caller-only\n")
    os.chown(mine, rl.uid, rl.gid)
    pid = host_sleeper.pid
    script = "; ".join([
        "ls /proc", hc("kill", pid, 9), hc("kill", pid, 0), hc("ptrace_attach", pid), hc("pidfd_open", pid),
        hc("kill", -1, 0), hc("read", mine), hc("read", "/etc/shadow"), hc("read", "/proc/1/root" + mine),
        hc("dotdot"), hc("write", "/proc/sys/kernel/hostname", "x"), hc("write", "/proc/sysrq-trigger", "h"),
        "cat /proc/kcore 2>/dev/null | head -c 64 | wc -c", hc("write_exe"),
        "grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status",
    ])
    b = rl.bundle(["sh", "-c", script], helper=True)
    rc, out, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    pids = sorted(int(x) for x in out.split() if x.isdigit() and int(x) > 1 and int(x) < 100000)
    assert pid not in pids and os.getpid() not in pids
    assert errno_of(out, "kill") == "ESRCH", out
    assert errno_of(out, "ptrace_attach") in ("ESRCH", "EPERM"), out
    assert errno_of(out, "pidfd_open") == "ESRCH", out
    assert "caller-only" not in out
    reads = [l for l in out.splitlines() if l.startswith("read:")]
    assert len(reads) == 3 and all(l.split(": ")[1].split()[0] in ("ENOENT", "EACCES") for l in reads), out
    assert verb_result(out, "dotdot").startswith("contained"), out
    writes = [l.split(": ")[1].split()[0] for l in out.splitlines() if l.startswith("write:")]
    assert len(writes) == 2 and all(w in ("EROFS", "EACCES", "EPERM", "ENOENT") for w in writes), out
    assert errno_of(out, "write_exe") in ("ETXTBSY", "EACCES", "EROFS", "EPERM"), out
    assert "NoNewPrivs:\t1" in out and "Seccomp:\t2" in out, out
    assert host_sleeper.poll() is None


def test_a_container_running_as_its_uid_1_is_killed_and_deleted(rl):
    """The process's host uid is then a subordinate id, not the caller's: kill and delete --force
    still reach it (signalled from inside the container's user namespace)."""
    b = rl.bundle(["sleep", "1000"], lambda c: c["process"].update(user={"uid": 1, "gid": 1}))
    rc, _, err = rl("create", "--bundle", b, "c1")
    assert rc == 0, err
    assert rl("start", "c1")[0] == 0
    pid = json.loads(rl("state", "c1")[1])["pid"]
    with open("/proc/%d/status" % pid) as f:
        assert [l.split()[1] for l in f if l.startswith("Uid:")] == [str(SUB)]
    rc, _, err = rl("kill", "c1", "KILL")
    assert rc == 0, err
    assert wait_until(lambda: json.loads(rl("state", "c1")[1])["status"] == "stopped", 30)
    assert rl("delete", "c1")[0] == 0
    b2 = rl.bundle(["sleep", "1000"], lambda c: c["process"].update(user={"uid": 1, "gid": 1}))
    assert rl("run", "--detach", "--bundle", b2, "c2")[0] == 0
    rc, _, err = rl("delete", "--force", "c2")
    assert rc == 0, err
    assert os.listdir(rl.root) == []


def test_hooks_run_as_the_caller_from_a_config_only_it_can_write(rl):
    """Rootless, a host-side hook runs as the caller (as runc rootless runs it): a config (and bundle)
    only the caller could write may name one; a group-writable one may not."""
    out = os.path.join(rl.base, "hookout")
    with open(out, "w"):
        pass
    os.chown(out, rl.uid, rl.gid)

    def hooks(c):
        h = {"path": "/bin/sh", "args": ["sh", "-c", "echo $(id -u) >> %s" % out]}
        c["hooks"] = {"createRuntime": [h], "poststop": [h]}
    b = rl.bundle(["true"], hooks)
    rc, _, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    with open(out) as f:
        assert f.read().split() == [str(rl.uid)] * 2
    b2 = rl.bundle(["true"], hooks)
    os.chmod(os.path.join(b2, "config.json"), 0o664)
    rc, _, err = rl("run", "--bundle", b2, "c2")
    assert rc != 0 and "config.json: hooks: refused" in err and "not yours alone" in err, err
    assert os.listdir(rl.root) == []


def test_binds_show_host_paths_only_as_the_caller_may_use_them(rl):
    """A bind of the caller's own directory, read-write: a file written by the container's root
    is the caller's; a read-only bind of /etc: root's unreadable files stay unreadable (the
    container's root has no capability over ids its namespace does not map); read-only holds; a
    directory the caller cannot list (/root, 0700 root's) is bound but stays unlistable, and a path
    below it the caller cannot reach is refused at create."""
    d = os.path.join(rl.base, "share")
    os.mkdir(d, 0o700)
    os.chown(d, rl.uid, rl.gid)

    def binds(c):
        c["mounts"].append({"destination": "/share", "type": "bind", "source": d, "options": ["rbind", "rw"]})
        c["mounts"].append({"destination": "/hostetc", "type": "bind", "source": "/etc", "options": ["rbind", "ro"]})
        c["mounts"].append({"destination": "/hostroot", "type": "bind", "source": "/root", "options": ["rbind", "ro"]})
    script = ("echo hi > /share/f; cat /hostetc/shadow >/dev/null 2>&1 && echo SHADOW; "
              "ls /hostroot >/dev/null 2>&1 && echo LISTED; "
              "touch /hostetc/x 2>/dev/null && echo WROTE; cat /hostetc/hostname >/dev/null && echo readable")
    b = rl.bundle(["sh", "-c", script], binds)
    rc, out, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.split() == ["readable"], out
    st = os.stat(os.path.join(d, "f"))
    assert (st.st_uid, st.st_gid) == (rl.uid, rl.gid)
    assert not os.path.exists("/etc/x")
    assert not _mounts_naming(rl.base)


def test_a_bind_source_swapped_after_create_resolved_it_is_refused(rl):
    """THREATS (rootless binds): the init, which cannot clone the parent's descriptor (another mount
    namespace's), looks the source up again by the path create resolved; a directory renamed away
    and replaced meanwhile (by the caller or anyone who can write its parent) is refused as not the
    inode create resolved (ESTALE), never bound.  Needs a -Dfault_injection build (as the hooks' swap
    test)."""
    d = os.path.join(rl.base, "src")
    os.mkdir(d, 0o755)
    with open(os.path.join(d, "marker"), "w") as f:
        f.write("real\n")
    b = rl.bundle(["cat", "/m/marker"], lambda c: c["mounts"].append(
        {"destination": "/m", "type": "bind", "source": d, "options": ["rbind", "ro"]}))
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": rl.run, "MXC_FAULT_OCI_BEFORE_CLONE": "1"}
    argv = ["setpriv", "--reuid=%d" % rl.uid, "--regid=%d" % rl.gid, "--clear-groups", MXC_OCI, "create",
            "--bundle", b, "c1"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errf:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=errf, env=env)
        try:
            def stopped():
                with open("/proc/%d/stat" % p.pid) as f:
                    return f.read().rsplit(")", 1)[1].split()[0] == "T"
            assert wait_until(stopped, timeout=20)
            os.rename(d, d + ".real")
            os.mkdir(d, 0o755)
            with open(os.path.join(d, "marker"), "w") as f:
                f.write("impostor\n")
            os.kill(p.pid, signal.SIGCONT)
            p.wait(timeout=60)
            errf.seek(0)
            err = errf.read().decode(errors="replace")
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert p.returncode != 0 and "not what create resolved" in err and "mounts[" in err, err
    assert os.listdir(rl.root) == []


def test_linux_devices_are_the_host_s_nodes_bound_usable_only_as_the_caller_may(rl):
    """As runc rootless: a user cannot mknod, so a linux.devices entry is the host's node, checked
    by create (numbers, allowlist, mode and owner as given) and bound by the init as that very inode;
    the container's root opens it only as the caller could (here root's 0600 /dev/fuse: not at all).
    A raw host device and a path whose node is another device are refused by name."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("no /dev/fuse")
    fuse = os.stat("/dev/fuse")

    def dev(path, major, minor):
        return lambda c: c["linux"].update(devices=[{"path": path, "type": "c", "major": major, "minor": minor}])
    b = rl.bundle(["sh", "-c", "stat -c '%n %F %t:%T' /dev/fuse; cat /dev/fuse 2>&1 >/dev/null | head -1"],
                  dev("/dev/fuse", 10, 229))
    rc, out, err = rl("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert "/dev/fuse character special file a:e5" in out, out
    assert "ermission denied" in out, out
    assert os.stat("/dev/fuse") == fuse
    for mutate, word in ((dev("/dev/mem", 1, 1), "/dev/mem"), (dev("/dev/fuse", 10, 200), "not 10:200")):
        b = rl.bundle(["true"], mutate)
        rc, _, err = rl("run", "--bundle", b, "c2")
        assert rc != 0 and "linux.devices" in err and word in err, err
    assert os.listdir(rl.root) == []


def test_root_in_a_user_namespace_mapping_host_root_is_refused():
    """Review of issue 36 (high): host root running mxc-oci inside a user namespace that maps host
    root (systemd's PrivateUsers=, `unshare -r`) was taken for rootless Podman's nested mode, and the
    container's root was host uid 0 (it rewrote host root's files through a bind).  Refused."""
    base = tempfile.mkdtemp(prefix="mxc-rl-nested-", dir="/var/tmp")
    try:
        b = os.path.join(base, "b")
        os.makedirs(b)
        make_rootfs(os.path.join(b, "rootfs"))
        victim = os.path.join(base, "victim")
        with open(victim, "w") as f:
            f.write("host root's\n")
        r = subprocess.run([MXC_OCI, "spec", "--rootless", "--bundle", b], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(os.path.join(b, "config.json")) as f:
            c = json.load(f)
        c["process"]["args"] = ["sh", "-c", "echo pwned > /v/victim"]
        c["process"]["terminal"] = False
        c["mounts"].append({"destination": "/v", "type": "bind", "source": base, "options": ["rbind", "rw"]})
        for m in c["mounts"]:          # `unshare -r` maps one id: gid 5 (tty) is none of its
            m["options"] = [o for o in m.get("options", []) if not o.startswith("gid=")]
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(c, f)
        # a user namespace mapping host root to itself, setgroups allowed (as systemd's PrivateUsers=
        # gives; `unshare -r` denies setgroups): the child unshares, host root writes its maps
        code = ("import ctypes,os,sys; ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0 or sys.exit(9); "
                "os.write(1, b'u'); os.read(0, 1); os.execv(sys.argv[1], sys.argv[1:])")
        p = subprocess.Popen(["/usr/bin/python3", "-c", code, MXC_OCI, "--root", os.path.join(base, "state"), "run",
                              "--bundle", b, "c1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        assert p.stdout.read(1) == b"u"
        for f in ("uid_map", "gid_map"):
            with open("/proc/%d/%s" % (p.pid, f), "w") as fh:
                fh.write("0 0 1\n")
        out, err = p.communicate(b"g", timeout=60)
        assert p.returncode != 0 and b"host root" in err, (out, err)
        with open(victim) as f:
            assert f.read() == "host root's\n"
    finally:
        shutil.rmtree(base, ignore_errors=True)
