"""What Kubernetes' CRI gives a pod's container that a pod pair by ctr does not (tests/oci/test_cri.py
found it): an `mqueue` mount at /dev/mqueue while the container joins the pod's IPC namespace by
path.  The pod's IPC namespace belongs to the sandbox container's user namespace, not to this
container's: its init cannot mount that mqueue, so mxc-oci (host root, in the pod's namespaces) makes
it and passes it as a tree, as it does a pod's sysfs.  The host's IPC namespace joined by path is
refused (its message queues are the host's).
"""
import os

from test_oci import oci  # noqa: F401  (the fixture)


def _first(oci):  # noqa: F811
    a = oci.bundle(["sh", "-c", "touch /dev/mqueue/podq && exec sleep 1000"])
    pidfile = os.path.join(oci.base, "pid-a")
    rc, _, err = oci.create("pod-a", a, "--pid-file", pidfile)
    assert rc == 0, err
    assert oci("start", "pod-a")[0] == 0
    return int(open(pidfile).read())


def _join_ipc(path):
    def mutate(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "ipc":
                n["path"] = path
        assert [m for m in c["mounts"] if m["type"] == "mqueue"]   # the spec's (and the CRI's) /dev/mqueue
    return mutate


def test_mqueue_of_the_pod_s_ipc_namespace_joined_by_path(oci):  # noqa: F811
    pa = _first(oci)
    b = oci.bundle(["sh", "-c", "for i in $(seq 300); do test -e /dev/mqueue/podq && break; sleep 0.1; done; "
                    "ls /dev/mqueue; grep -c ' /dev/mqueue ' /proc/self/mountinfo"], _join_ipc("/proc/%d/ns/ipc" % pa))
    rc, out, err = oci("run", "--bundle", b, "pod-b")
    assert rc == 0, err
    assert out.split() == ["podq", "1"], out     # the pod's queue, in the pod's mqueue
    assert oci("delete", "--force", "pod-a")[0] == 0


def test_mqueue_of_the_host_s_ipc_namespace_is_refused(oci):  # noqa: F811
    b = oci.bundle(["ls", "/dev/mqueue"], _join_ipc("/proc/1/ns/ipc"))
    rc, _, err = oci.create("c1", b)
    assert rc != 0 and "mqueue" in err and "the host's" in err, err
