"""io.mxc.* annotations (issue 29, docs/oci.md "Annotations"): the MXC network policy of an OCI
container, applied in its network namespace before its process runs — governed egress through the
container's own mxc-proxy (allowed hosts, a credential placeholder substituted, refusals audited),
model 3, refusals naming the key, the pod rule, and no proxy left after delete.

NETWORK SAFETY: the world of tests/integration/test_proxy.py (reused): this process moves into a
"host" network namespace the test made, the origins listen on documentation-range addresses in an
"internet" namespace the test made, names resolve from a hosts file (no DNS query). The containers
have network namespaces of their own (loopback only). Nothing is sent anywhere else.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_network.py
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import wait_until
from test_oci import MXC_OCI, Oci, oci  # noqa: F401 (fixture)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from test_proxy import HOST_ADDR, WEB, in_internet, world  # noqa: E402,F401 (fixture)
from test_proxy_tls import SECRET, Origin, make_ca  # noqa: E402

CURL = "/usr/bin/curl"
pytestmark = pytest.mark.skipif(not os.access(CURL, os.X_OK), reason="needs curl")

NET = {"defaultPolicy": "block", "allowedHosts": ["api.example.test:8443"],
       "credentials": [{"name": "github", "revision": 3, "host": "api.example.test", "port": 8443,
                        "pathPrefix": "/repos/", "secretEnv": "MXC_TEST_GH_SECRET", "env": "GITHUB_TOKEN"}]}
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def annotate(network, version="1", **extra):
    a = {"io.mxc.version": version} if version is not None else {}
    if network is not None:
        a["io.mxc.network"] = network if isinstance(network, str) else json.dumps(network)
    a.update(extra)
    return a


def bundle(oci, args, annotations, mutate=None):
    """A busybox bundle with the host's /usr bound read-only (curl and its libraries)."""
    def m(c):
        c["mounts"].append({"destination": "/usr", "type": "bind", "source": "/usr",
                            "options": ["rbind", "ro", "nosuid", "nodev"]})
        c["annotations"] = annotations
        if mutate:
            mutate(c)
    b = oci.bundle(args, mutate=m)
    for link in ("lib", "lib64"):
        os.symlink("usr/" + link, os.path.join(b, "rootfs", link))
    return b


def proxies_of(audit_path):
    """mxc-proxy processes whose audit descriptor is this container's audit file."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            if open("/proc/%s/comm" % p).read().strip() != "mxc-proxy":
                continue
            if os.readlink("/proc/%s/fd/7" % p) == audit_path:
                out.append(int(p))
        except OSError:
            continue
    return out


def alive(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return "\nState:\tZ" not in f.read()
    except OSError:
        return False


@pytest.fixture
def origin(world, monkeypatch):  # noqa: F811
    """An HTTPS origin, api.example.test (WEB:8443), with a certificate of a test CA the proxy trusts."""
    pki = make_ca(str(world["tmp"] / "pki"), "mxc test CA")
    with in_internet(world):
        o = Origin(WEB, 8443, pki)
    monkeypatch.setenv("MXC_PROXY_HOSTS_FILE", world["hosts"])
    monkeypatch.setenv("MXC_PROXY_UPSTREAM_CA", pki["ca"])
    monkeypatch.setenv("MXC_TEST_GH_SECRET", SECRET)
    try:
        yield o
    finally:
        o.close()


WORKLOAD = r'''
echo "PLACEHOLDER=$GITHUB_TOKEN"
echo "PROXY=$HTTPS_PROXY"
curl -sS --max-time 10 -o /dev/null -w "BOUND %{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" https://api.example.test:8443/repos/x
curl -sS --max-time 10 -o /dev/null -w "OUTSIDE %{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" https://api.example.test:8443/user
curl -sS --max-time 10 -o /dev/null -w "OTHER %{http_connect}\n" https://other.test:8080/ 2>/dev/null
curl -sS --max-time 10 -o /dev/null -w "PLAIN %{http_code}\n" http://other.test:8080/
curl -sS --max-time 5 --noproxy '*' -o /dev/null -w "DIRECT %{http_code}\n" http://WEB:8080/ 2>/dev/null || echo "DIRECT refused"
'''.replace("WEB", WEB)


def test_governed_egress_reaches_only_its_host_with_the_placeholder_substituted(oci, world, origin):  # noqa: F811
    b = bundle(oci, ["sh", "-c", WORKLOAD + "exec sleep 600"], annotate(NET))
    rc, _, err = oci.create("g1", b)
    assert rc == 0, err
    d = os.path.join(oci.root, "g1")
    audit = os.path.join(d, "proxy-audit.jsonl")
    px = proxies_of(audit)
    assert len(px) == 1, px  # its own proxy, started before the process ran
    # the proxy runs in mxc-oci's namespaces, never the container's
    init = oci.state("g1")["pid"]
    assert os.stat("/proc/%d/ns/net" % px[0]).st_ino != os.stat("/proc/%d/ns/net" % init).st_ino
    assert os.stat("/proc/%d/ns/net" % px[0]).st_ino == os.stat("/proc/self/ns/net").st_ino
    rc, _, err = oci("start", "g1")
    assert rc == 0, err
    out_file = os.path.join(b, "out")
    assert wait_until(lambda: "DIRECT refused" in open(out_file).read(), timeout=90), open(out_file).read()
    lines = open(out_file).read().splitlines()
    assert "PLACEHOLDER=mxc:cred:github:3" in lines, lines
    assert any(l.startswith("PROXY=http://mxc:") and l.endswith("@127.0.0.1:3128/") for l in lines), lines
    assert "BOUND 200" in lines and "OUTSIDE 403" in lines, lines
    assert "OTHER 403" in lines and "PLAIN 403" in lines and "DIRECT refused" in lines, lines
    assert SECRET not in open(out_file).read()
    # the origin got the secret in place of the placeholder, on the bound path only
    assert any("Bearer " + SECRET in h and h.startswith("GET /repos/x ") for h in origin.heads), origin.heads
    assert not any("mxc:cred" in h for h in origin.heads), origin.heads
    # exec'd processes get the same proxy variables
    rc, out, err = oci("exec", "g1", "sh", "-c", "echo $HTTPS_PROXY $GITHUB_TOKEN")
    assert rc == 0 and out.split() == [l[6:] for l in lines if l.startswith("PROXY=")] + ["mxc:cred:github:3"], (out, err)
    # refusals audited, the secret never
    text = open(audit).read()
    assert SECRET not in text
    recs = [json.loads(l) for l in text.splitlines()]
    assert any(r.get("credential") == "github" and r["disposition"] == "allowed" for r in recs), recs
    assert any(r["disposition"] == "denied" and r["reason"] == "credential-path" for r in recs), recs
    assert any(r["disposition"] == "denied" and r["dst_endpoint"]["hostname"] == "other.test" for r in recs), recs
    # the state keeps the annotations, never the secret
    assert oci.state("g1")["annotations"]["io.mxc.version"] == "1"
    for root, _, files in os.walk(d):
        for f in files:
            assert SECRET.encode() not in open(os.path.join(root, f), "rb").read(), f
    # a pod member joining its network namespace with the same annotation: nothing applied again, and it
    # uses the same proxy with the same CA (bound from the applier's state) and placeholder
    def join(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/proc/%d/ns/net" % init
        c["mounts"] = [m for m in c["mounts"] if m["type"] != "sysfs"]
    mb = bundle(oci, ["sh", "-c", 'curl -sS --max-time 10 -o /dev/null -w "MEMBER %{http_code}\\n" '
                      '-H "Authorization: Bearer $GITHUB_TOKEN" https://api.example.test:8443/repos/member'],
                annotate(NET), mutate=join)
    rc, out, err = oci("run", "--bundle", mb, "g1-member")
    assert rc == 0 and out.strip() == "MEMBER 200", (out, err)
    assert any("Bearer " + SECRET in h and h.startswith("GET /repos/member ") for h in origin.heads)
    assert proxies_of(audit) == px
    # delete: the init dies, its proxy with it; nothing of it is left
    rc, _, err = oci("delete", "--force", "g1")
    assert rc == 0, err
    assert wait_until(lambda: not alive(px[0]), timeout=30), px
    assert not os.path.exists(d)


def test_model_3_annotation_blocks_every_connection(oci, world):  # noqa: F811
    script = ("echo PROXY=${HTTPS_PROXY:-none}; curl -sS --max-time 5 -o /dev/null "
              "-x http://127.0.0.1:3128 http://%s:8080/ 2>/dev/null || echo BLOCKED-PROXY; "
              "curl -sS --max-time 5 -o /dev/null http://%s:8080/ 2>/dev/null || echo BLOCKED-DIRECT") % (WEB, WEB)
    b = bundle(oci, ["sh", "-c", script], annotate({"defaultPolicy": "block"}))
    rc, out, err = oci("run", "--bundle", b, "m3")
    assert rc == 0, err
    assert out.split() == ["PROXY=none", "BLOCKED-PROXY", "BLOCKED-DIRECT"], out


def _no_netns(c):
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
    c["mounts"] = [m for m in c["mounts"] if m["type"] != "sysfs"]


BAD = {
    "unknown-key": (annotate({"defaultPolicy": "block"}, **{"io.mxc.networks": "{}"}), None, "io.mxc.networks"),
    "no-version": (annotate({"defaultPolicy": "block"}, version=None), None, "io.mxc.version"),
    "version-2": (annotate({"defaultPolicy": "block"}, version="2"), None, "io.mxc.version"),
    "not-json": (annotate("{allowedHosts: x"), None, "io.mxc.network"),
    "not-object": (annotate("[1]"), None, "io.mxc.network"),
    "unknown-field": (annotate({"defaultPolicy": "block", "bogus": 1}), None, "network.bogus"),
    "bad-host": (annotate({"defaultPolicy": "block", "allowedHosts": ["a b"]}), None, "io.mxc.network"),
    "host-ack": (annotate({"defaultPolicy": "allow", "allowLocalNetwork": True}), None, "host network"),
    "host-network": (annotate({"defaultPolicy": "block"}), _no_netns, "io.mxc.network"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_annotation_is_refused_naming_it(oci, case):
    ann, mutate, word = BAD[case]
    b = bundle(oci, ["true"], ann, mutate=mutate)
    rc, _, err = oci("create", "--bundle", b, "bad")
    assert rc != 0 and word in err and "annotations" in err, err
    assert not os.path.exists(os.path.join(oci.root, "bad"))


def test_a_pod_member_shares_the_applied_policy_and_may_not_change_it(oci, world):  # noqa: F811
    net = {"defaultPolicy": "block", "allowedHosts": ["api.example.test:8443"]}
    b = bundle(oci, ["sleep", "600"], annotate(net))
    rc, _, err = oci.create("pod", b)
    assert rc == 0, err
    pod_pid = oci.state("pod")["pid"]
    audit = os.path.join(oci.root, "pod", "proxy-audit.jsonl")
    assert len(proxies_of(audit)) == 1

    def join(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/proc/%d/ns/net" % pod_pid
        c["mounts"] = [m for m in c["mounts"] if m["type"] != "sysfs"]

    # the same policy: accepted, not applied again (one proxy), the member gets the pod's proxy variables
    m = bundle(oci, ["sh", "-c", "echo $HTTPS_PROXY"], annotate(net), mutate=join)
    rc, out, err = oci("run", "--bundle", m, "member")
    assert rc == 0, err
    want = [l for l in open(os.path.join(oci.root, "pod", "config.json")).read().split('"')
            if l.startswith("HTTPS_PROXY=")]
    assert out.strip() == want[0][len("HTTPS_PROXY="):], (out, want)
    assert len(proxies_of(audit)) == 1
    # another policy in the same namespace: refused
    other = bundle(oci, ["true"], annotate({"defaultPolicy": "block"}), mutate=join)
    rc, _, err = oci("run", "--bundle", other, "member2")
    assert rc != 0 and "io.mxc.network" in err and "joins" in err, err
    # a namespace made without a policy: a member cannot claim one there
    plain = oci.bundle(["sleep", "600"])
    rc, _, err = oci.create("plain", plain)
    assert rc == 0, err
    plain_pid = oci.state("plain")["pid"]

    def join_plain(c):
        join(c)
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/proc/%d/ns/net" % plain_pid
    late = bundle(oci, ["true"], annotate(net), mutate=join_plain)
    rc, _, err = oci("run", "--bundle", late, "member3")
    assert rc != 0 and "io.mxc.network" in err, err
    px = proxies_of(audit)
    for cid in ("pod", "plain"):
        assert oci("delete", "--force", cid)[0] == 0
    assert wait_until(lambda: not any(alive(p) for p in px), timeout=30), px


def test_model_1_egress_rules_reach_only_the_allowed_destination(oci, world):  # noqa: F811
    """Model 1 by annotation: pasta for the container's namespace (in mxc-oci's), the rules inside it:
    the allowed origin answers, another one in the same test internet does not."""
    from test_proxy import OTHER
    net = {"egress": {"default": "deny", "allow": [{"to": [{"cidr": WEB + "/32"}],
                                                     "ports": [{"protocol": "tcp", "port": 8080}]}]}}
    script = ("wget -q -T 5 -O - http://%s:8080/ >/dev/null 2>&1 && echo ALLOWED-OK || echo ALLOWED-FAIL; "
              "wget -q -T 5 -O - http://%s:8080/ >/dev/null 2>&1 && echo OTHER-OK || echo OTHER-FAIL") % (WEB, OTHER)
    b = bundle(oci, ["sh", "-c", script], annotate(net))
    rc, out, err = oci("run", "--bundle", b, "m1")
    assert rc == 0, err
    assert out.split() == ["ALLOWED-OK", "OTHER-FAIL"], (out, err)


# --------------------------------------------------------------------------------------------
# the node's own destinations (issue 34, finding 4): the proxy and pasta dial from the node, and under
# Kubernetes the annotation is a tenant's.  The world's "host" namespace (this process's) is the node:
# its loopback and HOST_ADDR serve 8080 and note every connection (world["host_hits"]).


def governed(*hosts):
    return {"defaultPolicy": "block", "allowedHosts": list(hosts)}


def model_1(cidr, **peer):
    return {"egress": {"default": "deny", "allow": [{"to": [dict({"cidr": cidr}, **peer)],
                                                      "ports": [{"protocol": "tcp", "port": 8080}]}]}}


NODE_LOCAL = {
    "loopback": (governed("127.0.0.1:8080"), 'network.allowedHosts[0] "127.0.0.1:8080" reaches loopback'),
    "loopback-cidr": (governed("api.example.test:8443", "127.0.0.0/8:8080"),
                      'network.allowedHosts[1] "127.0.0.0/8:8080" reaches loopback'),
    "zero": (governed("0.0.0.0:8080"), "reaches this host 0.0.0.0/8"),
    "v6-loopback": (governed("[::1]:8080"), "reaches loopback ::1"),
    "v4-mapped": (governed("[::ffff:127.0.0.1]:8080"), "reaches loopback 127.0.0.0/8"),
    "node-address": (governed("%s:8080" % HOST_ADDR), "reaches an address of this node"),
    "link-local": (governed("169.254.169.254:80"), "reaches link-local 169.254.0.0/16"),
    "link-local-v6": (governed("[fe80::1]:8080"), "reaches link-local fe80::/10"),
    "nat64-loopback": (governed("[64:ff9b::127.0.0.1]:8080"), "reaches loopback 127.0.0.0/8 as NAT64 IPv6"),
    "v4-mapped-cidr": (governed("::ffff:169.254.0.0/112"), "reaches link-local 169.254.0.0/16"),
    "everything": (governed("0.0.0.0/0:8080"), "reaches loopback 127.0.0.0/8"),
    "model-1-loopback": (model_1("127.0.0.1/32"), "network.egress.allow[0].to[0].cidr"),
    "model-1-node-address": (model_1(HOST_ADDR + "/32"), "reaches an address of this node"),
    "model-1-everything": (model_1("0.0.0.0/0", **{"except": ["127.0.0.0/8"]}), "reaches this host 0.0.0.0/8"),
    "model-1-default-allow": ({"egress": {"default": "allow"}}, "network.egress.default"),
}


@pytest.mark.parametrize("case", sorted(NODE_LOCAL))
def test_an_annotation_cannot_open_the_node_s_own_destinations(oci, world, case):  # noqa: F811
    """Loopback, "this host", link-local and the node's own addresses, in each form the engine would
    admit, refused at create naming the annotation and the entry, before anything runs."""
    net, why = NODE_LOCAL[case]
    b = bundle(oci, ["true"], annotate(net))
    rc, _, err = oci.create("nl", b)
    assert rc != 0 and "annotations: io.mxc.network: " in err and why in err, err
    assert "MXC_OCI_ALLOW_NODE_LOCAL=1" in err, err
    assert not os.path.exists(os.path.join(oci.root, "nl"))
    assert world["host_hits"] == []


@pytest.mark.parametrize("net", [governed("api.example.test:8443", "198.51.100.0/24:8080"),
                                 model_1("0.0.0.0/0", **{"except": ["0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16"]}),
                                 {"egress": {"default": "allow", "deny": [{"to": [{"cidr": "169.254.0.0/16"}]}]}}],
                         ids=["names-and-a-far-network", "model-1-carved-out", "model-1-default-allow-denying"])
def test_an_annotation_off_the_node_is_accepted(oci, world, net):  # noqa: F811
    b = bundle(oci, ["true"], annotate(net))
    rc, _, err = oci("run", "--bundle", b, "far")
    assert rc == 0, err


def test_the_operator_s_allow_lets_an_annotation_reach_the_node_s_loopback(oci, world, monkeypatch):  # noqa: F811
    """MXC_OCI_ALLOW_NODE_LOCAL=1 in mxc-oci's environment (the runtime entry's, never the container's):
    the same annotation is applied and the node's loopback answers through the container's proxy."""
    monkeypatch.setenv("MXC_OCI_ALLOW_NODE_LOCAL", "1")
    script = 'curl -sS --max-time 10 -o /dev/null -w "LOOP %{http_code}\\n" http://127.0.0.1:8080/'
    b = bundle(oci, ["sh", "-c", script], annotate(governed("127.0.0.1:8080")))
    rc, out, err = oci("run", "--bundle", b, "op")
    assert rc == 0 and out.split() == ["LOOP", "200"], (out, err)
    assert world["host_hits"] == ["127.0.0.1"]
    monkeypatch.setenv("MXC_OCI_ALLOW_NODE_LOCAL", "yes")
    rc, _, err = oci.create("op2", bundle(oci, ["true"], annotate(governed("127.0.0.1:8080"))))
    assert rc != 0 and "MXC_OCI_ALLOW_NODE_LOCAL=yes" in err, err


def test_the_operator_s_exact_endpoints_open_those_alone(oci, world, monkeypatch):  # noqa: F811
    """MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS in mxc-oci's environment (mxc-openshell-driver sets it to its
    gateway's endpoint): an annotation naming exactly one of them reaches it through the container's
    proxy; another port, another address, a wider entry or a model-1 rule wider than that one TCP port
    stays refused, before anything runs."""
    monkeypatch.setenv("MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS", "127.0.0.1:8080,[::1]:9443")
    script = 'curl -sS --max-time 10 -o /dev/null -w "LOOP %{http_code}\\n" http://127.0.0.1:8080/'
    b = bundle(oci, ["sh", "-c", script], annotate(governed("api.example.test:443", "127.0.0.1:8080")))
    rc, out, err = oci("run", "--bundle", b, "ep")
    assert rc == 0 and out.split() == ["LOOP", "200"], (out, err)
    assert world["host_hits"] == ["127.0.0.1"]
    one_port = model_1("127.0.0.1/32")  # one address, exactly tcp 8080
    rc, _, err = oci.create("ep1", bundle(oci, ["true"], annotate(one_port)))
    assert rc == 0, err
    assert oci("delete", "--force", "ep1")[0] == 0
    wider_rule = model_1("127.0.0.1/32")
    wider_rule["egress"]["allow"][0]["ports"][0]["endPort"] = 8081
    for net, why in [(governed("127.0.0.1:8081"), '"127.0.0.1:8081" reaches loopback'),
                     (governed("127.0.0.2:8080"), '"127.0.0.2:8080" reaches loopback'),
                     (governed("127.0.0.1"), '"127.0.0.1" reaches loopback'),
                     (governed("127.0.0.1/32:8080"), '"127.0.0.1/32:8080" reaches loopback'),
                     (governed("127.0.0.0/8:8080"), '"127.0.0.0/8:8080" reaches loopback'),
                     (governed("[::1]:8080"), "reaches loopback ::1"),
                     (governed("%s:8080" % HOST_ADDR), "reaches an address of this node"),
                     (model_1("127.0.0.2/32"), "network.egress.allow[0].to[0].cidr"),
                     (model_1("127.0.0.0/31"), "network.egress.allow[0].to[0].cidr"),
                     (wider_rule, "network.egress.allow[0].to[0].cidr")]:
        rc, _, err = oci.create("ep2", bundle(oci, ["true"], annotate(net)))
        assert rc != 0 and why in err and "MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS" in err, (net, err)
        assert not os.path.exists(os.path.join(oci.root, "ep2"))
    assert world["host_hits"] == ["127.0.0.1"]


@pytest.mark.parametrize("value", ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:08080", "localhost:8080",
                                   "::1:8080", "[::1]8080", "127.1:8080", "127.0.0.1/32:8080", "127.0.0.1:80a",
                                   "127.0.0.1:8080,", " 127.0.0.1:8080", "[::1%lo]:8080"])
def test_malformed_node_local_endpoints_are_refused_by_name(oci, monkeypatch, value):
    """Parsed strictly, each entry exactly IPV4:PORT or [IPV6]:PORT: anything else refuses every
    annotated create, naming the entry, never read as something wider."""
    monkeypatch.setenv("MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS", value)
    rc, _, err = oci.create("bad", bundle(oci, ["true"], annotate(governed("127.0.0.1:8080"))))
    item = value.split(",")[1] if value.endswith(",") else value
    assert rc != 0 and 'MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS in mxc-oci\'s environment: "%s" is not an endpoint' % item \
        in err, err
    assert not os.path.exists(os.path.join(oci.root, "bad"))


def test_a_ca_directory_too_long_is_refused_never_truncated(oci, monkeypatch):
    """Governed egress with credentials writes the sandbox's CA under the container's state directory; a
    state root so long that the path does not fit is refused at create, never truncated (a truncated prefix
    could name another directory, where the CA files would be written and later removed)."""
    monkeypatch.setenv("MXC_TEST_GH_SECRET", SECRET)
    deep = oci.root
    while len(deep) < 800:
        deep = os.path.join(deep, "d" * 60)
    os.makedirs(deep, mode=0o700)
    b = bundle(oci, ["true"], annotate(NET))
    r = subprocess.run([MXC_OCI, "--root", deep, "create", "--bundle", b, "longca"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "CA certificate" in r.stderr and "longer than" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(deep, "longca"))
    assert not any(".mxc-proxy" in dirs for _, dirs, _ in os.walk(oci.root)), "CA files written somewhere"
