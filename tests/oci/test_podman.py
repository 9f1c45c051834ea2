"""Podman 4.3 (Debian), unmodified, runs containers on mxc-oci: run --rm, run -d + exec + stop +
rm, a volume, -it through the console socket.  An image made here by `podman import` of a
busybox-static rootfs; nothing is pulled.  Everything Podman keeps lives in this test's own
directory (--root, --runroot, --tmpdir); the runtime keeps its default --root, /run/mxc-oci
(Podman's cleanup process calls `delete` without the --runtime-flag options).

What the test sets, and why (docs/oci.md "Podman"):
  - vfs storage: an overlay mount cannot itself be idmapped, and mxc-oci maps the image onto the
    container's range with an idmapped mount; a directory rootfs can be.
  - --cgroups=disabled (mxc-oci makes no cgroup of the container's own yet), which Podman 4.3
    grants only to runtimes it knows by name (crun, krun; runtime_supports_nocgroups for another
    name was not honoured here): the runtime is declared under the name crun, its path mxc-oci.
  - a read-only tmpfs at /sys/fs/cgroup (Podman's own cgroup mount is refused: no cgroup yet),
    --network none, ulimits within this machine's hard limits, no default sysctls.
"""
import os
import shutil
import subprocess

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
    yield from podman_env.session("mxc-podman-test-", "vfs", no_pids_limit=True)


def test_podman_run_rm_is_root_inside_on_the_range(podman):
    r = podman("run", "--rm", "--cidfile", os.path.join(podman.base, "cid1"), *OPTS, "localhost/mxc-bb:1", "sh",
               "-c", "id -u; cat /proc/self/uid_map")
    lines = r.stdout.split("\n")
    assert lines[0] == "0"
    cid, hid, n = (int(x) for x in lines[1].split())
    assert (cid, n) == (0, 65536) and hid >= 2 ** 31
    # --rm deletes it through mxc-oci (Podman's cleanup process, after run returns)
    cid = open(os.path.join(podman.base, "cid1")).read().strip()
    assert wait_until(lambda: gone(cid), 60)


def test_podman_detached_exec_stop_rm(podman):
    cid = podman("run", "-d", "--name", "s1", *OPTS, "localhost/mxc-bb:1", "sleep", "1000").stdout.strip()
    assert not gone(cid)
    r = podman("exec", "s1", "sh", "-c", "id -u; cat /proc/1/cmdline")
    assert r.stdout.split("\n")[0] == "0" and r.stdout.split("\n")[1].startswith("sleep\x001000")
    assert "Up" in podman("ps", "-a", "--filter", "name=s1").stdout
    podman("stop", "-t", "1", "s1")
    assert "Exited" in podman("ps", "-a", "--filter", "name=s1").stdout
    podman("rm", "s1")
    assert wait_until(lambda: gone(cid), 60)


def test_podman_volume_write_lands_as_the_range(podman):
    vol = os.path.join(podman.base, "vol")
    os.makedirs(vol)
    os.chmod(vol, 0o777)
    r = podman("run", "--rm", *OPTS, "-v", "%s:/vol" % vol, "localhost/mxc-bb:1", "sh", "-c",
               "echo hi > /vol/f; cat /proc/self/uid_map")
    hid = int(r.stdout.split()[1])
    st = os.stat(os.path.join(vol, "f"))
    assert st.st_uid == hid and st.st_gid == hid and st.st_uid != 0


def test_podman_tty_through_the_console_socket(podman):
    """-it: the container's process has a terminal of its own devpts, handed to conmon through the
    console socket; what it writes there reaches Podman's attached client.  The terminal's name and
    a marker are also written into a volume: on a loaded machine Podman's attach relay returned an
    empty stdout now and then (rc 0; seen with the test code of the last stop as well, never on a
    quiet machine), so the container's own view is the check that does not depend on its timing."""
    out = os.path.join(podman.base, "tty-out")
    os.makedirs(out)
    os.chmod(out, 0o777)
    r = subprocess.run(["script", "-qec", " ".join(podman.cmd + ["run", "--rm", "-it"] + OPTS +
                                                   ["-v", "%s:/out" % out, "localhost/mxc-bb:1", "sh", "-c",
                                                    "'tty > /out/tty; tty; echo tty-ok; echo ok > /out/done'"]),
                        "/dev/null"], capture_output=True, text=True, env=podman.env, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert open(os.path.join(out, "tty")).read() == "/dev/pts/0\n"
    assert open(os.path.join(out, "done")).read() == "ok\n"
    if r.stdout:  # when the relay delivered it, it is the terminal's output
        assert "/dev/pts/0" in r.stdout and "tty-ok" in r.stdout, r.stdout


def test_podman_uidmap_onto_local_accounts_is_refused(podman):
    """--uidmap 0:1:65536 (issue 34, finding 3): Podman passes it as the config's own uidMappings, which
    would make container uids the host's local accounts (uid 1 upward, the owners of their homes):
    refused by mxc-oci naming the mapping; --uidmap onto ids no one has still runs."""
    r = podman("run", "--rm", *OPTS, "--uidmap", "0:1:65536", "--gidmap", "0:1500000000:65536",
               "localhost/mxc-bb:1", "true", check=False)
    assert r.returncode != 0 and "linux.uidMappings[0]: host ids 1..65536 include local account" in r.stderr, \
        r.stdout + r.stderr
    r = podman("run", "--rm", *OPTS, "--uidmap", "0:1500000000:65536", "--gidmap", "0:1500000000:65536",
               "localhost/mxc-bb:1", "cat", "/proc/self/uid_map")
    assert r.stdout.split() == ["0", "1500000000", "65536"], r.stdout + r.stderr


def test_podman_annotation_opening_the_node_s_loopback_is_refused(podman):
    """--annotation io.mxc.network allowing 127.0.0.1:PORT (issue 34, finding 4): the container's proxy
    dials from the node, so the annotation is refused naming the entry (the operator's allow is
    MXC_OCI_ALLOW_NODE_LOCAL=1 in the runtime's environment, not set here)."""
    net = '{"defaultPolicy":"block","allowedHosts":["127.0.0.1:8080"]}'
    csv = '"%s"' % ("io.mxc.network=" + net).replace('"', '""')  # podman reads --annotation as a CSV field
    r = podman("run", "--rm", *OPTS, "--annotation", "io.mxc.version=1", "--annotation", csv,
               "localhost/mxc-bb:1", "true", check=False)
    assert r.returncode != 0 and 'network.allowedHosts[0] "127.0.0.1:8080" reaches loopback' in r.stderr, \
        r.stdout + r.stderr


def test_podman_pod_is_one_identity(podman):
    """`podman pod create` (an infra container, the others joining its IPC, UTS and network
    namespaces by path, no user namespace listed): the members join the infra container's user
    namespace (docs/oci.md "A pod is one identity"), one range for the pod, each its own PID
    namespace.  The pod's network is none: no host network is made."""
    podman("pod", "create", "--name", "p1", "--network", "none")
    try:
        podman("run", "-d", "--pod", "p1", "--name", "pa", *OPTS[2:], "localhost/mxc-bb:1", "sleep", "1000")
        r = podman("run", "--rm", "--pod", "p1", *OPTS[2:], "localhost/mxc-bb:1", "sh", "-c",
                   "cat /proc/self/uid_map; cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
        ra = podman("exec", "pa", "cat", "/proc/self/uid_map")
        assert r.stdout.split()[:3] == ra.stdout.split(), r.stdout + ra.stdout    # one range
        assert r.stdout.split()[0] == "0" and int(r.stdout.split()[1]) >= 2 ** 31
        assert "sleep 1000" not in r.stdout, r.stdout                            # its own PID namespace
    finally:
        podman("pod", "rm", "-f", "-t", "0", "p1", check=False)
