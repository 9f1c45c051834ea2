"""A pod's member container (joining the first container's network namespace by path, as CRI's
containers join the pause container's) is one identity with it (that network namespace is owned by
the first container's user namespace: the member, listing none, joins that one and shares its
range) and gets what CRI and ctr send every container:
  - CAP_NET_RAW (in their default capabilities): a network namespace joined by path that is not the
    host's counts as the container's own for that rule; the host's, joined by path, is refused;
  - a sysfs at /sys: mxc-oci (host root, already in the pod's network namespace) makes it, read-only,
    and passes it like a bind tree.  With the host's network namespace joined it is refused.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_pod_member.py
"""
import os

from test_oci import add_helper, oci  # noqa: F401  (the fixture)


def _join_net(path):
    def mutate(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = path
        c["process"]["capabilities"]["bounding"].append("CAP_NET_RAW")
        c["process"]["capabilities"]["effective"].append("CAP_NET_RAW")
        c["process"]["capabilities"]["permitted"].append("CAP_NET_RAW")
    return mutate


def test_pod_member_with_net_raw_joins_the_pod_s_network(oci):  # noqa: F811
    a = oci.bundle(["httpd", "-f", "-p", "127.0.0.1:8080", "-h", "/www"])
    os.makedirs(os.path.join(a, "rootfs", "www"))
    with open(os.path.join(a, "rootfs", "www", "index.html"), "w") as f:
        f.write("pod-hello\n")
    pidfile = os.path.join(oci.base, "pid-a")
    assert oci.create("raw-a", a, "--pid-file", pidfile)[0] == 0
    assert oci("start", "raw-a")[0] == 0
    pa = int(open(pidfile).read())
    b = oci.bundle(["sh", "-c", "grep CapBnd /proc/self/status; ls /sys/class/net; touch /sys/x 2>&1; "
                    "mxc-test-helper socket raw; cat /proc/self/uid_map; for i in $(seq 300); do "
                    "wget -qO- http://127.0.0.1:8080/index.html && exit 0; sleep 0.1; done; exit 1"],
                   _join_net("/proc/%d/ns/net" % pa))
    add_helper(b)
    rc, out, err = oci("run", "--bundle", b, "raw-b")
    assert rc == 0, err
    bnd = int(out.split("\n")[0].split()[1], 16)
    assert bnd & (1 << 13)             # CAP_NET_RAW (13) in its bounding set, as asked
    assert out.endswith("pod-hello\n")
    # the pod's sysfs: its network devices (loopback only), not the host's; read-only
    assert out.split("\n")[1:3] == ["lo", "touch: /sys/x: Read-only file system"], out
    # ... and, one identity with the first (a network namespace owned by a live pod container's user
    # namespace, no user namespace listed: the member joins that one), its CAP_NET_RAW is the pod's
    # root's over the pod's network namespace: a raw socket opens there, as in the first container
    assert out.split("\n")[3] == "socket: ok", out
    with open("/proc/%d/uid_map" % pa) as f:
        assert out.split("\n")[4].split() == f.read().split(), out  # the first's range
    assert oci("delete", "--force", "raw-a")[0] == 0


def test_net_raw_on_the_host_s_network_joined_by_path_is_refused(oci):  # noqa: F811
    def mutate(c):
        _join_net("/proc/%d/ns/net" % os.getpid())(c)
        c["mounts"] = [m for m in c["mounts"] if m["type"] != "sysfs"]
    b = oci.bundle(["true"], mutate)
    rc, _, err = oci("run", "--bundle", b, "raw-host")
    assert rc != 0
    assert "CAP_NET_RAW" in err and "host" in err, err
    assert not os.path.exists(os.path.join(oci.root, "raw-host"))


def test_sysfs_on_the_host_s_network_joined_by_path_is_refused(oci):  # noqa: F811
    def mutate(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/proc/%d/ns/net" % os.getpid()
    b = oci.bundle(["true"], mutate)
    rc, _, err = oci("run", "--bundle", b, "sys-host")
    assert rc != 0
    assert "sysfs" in err and "host" in err, err
    assert not os.path.exists(os.path.join(oci.root, "sys-host"))


def test_pod_member_s_net_sysctl_is_written_in_the_pod_s_namespace(oci):  # noqa: F811
    """Podman's default (net.ipv4.ping_group_range) and a pod's sysctls on a network namespace
    joined by path: mxc-oci writes them in that namespace (the member's user namespace does not own
    it); the first container sees the value, the host's stays as it was; the host's namespace joined
    by path with a net.* sysctl is refused."""
    host_before = open("/proc/sys/net/ipv4/ping_group_range").read()
    a = oci.bundle(["sleep", "60"])
    pidfile = os.path.join(oci.base, "pid-s")
    assert oci.create("sys-a", a, "--pid-file", pidfile)[0] == 0
    assert oci("start", "sys-a")[0] == 0
    pa = int(open(pidfile).read())

    def member(c):
        _join_net("/proc/%d/ns/net" % pa)(c)
        c["mounts"] = [m for m in c["mounts"] if m["type"] != "sysfs"]
        c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 4242"}
    b = oci.bundle(["cat", "/proc/sys/net/ipv4/ping_group_range"], member)
    rc, out, err = oci("run", "--bundle", b, "sys-b")
    assert rc == 0, err
    assert out.split() == ["0", "4242"], out
    # written in the pod's namespace (the first container reads the same value there), as the
    # member's own gids: the pod's range, one identity with the first (docs/oci.md "A pod is one
    # identity")
    rc, out, err = oci("exec", "sys-a", "cat", "/proc/sys/net/ipv4/ping_group_range")
    assert rc == 0 and out.split() == ["0", "4242"], (out, err)
    assert open("/proc/sys/net/ipv4/ping_group_range").read() == host_before
    assert oci("delete", "--force", "sys-a")[0] == 0

    def host(c):
        member(c)
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/proc/%d/ns/net" % os.getpid()
        c["process"]["capabilities"] = {k: [x for x in v if x != "CAP_NET_RAW"]
                                        for k, v in c["process"]["capabilities"].items()}
    b = oci.bundle(["true"], host)
    rc, _, err = oci("run", "--bundle", b, "sys-host")
    assert rc != 0 and "linux.sysctl" in err and "host" in err, err
    assert open("/proc/sys/net/ipv4/ping_group_range").read() == host_before


def test_host_root_0700_host_path_is_unreadable_by_the_container_s_root(oci):  # noqa: F811
    """A hostPath volume owned by host root, mode 0700: the container's root is a uid of its range
    on the host, neither the owner nor holding CAP_DAC_OVERRIDE over the host's inode: unreadable,
    as for runc in a user-namespaced pod (hostUsers: false). docs/oci.md."""
    d = os.path.join(oci.base, "hostpath")
    os.makedirs(d)
    os.chmod(d, 0o700)
    with open(os.path.join(d, "secret"), "w") as f:
        f.write("host-secret\n")

    def mutate(c):
        c["mounts"].append({"destination": "/data", "type": "bind", "source": d, "options": ["rbind", "rw"]})
    b = oci.bundle(["sh", "-c", "id -u; cat /data/secret || echo unreadable; ls /data || echo unlisted"], mutate)
    rc, out, err = oci("run", "--bundle", b, "hostpath")
    assert rc == 0, err
    assert out.split() == ["0", "unreadable", "unlisted"], out
    assert "host-secret" not in out
