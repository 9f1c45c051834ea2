"""The escape suite's probes (tests/escape/test_escape.py, tests/helper) inside an mxc-oci
container made from a busybox-static bundle, as they run against a one-shot: the same
mxc-test-helper verbs, copied into the bundle's rootfs (test_oci.add_helper), the same
conftest helpers to read their answers.  The syscall-level probes (user namespaces, mounts,
pivot_root, keyctl, bpf, raw sockets, ...) are test_oci.py's test_escape_probes_inside_a_container;
here: host processes, host files, /proc, cgroupfs, set-uid binaries, the runtime's binary, and a
sibling container of the same pod.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_escape.py
"""
import os
import shlex
import shutil

import pytest

from conftest import HELPER, errno_of, verb_result, wait_until
from test_oci import BUSYBOX, add_helper, dead, oci  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK) or not os.access(HELPER, os.X_OK),
                                reason="needs root, busybox-static and build/mxc-test-helper")

ZERO = "0000000000000000"


def hc(*args):
    """A shell command running the escape suite's helper inside the container."""
    return " ".join(shlex.quote(str(a)) for a in ("mxc-test-helper",) + args)


def run_in(oci, script, mutate=None, readonly=True, cid="c1"):
    b = oci.bundle(["sh", "-c", script], mutate, readonly=readonly)
    add_helper(b)
    rc, out, err = oci("run", "--bundle", b, cid)
    assert rc == 0, err
    return out


def test_host_processes_are_invisible_and_unreachable(oci, host_sleeper):
    pid = host_sleeper.pid
    assert pid > 50
    out = run_in(oci, "ls /proc; " + "; ".join([hc("kill", pid, 9), hc("kill", pid, 0), hc("ptrace_attach", pid),
                                                  hc("pidfd_open", pid), hc("kill", -1, 0)]))
    pids = sorted(int(x) for x in out.split() if x.isdigit())
    assert len(pids) < 10 and pid not in pids and os.getpid() not in pids, pids
    assert errno_of(out, "kill") == "ESRCH", out
    assert errno_of(out, "ptrace_attach") in ("ESRCH", "EPERM"), out
    assert errno_of(out, "pidfd_open") == "ESRCH", out
    assert host_sleeper.poll() is None


def test_host_files_outside_the_rootfs_are_invisible(oci):
    secret = os.path.join(oci.base, "host-secret")
    with open(secret, "w") as f:
        f.write("host-only\n")
    out = run_in(oci, "; ".join([hc("read", secret), hc("read", "/etc/shadow"), hc("read", "/proc/1/root" + secret),
                                 hc("dotdot")]))
    assert "host-only" not in out
    reads = [l for l in out.splitlines() if l.startswith("read:")]
    assert len(reads) == 3 and all(l.split(": ")[1].split()[0] in ("ENOENT", "EACCES") for l in reads), out
    assert verb_result(out, "dotdot").startswith("contained"), out


def test_proc_sys_is_read_only_and_sensitive_files_masked(oci):
    out = run_in(oci, "; ".join([hc("write", "/proc/sys/kernel/hostname", "x"), hc("write", "/proc/sysrq-trigger", "h"),
                                 hc("write", "/proc/sys/vm/drop_caches", "3"), "head -c 64 /proc/kcore 2>/dev/null | wc -c",
                                 "cat /proc/keys 2>/dev/null | wc -c", "cat /proc/kallsyms 2>/dev/null | wc -c"]))
    writes = [l.split(": ")[1].split()[0] for l in out.splitlines() if l.startswith("write:")]
    assert len(writes) == 3 and all(w in ("EROFS", "EACCES", "EPERM", "ENOENT") for w in writes), out
    sizes = [l.strip() for l in out.splitlines() if l.strip().isdigit()]
    assert sizes == ["0", "0", "0"], out  # masked (the null device) or absent from a user namespace's proc


def test_cgroupfs_cannot_be_written_from_inside(oci):
    """THREATS: a parent's cgroup.procs, a new cgroup, release_agent.  The container's sysfs is
    its own and read-only; the host's hierarchy is unchanged."""
    before = sorted(os.listdir("/sys/fs/cgroup"))
    targets = ["/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/pids/cgroup.procs",
               "/sys/fs/cgroup/memory/release_agent", "/sys/fs/cgroup/mxc-oci-escape/cgroup.procs"]
    out = run_in(oci, "; ".join([hc("write", t, "1") for t in targets] +
                                ["mkdir /sys/fs/cgroup/mxc-oci-escape 2>/dev/null && echo mkdir: ok || echo mkdir: refused"]))
    writes = [l for l in out.splitlines() if l.startswith("write:")]
    assert len(writes) == len(targets), out
    assert all(l.split(": ")[1].split()[0] in ("ENOENT", "EROFS", "EACCES", "EPERM") for l in writes), out
    assert "mkdir: refused" in out
    assert sorted(os.listdir("/sys/fs/cgroup")) == before
    assert not os.path.exists("/sys/fs/cgroup/mxc-oci-escape")


@pytest.mark.parametrize("where", ["rootfs", "bind"])
def test_setuid_root_binary_gains_nothing(oci, where):
    """A set-uid-root copy of the helper in the image, or in a bind-mounted host directory, run by
    the container's uid 1000: it stays 1000 with no capability (every mount nosuid, no_new_privs)."""
    d = os.path.join(oci.base, "suid")
    os.makedirs(d)
    os.chmod(d, 0o755)

    def user(c):
        c["process"]["user"] = {"uid": 1000, "gid": 1000}
        if where == "bind":
            c["mounts"].append({"destination": "/suid", "type": "bind", "source": d, "options": ["bind", "ro"]})
    b = oci.bundle(["sh", "-c", "/suid/helper-suid status"], user)
    add_helper(b)
    exe = os.path.join(d if where == "bind" else os.path.join(b, "rootfs", "suid"), "helper-suid")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    shutil.copy(HELPER, exe)
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert_gained_nothing(out)


def status_fields(out):
    """Uid, Gid, CapEff, CapPrm of the helper's status verb."""
    fields = {}
    for line in out.splitlines():
        if line.split(":")[0] in ("Uid", "Gid", "CapEff", "CapPrm"):
            k, v = line.split(":", 1)
            fields[k] = v.split()
    assert len(fields) == 4, out
    return fields


def assert_gained_nothing(out, uid="1000", caps=0):
    """The helper's status verb run through a set-uid-root copy by uid: still uid, no capability
    beyond the mask caps (shared with tests/openshell's driver-made sandboxes)."""
    fields = status_fields(out)
    assert fields["Uid"] == [uid] * 4 and fields["Gid"] == [uid] * 4, out
    assert int(fields["CapEff"][0], 16) & ~caps == 0 and int(fields["CapPrm"][0], 16) & ~caps == 0, out


# CVE-2019-5736 from inside: write through /proc/self/exe, then every process's program
RUNTIME_PROBE = "; ".join([hc("write_exe"), "for p in /proc/[0-9]*; do readlink $p/exe; done"])


def assert_runtime_untouched(out, runtimes=("mxc-oci",)):
    assert errno_of(out, "write_exe") in ("ETXTBSY", "EACCES", "EROFS", "EPERM"), out
    assert not any(r in out for r in runtimes), out


def test_the_runtime_s_binary_is_not_the_container_s_to_write(oci):
    """CVE-2019-5736 from inside: the container's /proc/self/exe is its own program, and no
    process of the container is mxc-oci (the init exec'd; exec's process is not dumpable)."""
    assert_runtime_untouched(run_in(oci, RUNTIME_PROBE))


# --------------------------------------------------------------------------------------------
# a sibling container of the same pod


def _join(pid):
    def mutate(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] in ("network", "ipc", "uts"):
                n["path"] = "/proc/%d/ns/%s" % (pid, {"network": "net"}.get(n["type"], n["type"]))
        c["mounts"] = [m for m in c["mounts"] if m["type"] not in ("sysfs", "mqueue")]
        c.pop("hostname", None)
    return mutate


def test_pod_siblings_cannot_see_signal_ptrace_or_read_each_other(oci):
    """Two containers of one pod (the second joins the first's network, IPC and UTS namespaces
    by path, no user namespace listed): one identity, the first's user namespace and range
    (docs/oci.md "A pod is one identity"); what they share is the pod's by design, their processes
    and roots are not: separate PID and mount namespaces.  The second knows the first's host pid
    and its rootfs path, and reaches neither, though its root is the first's root."""
    a = oci.bundle(["sleep", "1000"])
    with open(os.path.join(a, "rootfs", "secret-a"), "w") as f:
        f.write("a-only\n")
    pidfile = os.path.join(oci.base, "pid-a")
    assert oci.create("pod-a", a, "--pid-file", pidfile)[0] == 0
    assert oci("start", "pod-a")[0] == 0
    pa = int(open(pidfile).read())
    seca = os.path.join(a, "rootfs", "secret-a")
    script = "; ".join(["ls /proc", hc("kill", pa, 9), hc("kill", pa, 0), hc("ptrace_attach", pa),
                        hc("pidfd_open", pa), hc("process_vm_readv", pa, "400000"),
                        hc("setns", "/proc/%d/ns/mnt" % pa), hc("setns", "/proc/%d/ns/pid" % pa),
                        hc("read", "/proc/%d/root/secret-a" % pa), hc("read", seca),
                        hc("kill", -1, 0), "cat /proc/self/uid_map", "readlink /proc/self/ns/user"])
    b = oci.bundle(["sh", "-c", script], _join(pa))
    add_helper(b)
    rc, out, err = oci("run", "--bundle", b, "pod-b")
    assert rc == 0, err
    assert "a-only" not in out
    pids = sorted(int(x) for x in out.split("kill:")[0].split() if x.isdigit())
    assert len(pids) < 10 and pa not in pids, pids
    assert errno_of(out, "kill") == "ESRCH", out
    assert errno_of(out, "ptrace_attach") in ("ESRCH", "EPERM"), out
    assert errno_of(out, "pidfd_open") == "ESRCH", out
    assert errno_of(out, "process_vm_readv") in ("ESRCH", "EPERM"), out
    assert [l for l in out.splitlines() if l.startswith("setns:")] == ["setns: open ENOENT"] * 2, out
    reads = [l.split(": ")[1].split()[0] for l in out.splitlines() if l.startswith("read:")]
    assert reads == ["ENOENT", "ENOENT"], out
    assert not dead(pa)  # the first is untouched
    # one identity: the first's user namespace, so the same range (root is the same host id)
    with open("/proc/%d/uid_map" % pa) as f:
        base_a = f.read().split()[1]
    base_b = [l for l in out.splitlines() if l.split()[:1] == ["0"]][-1].split()[1]
    assert base_a == base_b and base_a != "0"
    assert out.splitlines()[-1] == os.readlink("/proc/%d/ns/user" % pa), out
    # and the first cannot reach the second's processes either (it sees only its own PID namespace)
    rc, out, err = oci("exec", "pod-a", "sh", "-c", "ls /proc")
    assert rc == 0, err
    assert sorted(int(x) for x in out.split() if x.isdigit()) == [1] + sorted(
        int(x) for x in out.split() if x.isdigit() and int(x) > 1)
    assert len([x for x in out.split() if x.isdigit()]) < 5, out
    assert oci("delete", "--force", "pod-a")[0] == 0
    assert wait_until(lambda: dead(pa))


# --------------------------------------------------------------------------------------------
# /dev/shm: a tmpfs mxc-oci makes (host root, the host's user namespace), owned by the container's root

SHM_PROBE = "; ".join([
    "grep ' /dev/shm ' /proc/self/mountinfo", "stat -c 'owner %u %g %a' /dev/shm",
    "mount -o remount,size=1g /dev/shm 2>/dev/null && echo resize: ok || echo resize: refused",
    "mount -o remount,nosuid,nodev,noexec,size=1g /dev/shm 2>/dev/null && echo reconf: ok || echo reconf: refused",
    "mount -t tmpfs -o size=1g shm /dev/shm 2>/dev/null && echo over: ok || echo over: refused",
    "grep ' /dev/shm ' /proc/self/mountinfo | wc -l",
    "touch /dev/shm/f && chown 65536 /dev/shm/f 2>/dev/null && echo chown-out: ok || echo chown-out: refused",
    "chown 1000:1000 /dev/shm/f && echo chown-in: ok",
    "mknod /dev/shm/mem c 1 1 2>/dev/null && echo mknod: ok || echo mknod: refused",
    "mount -o remount,bind,suid /dev/shm 2>/dev/null && echo suid: cleared || echo suid: kept",
    "exec sleep 1000"])


def test_dev_shm_is_the_container_s_and_only_host_root_s_to_remount(oci):
    """runc's seccomp agent makes directories in /dev/shm as host root through /proc/PID/root: mxc-oci makes that
    tmpfs itself (the host's user namespace, so host root's ids are mapped in it), owned by the container's root,
    with the config's options.  The container's root, with every capability a container may hold, can neither
    resize it, reconfigure it, clear its nosuid, make a device node in it, nor give files ids outside its map; a
    file set-uid to the container's root runs there as the caller (nosuid)."""
    caps = ["CAP_CHOWN", "CAP_FOWNER", "CAP_DAC_OVERRIDE", "CAP_SETUID", "CAP_SETGID", "CAP_MKNOD", "CAP_FSETID"]

    def mutate(c):
        for k in ("bounding", "effective", "permitted"):
            c["process"]["capabilities"][k] = caps
        c["process"]["noNewPrivileges"] = False
        c["linux"].pop("seccomp", None)
        for m in c["mounts"]:
            if m["destination"] == "/dev/shm":
                m["options"] = ["nosuid", "nodev", "mode=1777", "size=65536k"]  # exec allowed: nosuid is the test
    b = oci.bundle(["sh", "-c", SHM_PROBE], mutate)
    add_helper(b)
    rc, _, err = oci.create("c1", b)
    assert rc == 0, err
    assert oci("start", "c1")[0] == 0
    pid = oci.state("c1")["pid"]
    assert wait_until(lambda: "suid:" in open(os.path.join(b, "out")).read(), 30)
    out = open(os.path.join(b, "out")).read()
    mi = out.splitlines()[0].split()
    opts, sb = mi[5].split(","), mi[-1].split(",")
    assert "nosuid" in opts and "nodev" in opts and "noexec" not in opts and "rw" in opts, out
    assert "size=65536k" in sb, out  # mode=1777: tmpfs's default, not listed (stat below)
    assert "owner 0 0 1777" in out, out  # the container's root owns it
    assert "resize: refused" in out and "reconf: refused" in out, out  # CAP_SYS_ADMIN of the host's user namespace
    assert "chown-out: refused" in out and "chown-in: ok" in out, out
    assert "mknod: refused" in out and "suid: kept" in out and out.splitlines()[5].strip() == "1", out
    # host root (a seccomp agent) makes a directory there as in runc; it owns it as host root
    d = "/proc/%d/root/dev/shm/agent-dir" % pid
    os.mkdir(d)
    assert os.stat(d).st_uid == 0
    st = os.stat("/proc/%d/root/dev/shm" % pid)
    exe = "/proc/%d/root/dev/shm/helper-suid" % pid
    shutil.copy(HELPER, exe)
    os.chown(exe, st.st_uid, st.st_gid)  # set-uid to the container's root (host root's would be ignored: unmapped)
    os.chmod(exe, 0o6755)
    assert st.st_uid != 0  # the container's root is not host root
    rc, o, err = oci("exec", "--user", "1000:1000", "c1", "/dev/shm/helper-suid", "status")
    assert rc == 0, err
    uids = [l.split()[1:] for l in o.splitlines() if l.startswith("Uid:")]
    assert uids == [["1000"] * 4], o  # nosuid: it runs as the caller
    # the container's size limit holds: 64 MiB
    rc, o, err = oci("exec", "c1", "sh", "-c", "dd if=/dev/zero of=/dev/shm/big bs=1M count=80 2>&1; "
                     "du -m /dev/shm/big")
    assert int(o.split()[-2]) <= 64, o
