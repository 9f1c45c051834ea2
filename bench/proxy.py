#!/usr/bin/env python3
"""mxc-proxy against a direct connection and against tinyproxy, in one run (issue 15):

  TCP throughput through a CONNECT tunnel           vs  direct between the same two namespaces
  connection setup (connect, CONNECT, 200, first upstream byte), median
  1000 concurrent tunnels: all established?  memory per tunnel (the proxy's RSS growth), and the
  throughput of one more (bulk) tunnel while they are held (the pipe budget at work)

The client lives in a "sandbox" namespace; the server (198.51.100.7: a sink on 9000, a
send-one-byte on 9001) in an "internet" namespace; a veth (192.0.2.0/24) joins them for the
direct path and for tinyproxy, which listens on the internet side as a user would run it.
mxc-proxy runs as the executor runs it: its listener made inside the sandbox namespace
(127.0.0.1:3128), the proxy itself in the internet one.  Both proxies authenticate (Basic).
Nothing leaves the namespaces this script creates.

Usage: sudo bench/proxy.py [N]   (needs build/mxc-proxy, tinyproxy; N: latency samples, default 300)

A/B of two mxc-proxy builds in the same run: MXC_PROXY_B=/path/to/other/mxc-proxy adds a
"mxc-proxy B" row (its own listener, 127.0.0.1:3129), measured interleaved with the others;
MXC_BENCH_RUNS sets the throughput runs per path (default 30: single runs swing widely on two vCPUs); MXC_BENCH_RAW=FILE writes every
sample (JSON, in the order taken) for paired comparisons.
"""
import base64, ctypes, json, os, shutil, socket, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROXY = os.environ.get("MXC_PROXY", os.path.join(ROOT, "build", "mxc-proxy"))
PROXY_B = os.environ.get("MXC_PROXY_B")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
RUNS = int(os.environ.get("MXC_BENCH_RUNS", "30"))
SERVER, SINK, FIRST, HOLD = "198.51.100.7", 9000, 9001, 9002
MB = 256
TUNNELS = 1000
USER, TOKEN = "mxc", "0123456789abcdef0123456789abcdef"
_libc = ctypes.CDLL(None, use_errno=True)


def sh(*cmd):
    subprocess.run(list(cmd), check=True, capture_output=True)


def setns(name):
    fd = os.open("/run/netns/" + name, os.O_RDONLY)
    try:
        if _libc.setns(fd, 0x40000000) != 0:
            raise OSError(ctypes.get_errno(), "setns")
    finally:
        os.close(fd)


def servers(stop):
    def sink():
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((SERVER, SINK)); s.listen(64); s.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = s.accept()
            except socket.timeout:
                continue
            threading.Thread(target=drain, args=(c,), daemon=True).start()

    def drain(c):
        while c.recv(1 << 20):
            pass
        c.sendall(b"k"); c.close()

    def first(port, hold):
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((SERVER, port)); s.listen(4096); s.settimeout(0.2)
        held = []
        while not stop.is_set():
            try:
                c, _ = s.accept()
            except socket.timeout:
                continue
            c.sendall(b"x")
            if not hold:
                c.close()
                continue
            held.append(c)  # kept open: the 1000-tunnel row holds them
            if len(held) > 2 * TUNNELS:
                for h in held[:TUNNELS]:
                    h.close()
                del held[:TUNNELS]

    threading.Thread(target=sink, daemon=True).start()
    threading.Thread(target=first, args=(FIRST, False), daemon=True).start()
    threading.Thread(target=first, args=(HOLD, True), daemon=True).start()


def tunnel(proxy, port):
    """(socket, bytes already read past the proxy's reply) through proxy (None: direct) to SERVER:port."""
    if proxy is None:
        return socket.create_connection((SERVER, port)), b""
    s = socket.create_connection(proxy)
    cred = base64.b64encode(("%s:%s" % (USER, TOKEN)).encode()).decode()
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\nProxy-Authorization: Basic %s\r\n\r\n"
               % (SERVER, port, SERVER, port, cred)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(4096)
        if not b:
            raise OSError("proxy closed: %r" % head)
        head += b
    if not head.startswith(b"HTTP/1.") or b" 200 " not in head.split(b"\r\n")[0]:
        raise OSError("proxy refused: %r" % head)
    return s, head.split(b"\r\n\r\n", 1)[1]


def throughput(proxy):
    s, _ = tunnel(proxy, SINK)
    buf = b"x" * (1 << 20)
    t = time.perf_counter()
    for _ in range(MB):
        s.sendall(buf)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    dt = time.perf_counter() - t
    s.close()
    return MB * 1.048576 / dt


def setup_ms(proxy):
    t = time.perf_counter()
    s, extra = tunnel(proxy, FIRST)
    if not extra:
        s.recv(1)
    dt = (time.perf_counter() - t) * 1000
    s.close()
    return dt


def cpu_ns(pids):
    """CPU time the processes have run (ns, /proc/PID/schedstat), threads included."""
    total = 0
    for pid in pids:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                total += int(open("/proc/%d/task/%s/schedstat" % (pid, t)).read().split()[0])
            except OSError:
                pass  # a thread that just ended
    return total


def rss_kb(pids):
    total = 0
    for pid in pids:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def many(proxy, pids):
    before = rss_kb(pids)
    held, failed = [], 0
    for _ in range(TUNNELS):
        try:
            s, extra = tunnel(proxy, HOLD)
            if not extra:
                s.recv(1)
            held.append(s)
        except OSError as e:
            failed += 1
            if failed == 1:
                print("(first failure: %s)" % e, file=sys.stderr)
    time.sleep(0.5)
    after = rss_kb(pids)
    bulk = throughput(proxy)  # one more tunnel, a bulk one, while they are held
    for s in held:
        s.close()
    time.sleep(0.5)  # the proxy closes them (and frees their pipes) before the next one is measured
    return len(held), failed, (after - before) / max(1, len(held)), bulk


def main():
    tag = "%d" % os.getpid()
    inet, sbx = "mxcbp-i" + tag, "mxcbp-s" + tag
    tmp = tempfile.mkdtemp(prefix="mxc-bench-proxy-")
    procs = []
    stop = threading.Event()
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        for n in (inet, sbx):
            sh("ip", "netns", "add", n)
            sh("ip", "netns", "exec", n, "ip", "link", "set", "lo", "up")
        sh("ip", "netns", "exec", inet, "ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1")
        sh("ip", "netns", "exec", inet, "ip", "link", "set", "d0", "up")
        sh("ip", "netns", "exec", inet, "ip", "link", "set", "d1", "up")
        sh("ip", "netns", "exec", inet, "ip", "addr", "add", SERVER + "/24", "dev", "d0")
        sh("ip", "netns", "exec", inet, "ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", sbx)
        sh("ip", "netns", "exec", inet, "ip", "addr", "add", "192.0.2.1/24", "dev", "v0")
        sh("ip", "netns", "exec", inet, "ip", "link", "set", "v0", "up")
        sh("ip", "netns", "exec", sbx, "ip", "addr", "add", "192.0.2.2/24", "dev", "v1")
        sh("ip", "netns", "exec", sbx, "ip", "link", "set", "v1", "up")
        sh("ip", "netns", "exec", sbx, "ip", "route", "add", "198.51.100.0/24", "via", "192.0.2.1")
        setns(inet)
        servers(stop)
        # tinyproxy, on the internet side of the veth
        conf = os.path.join(tmp, "tinyproxy.conf")
        with open(conf, "w") as f:
            f.write("Port 8888\nListen 192.0.2.1\nTimeout 600\nMaxClients 4096\nAllow 192.0.2.0/24\n"
                    "BasicAuth %s %s\nConnectPort %d\nConnectPort %d\nConnectPort %d\nLogLevel Critical\n"
                    "LogFile \"%s/tp.log\"\n" % (USER, TOKEN, SINK, FIRST, HOLD, tmp))
        tp = subprocess.Popen(["tinyproxy", "-d", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(tp)
        # mxc-proxy, as the executor starts it
        sleeper = subprocess.Popen(["sleep", "3600"])
        procs.append(sleeper)
        pidfd = os.pidfd_open(sleeper.pid)

        def start_mxc(binary, port):
            setns(sbx)
            lst = socket.socket()
            lst.bind(("127.0.0.1", port))
            lst.listen(4096)
            setns(inet)
            r, w = os.pipe()
            mp = subprocess.Popen([binary, "--listen-fd", str(lst.fileno()), "--config-fd", str(r),
                                   "--watch-fd", str(pidfd)], pass_fds=(lst.fileno(), r, pidfd))
            procs.append(mp)
            os.close(r)
            os.write(w, json.dumps({"sandbox": "bench", "user": USER, "token": TOKEN, "allowed": [
                "198.51.100.0/24:%d" % p for p in (SINK, FIRST, HOLD)], "blocked": []}).encode())
            os.close(w)
            lst.close()
            return mp

        mp = start_mxc(PROXY, 3128)
        mpb = start_mxc(PROXY_B, 3129) if PROXY_B else None
        time.sleep(0.5)
        setns(sbx)  # the client side from here on
        peers = [("direct", None, []), ("mxc-proxy", ("127.0.0.1", 3128), [mp.pid]),
                 ("tinyproxy 1.11.1", ("192.0.2.1", 8888), [tp.pid])]
        if mpb:
            peers.insert(2, ("mxc-proxy B", ("127.0.0.1", 3129), [mpb.pid]))
        for _, p, _ in peers:  # warm
            throughput(p), setup_ms(p)
        tput = {n: [] for n, _, _ in peers}
        lat = {n: [] for n, _, _ in peers}
        # interleaved, the order rotated every round: no path always follows the same other one
        for i in range(RUNS):
            for n, p, _ in peers[i % len(peers):] + peers[:i % len(peers)]:
                tput[n].append(throughput(p))
        cpu0 = {n: cpu_ns(pids) for n, _, pids in peers}
        for i in range(N):
            for n, p, _ in peers[i % len(peers):] + peers[:i % len(peers)]:
                lat[n].append(setup_ms(p))
        cpu = {n: (cpu_ns(pids) - cpu0[n]) / 1000.0 / N for n, _, pids in peers}  # µs per setup
        if os.environ.get("MXC_BENCH_RAW"):
            with open(os.environ["MXC_BENCH_RAW"], "w") as f:
                json.dump({"throughput": tput, "setup": lat, "setup_cpu_us": cpu}, f)
        print("proxy: %d MiB per throughput run (%d runs), %d setup samples, interleaved\n" % (MB, RUNS, N))
        print("| path | TCP throughput MB/s | vs direct | setup (connect, CONNECT, first byte) median ms | "
              "added vs direct ms |")
        print("|---|---|---|---|---|")
        t0, l0 = statistics.median(tput["direct"]), statistics.median(lat["direct"])
        for n, _, _ in peers:
            t, l = statistics.median(tput[n]), statistics.median(lat[n])
            print("| %s | %.0f | %.2fx | %.3f | %+.3f |" % (n, t, t / t0, l, l - l0))
        print()
        print("proxy CPU per setup (its threads, /proc/PID/task/*/schedstat, over the setup samples): " +
              ", ".join("%s %.1f µs" % (n, cpu[n]) for n, _, pids in peers if pids))
        print()
        print("| %d concurrent tunnels | established | failed | RSS growth per tunnel KiB | "
              "one more, bulk, meanwhile MB/s |" % TUNNELS)
        print("|---|---|---|---|---|")
        for n, p, pids in peers[1:]:
            ok, failed, per, bulk = many(p, pids)
            print("| %s | %d | %d | %.1f | %.0f |" % (n, ok, failed, per, bulk))
    finally:
        stop.set()
        for p in procs:
            p.kill()
            p.wait()
        _libc.setns(home, 0x40000000)
        os.close(home)
        for n in (inet, sbx):
            subprocess.run(["ip", "netns", "del", n], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


main()
