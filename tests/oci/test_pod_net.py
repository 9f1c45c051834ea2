"""A pod's network namespace, as the CRI gives one (made by the runtime's caller, `ip netns add`
here, owned by the host's user namespace, joined by path by every container of the pod):
  - ports below 1024: the container root's CAP_NET_BIND_SERVICE counts only in a network namespace
    its own user namespace owns, so mxc-oci sets the pod's own net.ipv4.ip_unprivileged_port_start
    to 0 when the config grants that capability (containerd's enable_unprivileged_ports writes the
    same); the host's value never changes; without the capability nothing is written;
  - net.ipv4.ping_group_range "0 2147483647" (every gid: containerd's enable_unprivileged_icmp)
    is read as the container's own gids: the host gids its gid map gives it are written (in its own
    network namespace: its own gids), and an ICMP echo socket opens for its root.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_pod_net.py
"""
import os
import subprocess

import pytest

from test_oci import add_helper, host_maps, oci  # noqa: F401  (the fixture)

PORT_START = "/proc/sys/net/ipv4/ip_unprivileged_port_start"
PING_RANGE = "/proc/sys/net/ipv4/ping_group_range"


@pytest.fixture
def pod_netns():
    """A pod's network namespace as the CRI makes one: the host's user namespace owns it; lo up."""
    name = "mxc-podnet-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


def _in_netns(name, path):
    return subprocess.run(["ip", "netns", "exec", name, "cat", path], capture_output=True, text=True,
                          check=True).stdout.split()


def _join(path, drop_bind=False):
    def mutate(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = path
        if drop_bind:
            c["process"]["capabilities"] = {k: [x for x in v if x != "CAP_NET_BIND_SERVICE"]
                                            for k, v in c["process"]["capabilities"].items()}
    return mutate


HTTPD_80 = ("httpd -p 127.0.0.1:80 -h /www || exit 3; for i in $(seq 100); do "
            "wget -qO- http://127.0.0.1:80/index.html && exit 0; sleep 0.1; done; exit 1")


def _www(b):
    os.makedirs(os.path.join(b, "rootfs", "www"))
    with open(os.path.join(b, "rootfs", "www", "index.html"), "w") as f:
        f.write("pod-port-80\n")


def test_port_80_binds_in_a_pod_s_network_namespace(oci, pod_netns):  # noqa: F811
    host_before = open(PORT_START).read()
    assert _in_netns(pod_netns, PORT_START) == ["1024"]
    b = oci.bundle(["sh", "-c", HTTPD_80], _join("/run/netns/" + pod_netns))
    _www(b)
    rc, out, err = oci("run", "--bundle", b, "p80")
    assert rc == 0, (out, err)
    assert out == "pod-port-80\n", out
    assert _in_netns(pod_netns, PORT_START) == ["0"]   # the pod's own namespace
    assert open(PORT_START).read() == host_before       # never the host's


def test_port_80_binds_in_the_first_container_s_network_namespace(oci):  # noqa: F811
    """A pod made of mxc containers alone (the second joins the first's network namespace, which the
    first container's user namespace owns): the member's root is not that owner either."""
    host_before = open(PORT_START).read()
    a = oci.bundle(["sleep", "60"])
    pidfile = os.path.join(oci.base, "pid-first")
    assert oci.create("first", a, "--pid-file", pidfile)[0] == 0
    assert oci("start", "first")[0] == 0
    pa = int(open(pidfile).read())
    b = oci.bundle(["sh", "-c", HTTPD_80], _join("/proc/%d/ns/net" % pa))
    _www(b)
    rc, out, err = oci("run", "--bundle", b, "member80")
    assert rc == 0, (out, err)
    assert out == "pod-port-80\n", out
    rc, out, err = oci("exec", "first", "cat", PORT_START)
    assert rc == 0 and out.split() == ["0"], (out, err)
    assert open(PORT_START).read() == host_before
    assert oci("delete", "--force", "first")[0] == 0


def test_without_net_bind_service_the_pod_s_ports_stay_privileged(oci, pod_netns):  # noqa: F811
    host_before = open(PORT_START).read()
    b = oci.bundle(["sh", "-c", HTTPD_80], _join("/run/netns/" + pod_netns, drop_bind=True))
    _www(b)
    rc, out, err = oci("run", "--bundle", b, "p80-nocap")
    assert rc == 3, (rc, out, err)                     # httpd: bind: Permission denied
    assert _in_netns(pod_netns, PORT_START) == ["1024"]
    assert open(PORT_START).read() == host_before


def test_a_config_s_own_port_start_is_the_config_s(oci, pod_netns):  # noqa: F811
    def mutate(c):
        _join("/run/netns/" + pod_netns)(c)
        c["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "500"}
    b = oci.bundle(["cat", PORT_START], mutate)
    rc, out, err = oci("run", "--bundle", b, "p500")
    assert rc == 0, err
    assert out.split() == ["500"]


ICMP = "cat /proc/sys/net/ipv4/ping_group_range; mxc-test-helper socket icmp; id -G"


@pytest.mark.parametrize("where", ["pod", "own"])
def test_ping_group_range_of_every_gid_is_the_container_s_own(oci, pod_netns, where):  # noqa: F811
    host_before = open(PING_RANGE).read()

    def mutate(c):
        if where == "pod":
            _join("/run/netns/" + pod_netns)(c)
        c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 2147483647"}
    b = oci.bundle(["sh", "-c", ICMP + "; sleep 60"], mutate)
    add_helper(b)
    pidfile = os.path.join(oci.base, "pid-icmp")
    assert oci.create("icmp", b, "--pid-file", pidfile)[0] == 0
    assert oci("start", "icmp")[0] == 0
    pid = int(open(pidfile).read())
    base = host_maps(pid)[0][1]
    out = ""
    for _ in range(100):
        out = open(os.path.join(b, "out")).read()
        if len(out.splitlines()) >= 3:
            break
        subprocess.run(["sleep", "0.1"])
    lines = out.splitlines()
    # inside: its own gids (0-65535 of its range); in the pod's namespace, the host's view of them
    assert lines[0].split() == ["0", "65535"], out
    assert lines[1] == "socket: ok", out
    if where == "pod":
        assert _in_netns(pod_netns, PING_RANGE) == [str(base), str(base + 65535)]
    assert open(PING_RANGE).read() == host_before
    assert oci("delete", "--force", "icmp")[0] == 0


def test_ping_group_range_of_every_gid_with_a_split_gid_map_is_refused(oci, pod_netns):  # noqa: F811
    base = 1500000000

    def mutate(c):
        _join("/run/netns/" + pod_netns)(c)
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": base, "size": 65536}]
        c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": base, "size": 1000},
                                     {"containerID": 1000, "hostID": base + 5000, "size": 1000}]
        c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 2147483647"}
    b = oci.bundle(["true"], mutate)
    rc, _, err = oci("run", "--bundle", b, "icmp-split")
    assert rc != 0 and "ping_group_range" in err and "one interval" in err, err
    assert _in_netns(pod_netns, PING_RANGE) == ["1", "0"]
