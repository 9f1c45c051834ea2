"""Podman 4.3 (Debian), unmodified, with its DEFAULT storage driver (overlay) runs containers on
mxc-oci: Podman mounts the image's layers as an overlay and hands mxc-oci that mount as root.path;
mxc-oci re-makes it from idmapped layers (docs/oci.md "An overlay rootfs").  The other settings
are test_podman.py's, for the reasons given there; its vfs tests stay as they are.
"""
import os
import shutil

import pytest

from conftest import wait_until
import podman_env
from podman_env import gone
from test_oci import BUSYBOX

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("podman") or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root, podman and busybox-static (scripts/deps.sh)")

OPTS = ["--network", "none", "--cgroups=disabled", "--tmpfs", "/sys/fs/cgroup:ro,notmpcopyup"]


@pytest.fixture(scope="module")
def podman():
    yield from podman_env.session("mxc-podman-ovl-test-", "overlay", no_pids_limit=True)


def test_podman_overlay_run_is_root_inside_on_the_range(podman):
    r = podman("run", "--rm", *OPTS, "localhost/mxc-bb:1", "sh", "-c",
               "id -u; stat -c %u /bin/busybox; echo hi > /etc/new; stat -c %u /etc/new; cat /proc/self/uid_map")
    lines = r.stdout.split("\n")
    # root inside; the image's files (root's on disk) look root's; what root writes is root's inside
    assert lines[:3] == ["0", "0", "0"], r.stdout + r.stderr
    cid, hid, n = (int(x) for x in lines[3].split())
    assert (cid, n) == (0, 65536) and hid >= 2 ** 31


def test_podman_overlay_writes_land_in_the_container_s_upper_layer(podman):
    podman("run", "--name", "w1", *OPTS, "localhost/mxc-bb:1", "sh", "-c", "echo hi > /etc/written; mkdir /made")
    upper = podman("inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", "w1").stdout.strip()
    st = os.stat(os.path.join(upper, "etc", "written"))
    # the upper layer holds the image's own ids (as Podman's rootful storage does), never the range
    assert (st.st_uid, st.st_gid) == (0, 0)
    assert os.path.isdir(os.path.join(upper, "made"))
    # the image's layer is untouched, and a second container does not see the first's write
    r = podman("run", "--rm", *OPTS, "localhost/mxc-bb:1", "sh", "-c", "test -e /etc/written && echo seen || "
               "echo unseen")
    assert r.stdout.strip() == "unseen"
    podman("rm", "w1")


def test_podman_overlay_detached_exec_stop_rm(podman):
    cid = podman("run", "-d", "--name", "s1", *OPTS, "localhost/mxc-bb:1", "sleep", "1000").stdout.strip()
    assert not gone(cid)
    r = podman("exec", "s1", "sh", "-c", "id -u; touch /tmp/x; stat -c %u /tmp/x")
    assert r.stdout.split("\n")[:2] == ["0", "0"], r.stdout + r.stderr
    podman("stop", "-t", "1", "s1")
    podman("rm", "s1")
    assert wait_until(lambda: gone(cid), 60)


def test_podman_tmpfs_is_filled_from_the_image(podman):
    """Podman asks tmpcopyup for --tmpfs by default: the image's /bin copied into the tmpfs."""
    r = podman("run", "--rm", *OPTS, "--tmpfs", "/bin:exec", "localhost/mxc-bb:1", "sh", "-c",
               "grep ' /bin ' /proc/self/mounts | cut -d' ' -f3; ls /bin | grep -c .")
    fstype, n = r.stdout.split()[:2]
    assert fstype == "tmpfs" and int(n) > 10, r.stdout + r.stderr
