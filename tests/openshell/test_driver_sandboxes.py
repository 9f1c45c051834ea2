"""mxc-openshell-driver's sandboxes (issue 37, second stage): Create/Stop/Start/Delete for real,
replayed as OpenShell's gateway calls them, over a busybox image imported into a Podman store of
the test's own (nothing pulled), run through mxc-oci.

A stand-in for OpenShell's supervisor (a test-only shell script, bound read-only at
/opt/openshell/bin/openshell-sandbox as the driver binds the real one) proves it was delivered
and started with its identity and token: it writes what it saw to /sandbox in the sandbox, then
runs the canonical command from OPENSHELL_MAIN_PROCESS_SPEC (a sed of the compact JSON the driver
writes, for the one form these tests give: ["sh","-c",SCRIPT] with no quote or backslash in SCRIPT).

Environment: MXC_OPENSHELL_DRIVER (default <repo>/build/mxc-openshell-driver); mxc-oci is the
one beside it.
"""
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from driver_env import DRIVER, SVC, Driver, make_base, pb  # noqa: F401 (pb: the module fixture)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from test_proxy import world  # noqa: E402,F401 (fixture)

grpc = pytest.importorskip("grpc")

BUSYBOX = "/bin/busybox"
IMAGE = "localhost/mxc-osd-bb:1"
MXC_OCI = os.path.join(os.path.dirname(DRIVER), "mxc-oci")
HELPER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build",
                      "mxc-test-helper")

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("podman") or not os.access(BUSYBOX, os.X_OK)
                                or not os.access(HELPER, os.X_OK),
                                reason="needs root, podman, busybox-static (scripts/deps.sh) and build/mxc-test-helper")

STAND_IN = r"""#!/bin/sh
# test-only stand-in for openshell-sandbox: what it was given, then the canonical command
# a stop's SIGTERM: the supervisor's own shutdown (the canonical process ended, a note left)
trap 'echo TERM > /sandbox/term; kill $child 2>/dev/null; exit 0' TERM
{
  echo "args=$*"
  echo "id=$OPENSHELL_SANDBOX_ID"
  echo "name=$OPENSHELL_SANDBOX"
  echo "endpoint=$OPENSHELL_ENDPOINT"
  echo "token_file=$OPENSHELL_SANDBOX_TOKEN_FILE"
  echo "token=$(cat "$OPENSHELL_SANDBOX_TOKEN_FILE" 2>&1)"
  echo "greeting=$GREETING"
  echo "uid=$(id -u)"
  echo "proxy=$HTTPS_PROXY"
} > /sandbox/seen
script=$(echo "$OPENSHELL_MAIN_PROCESS_SPEC" | sed -e 's/^{"version":1,"command":\["sh","-c","\(.*\)"\],"tty":false}$/\1/')
sh -c "$script" &
child=$!
wait $child
"""


def add_helper(rootfs):
    """The escape suite's mxc-test-helper and the libraries it loads, into the image's rootfs
    (as tests/oci/test_oci.py's add_helper puts it in a bundle's)."""
    libs = subprocess.run(["ldd", HELPER], capture_output=True, text=True, check=True).stdout
    for lib in [w for w in libs.split() if w.startswith("/")]:
        dst = os.path.join(rootfs, lib.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.realpath(lib), dst)
    shutil.copy2(HELPER, os.path.join(rootfs, "bin", "mxc-test-helper"))


@pytest.fixture(scope="module")
def store():
    """A Podman store of the test's own with the busybox image; a wrapper the driver runs as --podman."""
    base = tempfile.mkdtemp(prefix="mxc-osd-podman-", dir="/var/tmp")
    os.chmod(base, 0o755)
    cmd = ["podman", "--root", os.path.join(base, "storage"), "--runroot", os.path.join(base, "run"),
           "--tmpdir", os.path.join(base, "tmp"), "--storage-driver", "overlay"]
    rootfs = os.path.join(base, "rootfs")
    os.makedirs(os.path.join(rootfs, "bin"))
    shutil.copy2(BUSYBOX, os.path.join(rootfs, "bin", "busybox"))
    for a in ("sh", "id", "cat", "sleep", "echo", "sed", "ls", "touch"):
        os.symlink("busybox", os.path.join(rootfs, "bin", a))
    for d in ("proc", "dev", "sys", "tmp", "etc"):
        os.makedirs(os.path.join(rootfs, d))
    add_helper(rootfs)
    shutil.copy2(HELPER, os.path.join(rootfs, "bin", "helper-suid"))  # a set-uid-root program in the image
    os.chmod(os.path.join(rootfs, "bin", "helper-suid"), 0o4755)
    tar = os.path.join(base, "bb.tar")
    subprocess.run(["tar", "-C", rootfs, "-cf", tar, "."], check=True)
    subprocess.run(cmd + ["import", "-q", tar, IMAGE], check=True, capture_output=True)
    wrapper = os.path.join(base, "podman")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(cmd))
    os.chmod(wrapper, 0o755)
    try:
        yield wrapper, cmd, base
    finally:
        subprocess.run(cmd + ["image", "unmount", "-a"], capture_output=True)
        subprocess.run(cmd + ["rmi", "-af"], capture_output=True)
        subprocess.run(["umount", "-R", os.path.join(base, "storage", "overlay")], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def env(pb, store):  # noqa: F811
    base = make_base(prefix="mxc-osd-sbx-", under="/var/tmp", supervisor=STAND_IN)
    drivers = []

    def start(extra=(), netns=False, endpoint=None, grant_roots=("/",)):
        # an endpoint gives every sandbox governed egress to it (docs/openshell.md): a test naming one
        # runs the driver in a network namespace it made (netns, or test_proxy's world)
        gw = ["--gateway-endpoint", endpoint] if endpoint else []
        d = Driver(pb, base, extra=["--podman", store[0], *gw, *extra], grant_roots=grant_roots)
        if netns:  # a network namespace of the test's own, loopback up: what governed egress starts stays there
            d.args = ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *d.args]
        drivers.append(d.start())
        return d
    try:
        yield start, base
    finally:
        try:
            for d in drivers:
                if d.proc and d.proc.poll() is None:
                    d.stop()
        finally:
            _leave_nothing(base, store)


def _leave_nothing(base, store):
    """What a failed test left: its containers, rootfs mounts, Podman's holds, the directory."""
    state = os.path.join(base, "state")
    oci = os.path.join(state, "oci")
    for cid in os.listdir(oci) if os.path.isdir(oci) else []:
        subprocess.run([MXC_OCI, "--root", oci, "delete", "--force", cid], capture_output=True)
    run = os.path.join(state, "run")
    for sid in os.listdir(run) if os.path.isdir(run) else []:
        subprocess.run(["umount", "-l", os.path.join(run, sid, "rootfs")], capture_output=True)
    work = os.path.join(state, "work")
    for sid in os.listdir(work) if os.path.isdir(work) else []:
        subprocess.run(["umount", "-l", os.path.join(work, sid, "layer")], capture_output=True)
    subprocess.run(store[1] + ["image", "unmount", "-a"], capture_output=True)
    shutil.rmtree(base, ignore_errors=True)


def sandbox(pb, sid, command, token="tok-" + "x" * 8):  # noqa: F811
    sb = pb.DriverSandbox(id=sid, name="n-" + sid, namespace="default")
    sb.spec.environment["GREETING"] = "hello"
    sb.spec.command.extend(command)
    sb.spec.sandbox_token = token
    t = sb.spec.template
    t.image = IMAGE
    t.labels["team"] = "a"
    t.resources.cpu_request = "250m"
    t.resources.cpu_limit = "500m"
    t.resources.memory_request = "32Mi"
    t.resources.memory_limit = "64Mi"
    return sb


def create(d, sb):
    return d.call("CreateSandbox", d.pb.CreateSandboxRequest(sandbox=sb), d.pb.CreateSandboxResponse)


def ready(d, sid):
    got = d.call("GetSandbox", d.pb.GetSandboxRequest(sandbox_id=sid), d.pb.GetSandboxResponse).sandbox
    c = [c for c in got.status.conditions if c.type == "Ready"]
    return c[0] if c else None


def wait(pred, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    return pred()


def upper(base, sid):
    return os.path.join(base, "state", "work", sid, "layer", "upper")  # in the layer's file system


def cgroup_limits(pid):
    """(cpu quota and period, memory limit, cpu weight, memory low) of pid's cgroup, v2 or v1,
    in v2's notation (v1's shares made a weight as runc, crun and mxc convert them)."""
    with open("/proc/%d/cgroup" % pid) as f:
        paths = {ctl: path for _, ctls, path in (line.rstrip("\n").split(":", 2) for line in f) for ctl in ctls.split(",")}

    def read(*p):
        with open(os.path.join("/sys/fs/cgroup", *p)) as f:
            return f.read().strip()
    if "cpu" in paths and "memory" in paths:  # v1
        cpu = "%s %s" % (read("cpu", paths["cpu"].lstrip("/"), "cpu.cfs_quota_us"),
                         read("cpu", paths["cpu"].lstrip("/"), "cpu.cfs_period_us"))
        shares = int(read("cpu", paths["cpu"].lstrip("/"), "cpu.shares"))
        return (cpu, read("memory", paths["memory"].lstrip("/"), "memory.limit_in_bytes"),
                str(1 + (shares - 2) * 9999 // 262142), read("memory", paths["memory"].lstrip("/"), "memory.soft_limit_in_bytes"))
    p = paths[""].lstrip("/")
    return read(p, "cpu.max"), read(p, "memory.max"), read(p, "cpu.weight"), read(p, "memory.low")


def mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        return [line for line in f if path in line]


def podman_mounts(store):
    return subprocess.run(store[1] + ["image", "mount"], capture_output=True, text=True).stdout.strip()


SLEEP = ["sh", "-c", "echo ran > /sandbox/ran; exec sleep 1000"]


class Watch:
    """The gateway's WatchSandboxes stream, its events read into a queue by a thread."""

    def __init__(self, d):
        self.it = d.channel.unary_stream(SVC + "WatchSandboxes", request_serializer=lambda m: m.SerializeToString(),
                                         response_deserializer=d.pb.WatchSandboxesEvent.FromString)(
            d.pb.WatchSandboxesRequest())
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for ev in self.it:
                self.q.put(ev)
        except grpc.RpcError:
            pass

    def until(self, pred, timeout=10):
        """The first event pred accepts (events before it skipped), or None."""
        end = time.time() + timeout
        while time.time() < end:
            try:
                ev = self.q.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                return None
            if pred(ev):
                return ev
        return None

    def close(self):
        self.it.cancel()


def ready_in(ev, sid, status, reason=None):
    if ev.WhichOneof("payload") != "sandbox" or ev.sandbox.sandbox.id != sid:
        return False
    c = [c for c in ev.sandbox.sandbox.status.conditions if c.type == "Ready"]
    return bool(c) and c[0].status == status and (reason is None or c[0].reason == reason)


def test_create_ready_stop_start_delete(env, pb, store):  # noqa: F811
    start, base = env
    d = start(endpoint="http://127.0.0.1:9/", netns=True)
    w = Watch(d)
    create(d, sandbox(pb, "s1", SLEEP, token="tok-secret-1"))
    assert w.until(lambda ev: ready_in(ev, "s1", "True")), "no ready event"  # the gateway waits for it
    assert wait(lambda: ready(d, "s1").status == "True"), ready(d, "s1")
    code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=sandbox(pb, "s1", SLEEP)),
                          pb.CreateSandboxResponse)
    assert (code, msg) == (grpc.StatusCode.ALREADY_EXISTS, "sandbox s1 exists")
    # one driver per state directory (a second one's sweep would tear down the first's creates)
    r = subprocess.run([DRIVER, "--socket", os.path.join(base, "run", "other.sock"), "--state-dir",
                        os.path.join(base, "state")], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "another mxc-openshell-driver serves the state directory" in r.stderr, r.stderr
    seen_path = os.path.join(upper(base, "s1"), "sandbox", "seen")
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "s1"), "sandbox", "ran")))
    with open(seen_path) as f:
        seen = dict(line.rstrip("\n").split("=", 1) for line in f)
    # delivered, started as OpenShell's drivers start it, with its identity and its token
    assert seen["args"] == "--workdir /sandbox"
    assert (seen["id"], seen["name"]) == ("s1", "n-s1")
    assert seen["endpoint"] == "http://127.0.0.1:9/"
    assert seen["token_file"] == "/etc/openshell/auth/sandbox.jwt"
    assert seen["token"] == "tok-secret-1"
    assert (seen["greeting"], seen["uid"]) == ("hello", "0")
    # the quantities as cgroup limits: 500m over a 100 ms period, 64Mi; the requests: 250m as
    # 256 shares (weight 10), 32Mi as memory.low
    pid = json.loads(subprocess.run([MXC_OCI, "--root", os.path.join(base, "state", "oci"), "state", "s1"],
                                    capture_output=True, text=True).stdout)["pid"]
    assert cgroup_limits(pid) == ("50000 100000", str(64 << 20), "10", str(32 << 20))
    with open("/proc/%d/cgroup" % pid) as f:
        cgdirs = [d for d in ("/sys/fs/cgroup/" + ("%s/%s" % (c, p) if c else p).lstrip("/")
                              for _, c, p in (line.rstrip("\n").split(":", 2) for line in f)
                              if c in ("", "cpu", "memory") and p != "/") if os.path.isdir(d)]
    assert cgdirs
    # the token file: 0400, owned by the sandbox's root as mapped (never host root)
    st = os.stat(os.path.join(base, "state", "run", "s1", "token"))
    assert st.st_mode & 0o777 == 0o400 and st.st_uid >= 65536
    # stop keeps the workspace; start runs again from the same bundle
    t0 = time.time()
    d.call("StopSandbox", pb.StopSandboxRequest(sandbox_id="s1"), pb.StopSandboxResponse)
    assert ready(d, "s1").reason == "Stopped"
    # SIGTERM first: the supervisor shut down on its own, long before the grace ran out
    assert os.path.exists(os.path.join(upper(base, "s1"), "sandbox", "term")) and time.time() - t0 < 5
    assert w.until(lambda ev: ready_in(ev, "s1", "False", "Stopped"))
    os.unlink(os.path.join(upper(base, "s1"), "sandbox", "ran"))
    with open(os.path.join(upper(base, "s1"), "sandbox", "kept"), "w") as f:
        f.write("k")
    d.call("StartSandbox", pb.StartSandboxRequest(sandbox_id="s1"), pb.StartSandboxResponse)
    assert wait(lambda: ready(d, "s1").status == "True")
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "s1"), "sandbox", "ran")))
    assert os.path.exists(os.path.join(upper(base, "s1"), "sandbox", "kept"))
    # delete leaves nothing
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="s1"), pb.DeleteSandboxResponse).deleted
    state = os.path.join(base, "state")
    assert os.listdir(os.path.join(state, "sandboxes")) == []
    assert os.listdir(os.path.join(state, "run")) == [] and os.listdir(os.path.join(state, "work")) == []
    assert [c for c in os.listdir(os.path.join(state, "oci")) if not c.startswith(".")] == []
    assert mounts_under(state) == []
    assert podman_mounts(store) == ""
    assert [d for d in cgdirs if os.path.exists(d)] == []
    code, _ = d.refused("GetSandbox", pb.GetSandboxRequest(sandbox_id="s1"), pb.GetSandboxResponse)
    assert code == grpc.StatusCode.NOT_FOUND
    assert w.until(lambda ev: ev.WhichOneof("payload") == "deleted" and ev.deleted.sandbox_id == "s1")
    w.close()


def layer_mounts(store, image):
    """Podman's mount count of image's top layer (containers-storage's mountpoints.json, in its runroot)."""
    upper_dir = subprocess.run(store[1] + ["image", "inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", "--",
                                           image], capture_output=True, text=True, check=True).stdout.strip()
    top = os.path.basename(os.path.dirname(upper_dir))  # .../overlay/LAYER/diff
    with open(os.path.join(store[2], "run", "overlay-layers", "mountpoints.json")) as f:  # in the runroot
        return sum(m.get("count", 0) for m in json.load(f) if m["id"] == top)


def test_the_image_is_held_by_its_id_so_a_moved_tag_releases_nothing_else(env, pb, store):  # noqa: F811
    """Review of issue 37 (c): the name is resolved to the image's ID once, at Create, and the
    hold is taken, recorded and released by that ID. A tag moved to another image after Create
    (podman tag OTHER IMAGE) leaves Delete releasing the first image's hold, never the other's."""
    start, base = env
    other_ref = "localhost/mxc-osd-bb-other:1"
    rootfs = os.path.join(store[2], "rootfs-other")
    shutil.copytree(os.path.join(store[2], "rootfs"), rootfs, symlinks=True)
    with open(os.path.join(rootfs, "other"), "w") as f:
        f.write("another image\n")
    tar = os.path.join(store[2], "other.tar")
    subprocess.run(["tar", "-C", rootfs, "-cf", tar, "."], check=True)
    subprocess.run(store[1] + ["import", "-q", tar, other_ref], check=True, capture_output=True)
    first = subprocess.run(store[1] + ["image", "inspect", "--format", "{{.Id}}", "--", IMAGE],
                           capture_output=True, text=True, check=True).stdout.strip()
    other = subprocess.run(store[1] + ["image", "inspect", "--format", "{{.Id}}", "--", other_ref],
                           capture_output=True, text=True, check=True).stdout.strip()
    try:
        subprocess.run(store[1] + ["image", "mount", "--", other], check=True, capture_output=True)  # a hold of its own
        first_before, other_before = layer_mounts(store, first), layer_mounts(store, other)
        d = start()
        create(d, sandbox(pb, "t1", SLEEP))
        assert wait(lambda: ready(d, "t1").status == "True"), ready(d, "t1")
        assert layer_mounts(store, first) == first_before + 1
        img = [c for c in d.call("GetSandbox", pb.GetSandboxRequest(sandbox_id="t1"),
                                 pb.GetSandboxResponse).sandbox.status.conditions if c.type == "mxc.io/image"]
        assert img and img[0].status == "True" and img[0].message == first, img  # the record holds the ID
        subprocess.run(store[1] + ["tag", other, IMAGE], check=True, capture_output=True)  # the tag moved
        # a Stop and a Start after a reboot (the mount and the hold gone) hold the recorded image again
        d.call("StopSandbox", pb.StopSandboxRequest(sandbox_id="t1"), pb.StopSandboxResponse)
        subprocess.run(["umount", os.path.join(base, "state", "run", "t1", "rootfs")], check=True)
        subprocess.run(store[1] + ["image", "unmount", "--", first], check=True, capture_output=True)
        assert layer_mounts(store, first) == first_before
        d.call("StartSandbox", pb.StartSandboxRequest(sandbox_id="t1"), pb.StartSandboxResponse)
        assert wait(lambda: ready(d, "t1").status == "True"), ready(d, "t1")
        assert layer_mounts(store, first) == first_before + 1 and layer_mounts(store, other) == other_before
        assert not os.path.exists(os.path.join(base, "state", "run", "t1", "rootfs", "other"))
        assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="t1"), pb.DeleteSandboxResponse).deleted
        assert layer_mounts(store, first) == first_before, "the first image's hold is not back"
        assert layer_mounts(store, other) == other_before, "another image's hold was released"
    finally:
        subprocess.run(store[1] + ["tag", first, IMAGE], capture_output=True)  # the module's image again
        subprocess.run(store[1] + ["image", "unmount", "--force", "--", other], capture_output=True)
        subprocess.run(store[1] + ["rmi", "-f", other], capture_output=True)
        shutil.rmtree(rootfs, ignore_errors=True)
        os.unlink(tar)


LOG_MAX = 8 << 20  # src/osdriver/logcap.h OSD_LOG_MAX


def test_the_supervisor_s_log_is_capped(env, pb):  # noqa: F811
    """Review of issue 37 (a), the log: a sandbox's output (the supervisor's stdout and stderr)
    goes through a keeper that truncates the log with a marker line when it would pass 8 MiB, so
    a sandbox writing 20 MiB leaves at most 8 MiB, the marker, and what it wrote last; the
    writer sees no error, and the keeper ends with the sandbox."""
    start, base = env
    d = start()
    flood = ["sh", "-c", "busybox yes 0123456789abcdef | busybox head -c 20000000; echo END-OF-FLOOD; "
                         "echo after > /sandbox/after; exec sleep 1000"]
    create(d, sandbox(pb, "l1", flood))
    log = os.path.join(base, "state", "work", "l1", "log")
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "l1"), "sandbox", "after")), 60)
    assert wait(lambda: b"END-OF-FLOOD" in open(log, "rb").read()[-4096:], 10)
    assert os.path.getsize(log) <= LOG_MAX
    with open(log, "rb") as f:
        text = f.read()
    assert text.startswith(b"[mxc-openshell-driver: this log reached its cap of %d bytes: truncated here]\n" % LOG_MAX)
    assert ready(d, "l1").status == "True"
    keepers = [p for p in os.listdir("/proc") if p.isdigit() and _comm(p) == "mxc-osd-log" and _fd_is(p, 1, log)]
    assert len(keepers) == 1, keepers
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="l1"), pb.DeleteSandboxResponse).deleted
    assert wait(lambda: _comm(keepers[0]) in (None, "") or _state(keepers[0]) == "Z", 10), "the keeper outlived its sandbox"


def _comm(pid):
    try:
        with open("/proc/%s/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


def _state(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _fd_is(pid, fd, path):
    try:
        return os.readlink("/proc/%s/fd/%d" % (pid, fd)) == path
    except OSError:
        return False


def test_unknown_image_is_refused_creating_nothing(env, pb):  # noqa: F811
    start, base = env
    d = start()
    sb = sandbox(pb, "s2", SLEEP)
    sb.spec.template.image = "localhost/not-there:1"
    code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=sb), pb.CreateSandboxResponse)
    assert code == grpc.StatusCode.NOT_FOUND and "is not in the host's image store" in msg, msg
    state = os.path.join(base, "state")
    assert os.listdir(os.path.join(state, "sandboxes")) == [] and os.listdir(os.path.join(state, "run")) == []
    sb.spec.template.image = "-rf"
    code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=sb), pb.CreateSandboxResponse)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "not starting with '-'" in msg, msg  # never an option
    assert os.listdir(os.path.join(state, "sandboxes")) == [] and os.listdir(os.path.join(state, "run")) == []


def test_killed_from_outside_shows_exited_and_restart_keeps_the_list(env, pb):  # noqa: F811
    start, base = env
    d = start()
    create(d, sandbox(pb, "s3", SLEEP))
    assert wait(lambda: ready(d, "s3").status == "True")
    w = Watch(d)
    assert w.until(lambda ev: ready_in(ev, "s3", "True"))  # the snapshot when the stream opens
    oci = os.path.join(base, "state", "oci")
    pid = json.loads(subprocess.run([MXC_OCI, "--root", oci, "state", "s3"], capture_output=True,
                                    text=True).stdout)["pid"]
    os.kill(pid, signal.SIGKILL)
    assert w.until(lambda ev: ready_in(ev, "s3", "False", "Exited")), "the death is not an event"
    w.close()
    c = wait(lambda: ready(d, "s3").reason == "Exited" and ready(d, "s3"))
    assert c and c.status == "False", ready(d, "s3")
    d.stop()
    d2 = start()
    got = d2.call("ListSandboxes", pb.ListSandboxesRequest(), pb.ListSandboxesResponse).sandboxes
    assert [s.id for s in got] == ["s3"] and not got[0].spec.sandbox_token
    d2.call("StartSandbox", pb.StartSandboxRequest(sandbox_id="s3"), pb.StartSandboxResponse)
    assert wait(lambda: ready(d2, "s3").status == "True")
    assert d2.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="s3"), pb.DeleteSandboxResponse).deleted


def test_crash_mid_create_is_swept(env, pb, store):  # noqa: F811
    """A record left Creating (the driver killed mid-create) is torn down at the next start."""
    start, base = env
    d = start()
    create(d, sandbox(pb, "s4", SLEEP))
    assert wait(lambda: ready(d, "s4").status == "True")
    d.stop()
    # what a crash between the record and the container leaves: the record back to Creating
    rec = os.path.join(base, "state", "sandboxes", "s4")
    with open(rec, "rb") as f:
        sb = pb.DriverSandbox.FromString(f.read())
    for c in sb.status.conditions:
        if c.type == "Ready":
            c.reason, c.status = "Creating", "False"
    with open(rec, "wb") as f:
        f.write(sb.SerializeToString())
    d2 = start()
    assert len(d2.call("ListSandboxes", pb.ListSandboxesRequest(), pb.ListSandboxesResponse).sandboxes) == 0
    state = os.path.join(base, "state")
    assert os.listdir(os.path.join(state, "run")) == [] and mounts_under(state) == []
    assert os.listdir(os.path.join(state, "work")) == [] and wait(lambda: loops_of(base) == []), loops_of(base)
    assert podman_mounts(store) == ""


def test_escape_probe_cannot_reach_driver_state_or_another_token(env, pb, store):  # noqa: F811
    start, base = env
    d = start()
    create(d, sandbox(pb, "a1", SLEEP, token="tok-a"))
    probe = ["sh", "-c", "for p in %s %s %s /etc/openshell/auth/sandbox.jwt; do "
             "if cat $p >/dev/null 2>&1 || ls $p >/dev/null 2>&1; then echo reach $p; else echo no $p; fi; done "
             "> /sandbox/probe; exec sleep 1000" % (os.path.join(base, "run", "driver.sock"),
                                                    os.path.join(base, "state", "run", "a1", "token"),
                                                    os.path.join(base, "state"))]
    create(d, sandbox(pb, "b1", probe, token="tok-b"))
    out = os.path.join(upper(base, "b1"), "sandbox", "probe")
    # the loop's four lines (each echo its own write: a loaded host shows the file part-written)
    assert wait(lambda: os.path.exists(out) and open(out).read().count("\n") >= 4)
    with open(out) as f:
        lines = f.read().split("\n")
    assert lines[:3] == ["no " + os.path.join(base, "run", "driver.sock"),
                         "no " + os.path.join(base, "state", "run", "a1", "token"),
                         "no " + os.path.join(base, "state")], lines
    assert lines[3] == "reach /etc/openshell/auth/sandbox.jwt"  # its own token, and only that
    # the other sandbox's token file on the host is not readable by b1's root as mapped
    st_a = os.stat(os.path.join(base, "state", "run", "a1", "token"))
    st_b = os.stat(os.path.join(base, "state", "run", "b1", "token"))
    assert st_a.st_uid != st_b.st_uid and st_a.st_mode & 0o077 == 0
    # the image stays held while a sandbox uses it, and is let go with the last
    d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="a1"), pb.DeleteSandboxResponse)
    assert IMAGE in podman_mounts(store)
    d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="b1"), pb.DeleteSandboxResponse)
    assert podman_mounts(store) == ""


def test_driver_config_network_is_governed_egress(env, pb):  # noqa: F811
    """driver_config's network rules reach mxc-oci as its io.mxc.network annotation: the sandbox
    gets its own egress proxy (HTTPS_PROXY), with the allowed host in the applied policy.  The
    driver runs in a network namespace the test made."""
    start, base = env
    conf = os.path.join(base, "driver.toml")
    with open(conf, "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "/usr/bin/mxc-exec"\negress_proxy = true\n')
    d = start(extra=["--config", conf], netns=True)
    sb = sandbox(pb, "n1", SLEEP)
    sb.spec.template.driver_config.update({"version": 1, "network_policies": {
        "r": {"endpoints": [{"host": "api.example.test", "port": 443}]}}})
    create(d, sb)
    assert wait(lambda: ready(d, "n1").status == "True")
    seen = os.path.join(upper(base, "n1"), "sandbox", "seen")
    assert wait(lambda: os.path.exists(seen) and "proxy=" in open(seen).read())
    proxy = [l for l in open(seen).read().splitlines() if l.startswith("proxy=")][0]
    assert proxy.startswith("proxy=http://") and proxy.endswith("@127.0.0.1:3128/"), proxy
    st = json.loads(subprocess.run([MXC_OCI, "--root", os.path.join(base, "state", "oci"), "state", "n1"],
                                   capture_output=True, text=True).stdout)
    assert st["annotations"]["io.mxc.version"] == "1"
    assert "api.example.test" in st["annotations"]["io.mxc.network"], st["annotations"]
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="n1"), pb.DeleteSandboxResponse).deleted


def test_start_after_a_reboot_mounts_again(env, pb, store):  # noqa: F811
    """What a host reboot takes from a stopped sandbox (its rootfs mount, Podman's hold on the
    image) is made again by Start, over the same upper layer."""
    start, base = env
    d = start()
    create(d, sandbox(pb, "r1", SLEEP))
    assert wait(lambda: ready(d, "r1").status == "True")
    # the stand-in handles SIGTERM once it runs its command (before, a stop waits out the grace)
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "r1"), "sandbox", "ran")))
    d.call("StopSandbox", pb.StopSandboxRequest(sandbox_id="r1"), pb.StopSandboxResponse)
    d.stop()
    with open(os.path.join(upper(base, "r1"), "sandbox", "kept"), "w") as f:
        f.write("k")
    subprocess.run(["umount", os.path.join(base, "state", "run", "r1", "rootfs")], check=True)
    subprocess.run(["umount", os.path.join(base, "state", "work", "r1", "layer")], check=True)  # and the layer's
    subprocess.run(store[1] + ["image", "unmount", IMAGE], check=True, capture_output=True)
    assert podman_mounts(store) == ""
    assert wait(lambda: loops_of(base) == []), loops_of(base)  # autoclear: the device went with its mount
    d2 = start()
    d2.call("StartSandbox", pb.StartSandboxRequest(sandbox_id="r1"), pb.StartSandboxResponse)
    assert wait(lambda: ready(d2, "r1").status == "True")
    assert IMAGE in podman_mounts(store)
    assert os.path.exists(os.path.join(upper(base, "r1"), "sandbox", "kept"))
    assert len(loops_of(base)) == 1  # the layer mounted again
    d2.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="r1"), pb.DeleteSandboxResponse)
    assert podman_mounts(store) == "" and mounts_under(os.path.join(base, "state")) == []
    assert wait(lambda: loops_of(base) == []), loops_of(base)


def test_driver_config_filesystem_grants_are_binds_never_the_driver_s_places(env, pb):  # noqa: F811
    """driver_config's filesystem grants: host paths bound at the same path, read-only or
    read-write as granted; a grant that is, covers or lies in the driver's state directory or
    socket is refused, creating nothing."""
    start, base = env
    d = start()
    ro, rw = os.path.join(base, "grant-ro"), os.path.join(base, "grant-rw")
    os.mkdir(ro, 0o755)
    os.mkdir(rw)
    os.chmod(rw, 0o777)  # the sandbox writes as its own range, never as host root
    with open(os.path.join(ro, "f"), "w") as f:
        f.write("shared")
    os.chmod(os.path.join(ro, "f"), 0o644)
    probe = ["sh", "-c", "cat %s/f > /sandbox/ro; touch %s/x 2>/dev/null && echo wrote > /sandbox/rotouch; "
             "touch %s/y && echo ok > /sandbox/rw; exec sleep 1000" % (ro, ro, rw)]
    sb = sandbox(pb, "g1", probe)
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {"read_only": [ro], "read_write": [rw]}})
    create(d, sb)
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "g1"), "sandbox", "rw"))), \
        open(os.path.join(base, "state", "work", "g1", "log")).read() + str(os.listdir(os.path.join(upper(base, "g1"), "sandbox")))
    with open(os.path.join(upper(base, "g1"), "sandbox", "ro")) as f:
        assert f.read() == "shared"
    assert not os.path.exists(os.path.join(upper(base, "g1"), "sandbox", "rotouch"))
    assert not os.path.exists(os.path.join(ro, "x")) and os.stat(os.path.join(rw, "y")).st_uid >= 65536
    d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="g1"), pb.DeleteSandboxResponse)
    for grant, what in [(os.path.join(base, "state"), "state directory"),
                        (os.path.join(base, "state", "run"), "state directory"),
                        (base, "state directory"), (os.path.join(base, "run"), "socket")]:
        sb = sandbox(pb, "g2", SLEEP)
        sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {"read_only": [grant]}})
        code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=sb), pb.CreateSandboxResponse)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "policy refused" in msg and what in msg, (grant, msg)
        state = os.path.join(base, "state")
        assert os.listdir(os.path.join(state, "sandboxes")) == [] and os.listdir(os.path.join(state, "run")) == []


def swapping_mxc_oci(base, sid, grant, target):
    """An --mxc-oci that, at the create of sandbox sid, swaps the directory grant for a link to
    target (after the driver's own check, before mxc-oci resolves it), then runs mxc-oci."""
    wrapper = os.path.join(base, "mxc-oci-swapping")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\ncase " $* " in *" create "*" %s "*) rm -rf %s && ln -s %s %s ;; esac\nexec %s "$@"\n'
                % (sid, grant, target, grant, MXC_OCI))
    os.chmod(wrapper, 0o755)
    return wrapper


def create_swapped(d, pb, sid, command, grant, lst):
    """Sandbox sid granted grant (filesystem_policy lst, a directory again first) and running
    command, created through swapping_mxc_oci: the refusal's (code, message)."""
    if os.path.islink(grant):
        os.unlink(grant)
        os.mkdir(grant, 0o755)
    sb = sandbox(pb, sid, ["sh", "-c", command + "; exec sleep 1000"])
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {lst: [grant]}})
    code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=sb), pb.CreateSandboxResponse)
    assert os.path.islink(grant), "the wrapper did not swap the grant"
    return code, msg


def test_a_grant_swapped_for_a_link_after_the_driver_s_check_reaches_nothing(env, pb):  # noqa: F811
    """Review of issue 37 (b): the driver checks a grant by path, and mxc-oci binds it after
    resolving the path again. Someone who can write the granted path's parent swaps it for a link
    into another sandbox's writable layer between the two (here exactly there: an --mxc-oci
    wrapper swaps it just before the real `mxc-oci create`). mxc-oci is told the driver's places
    (MXC_OCI_REFUSED_BIND_SOURCES) and judges the source as resolved, by descriptor: the create is
    refused naming it, nothing of it is left, and the other sandbox is untouched."""
    start, base = env
    parent = os.path.join(base, "shared")  # the parent the "local user" controls
    grant = os.path.join(parent, "data")
    os.makedirs(grant, 0o755)
    victim_upper = upper(base, "v1")
    d = start(extra=["--mxc-oci", swapping_mxc_oci(base, "s2", grant, victim_upper)])
    create(d, sandbox(pb, "v1", ["sh", "-c", "echo mine > /sandbox/private; exec sleep 1000"]))
    assert wait(lambda: os.path.exists(os.path.join(victim_upper, "sandbox", "private")))
    for lst in ("read_only", "read_write"):
        code, msg = create_swapped(d, pb, "s2", "cat %s/sandbox/private > /sandbox/stolen" % grant, grant, lst)
        assert code == grpc.StatusCode.INTERNAL and "mounts[" in msg and "as resolved" in msg and \
            "MXC_OCI_REFUSED_BIND_SOURCES" in msg, (lst, msg)
        state = os.path.join(base, "state")
        assert sorted(os.listdir(os.path.join(state, "sandboxes"))) == ["v1"], lst
        assert sorted(os.listdir(os.path.join(state, "run"))) == ["v1"] and \
            sorted(os.listdir(os.path.join(state, "work"))) == ["v1"], lst
    assert ready(d, "v1").status == "True"
    assert "stolen" not in os.listdir(os.path.join(victim_upper, "sandbox"))
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="v1"), pb.DeleteSandboxResponse).deleted


def test_a_grant_that_leads_outside_the_grant_roots_by_a_restart_is_refused(env, pb):  # noqa: F811
    """--grant-root is judged at Validate and Create; a Start runs the same bundle again, and
    mxc-oci resolves its grants anew. A sandbox that could write a grant's parent (here the host
    does it, as sandbox A with read_write on the parent would, stopped before B starts: no live
    sandbox can write the parent then, so mxc-oci follows a link there) makes the grant a link to
    /etc while B is stopped: B's Start is refused, naming the grant root, and /etc is never bound."""
    start, base = env
    root = os.path.join(base, "shared")
    parent = os.path.join(root, "w")
    grant = os.path.join(parent, "sub")
    os.makedirs(grant)
    os.chmod(root, 0o755)
    os.chmod(parent, 0o777)
    d = start(grant_roots=(root,))
    sb = sandbox(pb, "r1", ["sh", "-c", "ls %s > /sandbox/listed; exec sleep 1000" % grant])
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {"read_only": [grant]}})
    create(d, sb)
    listed = os.path.join(upper(base, "r1"), "sandbox", "listed")
    assert wait(lambda: os.path.exists(listed), 30)
    d.call("StopSandbox", pb.StopSandboxRequest(sandbox_id="r1"), pb.StopSandboxResponse)
    assert ready(d, "r1").reason == "Stopped"
    os.unlink(listed)
    os.rename(grant, os.path.join(parent, "old"))
    os.symlink("/etc", grant)
    code, msg = d.refused("StartSandbox", pb.StartSandboxRequest(sandbox_id="r1"), pb.StartSandboxResponse)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "outside every --grant-root" in msg, msg
    time.sleep(1)
    assert not os.path.exists(listed), open(listed).read()
    assert ready(d, "r1").reason == "Stopped"
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="r1"), pb.DeleteSandboxResponse).deleted


def test_a_grant_made_a_link_out_of_the_grant_roots_after_the_check_is_refused_by_mxc_oci(env, pb):  # noqa: F811
    """The driver judges a grant against --grant-root by path; mxc-oci resolves it again when it
    binds (at Create, after the image's resolution and hold). A grant made a link to /etc in
    between (here exactly there: an --mxc-oci wrapper swaps it just before `mxc-oci create`) is
    refused by mxc-oci on the source as resolved, by descriptor (MXC_OCI_BIND_ROOTS: the grant
    roots and the supervisor): nothing of the sandbox is left, /etc was never bound."""
    start, base = env
    root = os.path.join(base, "shared")
    grant = os.path.join(root, "data")
    os.makedirs(grant, 0o755)
    d = start(extra=["--mxc-oci", swapping_mxc_oci(base, "s3", grant, "/etc")], grant_roots=(root,))
    for lst in ("read_only", "read_write"):
        code, msg = create_swapped(d, pb, "s3", "ls %s > /sandbox/listed" % grant, grant, lst)
        assert code == grpc.StatusCode.INTERNAL and "mounts[" in msg and "MXC_OCI_BIND_ROOTS" in msg, (lst, msg)
        state = os.path.join(base, "state")
        assert os.listdir(os.path.join(state, "sandboxes")) == [] and os.listdir(os.path.join(state, "run")) == [], lst
    os.unlink(grant)
    os.mkdir(grant, 0o755)
    with open(os.path.join(grant, "f"), "w") as f:
        f.write("granted")
    # written aside and renamed: the redirection makes the file before cat writes it (a loaded CI
    # read it empty)
    sb = sandbox(pb, "s4", ["sh", "-c", "cat %s/f > /sandbox/read.part && mv /sandbox/read.part /sandbox/read; "
                                        "exec sleep 1000" % grant])
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {"read_only": [grant]}})
    create(d, sb)  # inside the root: bound, the supervisor too
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "s4"), "sandbox", "read")), 30)
    with open(os.path.join(upper(base, "s4"), "sandbox", "read")) as f:
        assert f.read() == "granted"
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="s4"), pb.DeleteSandboxResponse).deleted


# the escape suite's probes (tests/helper), as tests/oci/test_oci.py runs them in an mxc-oci container
PROBES = {
    "unshare_user": "EPERM", "clone_newuser": "EPERM", "mount_tmpfs": "EPERM",
    "mount_proc": "EPERM", "fsopen": "EPERM", "open_tree": "EPERM", "pivot_root": "EPERM",
    "chroot_escape": "EPERM", "dotdot": "contained", "keyctl": "EPERM", "bpf": "EPERM",
    "perf_event_open": "EPERM", "userfaultfd": "EPERM", "io_uring_setup": "EPERM", "kexec_load": "EPERM",
    "init_module": "EPERM", "open_by_handle_at": "EPERM", "reboot": "EPERM", "acct": "EPERM", "swapon": "EPERM",
    "tiocsti": None, "mknod": "EPERM", "socket raw": "EPERM", "socket packet": "EPERM",
}


WRITES = ["/proc/sys/kernel/hostname", "/proc/sysrq-trigger", "/proc/sys/vm/drop_caches", "/sys/fs/cgroup/cgroup.procs",
          "/sys/fs/cgroup/pids/cgroup.procs", "/sys/fs/cgroup/memory/release_agent"]


def test_escape_suite_probes_inside_a_driver_sandbox(env, pb):  # noqa: F811
    """A workload in a driver-made sandbox is contained as any mxc-oci container: the escape
    suite's syscall probes, a host process (kill, ptrace), a host file, /proc/sys, sysrq and the
    cgroup hierarchy, from the sandbox's root."""
    start, base = env
    d = start()
    host = subprocess.Popen(["sleep", "1000"])
    secret = os.path.join(base, "host-secret")
    with open(secret, "w") as f:
        f.write("host-only\n")
    try:
        verbs = " ".join(v for v in PROBES if " " not in v)  # the two with an argument: after the loop
        script = ("for v in %s; do mxc-test-helper $v; done; mxc-test-helper socket raw; mxc-test-helper socket packet; "
                  "mxc-test-helper kill %d 9; mxc-test-helper ptrace_attach %d; mxc-test-helper read %s; "
                  "for t in %s; do mxc-test-helper write $t 1; done; "
                  "mkdir /sys/fs/cgroup/mxc-osd-escape 2>/dev/null && echo mkdir: ok || echo mkdir: refused; "
                  "echo done) > /sandbox/escape 2>&1; exec sleep 1000") % (verbs, host.pid, host.pid, secret,
                                                                       " ".join(WRITES))
        create(d, sandbox(pb, "e1", ["sh", "-c", "(" + script]))
        out_file = os.path.join(upper(base, "e1"), "sandbox", "escape")
        assert wait(lambda: os.path.exists(out_file) and "done" in open(out_file).read(), 30)
        out = open(out_file).read()
        got = dict(l.split(": ", 1) for l in out.splitlines() if ": " in l)
        for verb, want in PROBES.items():
            name = verb.split()[0]
            if want is None:
                assert got.get(name) != "ok", (verb, got.get(name))
            elif name != "socket":
                assert got.get(name, "").split()[0:1] == [want], (verb, got.get(name), out)
        assert [l.split(": ", 1)[1].split()[0] for l in out.splitlines() if l.startswith("socket: ")] == \
            ["EPERM", "EPERM"], out
        assert got["kill"].split()[0] == "ESRCH" and got["ptrace_attach"].split()[0] in ("ESRCH", "EPERM"), out
        assert got["read"].split()[0] in ("ENOENT", "EACCES") and "host-only" not in out, out
        # /proc/sys, sysrq and the host's cgroup hierarchy (tests/oci/test_oci_escape.py's targets)
        writes = [l.split(": ", 1)[1].split()[0] for l in out.splitlines() if l.startswith("write: ")]
        assert len(writes) == len(WRITES) and all(w in ("EROFS", "EACCES", "EPERM", "ENOENT") for w in writes), out
        assert got["mkdir"] == "refused" and not os.path.exists("/sys/fs/cgroup/mxc-osd-escape"), out
        assert host.poll() is None
        d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="e1"), pb.DeleteSandboxResponse)
    finally:
        host.kill()
        host.wait()



def test_set_uid_binaries_and_the_runtime_s_binary_inside_a_driver_sandbox(env, pb):  # noqa: F811
    """tests/oci/test_oci_escape.py's set-uid and runtime-binary probes (its code, imported), in a
    driver-made sandbox.  Its workload is the sandbox's root (the supervisor's uid), holding mxc-oci's
    three default capabilities and not CAP_SETUID: a set-uid-root helper in the image, and one owned
    by the host's root in a host directory driver_config grants read-only, each leave it the same uid
    0 with no capability beyond those it held (every mount nosuid, no_new_privs, the bounding set);
    it cannot make a set-uid file of its own (seccomp refuses the mode bit).  /proc/self/exe cannot
    be written and no process of the sandbox is mxc-oci, podman or the driver."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oci"))
    from test_oci_escape import RUNTIME_PROBE, assert_gained_nothing, assert_runtime_untouched, status_fields
    start, base = env
    d = start()
    suid = os.path.join(base, "suid")
    os.mkdir(suid, 0o755)
    shutil.copy(HELPER, os.path.join(suid, "helper-suid"))
    os.chown(os.path.join(suid, "helper-suid"), 0, 0)
    os.chmod(os.path.join(suid, "helper-suid"), 0o4755)
    script = ("(echo PLAIN; mxc-test-helper status; cp /bin/mxc-test-helper /sandbox/own; "
              "chmod 4755 /sandbox/own && echo chmod: ok || echo chmod: refused; echo ROOTFS; ls -l /bin/helper-suid; "
              "/bin/helper-suid status; echo BIND; ls -l %s/helper-suid; %s/helper-suid status; echo EXE; %s; "
              "echo done) > /sandbox/probes 2>&1; exec sleep 1000" % (suid, suid, RUNTIME_PROBE))
    assert "'" not in script and '"' not in script  # the stand-in reads the command back by sed
    sb = sandbox(pb, "u1", ["sh", "-c", script])
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {"read_only": [suid]}})
    create(d, sb)
    out_file = os.path.join(upper(base, "u1"), "sandbox", "probes")
    assert wait(lambda: os.path.exists(out_file) and "done" in open(out_file).read(), 30)
    out = open(out_file).read()
    plain, rest = out.split("PLAIN\n", 1)[1].split("ROOTFS\n", 1)
    rootfs, rest = rest.split("BIND\n", 1)
    bind, exe = rest.split("EXE\n", 1)
    # CAP_AUDIT_WRITE, CAP_KILL, CAP_NET_BIND_SERVICE (mxc-oci spec's default), nothing else
    three = (1 << 29) | (1 << 5) | (1 << 10)
    assert_gained_nothing(plain, uid="0", caps=three)
    held = int(status_fields(plain)["CapPrm"][0], 16)
    assert rootfs.startswith("-rwsr-xr-x") and bind.startswith("-rwsr-xr-x"), out  # set-uid, as made
    assert_gained_nothing(rootfs, uid="0", caps=held)
    assert_gained_nothing(bind, uid="0", caps=held)
    assert_runtime_untouched(exe, ("mxc-oci", "podman", "mxc-openshell-driver"))
    assert "chmod: refused" in plain and not os.stat(os.path.join(upper(base, "u1"), "sandbox", "own")).st_mode & 0o6000
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="u1"), pb.DeleteSandboxResponse).deleted


def test_driver_config_egress_reaches_its_host_alone_and_refusals_are_audited(env, pb, world, monkeypatch):  # noqa: F811
    """driver_config's network rules govern a driver-made sandbox's egress: its allowed host answers
    through the sandbox's proxy, another host is refused, and the refusal is in the audit.

    NETWORK SAFETY: tests/integration/test_proxy.py's world: this process (and so the driver and
    its mxc-oci) moves into a "host" network namespace the test made, the origins listen in an
    "internet" namespace the test made, names resolve from the test's hosts file."""
    if not os.access("/usr/bin/curl", os.X_OK):
        pytest.skip("needs curl")
    start, base = env
    monkeypatch.setenv("MXC_PROXY_HOSTS_FILE", world["hosts"])
    conf = os.path.join(base, "driver.toml")
    with open(conf, "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "/usr/bin/mxc-exec"\negress_proxy = true\n')
    d = start(extra=["--config", conf])
    # no quote in the script: the stand-in supervisor reads the command back by sed (above)
    curl = "curl -sS --max-time 10 -o /dev/null -w %s_%%{http_code} http://%s:8080/ 2>/dev/null || echo _refused; echo"
    script = ("(%s; %s; echo done) > /sandbox/egress 2>&1; exec sleep 1000"
              % (curl % ("ALLOWED", "api.example.test"), curl % ("OTHER", "other.test")))
    sb = sandbox(pb, "w1", ["sh", "-c", script])
    # the host's /usr granted read-only: curl and its libraries (as tests/oci/test_oci_network.py binds it)
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {"read_only": ["/usr"]},
                                           "network_policies": {
                                               "r": {"endpoints": [{"host": "api.example.test", "port": 8080}]}}})
    create(d, sb)
    out_file = os.path.join(upper(base, "w1"), "sandbox", "egress")
    assert wait(lambda: os.path.exists(out_file) and "done" in open(out_file).read(), 60)
    lines = open(out_file).read().splitlines()
    assert lines[0] == "ALLOWED_200" and lines[1] in ("OTHER_403", "OTHER_000_refused") and lines[2] == "done", lines
    audit = os.path.join(base, "state", "oci", "w1", "proxy-audit.jsonl")
    recs = [json.loads(line) for line in open(audit).read().splitlines()]
    assert any(r["disposition"] == "denied" and r["dst_endpoint"]["hostname"] == "other.test" for r in recs), recs
    assert any(r["disposition"] == "allowed" and r["dst_endpoint"]["hostname"] == "api.example.test" for r in recs), recs
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="w1"), pb.DeleteSandboxResponse).deleted


PROVIDER_WORKLOAD = r"""
echo "PLACEHOLDER=$GITHUB_TOKEN"
curl -sS --max-time 10 -o /dev/null -w "BOUND %{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" https://api.example.test:8443/repos/x
curl -sS --max-time 10 -o /dev/null -w "OUTSIDE %{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" https://api.example.test:8443/user
curl -sS --max-time 10 -o /dev/null -w "OTHER %{http_code}\n" http://other.test:8080/ 2>/dev/null || echo "OTHER refused"
echo done
"""


def test_driver_config_provider_placeholder_is_substituted_for_its_host_alone(env, pb, world, monkeypatch):  # noqa: F811
    """Issue 37's must-show 2, providers: driver_config names a provider of the driver's --config
    ([mxc.providers.github], its token in the driver's own environment); the sandbox gets the
    placeholder, its request to the provider's endpoint reaches the origin with the real secret,
    the same placeholder elsewhere and another host are refused, and the audit names the
    credential. The secret is never in the sandbox, its output, the driver's state or the audit.

    NETWORK SAFETY: tests/integration/test_proxy.py's world (test-made namespaces, hosts file);
    the HTTPS origin (a test CA the proxy trusts) listens in its "internet" namespace."""
    if not os.access("/usr/bin/curl", os.X_OK):
        pytest.skip("needs curl")
    from test_proxy import WEB, in_internet
    from test_proxy_tls import SECRET, Origin, make_ca
    start, base = env
    pki = make_ca(str(world["tmp"] / "pki"), "mxc test CA")
    with in_internet(world):
        origin = Origin(WEB, 8443, pki)
    monkeypatch.setenv("MXC_PROXY_HOSTS_FILE", world["hosts"])
    monkeypatch.setenv("MXC_PROXY_UPSTREAM_CA", pki["ca"])
    monkeypatch.setenv("MXC_TEST_OSD_GH", SECRET)  # the driver's environment: token_env reads it there
    conf = os.path.join(base, "driver.toml")
    with open(conf, "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "/usr/bin/mxc-exec"\negress_proxy = true\n\n'
                '[mxc.providers.github]\ntoken_env = "MXC_TEST_OSD_GH"\nenv = "GITHUB_TOKEN"\n'
                'endpoints = ["api.example.test:8443/repos/"]\nrevision = 3\n'
                '[mxc.providers.unlisted]\ntoken_env = "MXC_TEST_OSD_GH"\nenv = "OTHER_TOKEN"\n'
                'endpoints = ["other.test:443"]\nrevision = 1\n')
    scripts = os.path.join(base, "scripts")  # the workload, granted read-only (the stand-in takes no quotes)
    os.mkdir(scripts, 0o755)
    with open(os.path.join(scripts, "w.sh"), "w") as f:
        f.write(PROVIDER_WORKLOAD)
    try:
        d = start(extra=["--config", conf])
        policy = {"version": 1, "filesystem_policy": {"read_only": ["/usr", scripts]},
                  "network_policies": {"r": {"endpoints": [{"host": "api.example.test", "port": 8443}]}}}
        # refusals first, each naming the provider, nothing made
        for names, word in ((["nope"], "providers[0] nope is not configured"),
                            (["unlisted"], "providers[0] unlisted has an endpoint network_policies do not allow: "
                                           "other.test:443"),
                            (["github", "github"], "providers[1] github is named twice"),
                            ("github", "must be a list")):
            bad = sandbox(pb, "p0", SLEEP)
            bad.spec.template.driver_config.update(dict(policy, providers=names))
            code, msg = d.refused("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest(sandbox=bad),
                                  pb.ValidateSandboxCreateResponse)
            assert code == grpc.StatusCode.INVALID_ARGUMENT and word in msg, (names, msg)
        assert os.listdir(os.path.join(base, "state", "sandboxes")) == []
        sb = sandbox(pb, "p1", ["sh", "-c", "sh %s/w.sh > /sandbox/out 2>&1; exec sleep 1000" % scripts])
        sb.spec.environment["GITHUB_TOKEN"] = "given-by-the-gateway"  # the provider's placeholder wins
        sb.spec.template.driver_config.update(dict(policy, providers=["github"]))
        create(d, sb)
        out_file = os.path.join(upper(base, "p1"), "sandbox", "out")
        assert wait(lambda: os.path.exists(out_file) and "done" in open(out_file).read(), 60), \
            open(out_file).read() if os.path.exists(out_file) else "no output"
        text = open(out_file).read()
        lines = text.splitlines()
        assert "PLACEHOLDER=mxc:cred:github:3" in lines, lines
        assert "BOUND 200" in lines and "OUTSIDE 403" in lines, lines
        assert "OTHER 403" in lines or "OTHER refused" in lines, lines
        assert SECRET not in text
        # the origin got the secret in place of the placeholder, on the bound path alone
        assert any("Bearer " + SECRET in h and h.startswith("GET /repos/x ") for h in origin.heads), origin.heads
        assert not any("mxc:cred" in h for h in origin.heads), origin.heads
        assert not any(h.startswith("GET /user ") for h in origin.heads), origin.heads
        # the sandbox's processes never hold it: the stand-in supervisor's environment neither
        pid = json.loads(subprocess.run([MXC_OCI, "--root", os.path.join(base, "state", "oci"), "state", "p1"],
                                        capture_output=True, text=True).stdout)["pid"]
        with open("/proc/%d/environ" % pid, "rb") as f:
            assert SECRET.encode() not in f.read()
        # the audit names the credential, never the secret; the refusals are in it
        audit = os.path.join(base, "state", "oci", "p1", "proxy-audit.jsonl")
        atext = open(audit).read()
        assert SECRET not in atext
        recs = [json.loads(line) for line in atext.splitlines()]
        assert any(r.get("credential") == "github" and r["disposition"] == "allowed" for r in recs), recs
        assert any(r["disposition"] == "denied" and r["reason"] == "credential-path" for r in recs), recs
        assert any(r["disposition"] == "denied" and r["dst_endpoint"]["hostname"] == "other.test" for r in recs), recs
        # nothing the driver or mxc-oci wrote holds the secret (the record keeps the provider's name)
        for root, _, files in os.walk(os.path.join(base, "state")):
            if "/upper" in root or "/rootfs" in root:
                continue
            for name in files:
                if name == "layer.img":  # the writable layer's file system: what /upper holds
                    continue
                with open(os.path.join(root, name), "rb") as f:
                    assert SECRET.encode() not in f.read(), os.path.join(root, name)
        # Stop and Start: the secret read again for the new mxc-oci create, substituted again
        assert d.call("StopSandbox", pb.StopSandboxRequest(sandbox_id="p1"), pb.StopSandboxResponse) is not None
        os.unlink(out_file)
        d.call("StartSandbox", pb.StartSandboxRequest(sandbox_id="p1"), pb.StartSandboxResponse)
        assert wait(lambda: os.path.exists(out_file) and "done" in open(out_file).read(), 60)
        assert "BOUND 200" in open(out_file).read().splitlines()
        assert sum("Bearer " + SECRET in h and h.startswith("GET /repos/x ") for h in origin.heads) == 2
        assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="p1"), pb.DeleteSandboxResponse).deleted
    finally:
        origin.close()


def test_the_supervisor_reaches_its_gateway_on_the_node_s_loopback_alone(env, pb, world, monkeypatch):  # noqa: F811
    """--gateway-endpoint http://127.0.0.1:8080/ (the node's loopback): the driver adds that endpoint
    to every sandbox's governed egress and tells mxc-oci it alone may be named
    (MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS): a sandbox without network rules of its own reaches the
    gateway, and nothing else on the node (another port on loopback, the node's address); a tenant's
    driver_config naming another node-local endpoint is still refused, creating nothing.

    NETWORK SAFETY: test_proxy's world: this process (and so the driver and its mxc-oci) moves into a
    "host" namespace the test made, whose loopback and address serve 8080 (the stand-in gateway) and
    note every connection (host_hits)."""
    if not os.access("/usr/bin/curl", os.X_OK):
        pytest.skip("needs curl")
    from test_proxy import HOST_ADDR
    start, base = env
    monkeypatch.setenv("MXC_PROXY_HOSTS_FILE", world["hosts"])
    monkeypatch.delenv("MXC_OCI_ALLOW_NODE_LOCAL", raising=False)
    monkeypatch.delenv("MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS", raising=False)
    conf = os.path.join(base, "driver.toml")
    with open(conf, "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "/usr/bin/mxc-exec"\negress_proxy = true\n')
    d = start(extra=["--config", conf], endpoint="http://127.0.0.1:8080/")
    reqs = d.call("GetGatewayListenerRequirements", pb.GetGatewayListenerRequirementsRequest(),
                  pb.GetGatewayListenerRequirementsResponse)
    assert [r.exact_bind_address for r in reqs.requirements] == ["127.0.0.1:8080"]
    curl = "curl -sS --max-time 10 -o /dev/null -w %s_%%{http_code} %s 2>/dev/null || echo _refused; echo"
    script = ("(%s; %s; %s; echo done) > /sandbox/gw 2>&1; exec sleep 1000"
              % (curl % ("GW", "$OPENSHELL_ENDPOINT"), curl % ("PORT", "http://127.0.0.1:8081/"),
                 curl % ("NODE", "http://%s:8080/" % HOST_ADDR)))
    sb = sandbox(pb, "g1", ["sh", "-c", script])
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {"read_only": ["/usr"]}})
    create(d, sb)
    out_file = os.path.join(upper(base, "g1"), "sandbox", "gw")
    assert wait(lambda: os.path.exists(out_file) and "done" in open(out_file).read(), 60)
    lines = open(out_file).read().splitlines()
    assert lines[0] == "GW_200" and lines[1] in ("PORT_403", "PORT_000_refused") and \
        lines[2] in ("NODE_403", "NODE_000_refused") and lines[3] == "done", lines
    assert world["host_hits"] == ["127.0.0.1"]
    # a tenant naming the node's loopback on another port: mxc-oci refuses it, the driver undoes the create
    bad = sandbox(pb, "g2", SLEEP)
    bad.spec.template.driver_config.update({"version": 1, "network_policies": {
        "r": {"endpoints": [{"host": "127.0.0.1", "port": 8081}]}}})
    code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=bad), pb.CreateSandboxResponse)
    assert code == grpc.StatusCode.INTERNAL and '"127.0.0.1:8081" reaches loopback' in msg, msg
    assert sorted(os.listdir(os.path.join(base, "state", "sandboxes"))) == ["g1"]
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="g1"), pb.DeleteSandboxResponse).deleted
    assert world["host_hits"] == ["127.0.0.1"]


def test_a_create_that_fails_late_leaves_nothing(env, pb, store):  # noqa: F811
    """mxc-oci refusing the create (after the record, the image's hold, the overlay and the bundle
    were made): the refusal names it, and everything made is taken down again."""
    start, base = env
    failing = os.path.join(base, "mxc-oci-failing")
    with open(failing, "w") as f:
        f.write('#!/bin/sh\nfor a; do [ "$a" = create ] && { printf "\\033[31mmxc-oci: refused for the test\\n" >&2; '
                'exit 1; }; done\nexec %s "$@"\n' % MXC_OCI)
    os.chmod(failing, 0o755)
    d = start(extra=["--mxc-oci", failing])
    code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=sandbox(pb, "f1", SLEEP)),
                          pb.CreateSandboxResponse)
    # the log's bytes reach the gateway with their control bytes made '?' (review of issue 37)
    assert code == grpc.StatusCode.INTERNAL and "mxc-oci create f1 failed: ?[31mmxc-oci: refused for the test" in msg, msg
    assert "\x1b" not in msg
    state = os.path.join(base, "state")
    assert os.listdir(os.path.join(state, "sandboxes")) == [] and os.listdir(os.path.join(state, "run")) == []
    assert os.listdir(os.path.join(state, "work")) == [] and mounts_under(state) == []
    assert wait(lambda: loops_of(base) == []), loops_of(base)  # the layer was made, and went with the rest
    assert podman_mounts(store) == ""


def loops_of(base):
    """The loop devices whose backing file lies under base (other tests' and the host's aside)."""
    out = []
    for dev in os.listdir("/sys/block"):
        try:
            with open(os.path.join("/sys/block", dev, "loop", "backing_file")) as f:
                if f.read().startswith(base + "/"):
                    out.append(dev)
        except OSError:
            pass
    return out


def test_a_sandbox_filling_its_layer_gets_enospc_and_another_create_succeeds(env, pb, store):  # noqa: F811
    """Review of issue 37 (a), the writable layer: each sandbox's upper layer is a file system of
    its own (a sparse ext4 image of --layer-size on a loop device), so a sandbox writing without
    end gets ENOSPC inside at its cap, and the state's file system (here a 128 MiB tmpfs: the
    reproduction, where the uncapped upper layer filled it and another tenant's Create failed with
    ENOSPC) keeps room for every other sandbox. The layer survives Stop and Start; Delete leaves
    no loop device, mount or file."""
    start, base = env
    state = os.path.join(base, "state")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128m,mode=0700", "mxc-osd-small", state], check=True)
    try:
        d = start(extra=["--layer-size", "32Mi"])
        fill = ["sh", "-c", "busybox dd if=/dev/zero of=/sandbox/big bs=1048576 count=200 2>/sandbox/dd.err; "
                            "echo $? > /sandbox/rc; exec sleep 1000"]
        create(d, sandbox(pb, "q1", fill))
        rc = os.path.join(upper(base, "q1"), "sandbox", "rc")
        assert wait(lambda: os.path.exists(rc) and os.path.getsize(rc) > 0, 60)
        with open(os.path.join(upper(base, "q1"), "sandbox", "dd.err")) as f:
            assert "No space left on device" in f.read()
        assert open(rc).read().strip() != "0"
        assert os.path.getsize(os.path.join(upper(base, "q1"), "sandbox", "big")) < 32 << 20
        img = os.stat(os.path.join(state, "work", "q1", "layer.img"))
        assert img.st_size == 32 << 20 and img.st_blocks * 512 <= 32 << 20  # sparse, never past its size
        layer = os.path.join(state, "work", "q1", "layer")
        assert os.stat(layer).st_dev != os.stat(state).st_dev and len(loops_of(base)) == 1
        opts = [ln.split()[5] for ln in mounts_under(layer) if ln.split()[4] == layer]
        assert opts and "nosuid" in opts[0] and "nodev" in opts[0], opts
        # another tenant's Create still succeeds, and it writes
        create(d, sandbox(pb, "q2", SLEEP))
        assert wait(lambda: ready(d, "q2").status == "True")
        assert wait(lambda: os.path.exists(os.path.join(upper(base, "q2"), "sandbox", "ran")))
        assert len(loops_of(base)) == 2
        # Stop and Start keep the layer (and its mount: the same file system)
        assert ready(d, "q1").status == "True"
        d.call("StopSandbox", pb.StopSandboxRequest(sandbox_id="q1"), pb.StopSandboxResponse)
        os.unlink(rc)
        d.call("StartSandbox", pb.StartSandboxRequest(sandbox_id="q1"), pb.StartSandboxResponse)
        assert wait(lambda: ready(d, "q1").status == "True")
        assert wait(lambda: os.path.exists(rc) and os.path.getsize(rc) > 0, 60)
        assert os.path.exists(os.path.join(upper(base, "q1"), "sandbox", "big"))
        # Delete: no loop device, mount or file left
        for sid in ("q1", "q2"):
            assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id=sid), pb.DeleteSandboxResponse).deleted
        assert os.listdir(os.path.join(state, "work")) == [] and os.listdir(os.path.join(state, "run")) == []
        assert mounts_under(os.path.join(state, "work")) == [] and mounts_under(os.path.join(state, "run")) == []
        assert wait(lambda: loops_of(base) == []), loops_of(base)
        d.stop()
    finally:
        _leave_nothing(base, store)
        subprocess.run(["umount", "-l", state], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def test_without_loop_devices_creates_are_refused_never_run_uncapped(env, pb, store):  # noqa: F811
    """Loop devices unavailable (here /dev/loop-control hidden by a socket bound over it, in a mount
    namespace the test made): the driver says so at start, and refuses every Create precisely,
    making nothing; it runs uncapped layers only when its operator says --layer-size none. A
    --layer-size that is not a size is refused at start."""
    start, base = env
    hide = os.path.join(base, "not-a-loop-control")
    sk = socket.socket(socket.AF_UNIX)
    sk.bind(hide)
    sk.close()
    d = start(extra=["--layer-size", "64Mi"])
    d.stop()
    plain = list(d.args)
    d.args = ["unshare", "-m", "--propagation", "private", "--", "sh", "-c",
              'mount --bind "$0" /dev/loop-control && exec "$@"', hide, *d.args]
    d.start()
    code, msg = d.refused("CreateSandbox", pb.CreateSandboxRequest(sandbox=sandbox(pb, "u1", SLEEP)),
                          pb.CreateSandboxResponse)
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "loop devices are unavailable here (/dev/loop-control" in msg, msg
    assert "--layer-size none" in msg
    state = os.path.join(base, "state")
    assert os.listdir(os.path.join(state, "sandboxes")) == [] and os.listdir(os.path.join(state, "work")) == []
    d.stop()
    d.args = plain[:-2] + ["--layer-size", "none"]  # the operator's explicit choice: uncapped, on the state's fs
    d.start()
    create(d, sandbox(pb, "u2", SLEEP))
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "u2"), "sandbox", "ran")))
    assert not os.path.exists(os.path.join(state, "work", "u2", "layer.img")) and loops_of(base) == []
    assert d.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="u2"), pb.DeleteSandboxResponse).deleted
    d.stop()
    for bad in ("1Ki", "lots", "17Ti"):
        r = subprocess.run([DRIVER, "--socket", os.path.join(base, "run", "x.sock"), "--state-dir", state,
                            "--layer-size", bad], capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "--layer-size %s:" % bad in r.stderr, r.stderr


def test_a_sandbox_made_before_layers_starts_and_deletes_as_it_was(env, pb):  # noqa: F811
    """A sandbox recorded before the capped layer (its upper at STATE/work/ID/upper, no layer/):
    Start mounts the rootfs over that upper again (uncapped, as it was made), and Delete removes it."""
    start, base = env
    d = start(extra=["--layer-size", "none"])
    create(d, sandbox(pb, "o1", SLEEP))
    assert wait(lambda: os.path.exists(os.path.join(upper(base, "o1"), "sandbox", "ran")))
    d.call("StopSandbox", pb.StopSandboxRequest(sandbox_id="o1"), pb.StopSandboxResponse)
    d.stop()
    work = os.path.join(base, "state", "work", "o1")
    subprocess.run(["umount", os.path.join(base, "state", "run", "o1", "rootfs")], check=True)
    for sub in ("upper", "work"):  # the layout of before
        os.rename(os.path.join(work, "layer", sub), os.path.join(work, sub))
    os.rmdir(os.path.join(work, "layer"))
    os.unlink(os.path.join(work, "upper", "sandbox", "ran"))
    d2 = start()
    d2.call("StartSandbox", pb.StartSandboxRequest(sandbox_id="o1"), pb.StartSandboxResponse)
    assert wait(lambda: ready(d2, "o1").status == "True")
    assert wait(lambda: os.path.exists(os.path.join(work, "upper", "sandbox", "ran")))
    assert not os.path.exists(os.path.join(work, "layer")) and loops_of(base) == []
    assert d2.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="o1"), pb.DeleteSandboxResponse).deleted
    assert os.listdir(os.path.join(base, "state", "work")) == [] and mounts_under(os.path.join(base, "state")) == []
