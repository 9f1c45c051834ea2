"""Podman 4.3 (Debian), unmodified, WITH cgroups on mxc-oci (docs/oci.md "cgroups"): the container
in the cgroup Podman names (cgroup_manager = "cgroupfs": systemd is not PID 1 here), `--pids-limit`
and `--memory` enforced, `podman pause` / `podman unpause` freezing it, Podman's own `cgroup` mount
the container's read-only view, and the cgroup gone with `podman rm`.  Everything else as
tests/oci/test_podman.py sets it up (its own storage, the runtime declared under the name crun,
vfs, a busybox image made by `podman import`), without --cgroups=disabled and without the tmpfs
over /sys/fs/cgroup.  Podman's default on a v1 host is the host's cgroup namespace (its cgroup mount
is then a read-only bind of the container's own directories); `--cgroupns private` is tested too
(fresh cgroup mounts of the container's own namespace).
"""
import os
import shutil
import time

import pytest

from conftest import wait_until
import podman_env
from podman_env import gone
from test_oci import BUSYBOX

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("podman") or not os.access(BUSYBOX, os.X_OK)
                                or not os.path.isdir("/sys/fs/cgroup/pids"),
                                reason="needs root, podman, busybox-static and cgroup v1 (this host's)")

OPTS = ["--network", "none"]


@pytest.fixture(scope="module")
def podman():
    yield from podman_env.session("mxc-podman-cg-test-", "vfs", no_pids_limit=False, in_base=True)


def host_cgroup(pid, hierarchy):
    for line in open("/proc/%d/cgroup" % pid):
        _, ctrls, path = line.rstrip("\n").split(":", 2)
        if hierarchy in ctrls.split(","):
            return path
    return None


@pytest.mark.parametrize("cgroupns", ["host", "private"])
def test_podman_limits_are_enforced_in_the_container_s_own_cgroup(podman, cgroupns):
    cid = podman("run", "-d", "--name", "lim", "--cgroupns", cgroupns, "--pids-limit", "12", "--memory", "64m",
                 *OPTS, "localhost/mxc-bb:1", "sleep", "1000").stdout.strip()
    pid = int(podman("inspect", "--format", "{{.State.Pid}}", "lim").stdout.strip())
    path = host_cgroup(pid, "pids")
    assert path and path != "/" and cid in path, path
    assert open("/sys/fs/cgroup/pids%s/pids.max" % path).read().strip() == "12"
    assert open("/sys/fs/cgroup/memory%s/memory.limit_in_bytes" % path).read().strip() == str(64 << 20)
    # inside: its own view of its cgroup, read-only; a fork bomb stopped at the limit
    r = podman("exec", "lim", "sh", "-c", "cat /sys/fs/cgroup/pids/pids.max; ls /sys/fs/cgroup/pids/..; "
               "(for i in $(seq 30); do sleep 1000 & done; echo all-spawned) 2>&1; "
               "mkdir /sys/fs/cgroup/pids/x 2>&1; echo end", check=False)
    assert r.stdout.splitlines()[0] == "12", r.stdout + r.stderr
    assert "all-spawned" not in r.stdout and "Read-only file system" in r.stdout, r.stdout
    assert "libpod_parent" not in r.stdout and "mxc" not in r.stdout  # nothing above its own cgroup
    podman("rm", "-f", "-t", "0", "lim")
    assert wait_until(lambda: gone(cid), 60)
    assert wait_until(lambda: not os.path.exists("/sys/fs/cgroup/pids" + path), 60)


def test_podman_memory_limit_kills_a_hog(podman):
    r = podman("run", "--rm", "--memory", "32m", *OPTS, "localhost/mxc-bb:1", "sh", "-c",
               "a=xxxxxxxx; while true; do a=$a$a; done", check=False, timeout=240)
    assert r.returncode == 137, r.stdout + r.stderr


def test_podman_pause_and_unpause(podman):
    podman("run", "-d", "--name", "pz", *OPTS, "localhost/mxc-bb:1", "sh", "-c",
           "i=0; while true; do i=$((i+1)); echo $i > /tmp/n; done")

    def count():
        r = podman("exec", "pz", "cat", "/tmp/n", check=False)
        return int(r.stdout.strip() or 0) if r.returncode == 0 else 0
    assert wait_until(lambda: count() > 0, 60)
    pid = int(podman("inspect", "--format", "{{.State.Pid}}", "pz").stdout.strip())
    podman("pause", "pz")
    assert "Paused" in podman("ps", "-a", "--filter", "name=pz").stdout
    freezer = "/sys/fs/cgroup/freezer%s" % host_cgroup(pid, "freezer")
    assert open(freezer + "/freezer.state").read().strip() == "FROZEN"
    mnt = podman("mount", "pz").stdout.strip()  # vfs: the counter read through the host's view of the rootfs
    n = os.path.join(mnt, "tmp", "n")
    c1 = open(n).read()
    time.sleep(0.5)  # an observation window: nothing may move in it
    assert open(n).read() == c1
    podman("unpause", "pz")
    assert wait_until(lambda: open(n).read() != c1, 60)
    assert "Up" in podman("ps", "-a", "--filter", "name=pz").stdout
    podman("rm", "-f", "-t", "0", "pz")
