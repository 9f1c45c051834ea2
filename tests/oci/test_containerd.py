"""containerd 1.6 (Debian) and ctr, unmodified, run containers on mxc-oci through the runc v2 shim
(containerd-shim-runc-v2, the shim Kubernetes' CRI uses): run, task exec, kill, delete,
container rm; `id` says 0 and no container id maps onto host 0; a bind mount written as root lands
as the container's range on the host; --tty through the shim's console socket.

The test starts its own containerd (its own root, state, socket, config; no CRI plugin, nothing
that reaches the network), imports an image it writes itself (an OCI image layout tarball of a
busybox-static rootfs: nothing is pulled), and stops everything at the end: tasks, containers,
the image, containerd and its shims.  It checks that no process, mount or cgroup of its own is
left.  The harness is validated against the real runc first (test_harness_with_runc).

What the test sets, and why (docs/oci.md "containerd and ctr"):
  - --snapshotter native for most tests, and containerd's default overlayfs in
    test_ctr_default_overlayfs_snapshotter.
  - --runc-root and --fifo-dir in the test's directory (ctr's defaults are under /run/containerd).
"""
import hashlib
import io
import json
import os
import platform
import secrets
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time

import pytest

from conftest import wait_until
from test_oci import BUSYBOX, CLAIMS, MXC_OCI, make_rootfs

RUNC = shutil.which("runc") or "/usr/sbin/runc"
IMAGE = "localhost/mxc-bb:1"
SHIM_STATE = "/run/containerd"   # the runc v2 shim's socket directory (<state>/s) is fixed in 1.6

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("containerd") or not shutil.which("ctr")
    or not shutil.which("containerd-shim-runc-v2") or not os.access(BUSYBOX, os.X_OK),
    reason="needs root, containerd 1.6, ctr, containerd-shim-runc-v2 and busybox-static")



def stop_process(p, timeout=60):
    """SIGTERM (nothing when p has ended), SIGKILL after timeout seconds; p reaped either way."""
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()

def _blob(layout, data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(layout, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return "sha256:" + d


def write_oci_image(path, rootfs, name, cmd=("sh",), config=None):
    """An OCI image layout tarball (one uncompressed layer: the rootfs, every file root's); config:
    more of the image config's "config" (User, Labels)."""
    layout = path + ".d"
    os.makedirs(os.path.join(layout, "blobs", "sha256"))
    buf = io.BytesIO()

    def as_root(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for entry in sorted(os.listdir(rootfs)):
            t.add(os.path.join(rootfs, entry), arcname=entry, filter=as_root)
    layer = buf.getvalue()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    cfg = json.dumps({"architecture": arch, "os": "linux",
                      "config": dict({"Env": ["PATH=/bin"], "Cmd": list(cmd)}, **(config or {})),
                      "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}
                      }).encode()
    man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                      "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                 "digest": _blob(layout, cfg), "size": len(cfg)},
                      "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                                  "digest": _blob(layout, layer), "size": len(layer)}]}).encode()
    index = {"schemaVersion": 2,
             "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                            "digest": _blob(layout, man), "size": len(man),
                            "annotations": {"io.containerd.image.name": name,
                                            "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]}}]}
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump(index, f)
    with open(os.path.join(layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    subprocess.run(["tar", "-C", layout, "-cf", path, "."], check=True)
    shutil.rmtree(layout)


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def pids_naming(text):
    """Pids whose command line has an argument containing `text` (this test's own directory)."""
    t = text.encode()
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and any(t in a for a in _cmdline(p))]


def mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(path)]


def claims_naming(path):
    """mxc range claims whose container state directory is under `path`."""
    out = []
    for f in os.listdir(CLAIMS):
        try:
            with open(os.path.join(CLAIMS, f)) as fh:
                if path in fh.read():
                    out.append(f)
        except OSError:
            pass    # released meanwhile (another test's)
    return out


def cgroup_dirs(name):
    out = []
    for ctl in os.listdir("/sys/fs/cgroup"):
        p = os.path.join("/sys/fs/cgroup", ctl, name)
        if os.path.isdir(p):
            out.append(p)
    return out


OFF = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
       "io.containerd.snapshotter.v1.aufs", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp",
       "io.containerd.internal.v1.tracing"]


def base_config(base, sock, cri):
    """containerd's config: everything under base, nothing that reaches the network, CRI if asked."""
    off = OFF if cri else ["io.containerd.grpc.v1.cri"] + OFF
    return ('version = 2\nroot = "%s/root"\nstate = "%s/state"\ndisabled_plugins = %s\n'
            '[grpc]\n  address = "%s"\n[ttrpc]\n  address = "%s.ttrpc"\n[debug]\n  address = ""\n'
            '[metrics]\n  address = ""\n' % (base, base, json.dumps(off), sock, sock))


class Containerd:
    """One containerd of the test's own and `ctr` against it (namespace of the test's own)."""

    def __init__(self, base):
        self.base = base
        self.sock = os.path.join(base, "c.sock")
        self.ns = "mxctest%d" % os.getpid()
        self.fifo = os.path.join(base, "fifo")
        self.runc_root = os.path.join(base, "runc")
        self.n = 0

    def __call__(self, *args, timeout=120, check=True, stdin=subprocess.DEVNULL):
        r = subprocess.run(["ctr", "--address", self.sock, "--namespace", self.ns, *args], capture_output=True,
                           text=True, timeout=timeout, stdin=stdin)
        if check:
            assert r.returncode == 0, "ctr %s: %s%s" % (" ".join(args), r.stdout, r.stderr)
        return r

    def cid(self):
        self.n += 1
        return "c%d-%s" % (self.n, secrets.token_hex(3))

    def run_args(self, runtime, snapshotter="native", cgroup=None):
        a = ["--snapshotter", snapshotter, "--fifo-dir", self.fifo, "--runc-root", self.runc_root]
        if runtime:
            a += ["--runc-binary", runtime]
        if cgroup is not None:
            a += ["--cgroup", cgroup]
        return a

    def tasks(self):
        r = self("task", "ls", "-q", check=False)
        return [t for t in r.stdout.split() if t]

    def containers(self):
        r = self("container", "ls", "-q", check=False)
        return [c for c in r.stdout.split() if c]

    def remove_all(self):
        for t in self.tasks():
            self("task", "kill", "-s", "SIGKILL", "--all", t, check=False)
            wait_until(lambda: self("task", "delete", t, check=False).returncode == 0, 30)
        for c in self.containers():
            self("container", "rm", c, check=False)


@pytest.fixture(scope="module")
def ctrd():
    base = tempfile.mkdtemp(prefix="mxc-ctr-", dir="/var/tmp")
    os.chmod(base, 0o755)
    c = Containerd(base)
    had_state = os.path.exists(SHIM_STATE)
    cg_before = set(cgroup_dirs(c.ns))
    conf = os.path.join(base, "config.toml")
    with open(conf, "w") as f:
        f.write(base_config(base, c.sock, cri=False))
    log = open(os.path.join(base, "containerd.log"), "wb")
    d = subprocess.Popen(["containerd", "--config", conf], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True)
    try:
        assert wait_until(lambda: d.poll() is None and c("version", check=False).returncode == 0, 60), \
            open(os.path.join(base, "containerd.log")).read()
        rootfs = os.path.join(base, "rootfs")
        make_rootfs(rootfs)
        os.chmod(os.path.join(rootfs, "tmp"), 0o1777)
        tar = os.path.join(base, "bb.tar")
        write_oci_image(tar, rootfs, IMAGE)
        c("images", "import", "--snapshotter", "native", tar)
        c("images", "import", "--snapshotter", "overlayfs", tar)   # containerd's default snapshotter
        yield c
    finally:
        try:
            c.remove_all()
            c("images", "rm", IMAGE, check=False)
        finally:
            stop_process(d)
            log.close()
            left = pids_naming(base)       # shims name the containerd address, runtimes the bundle
            for p in left:
                os.kill(p, signal.SIGKILL)
            mnts = mounts_under(base)
            for m in reversed(mnts):
                subprocess.run(["umount", "-l", m], check=False)
            cg_left = [p for p in cgroup_dirs(c.ns) if p not in cg_before]
            for p in cg_left:
                try:
                    os.rmdir(p)            # the namespace's parent cgroup runc made, empty by now
                except OSError:
                    pass
            cg_left = [p for p in cgroup_dirs(c.ns) if p not in cg_before]
            claims = claims_naming(base)
            if not had_state:
                for sub in ("s", ""):
                    try:
                        os.rmdir(os.path.join(SHIM_STATE, sub))
                    except OSError:
                        pass
            if os.environ.get("MXC_CTR_KEEP_LOG"):
                shutil.copy(os.path.join(base, "containerd.log"), os.environ["MXC_CTR_KEEP_LOG"])
            shutil.rmtree(base, ignore_errors=True)
            assert not left, "processes left: %s" % left
            assert not mnts, "mounts left: %s" % mnts
            assert not cg_left, "cgroups left: %s" % cg_left
            assert not claims, "range claims left: %s" % claims


def task_status(c, cid):
    for line in c("task", "ls").stdout.split("\n")[1:]:
        f = line.split()
        if f and f[0] == cid:
            return f[2]
    return None


def lifecycle(c, *run_opts):
    """run -d, task exec, kill, delete, container rm; returns (run's output, exec's output)."""
    cid = c.cid()
    c("run", "-d", *run_opts, IMAGE, cid, "sleep", "1000")
    assert wait_until(lambda: task_status(c, cid) == "RUNNING", 30)
    ex = c("task", "exec", "--fifo-dir", c.fifo, "--exec-id", "e1", cid, "sh", "-c", "id -u; cat /proc/self/uid_map")
    ps = c("task", "ps", cid).stdout
    c("task", "kill", "-s", "SIGKILL", cid)   # pid 1 ignores an unhandled SIGTERM
    assert wait_until(lambda: task_status(c, cid) == "STOPPED", 30)
    c("task", "delete", cid)
    c("container", "rm", cid)
    assert cid not in c.containers()
    return ex.stdout, ps


def uid_map(text):
    return [tuple(int(x) for x in line.split()) for line in text.strip().split("\n")[1:]]


def test_harness_with_runc(ctrd):
    """The same steps with the real runc: the harness works, and its uid_map check does tell."""
    out, ps = lifecycle(ctrd, *ctrd.run_args(RUNC))
    assert out.split("\n")[0] == "0"
    assert any(host == 0 for _, host, _ in uid_map(out)), out   # runc runs it as host root
    assert "PID" in ps


def test_ctr_run_exec_kill_delete_on_mxc(ctrd):
    out, ps = lifecycle(ctrd, *ctrd.run_args(MXC_OCI))
    assert out.split("\n")[0] == "0"
    m = uid_map(out)
    assert m and all(host != 0 for _, host, _ in m), out
    assert m == [(0, m[0][1], 65536)] and m[0][1] >= 2 ** 31


def test_ctr_bind_mount_write_lands_as_the_range(ctrd):
    vol = os.path.join(ctrd.base, "vol%d" % ctrd.n)
    os.makedirs(vol)
    os.chmod(vol, 0o777)
    cid = ctrd.cid()
    r = ctrd("run", "--rm", *ctrd.run_args(MXC_OCI), "--mount",
             "type=bind,src=%s,dst=/vol,options=rbind:rw" % vol, IMAGE, cid,
             "sh", "-c", "echo hi > /vol/f; id -u; cat /proc/self/uid_map")
    lines = r.stdout.split("\n")
    assert lines[0] == "0"
    hid = int(lines[1].split()[1])
    st = os.stat(os.path.join(vol, "f"))
    assert st.st_uid == hid and st.st_gid == hid and hid >= 2 ** 31
    assert cid not in ctrd.containers()


def test_ctr_run_tty_through_the_shim_s_console_socket(ctrd):
    cid = ctrd.cid()
    cmd = ["ctr", "--address", ctrd.sock, "--namespace", ctrd.ns, "run", "--rm", "--tty",
           *ctrd.run_args(MXC_OCI), IMAGE, cid, "sh", "-c", "tty; id -u; echo tty-ok"]
    r = subprocess.run(["script", "-qec", shlex.join(cmd), "/dev/null"], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "/dev/pts/0" in r.stdout and "tty-ok" in r.stdout
    assert cid not in ctrd.containers()


def task_pid(c, cid):
    for line in c("task", "ls").stdout.split("\n")[1:]:
        f = line.split()
        if f and f[0] == cid:
            return int(f[1])
    raise AssertionError("no task %s" % cid)


def test_ctr_pod_pair_second_joins_the_first_s_network_by_path(ctrd):
    """As CRI makes a pod: the second container joins the first's network namespace by path
    (--with-ns network:/proc/PID/ns/net) and reaches its server on 127.0.0.1, with ctr's default
    capabilities (CAP_NET_RAW among them) and its /sys mount (the pod's sysfs, made by mxc-oci)."""
    first = ctrd.cid()
    ctrd("run", "-d", *ctrd.run_args(MXC_OCI), IMAGE, first,
         "sh", "-c", "mkdir -p /tmp/www; echo pod-ok > /tmp/www/index.html; exec httpd -f -p 127.0.0.1:8080 -h /tmp/www")
    pid = task_pid(ctrd, first)
    try:
        def fetch():
            r = ctrd("run", "--rm", *ctrd.run_args(MXC_OCI), "--with-ns", "network:/proc/%d/ns/net" % pid,
                     IMAGE, ctrd.cid(), "sh", "-c", "ls /sys/class/net; wget -q -O - http://127.0.0.1:8080/",
                     check=False)
            fetch.last = r.stdout + r.stderr
            return r.returncode == 0 and r.stdout == "lo\npod-ok\n"
        assert wait_until(fetch, 30, 0.5), fetch.last
    finally:
        ctrd("task", "kill", "-s", "SIGKILL", first, check=False)
        wait_until(lambda: ctrd("task", "delete", first, check=False).returncode == 0, 30)
        ctrd("container", "rm", first, check=False)


def test_ctr_default_overlayfs_snapshotter(ctrd):
    """containerd's default snapshotter: the rootfs is an overlay of the image's layer snapshots,
    re-made by mxc-oci from idmapped clones of its layers (docs/oci.md, overlay rootfs)."""
    out, _ = lifecycle(ctrd, *ctrd.run_args(MXC_OCI, snapshotter="overlayfs"))
    assert out.split("\n")[0] == "0"
    m = uid_map(out)
    assert m == [(0, m[0][1], 65536)] and m[0][1] >= 2 ** 31
    cid = ctrd.cid()
    r = ctrd("run", "--rm", *ctrd.run_args(MXC_OCI, snapshotter="overlayfs"), IMAGE, cid,
             "sh", "-c", "stat -c %u:%g /bin/busybox; echo w > /tmp/f && stat -c %u /tmp/f")
    assert r.stdout.split() == ["0:0", "0"], r.stdout + r.stderr


def test_ctr_default_cgroup_path(ctrd):
    """ctr's defaults: linux.cgroupsPath /NS/ID and a cpu share: the task runs in that cgroup, and
    delete removes it (the fixture checks that no cgroup of the test's namespace is left)."""
    cid = ctrd.cid()
    args = ctrd.run_args(MXC_OCI)
    ctrd("run", "-d", *args, IMAGE, cid, "sleep", "1000")
    pid = task_pid(ctrd, cid)
    with open("/proc/%d/cgroup" % pid) as f:
        assert "/%s/%s" % (ctrd.ns, cid) in f.read()
    ctrd("task", "kill", "-s", "SIGKILL", cid)
    assert wait_until(lambda: ctrd("task", "delete", cid, check=False).returncode == 0, 30)
    ctrd("container", "rm", cid)
    assert not [p for p in cgroup_dirs(os.path.join(ctrd.ns, cid))]


def test_cri_runtime_entry_of_the_docs_loads():
    """docs/kubernetes.md's containerd config, as written there, loads in containerd 1.6 with the CRI
    plugin on: the plugin is `ok` and the mxc entry carries BinaryName and pod_annotations.  (No
    kubelet or CRI client here: nothing asks the CRI for a pod.  Its streaming server listens on
    127.0.0.1 only.)"""
    import re
    with open(os.path.join(os.path.dirname(MXC_OCI), "..", "docs", "kubernetes.md")) as f:
        block = re.search(r"```toml\n(.*?)```", f.read(), re.S).group(1)
    base = tempfile.mkdtemp(prefix="mxc-cri-", dir="/var/tmp")
    sock = os.path.join(base, "c.sock")
    conf = os.path.join(base, "config.toml")
    with open(conf, "w") as f:
        f.write(base_config(base, sock, cri=True) + "\n".join(l for l in block.split("\n")
                                                              if not l.startswith("version")))
    dump = subprocess.run(["containerd", "--config", conf, "config", "dump"], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    entry = dump[dump.index('runtimes.mxc.options]'):]
    assert 'BinaryName = "/usr/bin/mxc-oci"' in entry.split("\n\n")[0], dump
    assert 'pod_annotations = ["io.mxc.*"]' in dump
    log = open(os.path.join(base, "containerd.log"), "wb")
    d = subprocess.Popen(["containerd", "--config", conf], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True)
    try:
        def cri():
            r = subprocess.run(["ctr", "--address", sock, "plugins", "ls"], capture_output=True, text=True,
                               timeout=60)
            return [l.split()[-1] for l in r.stdout.split("\n") if " cri " in l]
        assert wait_until(lambda: d.poll() is None and cri(), 60)
        assert cri() == ["ok"], open(os.path.join(base, "containerd.log")).read()
    finally:
        stop_process(d)
        log.close()
        mnts = mounts_under(base)
        shutil.rmtree(base, ignore_errors=True)
        assert not mnts, mnts
