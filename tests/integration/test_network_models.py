"""Issue 14: MXC's three connectivity models, enforced in the sandbox's own network namespace,
on both surfaces (one-shot `process` and exec in a live session: the `sandbox` fixture).

NETWORK SAFETY.  Every test runs mxc-exec inside a network namespace this file creates (the
test's "internet"): a veth pair whose both ends live in it, documentation-range addresses
(192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) with the servers bound to them, and its own
loopback (the "host loopback" the stack maps as 10.0.2.2).  The userspace stack (pasta) runs in
the caller's namespace, so its host side is that namespace.  The sandbox only ever addresses
10.0.2.x (the stack's side) and the documentation addresses above; nothing leaves the test's
namespace (its default route points at the veth peer, which is in the same namespace).
"""
import ctypes
import json
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import MXC_EXEC, assert_ok_envelope, serve_tcp, unique

CLONE_NEWNET = 0x40000000
WEB = "198.51.100.7"     # TCP 8080 (allowed in most tests), 8081; UDP 5005, 5020
WEB2 = "198.51.100.8"    # TCP 8080
WEB3 = "198.51.100.9"    # TCP 8080
PINGABLE = "203.0.113.5" # TCP 8080; answers ICMP echo (a local address of the test's namespace)
GW = "10.0.2.2"          # the stack's gateway: the test namespace's loopback
LOOPBACK_PORT = 8082     # a service on the test namespace's 127.0.0.1

CLIENT = r'''
import socket, sys, os
def tcp(a, p):
    s = socket.socket(); s.settimeout(3)
    s.connect((a, int(p))); s.recv(16); s.close()
def udp(a, p):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
    s.sendto(b"ping", (a, int(p))); s.recvfrom(64)
def ping(a, _):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP); s.settimeout(2)
    s.sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", (a, 0)); s.recvfrom(64)
for spec in sys.argv[1:]:
    kind, a, p = (spec.split(":") + ["0"])[:3]
    try:
        {"tcp": tcp, "udp": udp, "ping": ping}[kind](a, p); print(spec, "OK")
    except Exception as e:
        print(spec, "FAIL", type(e).__name__)
    sys.stdout.flush()
'''

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def _sh(*cmd):
    subprocess.run(list(cmd), check=True, capture_output=True)


def _hello(c):
    c.sendall(b"hello\n")
    c.close()


def _serve_tcp(addr, port, stop):
    serve_tcp(addr, port, stop, _hello, backlog=32, threaded=False)


def _serve_udp(addr, port, stop):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    s.settimeout(0.2)
    while not stop.is_set():
        try:
            data, peer = s.recvfrom(64)
        except socket.timeout:
            continue
        s.sendto(b"pong", peer)
    s.close()


@pytest.fixture
def internet():
    """Creates the test's namespace, starts its servers, and moves this process (hence every
    mxc-exec the test runs) into it; back out and everything removed at teardown."""
    name = unique("mxch14")
    subprocess.run(["ip", "netns", "add", name], check=True)
    ns = lambda *c: _sh("ip", "netns", "exec", name, *c)  # noqa: E731
    ns("ip", "link", "set", "lo", "up")
    ns("ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1")
    ns("ip", "link", "set", "d0", "up")
    ns("ip", "link", "set", "d1", "up")
    for a in ("192.0.2.1/24", WEB + "/24", WEB2 + "/24", WEB3 + "/24", PINGABLE + "/24"):
        ns("ip", "addr", "add", a, "dev", "d0")
    ns("ip", "route", "add", "default", "via", "192.0.2.254", "dev", "d0", "onlink")
    ns("sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647")
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/" + name, os.O_RDONLY)
    _setns(target)
    stop = threading.Event()
    threads = [threading.Thread(target=_serve_tcp, args=(a, p, stop), daemon=True)
               for a, p in ((WEB, 8080), (WEB, 8081), (WEB2, 8080), (WEB3, 8080), (PINGABLE, 8080),
                            ("127.0.0.1", LOOPBACK_PORT))]
    threads += [threading.Thread(target=_serve_udp, args=(WEB, p, stop), daemon=True) for p in (5005, 5020)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    try:
        yield os.fstat(target).st_ino
    finally:
        stop.set()
        for t in threads:
            t.join()
        _setns(home)
        os.close(home)
        os.close(target)
        subprocess.run(["ip", "netns", "del", name], check=False)


@pytest.fixture
def client(host_dir):
    d = host_dir("netclient", 0o755)
    path = os.path.join(d, "client.py")
    with open(path, "w") as f:
        f.write(CLIENT)
    os.chmod(path, 0o644)
    return d, "/usr/bin/python3 %s" % path


class Surface:
    """One network policy, run as one-shots or as execs in one live session (contract 1.0 unless
    version says otherwise; version None: the unversioned legacy dialect); extra: more top-level
    policy (runtimeConfig), given with the one-shot or the provision."""

    def __init__(self, mxc, kind, net, grant, version, extra=None):
        self.mxc, self.kind, self.net, self.grant = mxc, kind, net, grant
        self.base = {"version": version} if version else {}
        self.extra = extra or {}
        self.sid = None
        if kind == "session":
            r = mxc(dict(self.base, phase="provision", containment="isolation_session", network=net,
                         filesystem={"readonlyPaths": [grant]}, **self.extra))
            self.sid = assert_ok_envelope(r)["sandboxId"]
            assert_ok_envelope(mxc(dict(self.base, phase="start", sandboxId=self.sid)))

    def run(self, cmd, timeout=120):
        if self.kind == "process":
            req = dict(self.base, network=self.net, filesystem={"readonlyPaths": [self.grant]},
                       process={"commandLine": cmd}, **self.extra)
        else:
            req = dict(self.base, phase="exec", sandboxId=self.sid, process={"commandLine": cmd})
        return self.mxc(req, timeout=timeout)


@pytest.fixture(params=["process", "session"])
def sandbox(request, mxc, client):
    """make(network, version="1.0.0", extra=None) -> Surface on the parametrised surface."""
    return lambda net, version="1.0.0", extra=None: Surface(mxc, request.param, net, client[0], version, extra)


def probe(sb, cmd, *specs):
    r = sb.run("%s %s" % (cmd, " ".join(specs)))
    assert r.rc == 0, r.describe()
    return {line.split()[0]: line.split()[1] for line in r.stdout.splitlines()}


def stacks_in(netns_ino):
    """pids of pasta processes whose host side is the given network namespace."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open("/proc/%s/comm" % pid).read().strip() not in ("pasta", "passt.avx2", "passt"):
                continue
            if os.stat("/proc/%s/ns/net" % pid).st_ino == netns_ino:
                out.append(int(pid))
        except OSError:
            pass
    return out


def v1(net):
    return {"version": "1.0.0", "network": net}


def rule(cidr, protocol=None, port=None, end=None, except_=None):
    peer = {"cidr": cidr}
    if except_:
        peer["except"] = except_
    r = {"to": [peer]}
    if protocol or port:
        pt = {}
        if protocol:
            pt["protocol"] = protocol
        if port:
            pt["port"] = port
        if end:
            pt["endPort"] = end
        r["ports"] = [pt]
    return r


# ---- model 1 ------------------------------------------------------------------------------------

def test_model1_allow_cidr_and_port(internet, sandbox, client):
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny", "allow": [rule("198.51.100.0/24", "tcp", 8080)]}})
    got = probe(sb, cmd, "tcp:%s:8080" % WEB, "tcp:%s:8081" % WEB, "tcp:%s:8080" % PINGABLE,
                "tcp:%s:%d" % (GW, LOOPBACK_PORT))
    assert got == {"tcp:%s:8080" % WEB: "OK", "tcp:%s:8081" % WEB: "FAIL", "tcp:%s:8080" % PINGABLE: "FAIL",
                   "tcp:%s:%d" % (GW, LOOPBACK_PORT): "FAIL"}, got


def test_model1_deny_outranks_allow_and_except(internet, sandbox, client):
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny",
                                     "allow": [rule("198.51.100.0/24", except_=["198.51.100.9/32"])],
                                     "deny": [rule("198.51.100.8/32", "tcp", 8080)]}})
    got = probe(sb, cmd, "tcp:%s:8080" % WEB, "tcp:%s:8080" % WEB2, "tcp:%s:8080" % WEB3)
    assert got == {"tcp:%s:8080" % WEB: "OK", "tcp:%s:8080" % WEB2: "FAIL", "tcp:%s:8080" % WEB3: "FAIL"}, got


def test_model1_udp_endport_and_icmp(internet, sandbox, client):
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny",
                                     "allow": [rule(WEB + "/32", "udp", 5000, 5010),
                                               rule(PINGABLE + "/32", "icmp")]}})
    got = probe(sb, cmd, "udp:%s:5005" % WEB, "udp:%s:5020" % WEB, "tcp:%s:8080" % WEB,
                "ping:%s" % PINGABLE, "ping:%s" % WEB)
    assert got == {"udp:%s:5005" % WEB: "OK", "udp:%s:5020" % WEB: "FAIL", "tcp:%s:8080" % WEB: "FAIL",
                   "ping:%s" % PINGABLE: "OK", "ping:%s" % WEB: "FAIL"}, got


def test_host_loopback_needs_host_loopback_allow(internet, sandbox, client):
    d, cmd = client
    # a broad allow cannot reopen host loopback: it is dropped ahead of every rule
    sb = sandbox({"egress": {"default": "allow", "allow": [rule("0.0.0.0/0")]}})
    got = probe(sb, cmd, "tcp:%s:%d" % (GW, LOOPBACK_PORT), "tcp:%s:8080" % WEB)
    assert got == {"tcp:%s:%d" % (GW, LOOPBACK_PORT): "FAIL", "tcp:%s:8080" % WEB: "OK"}, got


def test_host_loopback_allow_is_refused_outside_the_host_network(internet, mxc, client):
    """hostLoopback allow would have to hold both ways; the host cannot dial into the sandbox's own
    namespace, so it is refused (as upstream refuses it) — only the all-allow host network shares
    the host's loopback."""
    d, cmd = client
    r = mxc(dict(v1({"egress": {"default": "allow"}, "ingress": {"hostLoopback": "allow"}}),
                 process={"commandLine": "%s tcp:%s:%d" % (cmd, GW, LOOPBACK_PORT)},
                 filesystem={"readonlyPaths": [d]}))
    assert r.rc != 0 and "hostLoopback" in (r.stdout + r.stderr), r.describe()
    assert "OK" not in r.stdout, r.describe()


def test_legacy_allow_without_local_network_is_model1(internet, sandbox, client):
    """The Node SDK's `allowOutbound: true` (defaultPolicy allow, no allowLocalNetwork)."""
    d, cmd = client
    sb = sandbox({"defaultPolicy": "allow"}, version=None)
    got = probe(sb, cmd, "tcp:%s:8080" % WEB, "tcp:%s:%d" % (GW, LOOPBACK_PORT))
    assert got == {"tcp:%s:8080" % WEB: "OK", "tcp:%s:%d" % (GW, LOOPBACK_PORT): "FAIL"}, got
    r = sb.run("cat /proc/net/dev")
    assert "tap0" in r.stdout, r.describe()


def test_workload_cannot_undo_the_rules(internet, sandbox, client):
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny", "allow": [rule(WEB + "/32", "tcp", 8080)]}})
    r = sb.run("nft flush ruleset; echo nft=$?; unshare -n true; echo unshare=$?; "
               "ip link set tap0 down; echo down=$?; ip route del default; echo route=$?")
    for k in ("nft", "unshare", "down", "route"):
        assert "%s=0" % k not in r.stdout, r.describe()
    got = probe(sb, cmd, "tcp:%s:8080" % WEB, "tcp:%s:8081" % WEB)
    assert got == {"tcp:%s:8080" % WEB: "OK", "tcp:%s:8081" % WEB: "FAIL"}, got
    # the stack runs outside: no process of it is visible (or killable) from inside
    r = sb.run("cat /proc/[0-9]*/comm")
    assert "pasta" not in r.stdout and "passt" not in r.stdout, r.describe()


def test_stack_lives_for_the_sandbox_only(internet, mxc, session_factory, client):
    d, cmd = client
    net = {"egress": {"default": "allow"}}
    r = mxc(dict(v1(net), process={"commandLine": "true"}))
    assert r.rc == 0, r.describe()
    deadline = time.time() + 5
    while stacks_in(internet) and time.time() < deadline:
        time.sleep(0.05)
    assert stacks_in(internet) == []
    s = session_factory(network={"defaultPolicy": "allow"})
    assert len(stacks_in(internet)) == 1
    assert_ok_envelope(s.stop())
    deadline = time.time() + 5
    while stacks_in(internet) and time.time() < deadline:
        time.sleep(0.05)
    assert stacks_in(internet) == []


# ---- model 2 ------------------------------------------------------------------------------------

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY", "http_proxy", "https_proxy", "all_proxy",
              "ftp_proxy")


def _only_the_proxy(sb, cmd, scheme="http"):
    """The proxy endpoint (the test namespace's loopback service, as 10.0.2.2) is reached; the same
    gateway's other port and every other address are not; the proxy variables name it."""
    r = sb.run("%s tcp:%s:%d tcp:%s:8080 tcp:%s:8081 tcp:%s:8080; env | grep -i _proxy | sort"
               % (cmd, GW, LOOPBACK_PORT, WEB, GW, PINGABLE))
    assert r.rc == 0, r.describe()
    lines = r.stdout.splitlines()
    assert [" ".join(l.split()[:2]) for l in lines[:4]] == [
        "tcp:%s:%d OK" % (GW, LOOPBACK_PORT), "tcp:%s:8080 FAIL" % WEB, "tcp:%s:8081 FAIL" % GW,
        "tcp:%s:8080 FAIL" % PINGABLE], r.stdout
    env = dict(l.split("=", 1) for l in lines[4:])
    url = "%s://%s:%d/" % (scheme, GW, LOOPBACK_PORT)
    for k in PROXY_VARS:
        assert env.get(k) == url, env
    assert env.get("NO_PROXY") == "" and env.get("no_proxy") == "", env


def test_model2_only_the_proxy_endpoint(internet, sandbox, client):
    """runtimeConfig.networkProxy (contract 1.0), on a one-shot and on every exec of a session."""
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny"}},
                 extra={"runtimeConfig": {"networkProxy": "http://127.0.0.1:%d" % LOOPBACK_PORT}})
    _only_the_proxy(sb, cmd)
    if sb.kind == "session":  # every exec, not only the first
        _only_the_proxy(sb, cmd)


@pytest.mark.parametrize("proxy", ["url", "localhost"])
def test_legacy_network_proxy_is_model2(internet, sandbox, client, proxy):
    """The legacy dialect's network.proxy: {url} or {localhost: port}, on a blocked network."""
    d, cmd = client
    px = {"url": "http://localhost:%d" % LOOPBACK_PORT} if proxy == "url" else {"localhost": LOOPBACK_PORT}
    _only_the_proxy(sandbox({"defaultPolicy": "block", "proxy": px}, version=None), cmd)


def test_model2_refusals_name_the_field(mxc):
    cases = [
        ({"network": {"defaultPolicy": "allow", "proxy": {"url": "http://127.0.0.1:3128"}}}, "network.proxy"),
        ({"network": {"defaultPolicy": "block", "proxy": {"builtinTestServer": True}}},
         "network.proxy.builtinTestServer"),
        ({"network": {"proxy": {"url": "http://10.1.2.3:3128"}}}, "network.proxy.url"),
        ({"network": {"proxy": {"url": "http://127.0.0.1"}}}, "network.proxy.url"),
        ({"network": {"proxy": {"url": "socks5://127.0.0.1:1080"}}}, "network.proxy.url"),
        ({"network": {"proxy": {"localhost": 70000}}}, "network.proxy.localhost"),
        ({"network": {"proxy": {"url": "http://127.0.0.1:1", "localhost": 2}}}, "network.proxy"),
        ({"network": {"proxy": {}}}, "network.proxy"),
        ({"network": {"allowedHosts": ["example.com"], "proxy": {"localhost": 3128}}}, "allowedHosts"),
    ]
    for policy, field in cases:
        one = mxc(dict(policy, process={"commandLine": "echo RAN"}))
        assert one.rc != 0 and "RAN" not in one.stdout and field in one.error["message"], one.describe()
        prov = mxc(dict(policy, phase="provision", containment="isolation_session"))
        assert prov.code in ("policy_validation", "malformed_request") and field in prov.error["message"], \
            prov.describe()
    # a later phase cannot change a session's network, the proxy included
    r = mxc({"phase": "provision", "containment": "isolation_session", "network": {"defaultPolicy": "block"}})
    sid = assert_ok_envelope(r)["sandboxId"]
    r = mxc({"version": "1.0.0", "phase": "exec", "sandboxId": sid, "process": {"commandLine": "echo RAN"},
             "runtimeConfig": {"networkProxy": "http://127.0.0.1:3128"}})
    assert r.code in ("policy_validation", "malformed_request") and "RAN" not in r.stdout, r.describe()
    assert_ok_envelope(mxc({"phase": "deprovision", "sandboxId": sid}))


# ---- model 3 ------------------------------------------------------------------------------------

def test_model3_reaches_nothing(internet, sandbox, client):
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny"}})
    got = probe(sb, cmd, "tcp:%s:8080" % WEB, "tcp:%s:%d" % (GW, LOOPBACK_PORT), "ping:%s" % PINGABLE)
    assert set(got.values()) == {"FAIL"}, got
    r = sb.run("cat /proc/net/dev")
    assert "tap0" not in r.stdout, r.describe()


@pytest.fixture
def host_resolv(scratch, monkeypatch):
    """host_resolv(text): every mxc-exec this test runs (and so the pasta it starts) sees text as
    the host's /etc/resolv.conf (a mount namespace of that run only, as test_host_without_the_stack
    hides pasta)."""
    import conftest

    def use(text):
        resolv = os.path.join(scratch, "resolv-%s.conf" % unique("r"))
        with open(resolv, "w") as f:
            f.write(text)
        os.chmod(resolv, 0o644)
        wrap = os.path.join(scratch, "mxc-exec-" + unique("w"))
        with open(wrap, "w") as f:
            f.write("#!/bin/sh\nexec unshare -m sh -c 'mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"' "
                    "%s %s \"$@\"\n" % (resolv, MXC_EXEC))
        os.chmod(wrap, 0o755)
        monkeypatch.setattr(conftest, "MXC_EXEC", wrap)

    return use


DNS_CLIENT = r'''
import os, socket
q = os.urandom(2) + b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x04test\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(q, ("10.0.2.3", 53))
try:
    d, _ = s.recvfrom(512); print("DNS-REPLY" if d[:2] == q[:2] else "DNS-OTHER")
except OSError:
    print("DNS-NONE")
print(open("/etc/resolv.conf").read().strip())
'''


class _Resolver:
    """A UDP listener on addr:53 in the test's namespace that notes every datagram and answers it
    (the query with QR set)."""

    def __init__(self, addr):
        self.got = []
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind((addr, 53))
        self.s.settimeout(0.2)
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        while not self.stop.is_set():
            try:
                d, peer = self.s.recvfrom(512)
            except socket.timeout:
                continue
            self.got.append(d)
            self.s.sendto(d[:2] + b"\x81\x80" + d[4:], peer)
        self.s.close()

    def close(self):
        self.stop.set()
        self.t.join()


@pytest.fixture
def resolvers(internet):
    """The host's loopback resolver (127.0.0.1:53, what systemd-resolved or dnsmasq would be) and a
    resolver on an address of the test's namespace that is not loopback (192.0.2.53:53)."""
    subprocess.run(["ip", "addr", "add", "192.0.2.53/32", "dev", "d0"], check=True)
    made = {"loopback": _Resolver("127.0.0.1"), "lan": _Resolver("192.0.2.53")}
    yield made
    for r in made.values():
        r.close()
    subprocess.run(["ip", "addr", "del", "192.0.2.53/32", "dev", "d0"], check=False)


def test_dns_forwarder_never_relays_to_a_host_loopback_resolver(resolvers, sandbox, client, host_resolv, mxc):
    """Issue 27 finding 9: under hostLoopback deny, a datagram to the stack's forwarder (10.0.2.3:53)
    never reaches a resolver on host loopback.  The host's resolv.conf naming only one: no forwarder,
    said in the sandbox's resolv.conf and the plan.  Naming one that is not loopback as well: DNS works,
    through that one only."""
    d, cmd = client
    with open(os.path.join(d, "dns.py"), "w") as f:
        f.write(DNS_CLIENT)
    os.chmod(os.path.join(d, "dns.py"), 0o644)
    net = {"egress": {"default": "allow"}}
    host_resolv("# systemd-resolved's stub, or dnsmasq\nnameserver 127.0.0.1\n")
    r = sandbox(net).run("/usr/bin/python3 %s/dns.py" % d)
    assert r.rc == 0, r.describe()
    assert resolvers["loopback"].got == [], "the host-loopback resolver was reached"
    lines = r.stdout.splitlines()
    assert lines[0] == "DNS-NONE" and lines[1].startswith("# mxc: ") and "host loopback" in lines[1], r.stdout
    plan = mxc(argv=["--dry-run", "--config", mxc.config_file(dict(v1(net), process={"commandLine": "true"}))])
    assert "Network DNS: none: the host's resolvers are host loopback" in plan.stdout, plan.describe()
    legacy = mxc(argv=["--dry-run", "--config", mxc.config_file({"network": {"defaultPolicy": "allow"},
                                                                   "process": {"commandLine": "true"}})])
    dns = json.loads(legacy.stdout)["result"]["plan"]["networkDns"]
    assert dns["forwarder"] is None and "host loopback" in dns["reason"], dns
    assert _probe_dns()["forwarder"] is None, _probe_dns()

    host_resolv("nameserver 127.0.0.1\nnameserver 192.0.2.53\noptions edns0\n")
    r = sandbox(net).run("/usr/bin/python3 %s/dns.py" % d)
    assert resolvers["loopback"].got == [], "the host-loopback resolver was reached"
    assert r.rc == 0 and r.stdout.splitlines() == ["DNS-REPLY", "nameserver 10.0.2.3"], r.describe()
    assert len(resolvers["lan"].got) == 1 and b"example" in resolvers["lan"].got[0], resolvers["lan"].got
    plan = mxc(argv=["--dry-run", "--config", mxc.config_file(dict(v1(net), process={"commandLine": "true"}))])
    assert "Network DNS: the forwarder 10.0.2.3, relaying to 192.0.2.53\n" in plan.stdout, plan.describe()
    assert _probe_dns() == {"forwarder": "10.0.2.3", "upstream": "192.0.2.53"}, _probe_dns()


def _probe_dns():
    """--probe's word on model 1's DNS forwarder, as this test's mxc-exec sees the host."""
    import conftest
    out = subprocess.run([conftest.MXC_EXEC, "--probe"], capture_output=True, check=True).stdout
    return json.loads(out)["result"]["networkModels"]["dns"]


def test_resolver_is_the_stacks_forwarder_in_model1_and_none_otherwise(internet, sandbox, client, host_resolv):
    """Model 1 asks pasta's DNS forwarder (whether a query leaves is the rules' business, like any
    packet); models 2 and 3 get no resolver at all — the host's stays the host's.  Only the file is
    read here: no query is sent."""
    host_resolv("nameserver 192.0.2.53\n")
    m1 = sandbox({"egress": {"default": "allow"}}).run("cat /etc/resolv.conf")
    assert m1.rc == 0 and m1.stdout == "nameserver 10.0.2.3\n", m1.describe()
    m3 = sandbox({"egress": {"default": "deny"}}).run("test -e /etc/resolv.conf && echo present || echo none")
    assert m3.stdout.strip() == "none", m3.describe()


def test_legacy_directional_block_is_model3(internet, mxc, client):
    d, cmd = client
    r = mxc({"version": "0.8.0", "network": {"egress": {"default": "deny"}, "ingress": {"default": "deny"}},
             "filesystem": {"readonlyPaths": [d]},
             "process": {"commandLine": "%s tcp:%s:8080; cat /proc/net/dev" % (cmd, WEB)}})
    assert r.rc == 0 and "tcp:%s:8080 FAIL" % WEB in r.stdout and "tap0" not in r.stdout, r.describe()


# ---- refusals, probe, dry run (no traffic) --------------------------------------------------------

@pytest.mark.parametrize("net,needle", [
    ({"ingress": {"default": "allow"}}, "ingress.default allow"),
    ({"egress": {"default": "deny", "allow": [{"to": [{"cidr": "2001:db8::/32"}]}]}}, "IPv6"),
])
def test_undeliverable_shapes_are_refused_before_running(mxc, net, needle):
    r = mxc(dict(v1(net), process={"commandLine": "echo RAN"}))
    assert r.rc == 255 and "RAN" not in r.stdout and needle in r.stderr, r.describe()


def test_hostname_in_a_legacy_rule_is_refused_with_its_path(mxc):
    r = mxc({"version": "0.8.0", "network": {"egress": {"default": "deny", "allow": [{"to": [{"cidr": "example.com"}]}]}},
             "process": {"commandLine": "echo RAN"}})
    assert r.code == "backend_error" and "network.egress.allow[0].to[0].cidr" in r.error["message"], r.describe()
    assert "hostname" in r.error["message"]


def test_dry_run_prints_the_rule_set(mxc):
    net = {"egress": {"default": "deny", "allow": [rule("198.51.100.0/24", "tcp", 8080, 8090)],
                      "deny": [rule("198.51.100.66/32")]}}
    r = mxc(argv=["--dry-run", "--config", mxc.config_file(dict(v1(net), process={"commandLine": "true"}))])
    assert r.rc == 0, r.describe()
    out = r.stdout
    assert "table inet mxc" in out and "ip daddr 10.0.2.2 reject" in out
    assert out.index("198.51.100.66/32") < out.index("198.51.100.0/24 meta l4proto tcp th dport 8080-8090 accept")
    r = mxc(argv=["--dry-run", "--config", mxc.config_file({"network": {"defaultPolicy": "allow"},
                                                              "process": {"commandLine": "true"}})])
    plan = json.loads(r.stdout)["result"]["plan"]
    assert "ip daddr 192.168.0.0/16 reject" in plan["networkRules"], plan


def test_probe_reports_what_the_host_can_enforce():
    out = json.loads(subprocess.run([MXC_EXEC, "--probe"], capture_output=True, check=True).stdout)
    nm = out["result"]["networkModels"]
    assert nm["userspaceStack"]["present"] is True and nm["nfTables"] is True and nm["conntrack"] is True, nm


def test_host_without_the_stack_is_backend_unavailable(mxc):
    """pasta hidden (a mount namespace of this test only): refused with a remediation, never run weaker."""
    req = json.dumps(dict(v1({"egress": {"default": "allow"}}), process={"commandLine": "echo RAN"}))
    p = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /dev/null /usr/bin/pasta && exec \"$0\" --config -",
                        MXC_EXEC], input=req.encode(), capture_output=True, env=mxc.env(), timeout=60)
    out, err = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 255 and "RAN" not in out, (p.returncode, out, err)
    env = json.loads(err[err.index('{"error"'):])["error"]
    assert env["code"] == "backend_unavailable" and "passt" in env["remediation"], env


def test_host_without_the_rule_installer_is_backend_unavailable(mxc):
    """mxc-nft hidden beside mxc-exec (a mount namespace of this test only): refused before
    anything runs, with a remediation — never a sandbox whose rules were not installed."""
    req = json.dumps(dict(v1({"egress": {"default": "allow"}}), process={"commandLine": "echo RAN"}))
    nft = os.path.join(os.path.dirname(MXC_EXEC), "mxc-nft")
    assert os.access(nft, os.X_OK), nft
    p = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /dev/null \"$1\" && exec \"$0\" --config -",
                        MXC_EXEC, nft], input=req.encode(), capture_output=True, env=mxc.env(), timeout=60)
    out, err = p.stdout.decode(), p.stderr.decode()
    assert "RAN" not in out, (p.returncode, out, err)
    text = err[err.index('{"error"'):] if '{"error"' in err else out
    env = json.loads(text)["error"]
    assert env["code"] == "backend_unavailable" and "mxc-nft" in env["message"], env


def test_the_rule_installer_alone():
    """mxc-nft: the script on stdin, applied in the namespace it runs in (one of this test's),
    its error text on stderr; no arguments taken."""
    nft = os.path.join(os.path.dirname(MXC_EXEC), "mxc-nft")
    ns = unique("mxcnft")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        run = lambda script, *args: subprocess.run(["ip", "netns", "exec", ns, nft] + list(args),  # noqa: E731
                                                  input=script.encode(), capture_output=True, timeout=30)
        ok = run("table inet t {\n chain c {\n  type filter hook output priority filter;\n  reject\n }\n}\n")
        assert ok.returncode == 0 and not ok.stderr, ok
        bad = run("table inet t { chain c { nonsense } }\n")
        assert bad.returncode == 1 and b"Error" in bad.stderr, bad
        assert run("", "--anything").returncode == 2
    finally:
        subprocess.run(["ip", "netns", "del", ns])
