#!/usr/bin/env python3
"""Network models, side by side in one run (issue 14):

  TCP throughput and connect latency of a model-1 sandbox (mxc one-shot, egress allow: its own
  namespace, pasta, the nftables ruleset)
      vs  the host network (the client in the test namespace itself: no stack)
      vs  pasta alone (the client in a bare namespace behind pasta started with mxc's arguments,
          no sandbox and no rules)
  one-shot `true` start cost of each model (1, 2, the host network) vs model 3 (nothing), hot and
  with idle gaps, interleaved

NETWORK SAFETY: everything happens inside a network namespace this script creates (a veth pair
whose both ends live in it, the documentation address 198.51.100.7 on it, the servers bound
there, its default route onto its own veth); the sandboxes and pasta's host side are in it.  No
packet leaves it.

Usage: sudo bench/net.py [N]   (needs build/mxc-exec, pasta; N: runs per side, default 15)

       sudo bench/net.py --start [N]   (issue 38) start cost only, each networked start beside its
       blocked counterpart, interleaved, hot and with idle gaps, as ratios: a model-1 one-shot and a
       governed one-shot (network.allowedHosts: mxc-proxy) vs a blocked one-shot (model 3); a model-1
       session start vs a blocked session's start; an mxc-oci create->start annotated with
       io.mxc.network (governed egress) vs the same bundle unannotated (a namespace of its own, nothing
       in it).  Model 1 with its pool of namespaces made ahead (src/net/netpool.h): of N + 1 entries
       (or MXC_NETPOOL_SIZE as set), which the hot burst of N does not drain, and of 2, which it does,
       each filled before its samples; and with it off (MXC_NETPOOL_SIZE=0: the namespace and pasta
       made at the start).  Needs build/mxc-exec, build/mxc-proxy, build/mxc-oci (or $MXC_OCI), pasta, /bin/busybox.
       Nothing is sent anywhere: the sandboxes only start, `true` inside a namespace made here.
       --only TEXT keeps the rows whose label contains TEXT.
"""
import ctypes, json, os, shutil, socket, statistics, subprocess, sys, tempfile, threading, time

from bundles import spec_bundle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from netpool_util import POOL, discard_entry, pool_records  # noqa: E402 (tests/: model 1's pool's records)
EXE = os.environ.get("MXC_EXEC", os.path.join(ROOT, "build", "mxc-exec"))
MXC_OCI = os.path.realpath(os.environ.get("MXC_OCI", os.path.join(ROOT, "build", "mxc-oci")))
START = "--start" in sys.argv
_ARGS = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and sys.argv[i - 1] != "--only"]
N = int(_ARGS[0]) if _ARGS else 15
SERVER = "198.51.100.7"
SINK, ACCEPT = 9000, 9001
MB = 64  # per throughput run
CONNECTS = 200
GAP = 0.1
STATE = tempfile.mkdtemp(prefix="mxc-bench-net-", dir="/var/tmp")
ENV = dict(os.environ, MXC_STATE_DIR=STATE, MXC_WORKSPACE_ROOT=STATE + ".ws")
ENV.setdefault("MXC_NETPOOL_SIZE", "2")  # model 1's pool is off by default (src/net/netpool.h): on for the pool rows

CLIENT = r'''
import socket, statistics, sys, time
mode, host = sys.argv[1], sys.argv[2]
if mode == "tput":
    mb = int(sys.argv[3]); buf = b"x" * (1 << 20)
    s = socket.create_connection((host, 9000)); t = time.perf_counter()
    for _ in range(mb):
        s.sendall(buf)
    s.shutdown(socket.SHUT_WR); s.recv(1)
    print("%.1f" % (mb * 1.048576 / (time.perf_counter() - t)))
else:
    xs = []
    for _ in range(int(sys.argv[3])):
        t = time.perf_counter(); s = socket.create_connection((host, 9001)); s.recv(1)
        xs.append((time.perf_counter() - t) * 1000); s.close()
    print("%.3f" % statistics.median(xs))
'''

_libc = ctypes.CDLL(None, use_errno=True)


def sh(*cmd):
    subprocess.run(list(cmd), check=True, capture_output=True)


def setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, 0x40000000) != 0:
            raise OSError(ctypes.get_errno(), "setns " + path)
    finally:
        os.close(fd)


def serve(stop):
    def sink():
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((SERVER, SINK)); s.listen(8); s.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = s.accept()
            except socket.timeout:
                continue
            c.settimeout(None)
            while c.recv(1 << 20):
                pass
            c.sendall(b"k"); c.close()

    def accept():
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((SERVER, ACCEPT)); s.listen(256); s.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = s.accept()
            except socket.timeout:
                continue
            c.sendall(b"x"); c.close()

    ts = [threading.Thread(target=f, daemon=True) for f in (sink, accept)]
    for t in ts:
        t.start()
    return ts


POOL_OFF = dict(ENV, MXC_NETPOOL_SIZE="0")  # model 1's pool (src/net/netpool.h) off: today's path
# a pool that covers the hot burst (N starts back to back) and the pool of 2 a burst drains
POOL_BURST = dict(ENV, MXC_NETPOOL_SIZE=os.environ.get("MXC_NETPOOL_SIZE", str(min(32, N + 1))))
POOL_TWO = dict(ENV, MXC_NETPOOL_SIZE="2")


def mxc(req, env=ENV):
    p = subprocess.run([EXE, "--config", "-"], input=json.dumps(req).encode(), capture_output=True, env=env)
    if p.returncode != 0:
        sys.exit("mxc-exec failed on %s: %s %s" % (req, p.stdout[-400:], p.stderr[-400:]))
    return p.stdout.decode()


def timed(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def main():
    name = "mxcbench%d" % os.getpid()
    inner = name + "i"
    sh("ip", "netns", "add", name)
    sh("ip", "netns", "add", inner)
    pasta_pid = None
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    stop = threading.Event()
    cdir = tempfile.mkdtemp(prefix="mxc-bench-client-", dir="/var/tmp")
    os.chmod(cdir, 0o755)
    client = os.path.join(cdir, "client.py")
    with open(client, "w") as f:
        f.write(CLIENT)
    os.chmod(client, 0o644)
    try:
        ns = lambda *c: sh("ip", "netns", "exec", name, *c)  # noqa: E731
        ns("ip", "link", "set", "lo", "up")
        ns("ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1")
        ns("ip", "link", "set", "d0", "up")
        ns("ip", "link", "set", "d1", "up")
        ns("ip", "addr", "add", SERVER + "/24", "dev", "d0")
        ns("ip", "route", "add", "default", "via", "198.51.100.254", "dev", "d0", "onlink")
        setns("/run/netns/" + name)  # from here on, every child (mxc-exec, pasta) is in it
        serve(stop)
        time.sleep(0.2)
        pidfile = os.path.join(cdir, "pasta.pid")
        # pasta alone, with the arguments mxc gives it (src/net/stack.c), in a bare namespace
        subprocess.run(["pasta", "-q", "--runas", "0:0", "--config-net", "--address", "10.0.2.100", "--netmask", "24",
                        "--gateway", "10.0.2.2", "--ns-ifname", "tap0", "--dns-forward", "10.0.2.3", "--ipv4-only",
                        "-t", "none", "-u", "none", "-T", "none", "-U", "none", "--no-map-gw",
                        "--netns", "/run/netns/" + inner, "--netns-only", "-P", pidfile],
                       check=True, capture_output=True)
        pasta_pid = int(open(pidfile).read())
        py = "/usr/bin/python3 %s" % client
        paths = [
            ("host network (no stack)", lambda m, a: subprocess.run(["/usr/bin/python3", client, m, SERVER, a],
                                                                    capture_output=True, text=True).stdout),
            ("pasta alone", lambda m, a: subprocess.run(["ip", "netns", "exec", inner, "/usr/bin/python3", client, m,
                                                         SERVER, a], capture_output=True, text=True).stdout),
            ("mxc model 1 (pasta + rules, sandboxed)",
             lambda m, a: mxc({"version": "1.0.0", "network": {"egress": {"default": "allow"}},
                               "filesystem": {"readonlyPaths": [cdir]},
                               "process": {"commandLine": "%s %s %s %s" % (py, m, SERVER, a)}})),
        ]
        tput = {p: [] for p, _ in paths}
        lat = {p: [] for p, _ in paths}
        for _ in range(max(3, N // 3)):
            for label, fn in paths:
                tput[label].append(float(fn("tput", str(MB))))
                lat[label].append(float(fn("lat", str(CONNECTS))))
        print("network: %d MiB per throughput run, %d connects (+ first byte) per latency run, %d runs per path, "
              "interleaved; the servers on %s in a namespace made here\n" % (MB, CONNECTS, max(3, N // 3), SERVER))
        base_t, base_l = statistics.median(tput[paths[0][0]]), statistics.median(lat[paths[0][0]])
        print("| path | TCP throughput MB/s | vs host | connect + first byte, median ms | vs host |")
        print("|---|---|---|---|---|")
        for label, _ in paths:
            t, l = statistics.median(tput[label]), statistics.median(lat[label])
            print("| %s | %.0f | %.2fx | %.3f | %.2fx |" % (label, t, t / base_t, l, l / base_l))
        print()

        # start cost: one-shot `true` under each model vs model 3, interleaved
        def oneshot(net, extra=None):
            req = dict({"version": "1.0.0", "network": net, "process": {"commandLine": "true"}}, **(extra or {}))
            return lambda: mxc(req)
        m3 = oneshot({"egress": {"default": "deny"}})
        models = [("model 1 (egress allow)", oneshot({"egress": {"default": "allow"}})),
                  ("model 1 (one allow rule)", oneshot({"egress": {"default": "deny", "allow": [
                      {"to": [{"cidr": SERVER + "/32"}], "ports": [{"protocol": "tcp", "port": SINK}]}]}})),
                  ("model 2 (networkProxy)", oneshot({"egress": {"default": "deny"}},
                                                     {"runtimeConfig": {"networkProxy": "http://127.0.0.1:3128"}})),
                  ("host network (all-allow)", oneshot({"egress": {"default": "allow"}, "ingress": {
                      "default": "allow", "hostLoopback": "allow"}}))]
        print("| one-shot `true` | median ms | model 3 (nothing) | median ms | ratio |")
        print("|---|---|---|---|---|")
        for label, fn in models:
            for kind, gap in (("hot", 0.0), ("idle gap", GAP)):
                fn(), m3()
                xa, xb = [], []
                for _ in range(N):
                    time.sleep(gap)
                    xa.append(timed(fn))
                    time.sleep(gap)
                    xb.append(timed(m3))
                a, b = statistics.median(xa), statistics.median(xb)
                print("| %s, %s | %.2f | model 3 | %.2f | %.2fx |" % (label, kind, a, b, a / b))
    finally:
        stop.set()
        if pasta_pid:
            try:
                os.kill(pasta_pid, 9)
            except OSError:
                pass
        if _libc.setns(home, 0x40000000) != 0:
            print("warning: could not return to the original network namespace", file=sys.stderr)
        os.close(home)
        subprocess.run(["ip", "netns", "del", inner], check=False)
        subprocess.run(["ip", "netns", "del", name], check=False)
        shutil.rmtree(cdir, ignore_errors=True)
        shutil.rmtree(STATE, ignore_errors=True)
        shutil.rmtree(STATE + ".ws", ignore_errors=True)


# ---- start cost (issue 38): each networked start beside its blocked counterpart ------------------
GOVERNED = {"defaultPolicy": "block", "allowedHosts": ["api.example.test:8080"]}


def mxc_phase(req, env=ENV):
    p = subprocess.run([EXE, "--experimental", "--config", "-"], input=json.dumps(dict(req, version="1.0.0")).encode(),
                       capture_output=True, env=env)
    if p.returncode != 0:
        sys.exit("mxc-exec failed on %s: %s %s" % (req, p.stdout[-400:], p.stderr[-400:]))
    return json.loads(p.stdout)["result"]


class Session:
    """start timed; provision before it and stop + deprovision after it are not."""

    def __init__(self, net, env=ENV):
        self.net, self.env = net, env

    def __call__(self):
        sid = mxc_phase({"containment": "isolation_session", "phase": "provision", "network": self.net})["sandboxId"]
        t = time.perf_counter()
        mxc_phase({"phase": "start", "sandboxId": sid}, self.env)
        ms = (time.perf_counter() - t) * 1000
        for ph in ("stop", "deprovision"):
            mxc_phase({"phase": ph, "sandboxId": sid})
        return ms


class OciStart:
    """mxc-oci create then start of `true` timed; wait and delete are not."""

    def __init__(self, root, bundle):
        self.root, self.bundle, self.n = root, bundle, 0

    def call(self, *a):
        # the container inherits create's stdio: a file, not a pipe whose EOF would wait for it
        with tempfile.TemporaryFile(dir=self.root) as err:
            p = subprocess.run([MXC_OCI, "--root", self.root] + list(a), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=err)
            if p.returncode != 0:
                err.seek(0)
                sys.exit("mxc-oci %s failed: %s" % (" ".join(a), err.read().decode(errors="replace")[-400:]))

    def __call__(self):
        self.n += 1
        cid = "nb-%d-%d" % (os.getpid(), self.n)
        pidf = os.path.join(self.root, "pid-" + cid)
        t = time.perf_counter()
        self.call("create", "--bundle", self.bundle, "--pid-file", pidf, cid)
        self.call("start", cid)
        ms = (time.perf_counter() - t) * 1000
        with open(pidf) as f:
            pid = int(f.read())
        os.waitpid(pid, 0)  # ours: this process is a child subreaper (start_main)
        self.call("delete", "--force", cid)
        os.unlink(pidf)
        return ms


def oci_bundle(path, annotations):
    spec_bundle(path, MXC_OCI, "/bin/busybox", lambda c: c.update(annotations=annotations))
    return path


def oneshot_fn(net, env=ENV):
    # network.allowedHosts is the unversioned request's (the 1.0.0 schema has egress/ingress)
    req = dict({"network": net, "process": {"commandLine": "true"}}, **({} if "allowedHosts" in net else {"version": "1.0.0"}))

    def go():
        t = time.perf_counter()
        mxc(req, env)
        return (time.perf_counter() - t) * 1000
    return go


def drop_pool_entries(ino):
    """model 1's pool entries made for the bench's namespace (their name's key starts with its inode):
    each taken from ready (renamed into claimed), then discarded as --gc would (netpool_util.discard_entry)"""
    for e in pool_records(ino):
        d = os.path.join(POOL, "claimed", e + ".%d" % os.getpid())
        try:
            os.rename(os.path.join(POOL, "ready", e), d)
        except OSError:
            continue
        discard_entry(d, timeout=1.0)


def primed(fn, ino, env):
    """fn, with .fill(): waits (up to 30 s) until the pool holds MXC_NETPOOL_SIZE entries for the
    bench's namespace and the rule set fn's plan has (one key: every row here has the same), and
    drops the entries of other sizes' rows first (a pool of 2's leftovers are still ready)"""
    size = int(env["MXC_NETPOOL_SIZE"])

    def fill():
        drop_pool_entries(ino)
        fn()  # its refill tops the pool up to size
        ready = os.path.join(POOL, "ready")
        end = time.time() + 30
        while time.time() < end and sum(e.startswith("%d-" % ino) for e in os.listdir(ready)) < size:
            time.sleep(0.05)
    fn.fill = fill
    return fn


def start_main():
    if _libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER: a container's init, once started, is reaped here
        sys.exit("cannot become a child subreaper")
    name = "mxcbenchs%d" % os.getpid()
    sh("ip", "netns", "add", name)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    base = tempfile.mkdtemp(prefix="mxc-bench-netstart-", dir="/var/tmp")
    os.chmod(base, 0o755)
    try:
        ns = lambda *c: sh("ip", "netns", "exec", name, *c)  # noqa: E731
        ns("ip", "link", "set", "lo", "up")  # pasta needs a routable interface: a veth pair, both ends here
        ns("ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1")
        ns("ip", "link", "set", "d0", "up")
        ns("ip", "link", "set", "d1", "up")
        ns("ip", "addr", "add", SERVER + "/24", "dev", "d0")
        ns("ip", "route", "add", "default", "via", "198.51.100.254", "dev", "d0", "onlink")
        setns("/run/netns/" + name)  # every sandbox, pasta and mxc-proxy below starts in it
        blocked = {"egress": {"default": "deny"}}
        oroot = os.path.join(base, "oci-root")
        os.makedirs(oroot)
        ino = os.stat("/run/netns/" + name).st_ino
        burst = "pool of %s" % POOL_BURST["MXC_NETPOOL_SIZE"]
        rows = [
            ("one-shot `true`, model 1 (egress allow), %s" % burst,
             primed(oneshot_fn({"egress": {"default": "allow"}}, POOL_BURST), ino, POOL_BURST),
             "blocked one-shot (model 3)", oneshot_fn(blocked)),
            ("one-shot `true`, model 1, pool of 2 (drained by the hot burst)",
             primed(oneshot_fn({"egress": {"default": "allow"}}, POOL_TWO), ino, POOL_TWO),
             "blocked one-shot (model 3)", oneshot_fn(blocked)),
            ("one-shot `true`, model 1, pool off (MXC_NETPOOL_SIZE=0)",
             oneshot_fn({"egress": {"default": "allow"}}, POOL_OFF), "blocked one-shot (model 3)", oneshot_fn(blocked)),
            ("one-shot `true`, governed (allowedHosts: mxc-proxy)", oneshot_fn(GOVERNED),
             "blocked one-shot (model 3)", oneshot_fn(blocked)),
            ("session start, model 1 (egress allow), %s" % burst,
             primed(Session({"egress": {"default": "allow"}}, POOL_BURST), ino, POOL_BURST),
             "blocked session's start", Session(blocked)),
            ("session start, model 1, pool off (MXC_NETPOOL_SIZE=0)", Session({"egress": {"default": "allow"}}, POOL_OFF),
             "blocked session's start", Session(blocked)),
            ("mxc-oci create->start, io.mxc.network (governed)",
             OciStart(oroot, oci_bundle(os.path.join(base, "b-gov"), {"io.mxc.version": "1",
                                                                      "io.mxc.network": json.dumps(GOVERNED)})),
             "the bundle unannotated (own netns, nothing in it)", OciStart(oroot, oci_bundle(os.path.join(base, "b-none"), {}))),
        ]
        print("start cost, N = %d per side, interleaved; idle gap %.1f s before each sample\n" % (N, GAP))
        print("| networked start | hot ms | blocked counterpart | hot ms | hot ratio | gap ms | gap blocked ms | gap ratio |")
        print("|---|---|---|---|---|---|---|---|")
        only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
        for label, fa, peer, fb in rows:
            if only not in label:
                continue
            out = []
            for gap in (0.0, GAP):
                fa(), fb()
                getattr(fa, "fill", lambda: None)()  # a pool row: its pool full before the samples
                xa, xb = [], []
                for _ in range(N):
                    time.sleep(gap)
                    xa.append(fa())
                    time.sleep(gap)
                    xb.append(fb())
                out.append((statistics.median(xa), statistics.median(xb)))
            (ha, hb), (ga, gb) = out
            print("| %s | %.2f | %s | %.2f | %.2fx | %.2f | %.2f | %.2fx |" % (label, ha, peer, hb, ha / hb, ga, gb, ga / gb),
                  flush=True)
    finally:
        drop_pool_entries(os.stat("/run/netns/" + name).st_ino)
        if _libc.setns(home, 0x40000000) != 0:
            print("warning: could not return to the original network namespace", file=sys.stderr)
        os.close(home)
        subprocess.run(["ip", "netns", "del", name], check=False)
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(STATE, ignore_errors=True)
        shutil.rmtree(STATE + ".ws", ignore_errors=True)


if START:
    start_main()
else:
    main()
