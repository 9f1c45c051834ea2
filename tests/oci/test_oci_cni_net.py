"""io.mxc.network in a pod whose network namespace CNI made (issue 29, docs/oci.md "Annotations",
src/oci/cninet.h): Kubernetes' CRI makes the pod's namespace with CNI (a veth eth0 with an address
and a default route to the node) and the pod's sandbox container joins it by path; that container
applies the policy there — rules inside the namespace, from outside, before its process runs — and
every app container joining the namespace shares it.

NETWORK SAFETY: the world of tests/integration/test_proxy.py (reused): this process moves into a
"host" network namespace the test made (the node: mxc-oci and its proxy run there; its own services
on 127.0.0.1:8080 and 192.0.2.1:8080), the origins listen on documentation-range addresses in an
"internet" namespace the test made, names resolve from a hosts file (no DNS query).  The "pod"
namespace is the test's too, with a veth to the node (198.18.0.0/24 and 2001:db8:c0::/64, the
benchmarking and documentation ranges), forwarding on in the test's node namespace only.  Every
packet goes to loopback or to an address inside those namespaces; nothing is sent anywhere else.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_cni_net.py
"""
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from conftest import serve_tcp, unique, wait_until
from test_oci import Oci, oci  # noqa: F401 (fixture)
from test_oci_network import NET, WORKLOAD, alive, annotate, bundle, origin, proxies_of  # noqa: F401 (fixture)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from test_proxy import HOST_ADDR, OTHER, WEB, world  # noqa: E402,F401 (fixture)
from test_proxy_tls import SECRET  # noqa: E402

NODE4, POD4 = "198.18.0.1", "198.18.0.2"
NODE6, POD6 = "2001:db8:c0::1", "2001:db8:c0::2"
SANDBOX = {"io.kubernetes.cri.container-type": "sandbox"}
APP = {"io.kubernetes.cri.container-type": "container"}


def ns_sh(ns, *argv, check=True):
    return subprocess.run(["ip", "netns", "exec", ns] + list(argv), check=check, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def pod(world):  # noqa: F811
    """A pod's network namespace as CNI makes one: eth0 (a veth to the node, whose end is cni0-like),
    an address, a default route via the node; the node forwards (in its test namespace).  Yields its
    name; the namespace (and the veth with it) is deleted at the end."""
    name = unique("mxccni")
    subprocess.run(["ip", "netns", "add", name], check=True)
    host = world["host"]
    stop = threading.Event()
    servers = []
    try:
        ns_sh(host, "ip", "link", "add", "c" + name[-8:], "type", "veth", "peer", "name", "eth0", "netns", name)
        ns_sh(host, "ip", "addr", "add", NODE4 + "/24", "dev", "c" + name[-8:])
        ns_sh(host, "ip", "addr", "add", NODE6 + "/64", "dev", "c" + name[-8:], "nodad")
        ns_sh(host, "ip", "link", "set", "c" + name[-8:], "up")
        ns_sh(host, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward")  # the test's node namespace only
        ns_sh(world["far"], "ip", "route", "add", "198.18.0.0/24", "via", "192.0.2.1")
        ns_sh(name, "ip", "link", "set", "lo", "up")
        ns_sh(name, "ip", "addr", "add", POD4 + "/24", "dev", "eth0")
        ns_sh(name, "ip", "addr", "add", POD6 + "/64", "dev", "eth0", "nodad")
        ns_sh(name, "ip", "link", "set", "eth0", "up")
        ns_sh(name, "ip", "route", "add", "default", "via", NODE4)
        # the node's services on its pod-facing addresses (this thread is in the node's namespace)
        for addr in (NODE4, NODE6):
            t = threading.Thread(target=serve_tcp, args=(addr, 8080, stop, _answer), daemon=True)
            t.start()
            servers.append(t)
        t = threading.Thread(target=_dns, args=(stop,), daemon=True)  # the "cluster DNS" on the node
        t.start()
        servers.append(t)
        for u in ("http://%s:8080/" % NODE4, "http://[%s]:8080/" % NODE6):
            assert wait_until(lambda: ns_sh(name, "curl", "-sS", "-g", "--max-time", "2", "-o", "/dev/null", u,
                                            check=False).returncode == 0, timeout=30), u
        yield name
    finally:
        stop.set()
        for t in servers:
            t.join()
        subprocess.run(["ip", "netns", "del", name], check=False)


def _dns(stop):
    """Answers every UDP datagram to NODE4:53 with the same bytes (a resolver, as far as reachability goes)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((NODE4, 53))
    s.settimeout(0.2)
    try:
        while not stop.is_set():
            try:
                data, peer = s.recvfrom(512)
                s.sendto(data, peer)
            except socket.timeout:
                pass
    finally:
        s.close()


# a query to the node's resolver, bypassing the proxy (python3 from the host's /usr, bound in the containers)
DNS_QUERY = ("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3); "
             "s.sendto(b'q', ('%s', 53)); assert s.recv(16) == b'q'" % NODE4)


def _answer(c):
    try:
        c.recv(4096)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
    except OSError:
        pass
    c.close()


DIRECT = ["http://%s:8080/" % WEB, "http://%s:8080/" % HOST_ADDR, "http://%s:8080/" % NODE4,
          "http://[%s]:8080/" % NODE6]


def direct_script(tag):
    """Shell lines trying each DIRECT address bypassing any proxy: "<tag> <url> OK|FAIL"."""
    return "".join("curl -sS -g --max-time 5 --noproxy '*' -o /dev/null %s 2>/dev/null && echo %s-%d-OK || "
                   "echo %s-%d-FAIL\n" % (u, tag, i, tag, i) for i, u in enumerate(DIRECT)) + \
        "python3 -c \"%s\" 2>/dev/null && echo %s-DNS-OK || echo %s-DNS-FAIL\n" % (DNS_QUERY, tag, tag)


def in_pod(pod, extra=None):
    """A mutate joining the pod's network namespace by path (as containerd's CRI writes it)."""
    def m(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/run/netns/" + pod
        c["mounts"] = [x for x in c["mounts"] if x["type"] != "sysfs"]
        if extra:
            extra(c)
    return m


def baseline(pod):
    """Without mxc every DIRECT address answers from the pod (the rules are what stops them)."""
    for u in DIRECT:
        r = ns_sh(pod, "curl", "-sS", "-g", "--max-time", "5", "-o", "/dev/null", u, check=False)
        assert r.returncode == 0, (u, r.stderr)
    r = ns_sh(pod, "python3", "-c", DNS_QUERY, check=False)
    assert r.returncode == 0, r.stderr


def rules_of(pod):
    r = ns_sh(pod, "nft", "-j", "list", "ruleset")
    return json.loads(r.stdout)["nftables"]


def sandbox(oci, pod, net, cid="sb"):  # noqa: F811
    b = bundle(oci, ["sleep", "600"], annotate(net, **SANDBOX), mutate=in_pod(pod))
    rc, _, err = oci.create(cid, b)
    assert rc == 0, err
    return b


TAMPER = ("ip link set eth0 down 2>/dev/null && echo LINK-DOWN || echo LINK-REFUSED; "
          "ip route add 10.99.0.0/24 dev eth0 2>/dev/null && echo ROUTE-ADDED || echo ROUTE-REFUSED; "
          "nft flush ruleset 2>/dev/null && echo FLUSHED || echo FLUSH-REFUSED; "
          "nft delete table inet mxc_pod 2>/dev/null && echo DELETED || echo DELETE-REFUSED")


def test_governed_pod_reaches_only_its_host_through_the_sandbox_s_proxy(oci, world, origin, pod):  # noqa: F811
    baseline(pod)
    hits = len(world["host_hits"])
    sandbox(oci, pod, NET)
    d = os.path.join(oci.root, "sb")
    audit = os.path.join(d, "proxy-audit.jsonl")
    px = proxies_of(audit)
    assert len(px) == 1, px
    # the rules are in the pod's namespace before the sandbox's process runs; the proxy dials from the node's
    tables = [x["table"]["name"] for x in rules_of(pod) if "table" in x]
    assert tables == ["mxc_pod"], tables
    assert os.stat("/proc/%d/ns/net" % px[0]).st_ino == os.stat("/proc/self/ns/net").st_ino
    assert oci("start", "sb")[0] == 0
    # an app container of the pod, the same annotations as containerd passes them: the proxy, the placeholder
    app = bundle(oci, ["sh", "-c", WORKLOAD + direct_script("APP")], annotate(NET, **APP), mutate=in_pod(pod))
    rc, out, err = oci("run", "--bundle", app, "app")
    assert rc == 0, err
    lines = out.splitlines()
    assert "PLACEHOLDER=mxc:cred:github:3" in lines, lines
    assert "BOUND 200" in lines and "OUTSIDE 403" in lines, lines
    assert "OTHER 403" in lines and "PLAIN 403" in lines and "DIRECT refused" in lines, lines
    assert [l for l in lines if l.startswith("APP-")] == ["APP-%d-FAIL" % i for i in range(len(DIRECT))] + \
        ["APP-DNS-FAIL"], lines
    assert SECRET not in out
    assert any("Bearer " + SECRET in h and h.startswith("GET /repos/x ") for h in origin.heads), origin.heads
    assert len(world["host_hits"]) == hits  # the node's own services got nothing from the pod
    recs = [json.loads(l) for l in open(audit)]
    assert any(r["disposition"] == "denied" and r["dst_endpoint"]["hostname"] == "other.test" for r in recs), recs
    assert proxies_of(audit) == px  # the app applied nothing again
    # a member without the annotation: accepted, the pod's rules hold for it too
    bare = oci.bundle(["sh", "-c", direct_script("BARE")], mutate=in_pod(pod))
    rc, out, err = oci("run", "--bundle", bare, "bare")
    assert rc == 0, err
    assert out.split() == ["BARE-%d-FAIL" % i for i in range(len(DIRECT))] + ["BARE-DNS-FAIL"], out
    # another policy in the pod: refused
    other = bundle(oci, ["true"], annotate({"defaultPolicy": "block"}, **APP), mutate=in_pod(pod))
    rc, _, err = oci("run", "--bundle", other, "other")
    assert rc != 0 and "io.mxc.network" in err, err
    # delete: the proxy ends; the rules stay with the namespace (CNI deletes it with the pod)
    assert oci("delete", "--force", "sb")[0] == 0
    assert wait_until(lambda: not alive(px[0]), timeout=30), px
    assert [x["table"]["name"] for x in rules_of(pod) if "table" in x] == ["mxc_pod"]


@pytest.mark.parametrize("who", ["sandbox", "app", "user"])
def test_container_root_cannot_remove_the_pod_s_rules(oci, world, pod, who):  # noqa: F811
    """The pod's namespace is owned by the node's user namespace: the container's root (root of its own
    user namespace) has no capability over it.  mxc-oci never grants CAP_NET_ADMIN, and the baseline refuses
    a nested user namespace; "user" goes past both: a process with every capability in a user namespace of its
    own (as container root would be) in the pod's network namespace."""
    sandbox(oci, pod, {"defaultPolicy": "block"})
    assert oci("start", "sb")[0] == 0
    if who == "user":
        # the control: the same process in a network namespace of its own (owned by its user namespace) can
        ctl = subprocess.run(["unshare", "--user", "--map-root-user", "--net", "sh", "-c",
                              "ip link set lo up && ip route add 10.99.0.0/24 dev lo && echo ROUTE-ADDED; "
                              "nft add table inet t && nft flush ruleset && echo FLUSHED; "
                              "ip link set lo down && echo LINK-DOWN"],
                             capture_output=True, text=True, timeout=60)
        assert ctl.stdout.split() == ["ROUTE-ADDED", "FLUSHED", "LINK-DOWN"], ctl
        r = ns_sh(pod, "unshare", "--user", "--map-root-user", "sh", "-c", TAMPER)
        rc, out, err = r.returncode, r.stdout, r.stderr
    elif who == "sandbox":
        rc, out, err = oci("exec", "sb", "sh", "-c", TAMPER)
    else:
        b = bundle(oci, ["sh", "-c", TAMPER], annotate({"defaultPolicy": "block"}, **APP), mutate=in_pod(pod))
        rc, out, err = oci("run", "--bundle", b, "tamper")
    assert rc == 0, err
    assert out.split() == ["LINK-REFUSED", "ROUTE-REFUSED", "FLUSH-REFUSED", "DELETE-REFUSED"], (out, err)
    assert [x["table"]["name"] for x in rules_of(pod) if "table" in x] == ["mxc_pod"]
    assert "state UP" in ns_sh(pod, "ip", "link", "show", "eth0").stdout
    assert oci("delete", "--force", "sb")[0] == 0


def test_model_3_pod_keeps_only_loopback(oci, world, pod):  # noqa: F811
    baseline(pod)
    sandbox(oci, pod, {"defaultPolicy": "block"})
    assert oci("start", "sb")[0] == 0
    b = bundle(oci, ["sh", "-c", "echo PROXY=${HTTPS_PROXY:-none}\n" + direct_script("M3")],
               annotate({"defaultPolicy": "block"}, **APP), mutate=in_pod(pod))
    rc, out, err = oci("run", "--bundle", b, "app")
    assert rc == 0, err
    assert out.split() == ["PROXY=none"] + ["M3-%d-FAIL" % i for i in range(len(DIRECT))] + ["M3-DNS-FAIL"], out
    assert oci("delete", "--force", "sb")[0] == 0


def ns_fd_holders(pod):
    """Processes holding a descriptor of the pod's network namespace (mxc-oci's follower does)."""
    want = "net:[%d]" % os.stat("/run/netns/" + pod).st_ino
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            if any(os.readlink("/proc/%s/fd/%s" % (p, f)) == want for f in os.listdir("/proc/%s/fd" % p)):
                out.append(int(p))
        except OSError:
            continue
    return out


def thishost_set(pod):
    r = ns_sh(pod, "nft", "-j", "list", "set", "inet", "mxc", "thishost")
    return json.dumps(json.loads(r.stdout))


def test_model_1_pod_reaches_only_the_allowed_destination(oci, world, pod, monkeypatch):  # noqa: F811
    # the node's resolver allowed by name of its one address (the cluster DNS under model 1): an address of the
    # node, which an annotation reaches only with the node operator's allow (issue 34, finding 4; nodelocal.h)
    monkeypatch.setenv("MXC_OCI_ALLOW_NODE_LOCAL", "1")
    net = {"egress": {"default": "deny", "allow": [{"to": [{"cidr": "198.51.100.0/24"}],
                                                     "ports": [{"protocol": "tcp", "port": 8080}]},
                                                    {"to": [{"cidr": NODE4 + "/32"}],
                                                     "ports": [{"protocol": "udp", "port": 53}]}]}}
    baseline(pod)
    monkeypatch.delenv("MXC_OCI_ALLOW_NODE_LOCAL")  # without it, the pod's annotation is refused
    rc, _, err = oci.create("sb0", bundle(oci, ["true"], annotate(net, **SANDBOX), mutate=in_pod(pod)))
    assert rc != 0 and 'to[0].cidr "%s/32" reaches an address of this node' % NODE4 in err, err
    monkeypatch.setenv("MXC_OCI_ALLOW_NODE_LOCAL", "1")
    sandbox(oci, pod, net)
    assert oci("start", "sb")[0] == 0
    script = ("wget -q -T 5 -O - http://%s:8080/ >/dev/null 2>&1 && echo ALLOWED-OK || echo ALLOWED-FAIL; "
              "wget -q -T 5 -O - http://%s:8080/ >/dev/null 2>&1 && echo OTHER-OK || echo OTHER-FAIL\n"
              % (WEB, OTHER)) + direct_script("M1")
    b = bundle(oci, ["sh", "-c", script], annotate(net, **APP), mutate=in_pod(pod))
    rc, out, err = oci("run", "--bundle", b, "app")
    assert rc == 0, err
    # WEB:8080 and the node's udp/53 allowed; the node's other ports and addresses (this host's) and IPv6 never
    assert out.split() == ["ALLOWED-OK", "OTHER-FAIL", "M1-0-OK", "M1-1-FAIL", "M1-2-FAIL", "M1-3-FAIL",
                           "M1-DNS-OK"], out
    assert [x["table"]["name"] for x in rules_of(pod) if "table" in x] == ["mxc"]
    # an address the node gains after create, inside the broad allow: this host's, followed into the rules
    followers = ns_fd_holders(pod)
    assert len(followers) == 1, followers
    new = "198.51.100.77"
    stop = threading.Event()
    t = threading.Thread(target=serve_tcp, args=(new, 8080, stop, _answer), daemon=True)
    try:
        ns_sh(world["host"], "ip", "addr", "add", new + "/32", "dev", "lo")
        t.start()
        assert wait_until(lambda: new in thishost_set(pod), timeout=30), thishost_set(pod)  # (a test of the test)
        probe = bundle(oci, ["sh", "-c", "curl -sS --max-time 5 -o /dev/null http://%s:8080/ 2>/dev/null && "
                             "echo NEW-OK || echo NEW-FAIL" % new], annotate(net, **APP), mutate=in_pod(pod))
        rc, out, err = oci("run", "--bundle", probe, "probe")
        assert rc == 0 and out.split() == ["NEW-FAIL"], (out, err)
        assert wait_until(lambda: ns_sh(world["host"], "curl", "-sS", "--max-time", "5", "-o", "/dev/null",
                                        "http://%s:8080/" % new, check=False).returncode == 0, timeout=30)  # it answers
    finally:
        stop.set()
        if t.is_alive():
            t.join()
    assert oci("delete", "--force", "sb")[0] == 0
    assert wait_until(lambda: not any(alive(p) for p in followers), timeout=30), followers
    # the namespace outlives its sandbox container: a later first container's policy replaces the rules whole
    sandbox(oci, pod, {"defaultPolicy": "block"}, cid="sb2")
    assert [x["table"]["name"] for x in rules_of(pod) if "table" in x] == ["mxc_pod"]
    assert oci("delete", "--force", "sb2")[0] == 0


def test_who_may_apply_a_policy_to_a_pod_s_namespace(oci, world, pod):  # noqa: F811
    net = {"defaultPolicy": "block"}
    # an app container (the CRI says so) never applies one, even first
    b = bundle(oci, ["true"], annotate(net, **APP), mutate=in_pod(pod))
    rc, _, err = oci("run", "--bundle", b, "app")
    assert rc != 0 and "io.mxc.network" in err and "app container" in err, err
    assert not [x for x in rules_of(pod) if "table" in x]
    b = bundle(oci, ["true"], annotate(net, **{"io.kubernetes.cri-o.ContainerType": "container"}), mutate=in_pod(pod))
    rc, _, err = oci("run", "--bundle", b, "crio-app")  # CRI-O's annotation for the same
    assert rc != 0 and "io.mxc.network" in err and "app container" in err, err
    assert not [x for x in rules_of(pod) if "table" in x]
    # a namespace owned by another user namespace (whose root could remove the rules): refused
    holder = subprocess.Popen(["unshare", "--user", "--map-root-user", "--net", "sleep", "600"])
    try:
        path = "/proc/%d/ns/net" % holder.pid
        assert wait_until(lambda: os.readlink(path) != os.readlink("/proc/self/ns/net"), timeout=30)

        def other_ns(c):
            for n in c["linux"]["namespaces"]:
                if n["type"] == "network":
                    n["path"] = path
        b = bundle(oci, ["true"], annotate(net, **SANDBOX), mutate=in_pod(pod, other_ns))
        rc, _, err = oci("run", "--bundle", b, "foreign")
        assert rc != 0 and "io.mxc.network" in err and "another user namespace" in err, err
    finally:
        holder.kill()
        holder.wait()
    # a caller's loopback proxy (model 2) needs pasta's gateway: refused on a pod's namespace
    b = bundle(oci, ["true"], annotate({"defaultPolicy": "block", "proxy": {"url": "http://127.0.0.1:3128"}},
                                        **SANDBOX), mutate=in_pod(pod))
    rc, _, err = oci("run", "--bundle", b, "m2")
    assert rc != 0 and "io.mxc.network" in err, err
