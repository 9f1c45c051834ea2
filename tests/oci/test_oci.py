"""mxc-oci (issue 29, docs/oci.md): runc's command line over the engine, driven as
containerd's shim and Podman drive runc, on a busybox-static bundle made here.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci
"""
import fcntl
import json
import os
import random
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import REPO, wait_until

MXC_OCI = os.path.realpath(os.environ.get("MXC_OCI", os.path.join(REPO, "build", "mxc-oci")))
BUSYBOX = "/bin/busybox"
APPLETS = ["sh", "id", "cat", "ls", "sleep", "touch", "stat", "chmod", "mkdir", "echo", "grep", "test",
           "hostname", "readlink", "true", "httpd", "wget", "seq", "head"]
CLAIMS = "/var/lib/mxc/claims"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")


def make_rootfs(path):
    os.makedirs(os.path.join(path, "bin"))
    shutil.copy2(BUSYBOX, os.path.join(path, "bin", "busybox"))
    for a in APPLETS:
        os.symlink("busybox", os.path.join(path, "bin", a))
    for d in ("proc", "dev", "sys", "tmp", "etc"):
        os.makedirs(os.path.join(path, d))


class Oci:
    def __init__(self, base):
        self.base = base
        self.root = os.path.join(base, "state")
        self.n = 0

    def __call__(self, *args, timeout=60, out=None):
        """(returncode, stdout, stderr) of `mxc-oci --root R args`; the container's stdio goes to
        `out` (a file) for create/run --detach, which leave it running with those descriptors."""
        with tempfile.TemporaryFile() as err:
            r = subprocess.run([MXC_OCI, "--root", self.root, *args], stdin=subprocess.DEVNULL,
                               stdout=out if out is not None else subprocess.PIPE, stderr=err, timeout=timeout)
            err.seek(0)
            return r.returncode, (r.stdout or b"").decode(errors="replace"), err.read().decode(errors="replace")

    def bundle(self, args, mutate=None, readonly=True):
        """A bundle of its own (rootfs and config.json from `mxc-oci spec`), args as process.args."""
        self.n += 1
        b = os.path.join(self.base, "bundle%d" % self.n)
        os.makedirs(b)
        make_rootfs(os.path.join(b, "rootfs"))
        rc, _, err = self("spec", "--bundle", b)
        assert rc == 0, err
        with open(os.path.join(b, "config.json")) as f:
            c = json.load(f)
        c["process"]["args"] = args
        c["process"]["terminal"] = False  # spec's default is runc's (a terminal)
        c["root"]["readonly"] = readonly
        if mutate:
            mutate(c)
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(c, f)
        return b

    def state(self, cid):
        rc, out, err = self("state", cid)
        assert rc == 0, err
        return json.loads(out)

    def create(self, cid, bundle, *flags):
        """create, the container's stdout/stderr into bundle/out."""
        with open(os.path.join(bundle, "out"), "wb") as out:
            return self("create", "--bundle", bundle, *flags, cid, out=out)

    def cleanup(self):
        if os.path.isdir(self.root):
            for cid in os.listdir(self.root):
                self("delete", "--force", cid)


@pytest.fixture
def oci():
    base = tempfile.mkdtemp(prefix="mxc-oci-test-", dir="/var/tmp")
    os.chmod(base, 0o755)
    o = Oci(base)
    try:
        yield o
    finally:
        o.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def host_maps(pid):
    with open("/proc/%d/uid_map" % pid) as f:
        return [tuple(int(x) for x in line.split()) for line in f if line.strip()]


def dead(pid):
    """pid is gone or a zombie (read once: it may be reaped between two looks)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            return "\nState:\tZ" in f.read()
    except OSError:
        return True


def claims_of(state_dir):
    out = []
    for f in os.listdir(CLAIMS):
        try:
            with open(os.path.join(CLAIMS, f)) as fh:
                c = json.load(fh)
        except (OSError, ValueError):
            continue
        if c.get("kind") == "oci" and c.get("stateDir") == state_dir:
            out.append((f, c))
    return out


# --------------------------------------------------------------------------------------------
# the guarantee: uid 0 inside, never host root


def test_run_is_root_inside_and_no_id_maps_onto_host_root(oci):
    b = oci.bundle(["sh", "-c", "id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map"])
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0] == "0" and lines[1] == "0"
    maps = [tuple(int(x) for x in l.split()) for l in lines[2:] if l.strip()]
    assert len(maps) == 2
    for cid, hid, n in maps:
        assert (cid, n) == (0, 65536)
        assert hid >= 2 ** 31 and hid % 65536 == 0  # the range region, one aligned slot
        assert not (hid <= 0 < hid + n)
    assert not os.path.exists(os.path.join(oci.root, "c1"))  # run deletes what it made


def test_created_process_is_the_range_on_the_host(oci):
    b = oci.bundle(["sleep", "1000"])
    pidfile = os.path.join(oci.base, "pid")
    rc, _, err = oci.create("c1", b, "--pid-file", pidfile)
    assert rc == 0, err
    pid = int(open(pidfile).read())
    with open("/proc/%d/status" % pid) as f:
        ids = {l.split(":")[0]: l.split()[1:] for l in f if l.startswith(("Uid:", "Gid:"))}
    base = host_maps(pid)[0][1]
    assert ids["Uid"] == [str(base)] * 4 and ids["Gid"] == [str(base)] * 4
    assert base != 0
    # the range is claimed host-wide, by this container, naming its init
    cl = claims_of(os.path.join(oci.root, "c1"))
    assert [c["uid"] for _, c in cl] == [base] and cl[0][1]["pid"] == pid and cl[0][1]["count"] == 65536
    assert oci("delete", "--force", "c1")[0] == 0
    assert claims_of(os.path.join(oci.root, "c1")) == []


def test_bind_mount_write_lands_as_the_range_on_the_host(oci):
    host = os.path.join(oci.base, "shared")
    os.makedirs(host)
    os.chmod(host, 0o777)

    def bind(c):
        c["mounts"].append({"destination": "/data", "type": "bind", "source": host, "options": ["rbind", "rw"]})
    b = oci.bundle(["sh", "-c", "touch /data/f && stat -c %u:%g /data/f && cat /proc/self/uid_map"], bind)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    inside, umap = out.split("\n")[0], out.split("\n")[1].split()
    assert inside == "0:0"
    st = os.stat(os.path.join(host, "f"))
    assert st.st_uid == int(umap[1]) and st.st_gid == int(umap[1]) and st.st_uid != 0


def test_bind_of_mxc_s_own_state_is_refused(oci):
    """A container given the claim directory could forge or drop other sandboxes' claims."""
    def bind(c):
        c["mounts"].append({"destination": "/claims", "type": "bind", "source": CLAIMS, "options": ["rbind", "rw"]})
    b = oci.bundle(["true"], bind)
    rc, _, err = oci.create("c1", b)
    assert rc != 0 and "claims directory" in err, err
    assert not os.path.exists(os.path.join(oci.root, "c1"))


def test_read_write_binds_are_recorded_in_the_claim(oci):
    """What a container can write is recorded as a sandbox's is (by device and inode), so no
    mxc sandbox follows a symlink the container plants there."""
    rw, ro = os.path.join(oci.base, "rw"), os.path.join(oci.base, "ro")
    os.makedirs(rw)
    os.makedirs(ro)

    def binds(c):
        c["mounts"] += [{"destination": "/rw", "type": "bind", "source": rw, "options": ["rbind"]},
                        {"destination": "/ro", "type": "bind", "source": ro, "options": ["rbind", "ro"]}]
    b = oci.bundle(["sleep", "1000"], binds)
    assert oci.create("c1", b)[0] == 0
    (name, claim), = claims_of(os.path.join(oci.root, "c1"))
    st = os.stat(rw)
    assert claim["writable"] == [{"path": rw, "dev": st.st_dev, "ino": st.st_ino}]
    # and indexed by device and inode (src/lib/wroots.h), what a grant's symlink is looked up in
    entry = os.path.join(CLAIMS + ".roots", "%d-%d" % (st.st_dev, st.st_ino), name)
    assert os.path.exists(entry), entry
    assert oci("delete", "--force", "c1")[0] == 0
    assert not os.path.exists(entry), "pruned with the claim"


def test_config_mapping_host_root_is_refused(oci):
    def userns(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 0, "size": 65536}]
        c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 2 ** 31, "size": 65536}]
    b = oci.bundle(["true"], userns)
    rc, _, err = oci.create("c1", b)
    assert rc != 0
    assert "linux.uidMappings[0] maps container uid 0 onto host uid 0: refused" in err
    assert not os.path.exists(os.path.join(oci.root, "c1"))


def test_config_with_its_own_user_namespace_keeps_its_maps(oci):
    base = 1500000000  # below mxc's regions

    def userns(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": base, "size": 65536}]
        c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": base, "size": 65536}]
    # the rootfs is not idmapped then (the caller owns its ids): made of the mapped root
    b = oci.bundle(["sh", "-c", "cat /proc/self/uid_map"], userns)
    subprocess.run(["chown", "-R", "-h", "%d:%d" % (base, base), os.path.join(b, "rootfs")], check=True)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.split() == ["0", str(base), "65536"]


@pytest.mark.parametrize("hid", [2100000000 + 5, 2 ** 31 + 65536 * 7])
def test_config_maps_onto_mxc_s_own_ids_are_refused(oci, hid):
    """A config's own map must not share ids with the single-uid region or another
    container's range (files and signals would be shared)."""
    def userns(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 1500000000, "size": 65536}]
        c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": hid, "size": 1}]
    b = oci.bundle(["true"], userns)
    rc, _, err = oci.create("c1", b)
    assert rc != 0 and "linux.gidMappings[0] maps onto host ids mxc hands to other sandboxes" in err
    assert not os.path.exists(os.path.join(oci.root, "c1"))


# --------------------------------------------------------------------------------------------
# the lifecycle


def test_create_start_state_kill_delete(oci):
    b = oci.bundle(["sh", "-c", "echo started; exec sleep 1000"])
    pidfile = os.path.join(oci.base, "pid")
    rc, _, err = oci.create("c1", b, "--pid-file", pidfile)
    assert rc == 0, err
    pid = int(open(pidfile).read())
    st = oci.state("c1")
    assert st["status"] == "created" and st["pid"] == pid
    assert open(os.path.join(b, "out")).read() == ""  # nothing ran yet: the init waits on the fifo
    rc, _, err = oci("start", "c1")
    assert rc == 0, err
    assert oci.state("c1")["status"] == "running"
    assert wait_until(lambda: open(os.path.join(b, "out")).read() == "started\n", 30)
    rc, _, err = oci("start", "c1")
    assert rc != 0 and "cannot start an already running container" in err
    rc, _, err = oci("delete", "c1")
    assert rc != 0 and "cannot delete container c1 that is not stopped: running" in err
    rc, _, err = oci("kill", "c1", "KILL")
    assert rc == 0, err
    assert wait_until(lambda: oci.state("c1")["status"] == "stopped", 30)
    rc, _, err = oci("kill", "c1", "KILL")
    assert rc != 0 and "container not running" in err
    rc, _, err = oci("start", "c1")
    assert rc != 0 and "cannot start a container that has stopped" in err
    rc, _, err = oci("delete", "c1")
    assert rc == 0, err
    rc, _, err = oci("state", "c1")
    assert rc != 0 and "container does not exist" in err
    assert claims_of(os.path.join(oci.root, "c1")) == []


def test_delete_of_a_created_container_needs_no_force(oci):
    """runc's rule: a container whose process never ran is deleted (its init killed) as it is."""
    b = oci.bundle(["sleep", "1000"])
    pidfile = os.path.join(oci.base, "pid")
    assert oci.create("c1", b, "--pid-file", pidfile)[0] == 0
    pid = int(open(pidfile).read())
    rc, _, err = oci("delete", "c1")
    assert rc == 0, err
    assert wait_until(lambda: dead(pid), 30)
    assert claims_of(os.path.join(oci.root, "c1")) == []


def test_kill_term_reaches_a_handler_and_all_signals_every_process(oci):
    b = oci.bundle(["sh", "-c", "trap 'echo got-term; exit 3' TERM; sleep 1000 & sleep 1000 & "
                    "echo up; while :; do wait; done"])
    rc, _, err = oci.create("c1", b)
    assert rc == 0, err
    assert oci("start", "c1")[0] == 0
    assert wait_until(lambda: "up" in open(os.path.join(b, "out")).read(), 30)
    rc, out, err = oci("ps", "--format", "json", "c1")
    assert rc == 0, err
    pids = json.loads(out)
    assert len(pids) == 3 and pids[0] == oci.state("c1")["pid"]  # sh and its two sleeps
    rc, _, err = oci("kill", "--all", "c1", "SIGTERM")
    assert rc == 0, err
    assert wait_until(lambda: oci.state("c1")["status"] == "stopped", 30)
    assert "got-term" in open(os.path.join(b, "out")).read()
    assert oci("delete", "c1")[0] == 0


def test_state_json_is_the_spec_s(oci):
    def annotate(c):
        c["annotations"] = {"org.example.k": "v"}
    b = oci.bundle(["sleep", "1000"], annotate)
    assert oci.create("c-1.x_y+z", b)[0] == 0
    st = oci.state("c-1.x_y+z")
    for k in ("ociVersion", "id", "status", "pid", "bundle", "annotations"):
        assert k in st
    assert st["ociVersion"].startswith("1.")
    assert st["id"] == "c-1.x_y+z"
    assert st["bundle"] == os.path.realpath(b)
    mxc = {k: v for k, v in st["annotations"].items() if k.startswith("io.mxc.applied.")}  # test_oci_applied.py
    assert st["annotations"] == {"org.example.k": "v", **mxc} and mxc["io.mxc.applied.network"] == "none"
    assert isinstance(st["pid"], int) and st["pid"] > 0
    rc, out, _ = oci("list", "--format", "json")
    assert rc == 0 and [c["id"] for c in json.loads(out)] == ["c-1.x_y+z"]
    assert oci("delete", "--force", "c-1.x_y+z")[0] == 0


@pytest.mark.parametrize("cid", ["../x", "a/b", ".", "..", "", "x" * 256, "a b"])
def test_invalid_ids_are_refused(oci, cid):
    b = oci.bundle(["true"])
    rc, _, err = oci.create(cid, b)
    assert rc != 0 and ("invalid id format" in err or "missing the container id" in err)


def test_exit_status_and_missing_executable(oci):
    b = oci.bundle(["sh", "-c", "exit 7"])
    assert oci("run", "--bundle", b, "c1")[0] == 7
    b = oci.bundle(["no-such-program"])
    rc, _, err = oci("run", "--bundle", b, "c2")
    assert rc != 0 and 'exec: "no-such-program": executable file not found in $PATH' in err
    assert not os.path.exists(os.path.join(oci.root, "c2"))


# --------------------------------------------------------------------------------------------
# the config's process, mounts, hardening


def test_process_user_cwd_env_hostname_caps_and_hardening(oci):
    def proc(c):
        c["process"]["user"] = {"uid": 1000, "gid": 1000, "additionalGids": [5, 6]}
        c["process"]["cwd"] = "/tmp"
        c["process"]["env"].append("FOO=bar")
        c["hostname"] = "ctr1"
    b = oci.bundle(["sh", "-c", "id; pwd; echo $FOO; hostname; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' "
                    "/proc/self/status"], proc)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0].startswith("uid=1000 gid=1000 groups=5,6") or lines[0] == "uid=1000 gid=1000 groups=5,6"
    assert lines[1:4] == ["/tmp", "bar", "ctr1"]
    status = dict(l.split(":\t") for l in lines[4:] if l)
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
    assert int(status["CapEff"], 16) == 0  # uid 1000 holds none (no ambient asked)
    # the spec's bounding set: AUDIT_WRITE, KILL, NET_BIND_SERVICE
    assert int(status["CapBnd"], 16) == (1 << 29) | (1 << 5) | (1 << 10)


def test_rootfs_readonly_and_no_setuid_file(oci):
    b = oci.bundle(["sh", "-c", "touch /x 2>/dev/null && echo wrote-ro; touch /tmp/y 2>/dev/null && echo wrote-tmp;"
                    "touch /dev/shm/y && echo wrote-shm"])
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.split() == ["wrote-shm"]  # the image's /tmp is part of the read-only root
    b = oci.bundle(["sh", "-c", "touch /f && echo wrote; chmod 4755 /f || echo no-suid"], readonly=False)
    rc, out, err = oci("run", "--bundle", b, "c2")
    assert rc == 0, err
    assert out.split() == ["wrote", "no-suid"]
    assert not os.stat(os.path.join(b, "rootfs", "f")).st_mode & 0o6000


def test_rootfs_device_nodes_are_inert(oci):
    """A node in the image (here one of the host's disk) opens to nothing: the rootfs is nodev."""
    b = oci.bundle(["sh", "-c", "cat /disk >/dev/null 2>&1 && echo read-disk || echo refused"])
    dev = os.stat("/").st_dev
    os.mknod(os.path.join(b, "rootfs", "disk"), 0o600 | 0o060000, dev)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.strip() == "refused"


def _no_netns(c):
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
    c["mounts"] = [m for m in c["mounts"] if m["type"] != "sysfs"]


def add_helper(bundle):
    """mxc-test-helper and the libraries it loads, into the bundle's rootfs."""
    helper = os.path.join(REPO, "build", "mxc-test-helper")
    rootfs = os.path.join(bundle, "rootfs")
    libs = subprocess.run(["ldd", helper], capture_output=True, text=True, check=True).stdout
    for lib in [w for w in libs.split() if w.startswith("/")]:
        dst = os.path.join(rootfs, lib.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.realpath(lib), dst)
    shutil.copy2(helper, os.path.join(rootfs, "bin", "mxc-test-helper"))


def test_host_network_container_cannot_reach_the_host_s_abstract_sockets(oci):
    """CVE-2020-15257's shape: a container on the host's network namespace shares its abstract
    unix sockets (containerd-shim's API was one); Landlock's scope keeps them out of reach."""
    import socket
    name = "mxc-oci-test-%d" % os.getpid()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind("\0" + name)
    srv.listen(8)
    try:
        b = oci.bundle(["mxc-test-helper", "connect_abstract", name], _no_netns)
        add_helper(b)
        rc, out, err = oci("run", "--bundle", b, "c1")
        assert rc == 0, err
        assert out.strip() == "connect_abstract: EPERM"
    finally:
        srv.close()


DENY_MKDIR = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
              "syscalls": [{"names": ["mkdir", "mkdirat", "no_such_syscall"], "action": "SCMP_ACT_ERRNO",
                            "errnoRet": 13}]}


def test_config_seccomp_profile_stacks_on_the_baseline(oci):
    """The config's profile binds the container's process and its exec'd ones; the engine's
    baseline stays under it (two filters: the stricter answer wins)."""
    b = oci.bundle(["sh", "-c", "mkdir /dev/shm/d 2>&1; grep -E '^Seccomp_filters:' /proc/self/status; "
                    "exec sleep 1000"], lambda c: c["linux"].update(seccomp=DENY_MKDIR))
    assert oci.create("c1", b)[0] == 0
    assert oci("start", "c1")[0] == 0
    out = lambda: open(os.path.join(b, "out")).read()
    assert wait_until(lambda: "Seccomp_filters" in out(), 30)
    assert "Permission denied" in out() and "Seccomp_filters:\t2" in out()
    # exec takes the profile the container was made with, not what the bundle says now
    with open(os.path.join(b, "config.json")) as f:
        c = json.load(f)
    del c["linux"]["seccomp"]
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f)
    rc, o, err = oci("exec", "c1", "sh", "-c", "mkdir /dev/shm/e 2>&1; touch /dev/shm/f && echo touched")
    assert rc == 0, err
    assert "Permission denied" in o and "touched" in o
    assert oci("delete", "--force", "c1")[0] == 0


def test_namespaced_sysctls_are_set_and_host_ones_refused(oci):
    def sysctl(c):
        c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 0", "kernel.shmmni": "1000"}
    host = open("/proc/sys/kernel/shmmni").read()
    b = oci.bundle(["sh", "-c", "cat /proc/sys/net/ipv4/ping_group_range /proc/sys/kernel/shmmni"], sysctl)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.split() == ["0", "0", "1000"]
    assert open("/proc/sys/kernel/shmmni").read() == host  # the write went to the container's IPC namespace
    for key, words in (("kernel.panic", "kernel.panic is the host's"), ("vm.swappiness", "is the host's"),
                       ("net.ipv4.../x", "not a sysctl name")):
        b = oci.bundle(["true"], lambda c: c["linux"].update(sysctl={key: "1"}))
        rc, _, err = oci.create("c2", b)
        assert rc != 0 and words in err, err
    b = oci.bundle(["true"], lambda c: (_no_netns(c), c["linux"].update(sysctl={"net.ipv4.ip_forward": "1"})))
    rc, _, err = oci.create("c3", b)
    assert rc != 0 and "needs a network namespace of the container's own" in err


# --------------------------------------------------------------------------------------------
# CVE-2021-30465: a mount target that is a symlink in the rootfs


@pytest.mark.parametrize("link", ["abs", "rel"])
def test_symlink_mount_target_stays_inside_the_rootfs(oci, link):
    """The image holds evil -> a host directory (absolute, or as ../../..): a runtime that joins
    the rootfs path and the target as strings mounts on (and makes directories in) the host's
    directory.  mxc-oci resolves the target inside the rootfs (RESOLVE_IN_ROOT) and mounts on that
    descriptor: with the link's in-root target absent the create fails closed; present, the
    mount lands there.  The host's side is never touched."""
    host = os.path.join(oci.base, "victim")
    os.makedirs(host)
    os.chmod(host, 0o777)

    def mnt(c):
        c["mounts"].append({"destination": "/evil/mnt", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]})
    # the kernel names the mount by its resolved path: the link's target, inside the rootfs
    b = oci.bundle(["sh", "-c", "grep -c ' %s/mnt tmpfs ' /proc/mounts; touch /evil/mnt/inside" % host], mnt,
                   readonly=False)
    target = host if link == "abs" else "../" * 12 + host.lstrip("/")
    os.symlink(target, os.path.join(b, "rootfs", "evil"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert os.listdir(host) == []  # nothing made on the host's side of the link
    assert rc != 0 and "mounts[7]: destination /evil/mnt: No such file or directory" in err
    inroot = os.path.join(b, "rootfs", host.lstrip("/"))
    os.makedirs(inroot)
    rc, out, err = oci("run", "--bundle", b, "c2")
    assert rc == 0, err
    assert os.listdir(host) == []  # nothing made or mounted on the host's side of the link
    assert os.path.isdir(os.path.join(inroot, "mnt"))  # the in-root target instead
    assert out.split() == ["1"]


def test_symlink_bind_target_stays_inside(oci):
    """A bind whose target goes through an absolute link lands on the rootfs's own path."""
    src = os.path.join(oci.base, "src")
    os.makedirs(src)
    open(os.path.join(src, "marker"), "w").close()

    def mnt(c):
        c["mounts"].append({"destination": "/link/x", "type": "bind", "source": src, "options": ["bind", "ro"]})
    b = oci.bundle(["sh", "-c", "ls /link/x /hostlike/x"], mnt, readonly=False)
    os.symlink("/hostlike", os.path.join(b, "rootfs", "link"))
    os.makedirs(os.path.join(b, "rootfs", "hostlike"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out.count("marker") == 2
    assert not os.path.exists("/hostlike")


# --------------------------------------------------------------------------------------------
# refusals: each names its field; nothing is made


def _cap(c):
    c["process"]["capabilities"]["bounding"].append("CAP_SYS_ADMIN")


def _nopid(c):
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "pid"]


REFUSED = {
    "sys_admin": (_cap, "process.capabilities.bounding: CAP_SYS_ADMIN is refused"),
    "host_pid": (_nopid, "no pid namespace"),
    "block_device": (lambda c: c["linux"].update(devices=[{"path": "/dev/sda", "type": "b", "major": 8,
                                                            "minor": 0}]), "/dev/sda (b) is refused"),
    "uid_type": (lambda c: c["process"]["user"].update(uid="0"), "process.user.uid must be"),
    "seccomp_notify": (lambda c: c["linux"].update(seccomp={"defaultAction": "SCMP_ACT_NOTIFY"}),
                       "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be used as default action"),
    "seccomp_spec_allow": (lambda c: c["linux"].update(seccomp={"defaultAction": "SCMP_ACT_ALLOW",
                                                                "flags": ["SECCOMP_FILTER_FLAG_SPEC_ALLOW"]}),
                           "SECCOMP_FILTER_FLAG_SPEC_ALLOW is refused"),
    "seccomp_action": (lambda c: c["linux"].update(seccomp={"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
        {"names": ["mkdir"], "action": "SCMP_ACT_MAYBE"}]}), "linux.seccomp.syscalls[0] must be a seccomp action"),
    "cgroup_mount": (lambda c: c["mounts"].append({"destination": "/sys/fs/cgroup", "type": "cgroup2",
                                                   "source": "cgroup"}), "mounts[7].type 'cgroup2'"),
    "shared": (lambda c: c["mounts"].append({"destination": "/m", "type": "bind", "source": "/tmp",
                                             "options": ["rbind", "rshared"]}), "shared with the host is refused"),
    "oom": (lambda c: c["process"].update(oomScoreAdj=-1000), "process.oomScoreAdj -1000 is refused"),
    "proc_elsewhere": (lambda c: c["mounts"].append({"destination": "/hostproc", "type": "proc", "source": "proc"}),
                       "proc only at /proc"),
    "second_proc": (lambda c: c["mounts"].append({"destination": "/proc/", "type": "proc", "source": "proc"}),
                    "a second proc is refused"),
    "over_root": (lambda c: c["mounts"].append({"destination": "//./", "type": "tmpfs", "source": "tmpfs"}),
                  "a mount over the root is refused"),
    "net_raw_host_net": (lambda c: (c["linux"].update(namespaces=[n for n in c["linux"]["namespaces"]
                                                                  if n["type"] != "network"]),
                                    c["mounts"].pop(), c["process"]["capabilities"]["bounding"].append(
                                        "CAP_NET_RAW")), "CAP_NET_RAW is refused without a network namespace"),
    "join_pid_by_path": (lambda c: c["linux"]["namespaces"][0].update(path="/proc/self/ns/pid"),
                         "linux.namespaces pid path /proc/self/ns/pid: not the PID namespace of a live container"),
    "join_pid_own_user": (lambda c: (c["linux"]["namespaces"][0].update(path="/proc/self/ns/pid"),
                                     c["linux"]["namespaces"].append({"type": "user"}),
                                     c["linux"].update(uidMappings=[{"containerID": 0, "hostID": 3000000000,
                                                                     "size": 65536}],
                                                       gidMappings=[{"containerID": 0, "hostID": 3000000000,
                                                                     "size": 65536}])),
                          "joining a pid namespace by path needs the pod's user namespace"),
    "join_mount_by_path": (lambda c: c["linux"]["namespaces"][4].update(path="/proc/1/ns/mnt"),
                           "joining a mount namespace by path is refused"),
    "join_host_user_by_path": (lambda c: c["linux"]["namespaces"].append({"type": "user", "path": "/proc/self/ns/user"}),
                               "linux.namespaces user path /proc/self/ns/user: not the user namespace of a live "
                               "container mxc-oci made"),
    "join_wrong_type": (lambda c: (c["linux"]["namespaces"][1].update(path="/proc/self/ns/ipc"),
                                   c["mounts"].pop()), "not a namespace of that type"),
    "version": (lambda c: c.update(ociVersion="2.0.0"), "ociVersion 2.0.0"),
    "resources": (lambda c: c["linux"].update(resources={"blockIO": {"weight": 100}}),
                  "linux.resources.blockIO is refused"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusal_names_the_field(oci, case):
    mutate, words = REFUSED[case]
    b = oci.bundle(["true"], mutate)
    rc, _, err = oci.create("c1", b)
    assert rc != 0 and words in err, err
    assert not os.path.exists(os.path.join(oci.root, "c1"))
    assert claims_of(os.path.join(oci.root, "c1")) == []


def test_unknown_properties_are_ignored_as_the_spec_says(oci):
    b = oci.bundle(["true"], lambda c: (c.update({"org.example.future": {"x": 1}}),
                                        c["process"].update({"futureField": True})))
    rc, _, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err


def test_features_spec_and_log(oci):
    rc, out, _ = oci("features")
    f = json.loads(out)
    assert rc == 0 and f["ociVersionMin"] == "1.0.0" and "CAP_SYS_ADMIN" not in f["linux"]["capabilities"]
    log = os.path.join(oci.base, "log.json")
    rc, _, err = oci("--log", log, "--log-format", "json", "state", "nope")
    assert rc != 0 and "container does not exist" in err
    entry = json.loads(open(log).read().splitlines()[-1])
    assert entry["level"] == "error" and entry["msg"] == "container does not exist" and entry["time"]
    for cmd in ("checkpoint", "restore"):
        rc, _, err = oci(cmd, "c1")
        assert rc != 0 and "%s is not supported by mxc-oci yet" % cmd in err


def test_gc_keeps_a_live_container_s_range_and_reclaims_a_dead_one(oci):
    """The engine's sweeper (mxc-exec --gc) reads a range claim as a one-shot's: kept while the
    container's init lives, released once it is gone; delete after that still succeeds."""
    gc_env = dict(os.environ, MXC_SWEEP_MIN_AGE="0", MXC_STATE_DIR=os.path.join(oci.base, "mxc-state"))

    def gc():
        g = subprocess.run([os.path.join(REPO, "build", "mxc-exec"), "--gc"], capture_output=True, text=True,
                           env=gc_env, timeout=120)
        assert g.returncode == 0, g.stdout + g.stderr
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("c1", b)[0] == 0
    sd = os.path.join(oci.root, "c1")
    assert len(claims_of(sd)) == 1
    gc()
    assert len(claims_of(sd)) == 1
    assert oci("kill", "c1", "KILL")[0] == 0
    assert wait_until(lambda: oci.state("c1")["status"] == "stopped", 30)
    gc()
    assert claims_of(sd) == []
    assert oci("delete", "c1")[0] == 0


# --------------------------------------------------------------------------------------------
# exec


def test_exec_joins_the_container(oci):
    b = oci.bundle(["sleep", "1000"])
    pidfile = os.path.join(oci.base, "pid")
    assert oci.create("c1", b, "--pid-file", pidfile)[0] == 0
    assert oci("start", "c1")[0] == 0
    init = int(open(pidfile).read())
    rc, out, err = oci("exec", "c1", "sh", "-c", "id -u; cat /proc/self/uid_map; cat /proc/1/cmdline; echo; "
                       "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; hostname")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0] == "0"
    assert lines[1].split() == [str(x) for x in host_maps(init)[0]]  # the container's own user namespace
    assert lines[2] == "sleep\x001000\x00"  # its PID namespace: PID 1 is the container's process
    assert lines[3:6] == ["NoNewPrivs:\t1", "Seccomp:\t2", "mxc"]
    rc, out, err = oci("exec", "--user", "1000:1000", "--env", "A=b", "--cwd", "/tmp", "c1", "sh", "-c",
                       "id -u; echo $A; pwd; exit 4")
    assert rc == 4 and out.split() == ["1000", "b", "/tmp"], err
    rc, _, err = oci("exec", "--user", "70000", "c1", "true")
    assert rc != 0 and "not mapped in the container's user namespace" in err
    rc, _, err = oci("exec", "c1", "no-such-program")
    assert rc != 0 and 'exec: "no-such-program": executable file not found in $PATH' in err
    rc, _, err = oci("exec", "--tty", "--detach", "c1", "true")  # not detached: mxc-oci relays the terminal
    assert rc != 0 and "cannot allocate tty if mxc-oci will detach without setting console socket" in err
    rc, _, err = oci("exec", "--cap", "CAP_SYS_ADMIN", "c1", "true")
    assert rc != 0 and "CAP_SYS_ADMIN is refused" in err


def test_exec_process_file_detach_and_pid_file(oci):
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("c1", b)[0] == 0
    assert oci("start", "c1")[0] == 0
    proc = {"args": ["sh", "-c", "echo from-process-json > /dev/shm/m; exec sleep 1000"], "cwd": "/",
            "env": ["PATH=/bin"], "user": {"uid": 0, "gid": 0}}
    pf, epid = os.path.join(oci.base, "process.json"), os.path.join(oci.base, "epid")
    with open(pf, "w") as f:
        json.dump(proc, f)
    with open(os.devnull, "wb") as null:  # the detached process keeps its stdio
        rc, _, err = oci("exec", "--process", pf, "--detach", "--pid-file", epid, "c1", out=null)
    assert rc == 0, err
    pid = int(open(epid).read())
    # the pid is the exec'd process itself (busybox then runs its applet through /proc/self/exe)
    assert wait_until(lambda: open("/proc/%d/cmdline" % pid).read().startswith("sleep\x00"), 30)
    assert wait_until(lambda: oci("exec", "c1", "cat", "/dev/shm/m")[1] == "from-process-json\n", 30)
    assert oci("delete", "--force", "c1")[0] == 0
    assert wait_until(lambda: dead(pid), 30)


def test_exec_is_not_dumpable_before_its_exec(oci):
    """CVE-2019-5736's shape: while mxc-oci's exec process sits inside the container (its
    /proc/PID/exe is mxc-oci), the container's root can neither read that exe nor attach."""
    b = oci.bundle(["sleep", "1000"])
    pidfile = os.path.join(oci.base, "pid")
    assert oci.create("c1", b, "--pid-file", pidfile)[0] == 0
    assert oci("start", "c1")[0] == 0
    init = int(open(pidfile).read())
    ns = os.stat("/proc/%d/ns/pid" % init).st_ino
    held = subprocess.Popen([MXC_OCI, "--root", oci.root, "exec", "c1", "true"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, MXC_FAULT_OCI_EXEC_STOP="1"))
    try:
        def stopped_in_container():
            for p in os.listdir("/proc"):
                try:
                    if p.isdigit() and os.stat("/proc/%s/ns/pid" % p).st_ino == ns:
                        st = open("/proc/%s/status" % p).read()
                        if "\nState:\tT" in st and "Name:\tmxc-oci" in st:
                            return [l for l in st.splitlines() if l.startswith("NSpid:")][0].split()[-1]
                except OSError:
                    pass
            return None
        assert wait_until(stopped_in_container, 30)
        inner = stopped_in_container()
        rc, out, err = oci("exec", "c1", "sh", "-c", "cat /proc/%s/exe >/dev/null 2>&1 && echo read-exe; "
                           "ls /proc/%s/fd/ >/dev/null 2>&1 && echo listed-fds; echo done" % (inner, inner))
        assert rc == 0, err
        assert out.split() == ["done"]
    finally:
        held.kill()
        held.wait()
    assert oci("delete", "--force", "c1")[0] == 0


# --------------------------------------------------------------------------------------------
# process.terminal: the console socket


def _console_listener(base):
    import socket
    path = os.path.join(base, "console.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    return srv, path


def _receive_master(srv):
    import array
    import socket
    srv.settimeout(60)
    conn, _ = srv.accept()
    fds = array.array("i")
    msg, anc, _, _ = conn.recvmsg(64, socket.CMSG_LEN(fds.itemsize))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:fds.itemsize])
    conn.close()
    return msg.decode(), fds[0]


def _read_until(fd, words, timeout=30):
    import select
    buf, end = b"", time.time() + timeout
    while all(w.encode() not in buf for w in words) and time.time() < end:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf.decode(errors="replace")


def test_console_socket_receives_the_pty_master(oci):
    srv, path = _console_listener(oci.base)

    def tty(c):
        c["process"]["terminal"] = True
        c["process"]["consoleSize"] = {"height": 40, "width": 100}
    b = oci.bundle(["sh", "-c", "tty; stty size; read x; echo got-$x"], tty)
    try:
        rc, _, err = oci.create("c1", b, "--console-socket", path)
        assert rc == 0, err
        name, master = _receive_master(srv)
        assert name.startswith("/dev/pts/")
        assert oci("start", "c1")[0] == 0
        out = _read_until(master, ["40 100"])
        assert name in out and "40 100" in out, out
        os.write(master, b"hello\n")
        assert "got-hello" in _read_until(master, ["got-hello"])
        os.close(master)
    finally:
        srv.close()
    assert wait_until(lambda: oci.state("c1")["status"] == "stopped", 30)
    assert oci("delete", "c1")[0] == 0


def test_terminal_without_console_socket_is_refused(oci):
    b = oci.bundle(["true"], lambda c: c["process"].update(terminal=True))
    rc, _, err = oci.create("c1", b)
    assert rc != 0 and "cannot allocate tty if mxc-oci will detach without setting console socket" in err
    assert not os.path.exists(os.path.join(oci.root, "c1"))


def test_exec_tty_through_the_console_socket(oci):
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("c1", b)[0] == 0
    assert oci("start", "c1")[0] == 0
    srv, path = _console_listener(oci.base)
    try:
        with open(os.devnull, "wb") as null:
            rc, _, err = oci("exec", "--tty", "--detach", "--console-socket", path, "c1", "sh", "-c",
                             "tty; echo exec-tty-ok", out=null)
        assert rc == 0, err
        name, master = _receive_master(srv)
        out = _read_until(master, ["exec-tty-ok"])
        assert name in out and "exec-tty-ok" in out, out
        os.close(master)
    finally:
        srv.close()
    assert oci("delete", "--force", "c1")[0] == 0


@pytest.fixture
def own_slot():
    """The first id of a 65536-id slot no other container on the host claims while a test holds it, for
    a region of that one slot (MXC_RANGE_BASE=it, MXC_RANGE_SLOTS=1): above the default region (2^31,
    4096 slots: any create anywhere may claim any of those), chosen at random, unclaimed, and held by a
    lock against another run of the tests at once (CI's parallel jobs, two checkouts on one host)."""
    while True:
        slot = random.randint((2 ** 31 >> 16) + 4096, (2 ** 32 >> 16) - 2)  # below (uid_t)-1's slot
        path = os.path.join(tempfile.gettempdir(), "mxc-test-slot-%d.lock" % slot)
        lock = open(path, "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = os.stat(path).st_ino == os.fstat(lock.fileno()).st_ino  # not a file its holder removed
        except (BlockingIOError, FileNotFoundError):
            held = False
        if held and not os.path.exists(os.path.join(CLAIMS, "range-%d" % (slot << 16))):
            break
        if held:
            os.unlink(path)
        lock.close()
    yield slot << 16
    os.unlink(path)
    lock.close()


def test_delete_never_releases_a_range_claimed_again(oci, own_slot):
    """With one slot in the region: c1 stops, the sweeper releases its range, c2 claims the same
    slot; deleting c1 must leave c2's claim alone.  The slot is the test's own (own_slot): a fixed one
    in the default region was now and then another container's, and c1's create found no free range."""
    env = dict(os.environ, MXC_RANGE_SLOTS="1", MXC_RANGE_BASE=str(own_slot))
    gc_env = dict(os.environ, MXC_SWEEP_MIN_AGE="0", MXC_STATE_DIR=os.path.join(oci.base, "mxc-state"))

    def run(*args):
        # the container keeps create's stdio: files, never pipes this test would wait on
        with open(os.devnull, "wb") as null, tempfile.TemporaryFile("w+") as err:
            r = subprocess.run([MXC_OCI, "--root", oci.root, *args], env=env, stdin=subprocess.DEVNULL,
                               stdout=null, stderr=err, timeout=60)
            err.seek(0)
            r.stderr = err.read()
            return r
    b1, b2 = oci.bundle(["sleep", "1000"]), oci.bundle(["sleep", "1000"])
    r = run("create", "--bundle", b1, "c1")
    assert r.returncode == 0, r.stderr
    r = run("create", "--bundle", b2, "c2")
    assert r.returncode != 0 and "no free 65536-id range" in r.stderr  # the one slot is c1's
    assert run("kill", "c1", "KILL").returncode == 0
    assert wait_until(lambda: oci.state("c1")["status"] == "stopped", 30)
    g = subprocess.run([os.path.join(REPO, "build", "mxc-exec"), "--gc"], capture_output=True, text=True,
                       env=gc_env, timeout=120)
    assert g.returncode == 0, g.stderr
    r = run("create", "--bundle", b2, "c2")
    assert r.returncode == 0, r.stderr
    assert len(claims_of(os.path.join(oci.root, "c2"))) == 1
    assert run("delete", "c1").returncode == 0
    assert len(claims_of(os.path.join(oci.root, "c2"))) == 1  # still c2's
    assert run("delete", "--force", "c2").returncode == 0
    assert claims_of(os.path.join(oci.root, "c2")) == []


def test_dev_null_symlink_in_the_image_is_refused(oci):
    """CVE-2025-31133's shape: the image's /dev/null is a link into /proc; a runtime that binds
    "/dev/null" over the masked paths by name then shows (or binds writable) what the link names.
    mxc-oci refuses a default device node that is a symlink in the rootfs, and masks only with a
    node that is the null device."""
    def no_dev_tmpfs(c):
        c["mounts"] = [m for m in c["mounts"] if not m["destination"].startswith("/dev")]
        c["linux"]["maskedPaths"] = ["/proc/keys"]
    b = oci.bundle(["sh", "-c", "cat /proc/keys | head -c 100"], no_dev_tmpfs, readonly=False)
    os.symlink("../proc/sys/kernel/core_pattern", os.path.join(b, "rootfs", "dev", "null"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc != 0 and "/dev/null in the rootfs is a symbolic link" in err, out + err


def test_preserve_fds_passes_a_pipe_and_refuses_a_directory(oci):
    b = oci.bundle(["sh", "-c", "echo via-fd3 >&3"])
    r, w = os.pipe()
    try:
        p = subprocess.run([MXC_OCI, "--root", oci.root, "run", "--preserve-fds", "1", "--bundle", b, "c1"],
                           pass_fds=(3,), stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=60, preexec_fn=lambda: os.dup2(w, 3))
        os.close(w)
        w = -1
        assert p.returncode == 0, p.stderr
        assert os.read(r, 100) == b"via-fd3\n"
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    d = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        p = subprocess.run([MXC_OCI, "--root", oci.root, "run", "--preserve-fds", "1", "--bundle", b, "c2"],
                           pass_fds=(3,), stdin=subprocess.DEVNULL, capture_output=True, timeout=60, text=True,
                           preexec_fn=lambda: os.dup2(d, 3))
    finally:
        os.close(d)
    assert p.returncode != 0 and "--preserve-fds: fd 3 is a directory: refused" in p.stderr
    assert not os.path.exists(os.path.join(oci.root, "c2"))
    p = subprocess.run([MXC_OCI, "--root", oci.root, "run", "--preserve-fds", "1", "--bundle", b, "c3"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60, text=True)
    assert p.returncode != 0 and "fd 3 is not open" in p.stderr  # never mxc-oci's own fd taken for the caller's


def test_pod_pair_shares_the_first_s_network_by_path(oci):
    """A pod: the second container joins the first's network (and IPC, UTS) namespaces by path
    and reaches its server on loopback; each keeps its own user namespace and range."""
    a = oci.bundle(["httpd", "-f", "-p", "127.0.0.1:8080", "-h", "/www"])
    os.makedirs(os.path.join(a, "rootfs", "www"))
    with open(os.path.join(a, "rootfs", "www", "index.html"), "w") as f:
        f.write("pod-hello\n")
    pidfile = os.path.join(oci.base, "pid-a")
    assert oci.create("pod-a", a, "--pid-file", pidfile)[0] == 0
    assert oci("start", "pod-a")[0] == 0
    pa = int(open(pidfile).read())

    def join(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] in ("network", "ipc", "uts"):
                n["path"] = "/proc/%d/ns/%s" % (pa, {"network": "net"}.get(n["type"], n["type"]))
        c["mounts"] = [m for m in c["mounts"] if m["type"] not in ("sysfs", "mqueue")]
        c.pop("hostname", None)
    b = oci.bundle(["sh", "-c", "for i in $(seq 300); do wget -qO- http://127.0.0.1:8080/index.html && exit 0; "
                    "sleep 0.1; done; exit 1"], join)
    rc, out, err = oci("run", "--bundle", b, "pod-b")
    assert rc == 0, err
    assert out == "pod-hello\n"
    # the same network namespace, another user namespace (another range)
    assert os.stat("/proc/%d/ns/net" % pa).st_ino != os.stat("/proc/self/ns/net").st_ino
    assert oci("delete", "--force", "pod-a")[0] == 0


PODMAN_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_NET_BIND_SERVICE",
               "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID", "CAP_SYS_CHROOT"]
# the escape suite's probes (tests/helper), from a container's root holding Podman's default capabilities
PROBES = {
    "unshare_user": "EPERM", "clone_newuser": "EPERM", "mount_tmpfs": "EPERM",
    "mount_proc": "EPERM", "fsopen": "EPERM", "open_tree": "EPERM", "pivot_root": "EPERM",
    "chroot_escape": "EPERM", "dotdot": "contained", "keyctl": "EPERM", "bpf": "EPERM",
    "perf_event_open": "EPERM", "userfaultfd": "EPERM", "io_uring_setup": "EPERM", "kexec_load": "EPERM",
    "init_module": "EPERM", "open_by_handle_at": "EPERM", "reboot": "EPERM", "acct": "EPERM", "swapon": "EPERM",
    "tiocsti": None, "mknod": "EPERM", "socket raw": "EPERM", "socket packet": "EPERM",
}


def test_escape_probes_inside_a_container(oci):
    def caps(c):
        for k in ("bounding", "effective", "permitted"):
            c["process"]["capabilities"][k] = list(PODMAN_CAPS)
        c["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]})
    verbs = " ".join("'%s'" % v for v in PROBES)
    b = oci.bundle(["sh", "-c", "for v in %s; do mxc-test-helper $v; done" % verbs], caps)
    add_helper(b)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    got = dict(l.split(": ", 1) for l in out.splitlines() if ": " in l)
    for verb, want in PROBES.items():
        name = verb.split()[0]
        if want is None:
            assert got.get(name) != "ok", (verb, got.get(name))
        else:
            assert got.get(name) == want, (verb, got.get(name))
