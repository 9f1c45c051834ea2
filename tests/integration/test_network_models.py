"""Issue 14: MXC's three connectivity models, enforced in the sandbox's own network namespace,
on both surfaces (one-shot `process` and exec in a live session: the `sandbox` fixture).

NETWORK SAFETY.  Every test runs mxc-exec inside a network namespace this file creates (the
test's "host"), one veth away from a second one (the test's "internet"); neither has a route
anywhere else.  The host has its loopback (the "host loopback" the stack maps as 10.0.2.2), its
own addresses on the veth (HOST_ADDR, and THIS_HOST as a second one), each with a
service; the internet has the documentation-range addresses (198.51.100.0/24, 203.0.113.0/24)
with the servers bound to them.  The userspace stack (pasta) runs in the caller's namespace, so
its host side is the test's host.  The sandbox only ever addresses 10.0.2.x (the stack's side)
and the documentation addresses above; nothing leaves the test's two namespaces.
"""
import ctypes
import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import MXC_EXEC, assert_ok_envelope, serve_tcp, unique, wait_until
from netpool_util import POOL, discard_entry, gone as _gone, netns, pool_entries as _pool_entries, procs_named, \
    sandbox_stacks

CLONE_NEWNET = 0x40000000
WEB = "198.51.100.7"     # TCP 8080 (allowed in most tests), 8081; UDP 5005, 5020
WEB2 = "198.51.100.8"    # TCP 8080
WEB3 = "198.51.100.9"    # TCP 8080
PINGABLE = "203.0.113.5" # TCP 8080; answers ICMP echo (a local address of the test's namespace)
GW = "10.0.2.2"          # the stack's gateway: the test host's loopback
LOOPBACK_PORT = 8082     # a service on the test host's 127.0.0.1
HOST_ADDR = "192.0.2.1"  # the test host's own address on the veth toward the internet: TCP 8080
THIS_HOST = "192.0.2.77" # the test host's second own address (a /32 on the same veth): TCP 8080, 8081
FAR_GW = "192.0.2.254"   # the internet's side of the veth (the host's default route)

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


class World:
    """The test's two namespaces: host (this process and every mxc-exec it runs are in it; ino
    is its inode) and far (the internet).  in_far(): a context in which new sockets and threads
    are the internet's."""

    def __init__(self, host, far, ino, stop, threads):
        self.host, self.far, self.ino, self.stop, self.threads = host, far, ino, stop, threads

    def in_far(self):
        world = self

        class _In:
            def __enter__(self):
                _setns_path("/run/netns/" + world.far)

            def __exit__(self, *exc):
                _setns_path("/run/netns/" + world.host)

        return _In()

    def serve(self, addr, port):
        """A TCP service on addr:port in the current namespace until teardown."""
        t = threading.Thread(target=_serve_tcp, args=(addr, port, self.stop), daemon=True)
        t.start()
        self.threads.append(t)
        _wait_listening(addr, port)


def _setns_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        _setns(fd)
    finally:
        os.close(fd)


def _wait_listening(addr, port):
    """Polls until addr:port accepts (a connection from this namespace: to this host or the
    test's internet only)."""
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection((addr, port), timeout=1).close()
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.02)


@pytest.fixture
def internet():
    """Creates the test's host and internet namespaces, starts their servers, and moves this
    process (hence every mxc-exec the test runs) into the host; back out and everything removed
    at teardown."""
    host, far = unique("mxcm1h"), unique("mxcm1f")
    made = []
    try:
        for n in (host, far):
            subprocess.run(["ip", "netns", "add", n], check=True)
            made.append(n)
        yield from _world(host, far)
    finally:
        for n in made:
            subprocess.run(["ip", "netns", "del", n], check=False)


def _world(host, far):
    hs = lambda *c: _sh("ip", "netns", "exec", host, *c)  # noqa: E731
    fs = lambda *c: _sh("ip", "netns", "exec", far, *c)  # noqa: E731
    hs("ip", "link", "set", "lo", "up")
    fs("ip", "link", "set", "lo", "up")
    hs("ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1", "netns", far)
    hs("ip", "addr", "add", HOST_ADDR + "/24", "dev", "d0")
    hs("ip", "link", "set", "d0", "up")
    hs("ip", "addr", "add", THIS_HOST + "/32", "dev", "d0")
    hs("ip", "route", "add", "default", "via", FAR_GW, "dev", "d0")
    hs("sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647")
    for a in (FAR_GW + "/24", WEB + "/24", WEB2 + "/24", WEB3 + "/24", PINGABLE + "/24"):
        fs("ip", "addr", "add", a, "dev", "d1")
    fs("ip", "link", "set", "d1", "up")
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/" + host, os.O_RDONLY)
    stop = threading.Event()
    world = World(host, far, os.fstat(target).st_ino, stop, [])
    try:
        # a thread lives in the namespace of the thread that started it
        _setns_path("/run/netns/" + far)
        world.threads += [threading.Thread(target=_serve_udp, args=(WEB, p, stop), daemon=True)
                          for p in (5005, 5020)]
        for t in world.threads:
            t.start()
        for a, p in ((WEB, 8080), (WEB, 8081), (WEB2, 8080), (WEB3, 8080), (PINGABLE, 8080)):
            world.serve(a, p)
        _setns(target)
        for a, p in (("127.0.0.1", LOOPBACK_PORT), (HOST_ADDR, 8080), (THIS_HOST, 8080), (THIS_HOST, 8081)):
            world.serve(a, p)
        yield world
    finally:
        stop.set()
        for t in world.threads:
            t.join()
        _setns(home)
        os.close(home)
        os.close(target)


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
        self.sid = self.name = None
        if kind == "session":
            r = mxc(dict(self.base, phase="provision", containment="isolation_session", network=net,
                         filesystem={"readonlyPaths": [grant]}, **self.extra))
            res = assert_ok_envelope(r)
            self.sid, self.name = res["sandboxId"], res["metadata"]["agentUserName"]  # name: its state directory
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


def refilling(netns_ino=None):
    """the pool's refillers running in the given network namespace (src/net/netpool.c; None: any):
    a pasta one of them is starting is not in the pool's records yet, nor any sandbox's"""
    return procs_named(lambda comm: comm == "mxc-netpool-fil", netns_ino)


def stacks_in(netns_ino):
    """pids of pasta processes whose host side is the given network namespace (not the pool's
    idle ones, nor one a refiller is starting: a sandbox's)."""
    deadline = time.time() + 10
    while refilling(netns_ino) and time.time() < deadline:
        time.sleep(0.02)
    return sandbox_stacks(netns_ino)


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


def test_model1_the_first_command_meets_rules_and_route(internet, mxc, client):
    """The stack and the rules attach while the sandbox builds its view (issue 38), yet the
    workload (a one-shot's, a session's first exec right after start) exists only once both are
    in: its first connects reach the allowed address (the route is there) and not the denied one
    (the rules are there).  Several starts: each one races the attach afresh."""
    d, cmd = client
    net = {"egress": {"default": "deny", "allow": [rule("198.51.100.0/24", "tcp", 8080)]}}
    want = {"tcp:%s:8080" % WEB: "OK", "tcp:%s:8081" % WEB: "FAIL"}
    for kind in ("process", "session") * 3:
        sb = Surface(mxc, kind, net, d, "1.0.0")
        try:
            assert probe(sb, cmd, *want) == want
        finally:
            if sb.sid:
                for ph in ("stop", "deprovision"):
                    assert_ok_envelope(mxc({"version": "1.0.0", "phase": ph, "sandboxId": sb.sid}))


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
    while stacks_in(internet.ino) and time.time() < deadline:
        time.sleep(0.05)
    assert stacks_in(internet.ino) == []
    s = session_factory(network={"defaultPolicy": "allow"})
    assert len(stacks_in(internet.ino)) == 1
    assert_ok_envelope(s.stop())
    deadline = time.time() + 5
    while stacks_in(internet.ino) and time.time() < deadline:
        time.sleep(0.05)
    assert stacks_in(internet.ino) == []


# ---- model 1's pool (issue 38: src/net/netpool.h) ---------------------------------------------
# Root, model 1: network namespaces made ahead by root (owned by the host's user namespace), pasta
# attached, claimed one-use.  Whether a sandbox got one: its namespace is one of the pool's ready
# entries' (their holders' namespaces, read before it started).  MXC_NETPOOL_SIZE=0 runs every test
# here without the pool.

POOL_ON = os.environ.get("MXC_NETPOOL_SIZE", "0") != "0"  # off by default; run-tests.sh sets 2


def pool_namespaces():
    """the network namespaces (inodes) of the pool's ready entries now"""
    return {ino for ino in (netns(h) for h, _ in _pool_entries().values()) if ino is not None}


def _ns_of(r):
    assert r.rc == 0, r.describe()
    link = r.stdout.split()[0]  # net:[INODE]
    return int(link[link.index("[") + 1:link.index("]")])


def test_model1_pool_entry_is_never_handed_out_twice(internet, mxc):
    """Four one-shots at once, ten times, against a pool of two: each sandbox alive beside the
    others has a namespace of its own (never one entry twice: its claim is a rename, one winner),
    the losers fall back to a namespace of their own, and every one of them runs."""
    net = {"egress": {"default": "allow"}}
    pooled = 0
    for _ in range(10):
        out = [None] * 4
        before = pool_namespaces()

        def run(i):
            out[i] = mxc(dict(v1(net), process={"commandLine": "sh -c 'readlink /proc/self/ns/net; sleep 0.3'"}))
        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seen = [_ns_of(r) for r in out]
        assert len(set(seen)) == 4, seen
        pooled += len(set(seen) & before)
        time.sleep(0.2)  # the refiller's turn
    assert (pooled > 0) == POOL_ON, pooled


@pytest.mark.skipif(not POOL_ON, reason="the pool is off (MXC_NETPOOL_SIZE=0)")
def test_model1_pool_gc_sweeps_dead_entries_and_all_when_off(internet, mxc):
    """--gc removes an entry whose pasta died (its holder killed), keeps live ones, and with the
    pool off (MXC_NETPOOL_SIZE=0 in --gc's environment) removes every one: no holder, no pasta,
    no record left."""
    r = mxc(dict(v1({"egress": {"default": "allow"}}), process={"commandLine": "true"}))
    assert r.rc == 0, r.describe()
    assert wait_until(lambda: len(_pool_entries(internet.ino)) >= 2 and not refilling(internet.ino), 10)
    entries = _pool_entries(internet.ino)
    dead, (holder, pasta) = sorted(entries.items())[0]
    os.kill(pasta, 9)
    assert wait_until(lambda: _gone(pasta), 5)
    p = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, env=mxc.env(), timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["result"]["swept"]["netpoolEntries"] >= 1, p
    left = _pool_entries(internet.ino)
    assert dead not in left and wait_until(lambda: _gone(holder), 5), left
    assert all(not _gone(h) and not _gone(pp) for h, pp in left.values()), left
    p = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, env=dict(mxc.env(), MXC_NETPOOL_SIZE="0"), timeout=60)
    assert p.returncode == 0, p
    assert _pool_entries(internet.ino) == {}
    assert all(wait_until(lambda: _gone(h) and _gone(pp), 5) for h, pp in left.values()), left


@pytest.mark.skipif(not POOL_ON, reason="the pool is off (MXC_NETPOOL_SIZE=0)")
def test_model1_a_stale_entry_does_not_spoil_the_next_one(internet, mxc):
    """The entry a claim meets first has lost its holder (its pasta lives on): it is discarded, and
    the claim goes on to the next, healthy one — whose namespace the sandbox gets.  (Review of the
    cgroup rename: the stale entry's cgroup was renamed to the sandbox's before the entry was found
    dead, so the healthy one's rename met that name taken, and the start went without the pool.)"""
    r = mxc(dict(v1({"egress": {"default": "allow"}}), process={"commandLine": "true"}))
    assert r.rc == 0, r.describe()
    assert wait_until(lambda: len(_pool_entries(internet.ino)) >= 2 and not refilling(internet.ino), 15)
    ready = os.path.join(POOL, "ready")
    mine = [e for e in os.listdir(ready) if e.startswith("%d-" % internet.ino)]  # readdir's order: the claim's
    entries = _pool_entries(internet.ino)
    stale, healthy = entries[mine[0]], entries[mine[1]]
    healthy_ns = os.stat("/proc/%d/ns/net" % healthy[0]).st_ino
    os.kill(stale[0], 9)
    assert wait_until(lambda: _gone(stale[0]), 5)
    r = mxc(dict(v1({"egress": {"default": "allow"}}), process={"commandLine": "readlink /proc/self/ns/net"}))
    assert r.rc == 0, r.describe()
    assert _ns_of(r) == healthy_ns, (_ns_of(r), healthy_ns)
    assert wait_until(lambda: _gone(stale[1]), 5)  # the stale entry's pasta ended with it
    assert mine[0] not in os.listdir(ready)


@pytest.mark.skipif(not POOL_ON, reason="the pool is off (MXC_NETPOOL_SIZE=0)")
def test_model1_pool_gc_sweeps_a_half_made_entry_whose_holder_lives(mxc):
    """An entry its refiller died making (`.new.<holder>`: the record is there, not yet renamed into
    ready/) is swept by --gc once no refiller holds the pool's lock, though its holder and pasta live
    on (they outlive the refiller by design): both killed, the record removed.  Before, --gc looked
    only at whether the holder had died, and such an entry stayed for good."""
    procs = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        start = [open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[19] for p in procs]
        os.makedirs(os.path.join(POOL, "ready"), exist_ok=True)
        new = os.path.join(POOL, ".new.%d" % procs[0].pid)
        os.mkdir(new, 0o700)
        with open(os.path.join(new, "pids"), "w") as f:
            f.write("%d %s %d %s\n" % (procs[0].pid, start[0], procs[1].pid, start[1]))
        assert wait_until(lambda: not refilling(), 15)  # no refiller anywhere holds the pool's lock
        p = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, env=mxc.env(), timeout=60)
        assert p.returncode == 0 and json.loads(p.stdout)["result"]["swept"]["netpoolEntries"] >= 1, p
        assert not os.path.exists(new)
        assert all(wait_until(lambda: q.poll() is not None, 5) for q in procs)
    finally:
        for q in procs:
            q.kill()
            q.wait()
        shutil.rmtree(os.path.join(POOL, ".new.%d" % procs[0].pid), ignore_errors=True)


def test_model1_pooled_namespace_keeps_what_the_workload_could_do(internet, sandbox, client):
    """A pooled namespace is not the workload's user namespace's: what the workload could do in one
    of its own it still can (bind an unprivileged port; ping: test_model1_udp_endport_and_icmp),
    and no more: a port below 1024 is refused as before (its uid holds no capability), the rules
    and the route stay (test_workload_cannot_undo_the_rules), its sysctls are not its to write."""
    d, cmd = client
    sb = sandbox({"egress": {"default": "allow"}})
    bind = "import socket\nfor p in (8080, 80):\n  s = socket.socket()\n  try:\n    s.bind((\"0.0.0.0\", p)); print(p, \"bound\")\n  except OSError as e:\n    print(p, e.errno)\n"
    r = sb.run("printf '%s' | /usr/bin/python3; echo 1 > /proc/sys/net/ipv4/ip_forward; echo fwd=$?" % bind)
    assert "8080 bound" in r.stdout and "80 13" in r.stdout and "fwd=0" not in r.stdout, r.describe()


# ---- model 1's pool: an entry's rules (src/net/netpool.h: installed when it is made, compared at the claim)

def _starting(netns_ino):
    """mxc's processes in the given namespace (mxc-exec, a one-shot's detached cleaner, a refiller):
    once the test's own calls are over, one of them may still start a refill (a one-shot's cleaner
    forks it once PID 1 is gone)"""
    return procs_named(lambda comm: comm.startswith("mxc-"), netns_ino)


def _discard_pool_of(netns_ino):
    """Every pool entry made for the given namespace (ready or claimed), once no refiller of it runs
    (one the test's last one-shot started included): discarded (netpool_util.discard_entry: its
    holder and pasta killed while they are the record's, its own cgroup and its record removed);
    the rest of the host's pool (other callers') untouched."""
    for _ in range(5):
        assert wait_until(lambda: not refilling(netns_ino) and not _starting(netns_ino), 15)
        if not _discard_entries(netns_ino):
            return
    raise AssertionError("the pool of namespace %d keeps refilling" % netns_ino)


def _discard_entries(netns_ino):
    n = 0
    for sub in ("ready", "claimed"):
        d = os.path.join(POOL, sub)
        for e in os.listdir(d) if os.path.isdir(d) else []:
            if not e.startswith("%d-" % netns_ino):
                continue
            left = discard_entry(os.path.join(d, e))
            assert left is None, left
            n += 1
    return n


@pytest.fixture
def own_pool(internet):
    """The pool's entries for the test's namespace discarded at teardown (before the namespace goes)."""
    yield
    _discard_pool_of(internet.ino)


def _key(entry):
    return entry.rsplit(".", 1)[0]  # <ns>-<dns>-<rules' hash>.<holder>


def _pool_fill(mxc, world, net, keys_before=()):
    """A model-1 one-shot under net (it starts the refill of net's key), then the pool's ready entries
    of that key, waited for until there are two and no refiller runs: {name: (holder, pasta)}."""
    r = mxc(dict(v1(net), process={"commandLine": "true"}))
    assert r.rc == 0, r.describe()

    def mine():
        return {e: p for e, p in _pool_entries(world.ino).items() if _key(e) not in keys_before}
    assert wait_until(lambda: len(mine()) >= 2 and not refilling(world.ino), 15), mine()
    got = mine()
    assert len({_key(e) for e in got}) == 1, got
    return got


@pytest.fixture
def pinned():
    """pinned(entries): the inodes of the entries' namespaces, each held open until the test ends —
    an entry discarded or evicted meanwhile (its holder and pasta gone) keeps its namespace, so a
    namespace made later never reuses its inode and passes for it (the kernel hands freed inodes
    out again at once)"""
    fds = []

    def pin(entries):
        inos = set()
        for h, _ in entries.values():
            fds.append(os.open("/proc/%d/ns/net" % h, os.O_RDONLY | os.O_CLOEXEC))
            inos.add(os.fstat(fds[-1]).st_ino)
        return inos
    yield pin
    for fd in fds:
        os.close(fd)


def _record_rules(entry):
    with open(os.path.join(POOL, "ready", entry, "rules")) as f:
        return f.read()


def _held_oneshot(world, mxc, d, net, cmd, inspect):
    """A model-1 one-shot under net whose workload runs cmd, then waits (for a file the test makes)
    while inspect(nsfd) looks at its network namespace from here: (its result, its namespace's
    inode, what inspect returned), the result's probes as {spec: OK|FAIL}."""
    go = os.path.join(d, unique("go"))
    done = {}
    script = "%s; while [ ! -e %s ]; do sleep 0.05; done" % (cmd, go)
    run = threading.Thread(target=lambda: done.setdefault("r", mxc(dict(
        v1(net), filesystem={"readonlyPaths": [d]}, process={"commandLine": script}), timeout=120)))
    run.start()
    try:
        nsfd = _netns_of(world, _waiting_workload(world, go, run, done, time.time() + 60))
        try:
            ino, seen = os.fstat(nsfd).st_ino, inspect(nsfd)
        finally:
            os.close(nsfd)
    finally:
        open(go, "w").close()
        run.join()
    r = done["r"]
    assert r.rc == 0, r.describe()
    return {l.split()[0]: l.split()[1] for l in r.stdout.splitlines()}, ino, seen


def _nft_in(nsfd, *args):
    p = subprocess.run(["nsenter", "--net=/proc/self/fd/%d" % nsfd, "nft"] + list(args), capture_output=True,
                       text=True, pass_fds=(nsfd,))
    assert p.returncode == 0, p
    return p.stdout


def _plan_listing(mxc, net):
    """The rules mxc-exec --dry-run plans for net (its "Network rules" script, this host's set as it is
    now), as nft lists them once installed in a namespace of their own (made and gone here)."""
    plan = mxc(argv=["--dry-run", "--config", mxc.config_file(dict(v1(net), process={"commandLine": "true"}))])
    assert plan.rc == 0, plan.describe()
    lines = plan.stdout.splitlines()
    start = lines.index("Network rules (nftables, in the sandbox's namespace):") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(("Network ", "Runner ")))
    p = subprocess.run(["unshare", "-n", "sh", "-c", "nft -f - && nft list ruleset"], capture_output=True,
                       text=True, input="\n".join(lines[start:end]) + "\n")
    assert p.returncode == 0 and "table inet mxc" in p.stdout, p
    return p.stdout


ADDED = "192.0.2.99"    # given to the test host after the pool's entries were made: TCP 8080
DROPPED = "192.0.2.97"  # the test host's while they were made, gone before the claim


@pytest.mark.skipif(not POOL_ON, reason="the pool is off (MXC_NETPOOL_SIZE=0)")
@pytest.mark.parametrize("kind", ["process", "session"])
def test_model1_pooled_entry_meets_this_hosts_addresses_as_they_are_at_the_claim(internet, mxc, client, own_pool, pinned,
                                                                                  kind):
    """An entry holds this host's destinations as they were when it was made: an address the host
    gains after that (a service on it) is still rejected to the sandbox that claims the entry (a
    one-shot's first connect; a session's, claimed at its start, first exec), the internet still
    reached; an address the host lost since is no longer in the sandbox's set."""
    d, cmd = client
    net = {"egress": {"default": "allow"}}
    _sh("ip", "addr", "add", DROPPED + "/32", "dev", "d0")
    entries = _pool_fill(mxc, internet, net)
    made = pinned(entries)
    for e in entries:
        assert DROPPED in _record_rules(e) and ADDED not in _record_rules(e), _record_rules(e)
    _sh("ip", "addr", "add", ADDED + "/32", "dev", "d0")
    internet.serve(ADDED, 8080)
    _sh("ip", "addr", "del", DROPPED + "/32", "dev", "d0")
    specs = ("tcp:%s:8080" % ADDED, "tcp:%s:8080" % WEB, "tcp:%s:8080" % THIS_HOST)
    list_set = lambda fd: _nft_in(fd, "list", "set", "inet", "mxc", "thishost")  # noqa: E731
    if kind == "process":
        got, ino, listed = _held_oneshot(internet, mxc, d, net, "%s %s" % (cmd, " ".join(specs)), list_set)
    else:
        sb = Surface(mxc, "session", net, d, "1.0.0")
        try:
            nsfd = _netns_of(internet, _holder_of(mxc, sb))
            try:
                ino, listed = os.fstat(nsfd).st_ino, list_set(nsfd)
            finally:
                os.close(nsfd)
            got = probe(sb, cmd, *specs)
        finally:  # gone before the pool's teardown (which waits for no mxc process in the namespace)
            for ph in ("stop", "deprovision"):
                assert_ok_envelope(mxc({"version": "1.0.0", "phase": ph, "sandboxId": sb.sid}))
    assert ino in made, (ino, made)  # a pooled namespace, made before the host changed
    assert got == dict(zip(specs, ("FAIL", "OK", "FAIL"))), got
    assert ADDED in listed and THIS_HOST in listed and DROPPED not in listed, listed


@pytest.mark.skipif(not POOL_ON, reason="the pool is off (MXC_NETPOOL_SIZE=0)")
def test_model1_pool_never_gives_one_rule_sets_entry_to_another(internet, mxc, client, own_pool, pinned):
    """Entries made for policy A (egress allow) are never a policy B sandbox's (deny but one port):
    B's namespace, pooled or not, holds exactly B's planned rules (as nft lists them), its probes
    are B's, and A's entries stay ready, untouched, or are ended (room made for B's)."""
    d, cmd = client
    a = {"egress": {"default": "allow"}}
    b = {"egress": {"default": "deny", "allow": [rule(WEB + "/32", "tcp", 8080)]}}
    ents_a = _pool_fill(mxc, internet, a)
    made_a, key_a = pinned(ents_a), {_key(e) for e in ents_a}
    want = _plan_listing(mxc, b)
    assert want != _plan_listing(mxc, a)
    specs = ("tcp:%s:8080" % WEB, "tcp:%s:8081" % WEB)
    pooled_b = set()
    for turn in range(2):
        got, ino, listed = _held_oneshot(internet, mxc, d, b, "%s %s" % (cmd, " ".join(specs)),
                                         lambda fd: _nft_in(fd, "list", "ruleset"))
        assert ino not in made_a, ino
        assert got == dict(zip(specs, ("OK", "FAIL"))), got
        assert listed == want, (listed, want)
        if turn == 0:  # B's own entries now (its first one-shot's refill): the second one claims one
            pooled_b = pinned(_pool_fill(mxc, internet, b, keys_before=key_a))
        else:
            assert ino in pooled_b, (ino, pooled_b)
    # each of A's entries still ready, untouched, or ended whole to make room for B's (the pool's
    # size bounds the namespace's entries whatever the rule sets): never anyone's namespace
    left = {e: p for e, p in _pool_entries(internet.ino).items() if _key(e) in key_a}
    assert all(ents_a[e] == p and not _gone(p[0]) and not _gone(p[1]) for e, p in left.items()), (left, ents_a)
    ended = [p for e, p in ents_a.items() if e not in left]
    assert all(wait_until(lambda: _gone(h) and _gone(p), 5) for h, p in ended), ended


@pytest.mark.skipif(not POOL_ON, reason="the pool is off (MXC_NETPOOL_SIZE=0)")
def test_model1_pool_entry_whose_rules_record_differs_is_not_used(internet, mxc, client, own_pool, pinned):
    """The claim does not take an entry's record on trust: every ready entry's rules record altered
    (a reject line dropped, one per entry) makes each a mismatch, discarded (holder and pasta ended,
    record gone); the sandbox gets a namespace of its own, its rules the plan's."""
    d, cmd = client
    net = {"egress": {"default": "allow"}}
    entries = _pool_fill(mxc, internet, net)
    made = pinned(entries)
    drops = ["ip daddr @thishost reject", "ip daddr 10.0.2.2 reject", "meta nfproto ipv6 reject"]
    for i, e in enumerate(sorted(entries)):
        path = os.path.join(POOL, "ready", e, "rules")
        text = _record_rules(e)
        cut = "".join(l for l in text.splitlines(True) if l.strip() != drops[i % len(drops)])
        assert cut != text, text
        with open(path, "w") as f:
            f.write(cut)
    specs = ("tcp:%s:8080" % THIS_HOST, "tcp:%s:%d" % (GW, LOOPBACK_PORT), "tcp:%s:8080" % WEB)
    got, ino, listed = _held_oneshot(internet, mxc, d, net, "%s %s" % (cmd, " ".join(specs)),
                                     lambda fd: _nft_in(fd, "list", "ruleset"))
    assert ino not in made, (ino, made)
    assert got == dict(zip(specs, ("FAIL", "FAIL", "OK"))), got
    assert listed == _plan_listing(mxc, net), listed
    assert not set(entries) & set(_pool_entries(internet.ino)), _pool_entries(internet.ino)
    assert all(wait_until(lambda: _gone(h) and _gone(p), 5) for h, p in entries.values()), entries


@pytest.mark.skipif(not POOL_ON, reason="the pool is off (MXC_NETPOOL_SIZE=0)")
def test_model1_pool_holds_its_size_whatever_the_rule_sets(internet, mxc, own_pool):
    """The rule set is in an entry's key, yet MXC_NETPOOL_SIZE stays the pool's idle cost for a
    caller's namespace: one-shots under four policies in turn (each its own allowed port: four rule
    sets) leave at most that many entries, the last policy's among them, and the entries made room
    for are ended (holder and pasta), not left to age."""
    size, made = int(os.environ["MXC_NETPOOL_SIZE"]), {}
    for port in (8080, 8081, 5005, 5020):
        net = {"egress": {"default": "deny", "allow": [rule(WEB + "/32", "tcp", port)]}}
        r = mxc(dict(v1(net), process={"commandLine": "true"}))
        assert r.rc == 0, r.describe()
        keys = {_key(e) for e in made}

        def refilled():
            return not _starting(internet.ino) and [e for e in _pool_entries(internet.ino) if _key(e) not in keys]
        assert wait_until(refilled, 15), _pool_entries(internet.ino)
        now = _pool_entries(internet.ino)
        made.update(now)
        assert len(now) <= size, now
    last = {_key(e) for e in now}
    assert len(last) == 1 and len({_key(e) for e in made}) == 4, (last, made)
    gone = {e: p for e, p in made.items() if e not in now}
    assert all(wait_until(lambda: _gone(h) and _gone(p), 5) for h, p in gone.values()), gone


# ---- this host (issue 27, third round) ----------------------------------------------------------
# pasta dials from the host's namespace, so a destination the host's kernel delivers to itself is a
# host service, not the network: host loopback never, the host's own addresses only through an
# allow of exactly that address (as the governed proxy decides, src/proxy/hostpolicy.c).

def _this_host(sb, cmd):
    specs = ("tcp:%s:8080" % THIS_HOST, "tcp:%s:8081" % THIS_HOST, "tcp:%s:8080" % HOST_ADDR,
             "tcp:%s:8080" % WEB)
    got = probe(sb, cmd, *specs)
    return tuple(got[k] for k in specs)


def test_model1_a_broad_allow_never_reaches_this_hosts_own_addresses(internet, sandbox, client):
    """0.0.0.0/0 and the /24 of the host's interface cover its own addresses without naming them:
    the services listening there are not reached; the internet is."""
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny", "allow": [rule("0.0.0.0/0"), rule("192.0.2.0/24", "tcp", 8080)]}})
    assert _this_host(sb, cmd) == ("FAIL", "FAIL", "FAIL", "OK")


def test_model1_an_exact_allow_names_one_own_address_on_its_ports(internet, sandbox, client):
    """An allow of exactly THIS_HOST/32, tcp 8080, reaches that one service: not its other port
    (though 0.0.0.0/0 is allowed too), not the host's other address."""
    d, cmd = client
    sb = sandbox({"egress": {"default": "deny",
                             "allow": [rule("0.0.0.0/0"), rule(THIS_HOST + "/32", "tcp", 8080)]}})
    assert _this_host(sb, cmd) == ("OK", "FAIL", "FAIL", "OK")
    # a deny still outranks the allow that names it
    sb = sandbox({"egress": {"default": "deny", "allow": [rule(THIS_HOST + "/32")],
                             "deny": [rule(THIS_HOST + "/32", "tcp", 8080)]}})
    assert _this_host(sb, cmd)[:2] == ("FAIL", "OK")


@pytest.mark.parametrize("net,version", [({"egress": {"default": "allow"}}, "1.0.0"),
                                         ({"defaultPolicy": "allow"}, None)])
def test_model1_default_allow_never_reaches_this_host(internet, sandbox, client, net, version):
    """egress.default allow, and the legacy `allow` without allowLocalNetwork (whose local-network
    ranges do not hold every address a host can have): the internet, never the host's own."""
    d, cmd = client
    assert _this_host(sandbox(net, version=version), cmd) == ("FAIL", "FAIL", "FAIL", "OK")


def _netns_of(world, pid):
    """An open descriptor on the network namespace of pid, a process of the sandbox (its own, not
    the world's: asserted).  Held, it names that namespace for as long as the test needs it,
    whatever becomes of the process (nsenter --net=/proc/self/fd/N, the descriptor passed)."""
    fd = os.open("/proc/%d/ns/net" % pid, os.O_RDONLY | os.O_CLOEXEC)
    if os.fstat(fd).st_ino == world.ino:
        os.close(fd)
        raise AssertionError("process %d runs in the test's host namespace, not a sandbox's" % pid)
    return fd


def _holder_of(mxc, sb):
    """A session's holder (its PID 1, in the sandbox's namespaces), from its state directory."""
    with open(os.path.join(mxc.state_dir, sb.name, "holder")) as f:
        return int(f.read().split()[0])


def _waiting_workload(world, marker, run, done, deadline):
    """The pid of the one-shot's workload: the process outside the world's network namespace whose
    command line names marker (a path only this test's request holds).  A one-shot's workload runs
    only once its stack and rules are in (the holder waits for the network), so from here on the
    sandbox's namespace is complete; pasta's own processes are no such sign (it re-executes and
    daemonizes while it starts: its first process, its helpers and its daemon come and go)."""
    while True:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if marker.encode() not in f.read():
                        continue
                if os.stat("/proc/%s/ns/net" % pid).st_ino != world.ino:
                    return int(pid)
            except OSError:
                pass  # gone: not the workload, which waits for the test
        assert run.is_alive() and time.time() < deadline, done  # done: the one-shot's result, if it ended
        time.sleep(0.05)


LATER = "192.0.2.78"   # added to the test host after the sandbox started: TCP 8080
LATER_NAMED = "192.0.2.79"  # the same, named exactly by the policy
LATER_NET = {"egress": {"default": "deny", "allow": [rule("0.0.0.0/0"), rule(LATER_NAMED + "/32", "tcp", 8080)]}}
LATER_SPECS = ("tcp:%s:8080" % LATER, "tcp:%s:8080" % LATER_NAMED, "tcp:%s:8080" % WEB)


def _host_gains_addresses(world, nsfd):
    """Adds LATER and LATER_NAMED to the test host (a service on each), then waits until the rules
    in the sandbox's network namespace (nsfd, _netns_of) hold both (the runtime follows the host's
    addresses)."""
    for a in (LATER, LATER_NAMED):
        _sh("ip", "addr", "add", a + "/32", "dev", "d0")
        world.serve(a, 8080)
    deadline = time.time() + 30
    while True:
        out = subprocess.run(["nsenter", "--net=/proc/self/fd/%d" % nsfd, "nft", "list", "set", "inet", "mxc",
                              "thishost"], capture_output=True, text=True, pass_fds=(nsfd,)).stdout
        if LATER in out and LATER_NAMED in out:
            return
        assert time.time() < deadline, out
        time.sleep(0.05)


def test_model1_an_address_the_host_gains_later_is_this_host_too(internet, mxc, client):
    """The rules follow the host: an address added after the session started (with a service on
    it) is rejected like the others once the runtime has seen it, and named exactly it is reached."""
    d, cmd = client
    sb = Surface(mxc, "session", LATER_NET, d, "1.0.0")
    assert probe(sb, cmd, "tcp:%s:8080" % WEB) == {"tcp:%s:8080" % WEB: "OK"}
    nsfd = _netns_of(internet, _holder_of(mxc, sb))
    try:
        _host_gains_addresses(internet, nsfd)
    finally:
        os.close(nsfd)
    got = probe(sb, cmd, *LATER_SPECS)
    assert got == dict(zip(LATER_SPECS, ("FAIL", "OK", "OK"))), got


def test_model1_an_address_the_host_gains_during_a_one_shot_is_this_host_too(internet, mxc, client):
    """The same on a one-shot: its workload waits (for a file the test makes) until the host has
    gained the addresses and the rules hold them, then dials."""
    d, cmd = client
    go = os.path.join(d, "go")
    done = {}
    script = "while [ ! -e %s ]; do sleep 0.05; done; %s %s" % (go, cmd, " ".join(LATER_SPECS))
    run = threading.Thread(target=lambda: done.setdefault("r", mxc(dict(
        v1(LATER_NET), filesystem={"readonlyPaths": [d]}, process={"commandLine": script}), timeout=120)))
    run.start()
    try:
        nsfd = _netns_of(internet, _waiting_workload(internet, go, run, done, time.time() + 60))
        try:
            _host_gains_addresses(internet, nsfd)
        finally:
            os.close(nsfd)
    finally:
        open(go, "w").close()
        run.join()
    r = done["r"]
    assert r.rc == 0, r.describe()
    got = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines()}
    assert got == dict(zip(LATER_SPECS, ("FAIL", "OK", "OK"))), got


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
    """The host's loopback resolver (127.0.0.1:53, what systemd-resolved or dnsmasq would be), one
    on the host's own address (THIS_HOST:53, a dnsmasq on a host interface) and a resolver on the
    test's internet (192.0.2.53:53)."""
    _sh("ip", "netns", "exec", internet.far, "ip", "addr", "add", "192.0.2.53/32", "dev", "d1")
    made = {"loopback": _Resolver("127.0.0.1"), "own": _Resolver(THIS_HOST)}
    with internet.in_far():
        made["lan"] = _Resolver("192.0.2.53")
    yield made
    for r in made.values():
        r.close()


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


def test_dns_forwarder_never_relays_to_a_resolver_on_this_hosts_own_address(resolvers, sandbox, client,
                                                                           host_resolv, mxc):
    """Issue 27, third round: a resolver on one of the host's own addresses (a dnsmasq on a host
    interface) is a host service like one on its loopback: skipped for the next one, and with none
    other no forwarder, said in the sandbox's resolv.conf."""
    d, cmd = client
    with open(os.path.join(d, "dns.py"), "w") as f:
        f.write(DNS_CLIENT)
    os.chmod(os.path.join(d, "dns.py"), 0o644)
    net = {"egress": {"default": "allow"}}
    host_resolv("nameserver %s\n" % THIS_HOST)
    r = sandbox(net).run("/usr/bin/python3 %s/dns.py" % d)
    assert r.rc == 0, r.describe()
    assert resolvers["own"].got == [], "the resolver on this host's own address was reached"
    lines = r.stdout.splitlines()
    assert lines[0] == "DNS-NONE" and "this host's own addresses" in lines[1], r.stdout
    host_resolv("nameserver %s\nnameserver 192.0.2.53\n" % THIS_HOST)
    r = sandbox(net).run("/usr/bin/python3 %s/dns.py" % d)
    assert resolvers["own"].got == [], "the resolver on this host's own address was reached"
    assert r.rc == 0 and r.stdout.splitlines() == ["DNS-REPLY", "nameserver 10.0.2.3"], r.describe()
    assert len(resolvers["lan"].got) == 1, resolvers["lan"].got


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


def test_dry_run_shows_this_hosts_own_addresses(internet, mxc):
    """The plan's rule set holds this host's destinations as they are now, rejected after the
    denies and the allows of exactly one address, before every broader allow."""
    net = {"egress": {"default": "deny", "allow": [rule("0.0.0.0/0"), rule(THIS_HOST + "/32", "tcp", 8080)],
                      "deny": [rule("198.51.100.66/32")]}}
    r = mxc(argv=["--dry-run", "--config", mxc.config_file(dict(v1(net), process={"commandLine": "true"}))])
    assert r.rc == 0, r.describe()
    out = r.stdout
    elements = out[out.index("add element inet mxc thishost {"):].split("\n")[0]
    for p in ("127.0.0.0/8", HOST_ADDR + "/32", THIS_HOST + "/32"):
        assert p in elements, elements
    order = [out.index(x) for x in ("198.51.100.66/32 reject", THIS_HOST + "/32 meta l4proto tcp th dport 8080 accept",
                                    "ip daddr @thishost reject", "0.0.0.0/0 accept")]
    assert order == sorted(order), out
    assert "ip daddr { 0.0.0.0/8, 127.0.0.0/8 } reject" in out
    legacy = mxc(argv=["--dry-run", "--config", mxc.config_file({"network": {"defaultPolicy": "allow"},
                                                                   "process": {"commandLine": "true"}})])
    rules = json.loads(legacy.stdout)["result"]["plan"]["networkRules"]
    assert "ip daddr @thishost reject" in rules and THIS_HOST + "/32" in rules, rules


def test_probe_reports_what_the_host_can_enforce():
    out = json.loads(subprocess.run([MXC_EXEC, "--probe"], capture_output=True, check=True).stdout)
    nm = out["result"]["networkModels"]
    assert nm["userspaceStack"]["present"] is True and nm["nfTables"] is True and nm["conntrack"] is True, nm
    assert "127.0.0.0/8" in nm["thisHost"]["rejected"] and nm["thisHost"]["followsChanges"] is True, nm
    # model 1's pool (src/net/netpool.h): its size as configured, what is ready, what an entry costs idle
    pool = nm["pool"]
    assert pool["size"] == int(os.environ.get("MXC_NETPOOL_SIZE", "0")) and pool["maxAgeSeconds"] == 3600, pool
    assert pool["ready"] >= 0 and (pool["idlePssKiB"] is None or pool["idlePssKiB"] > 0), pool


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
