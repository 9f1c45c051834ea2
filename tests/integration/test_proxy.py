"""Issue 15, first slice: mxc-proxy itself, driven the way the executor will drive it — its
listening socket made inside a "sandbox" network namespace that has nothing but loopback, the
proxy running outside it, the configuration on a pipe, a pidfd it watches.

NETWORK SAFETY.  Everything runs inside network namespaces this file creates: the "host" (where
this process, mxc-exec and the proxy run: its loopback and its own address 192.0.2.1 serve
:8080 — this host, which a broad allow must never reach), the "internet" (the origins, on
documentation-range addresses, one veth away; neither has a route anywhere else), and an empty
one (the sandbox's).  Names resolve only through a hosts file the test writes; no DNS query is
sent.
"""
import base64
import ctypes
import json
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import REPO, serve_tcp, unique
from netpool_util import netns, procs_named

PROXY = os.path.realpath(os.environ.get("MXC_PROXY", os.path.join(os.path.dirname(
    os.path.realpath(os.environ.get("MXC_EXEC", os.path.join(REPO, "build", "mxc-exec")))), "mxc-proxy")))
CLONE_NEWNET = 0x40000000
WEB, WEB2, OTHER = "198.51.100.7", "198.51.100.8", "203.0.113.5"
USER, TOKEN = "mxc", "s3cr3t-token-0123456789abcdef"
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + path)
    finally:
        os.close(fd)


def _serve(addr, port, stop, hits=None):
    """An HTTP/1.1 origin that answers every request with what it received (its first line and
    whether a Proxy-Authorization reached it), and for a CONNECT tunnel echoes a greeting.
    hits: a list every accepted connection is noted in."""

    def handle(c):
        if hits is not None:
            hits.append(addr)
        c.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                got = c.recv(4096)
                if not got:
                    break
                data += got
            head = data.split(b"\r\n\r\n")[0].decode("latin-1")
            body = "%s|auth=%s|host=%s" % (head.splitlines()[0] if head else "",
                                          "proxy-authorization" in head.lower(),
                                          [l.split(":", 1)[1].strip() for l in head.splitlines()
                                           if l.lower().startswith("host:")])
            c.sendall(("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                       % (len(body), body)).encode())
        except OSError:
            pass
        c.close()

    serve_tcp(addr, port, stop, handle)


HOST_ADDR = "192.0.2.1"  # the host namespace's own address (the veth toward the internet)


@pytest.fixture
def world(tmp_path):
    """The host namespace (this process moves into it), the internet one (the origins) and the
    sandbox's (empty); yields a dict of names.  host_hits: every connection the host's own
    services (127.0.0.1:8080, HOST_ADDR:8080) accepted."""
    host, far, sbx = unique("mxcpx"), unique("mxcpf"), unique("mxcps")
    for n in (host, far, sbx):
        subprocess.run(["ip", "netns", "add", n], check=True)
    sh = lambda n, *c: subprocess.run(["ip", "netns", "exec", n] + list(c), check=True,  # noqa: E731
                                      capture_output=True)
    for n in (host, far, sbx):
        sh(n, "ip", "link", "set", "lo", "up")
    sh(host, "ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1", "netns", far)
    sh(host, "ip", "addr", "add", HOST_ADDR + "/24", "dev", "d0")
    sh(host, "ip", "link", "set", "d0", "up")
    sh(far, "ip", "addr", "add", "192.0.2.2/24", "dev", "d1")
    for a in (WEB, WEB2, OTHER):
        sh(far, "ip", "addr", "add", a + "/24", "dev", "d1")
    sh(far, "ip", "link", "set", "d1", "up")
    sh(host, "ip", "route", "add", "default", "via", "192.0.2.2", "dev", "d0")
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    stop = threading.Event()
    hits = []
    # a thread lives in the namespace of the thread that started it
    _setns("/run/netns/" + far)
    threads = [threading.Thread(target=_serve, args=(a, p, stop), daemon=True)
               for a, p in ((WEB, 8080), (WEB, 443), (WEB2, 8080), (OTHER, 8080))]
    for t in threads:
        t.start()
    _setns("/run/netns/" + host)
    mine = [threading.Thread(target=_serve, args=(a, 8080, stop, hits), daemon=True) for a in ("127.0.0.1", HOST_ADDR)]
    for t in mine:
        t.start()
    threads += mine
    hosts = tmp_path / "hosts"
    hosts.write_text("%s api.example.test\n%s dl.cdn.example.test\n%s other.test\n127.0.0.1 rebind.example.test\n"
                     "%s blocked.api.example.test\n%s fallback.example.test\n%s fallback.example.test\n"
                     "%s dead.example.test\n%s self.example.test\n" % (WEB, WEB2, OTHER, WEB2, WEB2, WEB, WEB2, HOST_ADDR))
    try:
        yield {"host": host, "far": far, "sbx": sbx, "hosts": str(hosts), "tmp": tmp_path, "host_hits": hits}
    finally:
        stop.set()
        for t in threads:
            t.join()
        if _libc.setns(home, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns home")
        os.close(home)
        for n in (host, far, sbx):
            subprocess.run(["ip", "netns", "del", n], check=False)


class Proxy:
    def __init__(self, world, allowed, blocked=(), resolv=None, preexec_fn=None, **extra):
        # the listener, made inside the sandbox's namespace (as the executor does)
        with in_sandbox_ns(world):
            self.listener = socket.socket()
            self.listener.bind(("127.0.0.1", 3128))
            self.listener.listen(1024)
        cfg = dict({"sandbox": "t1", "user": USER, "token": TOKEN, "allowed": list(allowed),
                    "blocked": list(blocked), "hostsFile": world["hosts"]}, **extra)
        r, w = os.pipe()
        self.status_r, sw = os.pipe()  # "ok" (and the CA's PEM with credentials), then EOF
        self.audit_path = str(world["tmp"] / "audit.jsonl")
        afd = os.open(self.audit_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.sleeper = subprocess.Popen(["sleep", "600"])  # the "sandbox PID 1" the proxy watches
        self.pidfd = os.pidfd_open(self.sleeper.pid)
        lfd = self.listener.fileno()
        # resolv: a resolv.conf for the proxy alone (a mount namespace of its own, bound over /etc/resolv.conf)
        wrap = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolv] if resolv else []
        self.p = subprocess.Popen(wrap + [PROXY, "--listen-fd", str(lfd), "--config-fd", str(r), "--watch-fd",
                                   str(self.pidfd), "--audit-fd", str(afd), "--status-fd", str(sw)],
                                  pass_fds=(lfd, r, self.pidfd, afd, sw), stderr=subprocess.PIPE,
                                  preexec_fn=preexec_fn)
        os.close(r)
        os.close(sw)
        os.close(afd)
        os.write(w, json.dumps(cfg).encode())
        os.close(w)
        self.listener.close()  # the proxy's now
        self.world = world

    def in_sandbox(self, *argv, timeout=30):
        return subprocess.run(["ip", "netns", "exec", self.world["sbx"]] + list(argv), capture_output=True,
                              text=True, timeout=timeout)

    def curl(self, url, user=USER, token=TOKEN, extra=()):
        proxy = "http://%s:%s@127.0.0.1:3128" % (user, token) if user is not None else "http://127.0.0.1:3128"
        r = self.in_sandbox("curl", "-sS", "-o", "-", "-w", "\\n%{http_code} %{http_connect}", "-x", proxy,
                            "--max-time", "10", *extra, url)
        return r

    def raw(self, data, read_timeout=5):
        """Sends raw bytes to the proxy from inside the sandbox; returns what came back."""
        code = ("import socket,sys,base64\ns=socket.create_connection(('127.0.0.1',3128));s.settimeout(%d)\n"
                "s.sendall(base64.b64decode(sys.argv[1]))\nout=b''\ntry:\n    while True:\n"
                "        b=s.recv(65536)\n        if not b: break\n        out+=b\nexcept Exception: pass\n"
                "sys.stdout.buffer.write(out)\n" % read_timeout)
        r = subprocess.run(["ip", "netns", "exec", self.world["sbx"], "python3", "-c", code,
                            base64.b64encode(data).decode()], capture_output=True, timeout=30)
        return r.stdout.decode("latin-1")  # bytes as sent: CRLF kept

    def status(self):
        """What the proxy answered on its status fd (read to its EOF)."""
        out = b""
        while True:
            b = os.read(self.status_r, 65536)
            if not b:
                return out.decode()
            out += b

    def audit(self):
        with open(self.audit_path) as f:
            return [json.loads(l) for l in f]

    def close(self):
        if getattr(self, "closed", False):
            return
        self.closed = True
        self.sleeper.kill()
        self.sleeper.wait()
        try:
            self.p.wait(timeout=10)  # it ends with the watched process
        finally:
            if self.p.poll() is None:
                self.p.kill()
            os.close(self.pidfd)
            os.close(self.status_r)


@pytest.fixture
def proxy(world):
    made = []

    def make(allowed, blocked=(), resolv=None, **extra):
        p = Proxy(world, allowed, blocked, resolv, **extra)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


class in_sandbox_ns:
    """with in_sandbox_ns(world): sockets made (and threads started) in the block live in the
    sandbox's namespace (in_sandbox_ns(world, "far"): the internet's)."""

    def __init__(self, world, which="sbx"):
        self.path = "/run/netns/" + world[which]

    def __enter__(self):
        self.here = os.open("/proc/self/ns/net", os.O_RDONLY)
        _setns(self.path)

    def __exit__(self, *exc):
        _libc.setns(self.here, CLONE_NEWNET)
        os.close(self.here)


def in_internet(world):
    """with in_internet(world): where the origins live."""
    return in_sandbox_ns(world, "far")


def auth(user=USER, token=TOKEN):
    return "Proxy-Authorization: Basic %s\r\n" % base64.b64encode(("%s:%s" % (user, token)).encode()).decode()


# ---- the happy paths -----------------------------------------------------------------------

def test_allowed_host_plain_http_and_connect(proxy):
    p = proxy(["api.example.test:8080", "api.example.test"])
    r = p.curl("http://api.example.test:8080/v1?q=1")
    assert r.stdout.endswith("200 000"), r
    # origin-form upstream, the credential never forwarded, Host from the target
    assert r.stdout.startswith("GET /v1?q=1 HTTP/1.1|auth=False|host=['api.example.test:8080']"), r
    # CONNECT to 443 (an entry without a port covers 80 and 443); the tunnel carries plain HTTP here
    out = p.raw(("CONNECT api.example.test:443 HTTP/1.1\r\nHost: api.example.test:443\r\n%s\r\n"
                 "GET /t HTTP/1.1\r\nHost: api.example.test\r\n\r\n" % auth()).encode())
    assert out.startswith("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK"), out
    assert "GET /t HTTP/1.1|auth=False" in out, out


def test_an_address_that_refuses_is_skipped_and_none_answering_is_502(proxy):
    # nothing listens on WEB2:443: fallback.example.test's first address refuses, its second serves
    p = proxy(["fallback.example.test:443", "dead.example.test:443", "198.51.100.8:443"])
    out = p.raw(("CONNECT fallback.example.test:443 HTTP/1.1\r\nHost: fallback.example.test:443\r\n%s\r\n"
                 "GET /f HTTP/1.1\r\nHost: fallback.example.test\r\n\r\n" % auth()).encode())
    assert out.startswith("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK"), out
    assert "GET /f HTTP/1.1" in out, out
    for target in ("dead.example.test:443", "198.51.100.8:443"):
        out = p.raw(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (target, target, auth())).encode())
        assert out.startswith("HTTP/1.1 502 "), (target, out)
        assert "X-Mxc-Deny-Reason: upstream-unreachable" in out, (target, out)
    ips = [r["dst_endpoint"]["ip"] for r in p.audit() if r["dst_endpoint"]["hostname"] == "fallback.example.test"]
    assert ips and set(ips) == {WEB}, ips  # the relay went to the address that answered


def test_wildcard_and_cidr_entries(proxy):
    p = proxy(["*.cdn.example.test:8080", "%s/32:8080" % OTHER])
    assert p.curl("http://dl.cdn.example.test:8080/").stdout.endswith("200 000")
    assert p.curl("http://%s:8080/" % OTHER).stdout.endswith("200 000")
    # the apex of a wildcard, and a name the CIDR's address also has, are not allowed by them
    r = p.curl("http://cdn.example.test:8080/", extra=("-D", "-"))
    assert "403" in r.stdout and "not-allowed" in r.stdout, r


def test_blocked_and_unlisted_hosts_are_403_with_a_reason(proxy):
    p = proxy(["*.api.example.test:8080", "api.example.test:8080"], blocked=["blocked.api.example.test"])
    for url, why in (("http://blocked.api.example.test:8080/", "blocked"), ("http://other.test:8080/", "not-allowed"),
                     ("http://api.example.test:8081/", "port-not-allowed")):
        r = p.curl(url, extra=("-D", "-"))
        assert r.stdout.endswith("403 000") and ("X-Mxc-Deny-Reason: %s" % why) in r.stdout, (url, r)
    out = p.raw(("CONNECT other.test:443 HTTP/1.1\r\n%s\r\n" % auth()).encode())
    assert out.startswith("HTTP/1.1 403"), out


# ---- credentials ---------------------------------------------------------------------------

@pytest.mark.parametrize("header", [
    "",                                                                   # none
    auth(token="wrong"),                                                  # wrong
    auth(token="another-sandbox-token-0123456789"),                      # another sandbox's
    "Proxy-Authorization: Basic !!!notbase64\r\n",                        # malformed base64
    "Proxy-Authorization: Basic %s\r\n" % base64.b64encode(b"nocolon").decode(),
    "Proxy-Authorization: Bearer %s\r\n" % TOKEN,
    auth() + auth(),                                                      # duplicated
], ids=["none", "wrong", "another-sandbox", "bad-base64", "no-colon", "bearer", "duplicated"])
def test_bad_credentials_are_407_before_any_policy(proxy, header):
    p = proxy(["api.example.test:8080"])
    out = p.raw(("GET http://api.example.test:8080/ HTTP/1.1\r\nHost: api.example.test:8080\r\n%s\r\n"
                 % header).encode())
    if header.count("Proxy-Authorization") > 1:
        assert out.startswith("HTTP/1.1 400"), out  # a duplicated field is a bad head
    else:
        assert out.startswith("HTTP/1.1 407") and 'Proxy-Authenticate: Basic realm="mxc"' in out, out
    # a denied target gets 407 too, not 403: nothing of the policy is revealed to the unauthenticated
    out = p.raw(b"CONNECT blocked.example:443 HTTP/1.1\r\n\r\n")
    assert out.startswith("HTTP/1.1 407"), out


def test_scheme_is_case_insensitive(proxy):
    p = proxy(["api.example.test:8080"])
    h = "Proxy-Authorization: bAsIc %s\r\n" % base64.b64encode(("%s:%s" % (USER, TOKEN)).encode()).decode()
    out = p.raw(("GET http://api.example.test:8080/ HTTP/1.1\r\n%s\r\n" % h).encode())
    assert out.startswith("HTTP/1.1 200 OK"), out


# ---- the namespace and special addresses ---------------------------------------------------

def test_only_the_proxy_is_reachable_from_the_sandbox(proxy):
    p = proxy(["api.example.test:8080"])
    code = ("import socket\nfor a in [('%s',8080),('127.0.0.1',8080),('10.0.2.2',8080)]:\n    try:\n"
            "        socket.create_connection(a,timeout=2); print(a,'OK')\n    except OSError as e: print(a,'FAIL')\n"
            % WEB)
    r = p.in_sandbox("python3", "-c", code)
    assert "OK" not in r.stdout and r.stdout.count("FAIL") == 3, r


@pytest.mark.parametrize("target", ["127.0.0.1:8080", "[::1]:8080", "0.0.0.0:8080", "169.254.169.254:80",
                                    "[::ffff:127.0.0.1]:8080", "2130706433:8080", "0x7f000001:8080", "127.1:8080",
                                    "[::ffff:169.254.169.254]:80", "localhost:8080"])
def test_special_addresses_are_refused(proxy, target):
    p = proxy(["api.example.test:8080", "198.51.100.0/24:8080"])
    out = p.raw(("CONNECT %s HTTP/1.1\r\n%s\r\n" % (target, auth())).encode())
    assert out.startswith("HTTP/1.1 403") or out.startswith("HTTP/1.1 400"), (target, out)


# issue 27 finding 8: this host — its loopback in every form, its own address, a name that resolves to
# it — through a policy whose only address entries are broad CIDRs
THIS_HOST = ["127.0.0.1:8080", "127.1:8080", "2130706433:8080", "[::ffff:127.0.0.1]:8080", "0.0.0.0:8080",
             "%s:8080" % HOST_ADDR, "[::ffff:%s]:8080" % HOST_ADDR, "self.example.test:8080"]
BROAD = [["0.0.0.0/0:8080"], ["0.0.0.0/1:8080", "128.0.0.0/1:8080"], ["96.0.0.0/3:8080", "192.0.0.0/4:8080"],
         ["[::ffff:0.0.0.0/96]:8080", "::/0"]]


@pytest.mark.parametrize("broad", BROAD, ids=["all", "halves", "wide", "mapped"])
def test_a_broad_cidr_never_reaches_this_host(proxy, world, broad):
    """A broad allow covers host loopback and the host's own address without naming them: the
    proxy (which dials from the host's namespace) refuses them as model 1 refuses host loopback;
    the internet behind the same entry still answers; an entry naming them exactly reaches them."""
    p = proxy(broad + ["*.example.test:8080"])
    for t in THIS_HOST:
        for req in ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (t, t, auth()),
                    "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (t, t, auth())):
            out = p.raw(req.encode())
            assert out.startswith("HTTP/1.1 403 ") and "X-Mxc-Deny-Reason: special-address" in out, (t, out)
    assert world["host_hits"] == [], world["host_hits"]  # this host's services never saw a connection
    out = p.raw(("GET http://%s:8080/in HTTP/1.1\r\nHost: %s:8080\r\n%s\r\n" % (WEB, WEB, auth())).encode())
    assert out.startswith("HTTP/1.1 200 ") and "GET /in HTTP/1.1" in out, out


def test_an_entry_naming_this_host_reaches_it(proxy, world):
    """What names them: an IPv4 entry inside 127/8 for loopback, exactly the address for the host's
    own one (hostpolicy.h) — beside a broad CIDR that alone would not."""
    named = proxy(["0.0.0.0/0:8080", "127.0.0.1:8080", "%s:8080" % HOST_ADDR])
    for t in ("127.0.0.1:8080", "%s:8080" % HOST_ADDR):
        out = named.raw(("GET http://%s/named HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (t, t, auth())).encode())
        assert out.startswith("HTTP/1.1 200 ") and "GET /named HTTP/1.1" in out, (t, out)
    assert sorted(world["host_hits"]) == sorted(["127.0.0.1", HOST_ADDR]), world["host_hits"]


def test_dns_rebinding_to_loopback_is_refused(proxy):
    p = proxy(["rebind.example.test:8080"])
    r = p.curl("http://rebind.example.test:8080/", extra=("-D", "-"))
    assert r.stdout.endswith("403 000") and "special-address" in r.stdout, r


def test_absolute_form_with_another_host_field_is_refused(proxy):
    p = proxy(["api.example.test:8080"])
    out = p.raw(("GET http://api.example.test:8080/ HTTP/1.1\r\nHost: evil.test\r\n%s\r\n" % auth()).encode())
    assert out.startswith("HTTP/1.1 400"), out


# ---- robustness ----------------------------------------------------------------------------

def test_oversized_and_smuggling_heads_are_refused(proxy):
    p = proxy(["api.example.test:8080"])
    big = ("GET http://api.example.test:8080/ HTTP/1.1\r\nX-Big: %s\r\n%s\r\n" % ("a" * 65536, auth())).encode()
    assert p.raw(big).startswith("HTTP/1.1 431")
    for head in ("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "Content-Length: 5\r\nContent-Length: 6\r\n",
                 "Transfer-Encoding: chunked, gzip\r\n", "X-Fold: a\r\n b\r\n"):
        out = p.raw(("POST http://api.example.test:8080/ HTTP/1.1\r\n%s%s\r\nhello" % (head, auth())).encode())
        assert out.startswith("HTTP/1.1 400"), (head, out)
    out = p.raw(("GET http://api.example.test:8080/ HTTP/1.1\n%s\n" % auth()).encode())
    assert out.startswith("HTTP/1.1 400"), out


def test_pipelined_bytes_after_the_body_never_reach_the_upstream(proxy):
    p = proxy(["api.example.test:8080"])
    out = p.raw(("POST http://api.example.test:8080/a HTTP/1.1\r\nContent-Length: 2\r\n%s\r\nhi"
                 "GET http://other.test:8080/smuggled HTTP/1.1\r\n\r\n" % auth()).encode())
    assert out.count("HTTP/1.1 200 OK") == 1 and "smuggled" not in out, out


def test_slow_clients_are_cut_while_others_get_through(proxy):
    p = proxy(["api.example.test:8080"], headTimeoutMs=1000)
    with in_sandbox_ns(p.world):
        slow = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(200)]
    for s in slow:
        s.send(b"GET http://api.example.test:8080/ HTTP/1.1\r\nX-Slow: ")
    assert p.curl("http://api.example.test:8080/").stdout.endswith("200 000")
    time.sleep(2.5)
    closed = 0
    for s in slow:
        s.settimeout(2)
        try:
            data = s.recv(4096)
            closed += data == b"" or data.startswith(b"HTTP/1.1 504")
        except OSError:
            closed += 1
        s.close()
    assert closed == len(slow)


def test_connection_cap(proxy):
    """At the cap the oldest connection still waiting for its head is shed (503) for the newcomer
    (idle connections never lock the sandbox out); past their head none is (test_proxy_bounds.py)."""
    p = proxy(["api.example.test:8080"], maxConnections=5)
    with in_sandbox_ns(p.world):
        held = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(5)]
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", 3128))
        held[0].settimeout(5)
        assert held[0].recv(200).startswith(b"HTTP/1.1 503")
        for s in held[1:] + [extra]:  # the others, and the newcomer, are still open
            s.settimeout(0.2)
            with pytest.raises(socket.timeout):
                s.recv(200)
    for s in held + [extra]:
        s.close()


# ---- audit and lifetime --------------------------------------------------------------------

def test_audit_records_every_decision_and_never_the_credential(proxy):
    p = proxy(["api.example.test:8080"])
    p.curl("http://api.example.test:8080/")
    p.curl("http://other.test:8080/")
    p.curl("http://api.example.test:8080/", token="wrong")
    time.sleep(0.3)
    text = open(p.audit_path).read()
    assert TOKEN not in text and base64.b64encode(("%s:%s" % (USER, TOKEN)).encode()).decode() not in text
    recs = p.audit()
    disp = [(r["disposition"], r["dst_endpoint"]["hostname"]) for r in recs]
    assert ("allowed", "api.example.test") in disp and ("denied", "other.test") in disp, disp
    assert ("auth-failed", "api.example.test") in disp, disp
    done = [r for r in recs if r["reason"] == "done"]
    assert done and done[0]["traffic"]["bytes_in"] > 0 and done[0]["dst_endpoint"]["ip"] == WEB, recs
    assert all(r["class_uid"] in (4001, 4002) and r["sandbox"] == "t1" for r in recs)


def test_the_proxy_ends_with_the_sandbox(proxy):
    p = proxy(["api.example.test:8080"])
    assert p.p.poll() is None
    p.sleeper.kill()
    p.sleeper.wait()
    assert p.p.wait(timeout=10) == 0


# ---- through the executor: network.allowedHosts on both surfaces ----------------------------

CLIENT = r'''
import os, socket, sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    if url.startswith("raw:"):
        a, p = url[4:].rsplit(":", 1)
        try:
            socket.create_connection((a, int(p)), timeout=2); print(url, "OK")
        except OSError:
            print(url, "FAIL")
        continue
    try:
        r = urllib.request.urlopen(url, timeout=10); print(url, r.status, r.read().decode().split("|")[0])
    except urllib.error.HTTPError as e:
        print(url, e.code, e.headers.get("X-Mxc-Deny-Reason"))
    except Exception as e:
        print(url, "ERR", type(e).__name__)
'''


@pytest.fixture
def governed(world, mxc, host_dir, monkeypatch):
    """run(cmd_args, surface) through mxc with allowedHosts; the proxy resolves from the test's hosts file."""
    monkeypatch.setenv("MXC_PROXY_HOSTS_FILE", world["hosts"])
    d = host_dir("proxyclient", 0o755)
    with open(os.path.join(d, "client.py"), "w") as f:
        f.write(CLIENT)
    os.chmod(os.path.join(d, "client.py"), 0o644)
    return {"dir": d, "cmd": "/usr/bin/python3 %s/client.py" % d, "mxc": mxc}


NET = {"defaultPolicy": "block", "allowedHosts": ["api.example.test:8080", "*.cdn.example.test:8080"],
       "blockedHosts": ["blocked.api.example.test"]}


def _lines(r):
    assert r.rc == 0, r.describe()
    return {l.split()[0]: " ".join(l.split()[1:]) for l in r.stdout.splitlines() if l.strip()}


def _check_governed(r):
    got = _lines(r)
    assert got["http://api.example.test:8080/x"] == "200 GET /x HTTP/1.1", got
    assert got["http://dl.cdn.example.test:8080/"] == "200 GET / HTTP/1.1", got
    assert got["http://other.test:8080/"] == "403 not-allowed", got
    assert got["http://blocked.api.example.test:8080/"] == "403 blocked", got
    assert got["http://rebind.example.test:8080/"] == "403 not-allowed", got
    assert got["raw:%s:8080" % WEB] == "FAIL" and got["raw:127.0.0.1:8080"] == "FAIL", got


URLS = ["http://api.example.test:8080/x", "http://dl.cdn.example.test:8080/", "http://other.test:8080/",
        "http://blocked.api.example.test:8080/", "http://rebind.example.test:8080/", "raw:%s:8080" % WEB,
        "raw:127.0.0.1:8080"]


def test_allowed_hosts_on_a_oneshot(governed):
    g = governed
    r = g["mxc"]({"network": NET, "filesystem": {"readonlyPaths": [g["dir"]]},
                  "process": {"commandLine": "%s %s; echo ENV $HTTP_PROXY $https_proxy [$NO_PROXY]"
                                             % (g["cmd"], " ".join(URLS))}})
    env = [l for l in r.stdout.splitlines() if l.startswith("ENV ")]
    assert env and env[0].split()[1].startswith("http://mxc:") and env[0].endswith("[]"), r.describe()
    r = r._replace(stdout="\n".join(l for l in r.stdout.splitlines() if not l.startswith("ENV ")))
    _check_governed(r)


def test_a_oneshot_s_decisions_go_to_the_callers_audit_file(governed, tmp_path, monkeypatch):
    """A one-shot's proxy writes its decisions where the caller says (MXC_PROXY_AUDIT_FILE, as
    mxc-gateway collects them): one record per decision, the sandbox named, never the credential."""
    audit = tmp_path / "audit.jsonl"
    monkeypatch.setenv("MXC_PROXY_AUDIT_FILE", str(audit))
    g = governed
    r = g["mxc"]({"network": NET, "filesystem": {"readonlyPaths": [g["dir"]]},
                  "process": {"commandLine": "%s http://api.example.test:8080/x http://other.test:8080/ "
                                             "http://blocked.api.example.test:8080/; echo ENV $HTTP_PROXY" % g["cmd"]}})
    assert r.rc == 0, r.describe()
    proxy_url = [l for l in r.stdout.splitlines() if l.startswith("ENV ")][0].split()[1]
    token = proxy_url.split("@")[0].rsplit(":", 1)[1]
    text = audit.read_text()
    assert token and token not in text, "the credential reached the audit file"
    recs = [json.loads(l) for l in text.splitlines()]
    disp = {(x["disposition"], x["dst_endpoint"]["hostname"], x["reason"]) for x in recs}
    assert ("denied", "other.test", "not-allowed") in disp and ("denied", "blocked.api.example.test", "blocked") in disp, disp
    assert any(d == "allowed" and h == "api.example.test" for d, h, _ in disp), disp
    assert all(x["class_uid"] in (4001, 4002) and x["sandbox"] for x in recs), json.dumps(recs)


def test_allowed_hosts_in_a_session_from_start_to_stop(governed, session_factory):
    g = governed
    s = session_factory(network=NET, filesystem={"readonlyPaths": [g["dir"]]})
    for _ in range(2):  # every exec, the same proxy
        _check_governed(s.exec("%s %s" % (g["cmd"], " ".join(URLS))))
    # the proxy runs outside the sandbox: nothing of it is visible inside
    r = s.exec("cat /proc/[0-9]*/comm")
    assert "mxc-proxy" not in r.stdout, r.describe()
    assert _proxies() >= 1
    s.stop()
    deadline = time.time() + 10
    while _proxies() and time.time() < deadline:
        time.sleep(0.1)
    assert _proxies() == 0


def test_another_sandboxs_credential_is_refused(governed, session_factory):
    g = governed
    a = session_factory(network=NET, filesystem={"readonlyPaths": [g["dir"]]})
    b = session_factory(network=NET, filesystem={"readonlyPaths": [g["dir"]]})
    pa = a.exec("echo $HTTP_PROXY").stdout.strip()
    pb = b.exec("echo $HTTP_PROXY").stdout.strip()
    assert pa != pb and pa.startswith("http://mxc:") and pb.startswith("http://mxc:")
    r = b.exec("HTTP_PROXY=%s http_proxy=%s %s http://api.example.test:8080/x" % (pa, pa, g["cmd"]))
    assert _lines(r)["http://api.example.test:8080/x"].startswith("407"), r.describe()


def test_a_bad_host_entry_is_refused_before_anything_runs(governed):
    r = governed["mxc"]({"network": {"allowedHosts": ["ok.example.test", "bad host!"]},
                         "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "RAN" not in r.stdout and "allowedHosts[1]" in r.error["message"], r.describe()
    r = governed["mxc"]({"network": {"defaultPolicy": "allow", "blockedHosts": ["x.test"]},
                         "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "RAN" not in r.stdout and "defaultPolicy block" in r.error["message"], r.describe()


def _proxies():
    """mxc-proxy processes in this test's namespace (where the executor, hence the proxy, runs)."""
    return len(procs_named(lambda c: c == "mxc-proxy", netns()))


def test_the_proxy_holds_no_privilege(proxy):
    """A bug in the relay must not be host root: it runs as nobody, with no capability, not
    dumpable (no process of that uid can read the credential from its memory), and cannot regain
    privilege (no_new_privs)."""
    p = proxy(["api.example.test:8080"])
    assert p.curl("http://api.example.test:8080/").stdout.endswith("200 000")  # it is past its start
    status = dict(l.split(":", 1) for l in open("/proc/%d/status" % p.p.pid).read().splitlines() if ":" in l)
    assert status["Uid"].split() == ["65534"] * 4 and status["Gid"].split() == ["65534"] * 4, status
    assert int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0, status
    assert status["NoNewPrivs"].strip() == "1", status
    assert os.stat("/proc/%d/mem" % p.p.pid).st_uid == 0  # not dumpable: /proc files are root's


def test_chunked_bodies_are_forwarded_by_their_framing(proxy):
    p = proxy(["api.example.test:8080"])
    # curl sends a body of unknown length chunked
    r = p.in_sandbox("sh", "-c", "echo hello | curl -sS -o - -w '\\n%%{http_code}' -x http://%s:%s@127.0.0.1:3128 "
                     "-H 'Transfer-Encoding: chunked' --data-binary @- http://api.example.test:8080/up" % (USER, TOKEN))
    assert r.stdout.startswith("POST /up HTTP/1.1") and r.stdout.endswith("200"), r
    # what follows the last chunk never reaches the upstream
    out = p.raw(("POST http://api.example.test:8080/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n%s\r\n"
                 "2\r\nhi\r\n0\r\n\r\nGET http://other.test:8080/smuggled HTTP/1.1\r\n\r\n" % auth()).encode())
    assert out.count("HTTP/1.1 200 OK") == 1 and "smuggled" not in out, out
    # broken framing ends the exchange
    out = p.raw(("POST http://api.example.test:8080/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n%s\r\n"
                 "2\nhi\r\n0\r\n\r\n" % auth()).encode())
    assert out.startswith("HTTP/1.1 400") and "bad-chunked" in out, out


def _echo(addr, port, stop):
    """Echoes what it receives; closes at the client's EOF or after a chunked body's last chunk."""

    def handle(c):
        c.settimeout(10)
        tail = b""
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                c.sendall(b)
                tail = (tail + b)[-5:]
                if tail == b"0\r\n\r\n":
                    break
        except OSError:
            pass
        c.close()

    serve_tcp(addr, port, stop, handle, backlog=16)


def test_a_tiny_pipe_budget_still_relays_everything(proxy):
    """pipeBudgetKiB: past it every relay pipe is one page and none grows; slower, never wrong."""
    stop = threading.Event()
    p = proxy(["198.51.100.7:9100"], pipeBudgetKiB=1)
    with in_internet(p.world):
        t = threading.Thread(target=_echo, args=(WEB, 9100, stop), daemon=True)
        t.start()
    try:
        code = ("import socket,base64,threading,hashlib\n"
                "s=socket.create_connection(('127.0.0.1',3128));s.settimeout(20)\n"
                "s.sendall(b'CONNECT 198.51.100.7:9100 HTTP/1.1\\r\\nHost: 198.51.100.7:9100\\r\\n%s\\r\\n\\r\\n')\n"
                "data=bytes(range(256))*12288\n"  # 3 MiB, no chunk terminator in it
                "def w():\n    s.sendall(data);s.shutdown(socket.SHUT_WR)\n"
                "threading.Thread(target=w).start()\nout=b''\n"
                "while True:\n    b=s.recv(1<<20)\n    if not b: break\n    out+=b\n"
                "head,_,body=out.partition(b'\\r\\n\\r\\n')\n"
                "print(head.decode().split('\\r\\n')[0], len(body), body==data)\n" % auth().strip())
        r = p.in_sandbox("python3", "-c", code, timeout=60)
        assert r.stdout.strip() == "HTTP/1.1 200 Connection established %d True" % (3 << 20), (r.stdout, r.stderr[-1500:], p.audit())
        # a chunked body larger than a one-page pipe, read through its framing
        chunks = "".join("1770\r\n%s\r\n" % (c * 6000) for c in "abcd") + "0\r\n\r\n"
        out = p.raw(("POST http://198.51.100.7:9100/up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n%s\r\n%s"
                     % (auth(), chunks)).encode(), read_timeout=10)
        assert out.startswith("POST /up HTTP/1.1\r\n"), out[:200]
        assert out.endswith("\r\n\r\n" + chunks), out[-200:]
    finally:
        stop.set()
        t.join()


def test_a_lookup_that_does_not_answer_is_504_and_holds_its_slot_until_it_returns(proxy, world):
    """The system resolver (no hostsFile), pointed at a name server inside the test's namespace that
    never answers: the tunnel ends with a 504 at resolveTimeoutMs; the lookup's thread, still
    waiting, keeps counting against the connection cap until glibc gives up (timeout:3)."""
    ns = "192.0.2.53"
    subprocess.run(["ip", "addr", "add", ns + "/32", "dev", "d0"], check=True)  # this thread: the host ns
    hole = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    hole.bind((ns, 53))
    hole.settimeout(5)
    resolv = world["tmp"] / "resolv.conf"
    resolv.write_text("nameserver %s\noptions timeout:3 attempts:1\n" % ns)
    resolv.chmod(0o644)
    try:
        p = proxy(["slow.example.test:443", "198.51.100.7:443"], resolv=str(resolv), hostsFile=None,
                  resolveTimeoutMs=200, maxConnections=1)
        assert p.status() == "ok"
        ask = lambda t: p.raw(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (t, t, auth())).encode())  # noqa: E731
        out = ask("slow.example.test:443")
        assert out.startswith("HTTP/1.1 504 ") and "X-Mxc-Deny-Reason: resolve-timeout" in out, out
        query, _ = hole.recvfrom(512)
        assert b"slow" in query and b"example" in query  # the lookup went where resolv.conf said, and only there
        assert any(r["reason"] == "resolve-timeout" for r in p.audit()), p.audit()
        # the abandoned lookup still holds the one slot ...
        out = ask("198.51.100.7:443")
        assert out.startswith("HTTP/1.1 503 "), out
        # ... until its thread returns; then the proxy serves again
        deadline = time.monotonic() + 15
        while True:
            out = ask("198.51.100.7:443")
            if out.startswith("HTTP/1.1 200 ") or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert out.startswith("HTTP/1.1 200 Connection established"), out
    finally:
        hole.close()
        subprocess.run(["ip", "addr", "del", ns + "/32", "dev", "d0"], check=False)


# ---- the special-address attacks of THREATS.md, from a workload inside a real sandbox ---------

RAW_CLIENT = r'''
import os, socket, sys, base64, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
cred = base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()
for line in sys.argv[1:]:
    method, target = line.split(" ", 1)
    host = target if method == "CONNECT" else urllib.parse.urlsplit(target).netloc
    req = "%s %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n" % (method, target, host, cred)
    s = socket.create_connection((u.hostname, u.port), timeout=20)
    s.sendall(req.encode())
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(4096)
        if not got:
            break
        data += got
    head = data.split(b"\r\n\r\n")[0].decode("latin-1").splitlines()
    why = [h.split(":", 1)[1].strip() for h in head[1:] if h.lower().startswith("x-mxc-deny-reason:")]
    print("%s|%s|%s|%s" % (method, target, head[0].split(" ")[1] if head else "none", why[0] if why else ""))
    s.close()
'''

# every form of "this host / the metadata service" a workload that read hostpolicy.c would try;
# the test's own namespace serves 127.0.0.1:8080 (so a wrong "allowed" would answer 200)
SPECIAL = ["127.0.0.1:8080", "[::1]:8080", "0.0.0.0:8080", "169.254.169.254:80", "[::ffff:127.0.0.1]:8080",
           "2130706433:8080", "0x7f000001:8080", "127.1:8080", "0177.0.0.1:8080", "[::ffff:169.254.169.254]:80",
           "[64:ff9b::7f00:1]:8080", "localhost:8080", "rebind.example.test:8080", "10.0.2.2:8080"]


def _raw_rows(g, session_factory, surface, net, targets, last):
    """RAW_CLIENT in a governed workload (one-shot or session): CONNECT and GET for each target,
    then `last`, which must answer 200; the other rows [method, target, status, why]."""
    with open(os.path.join(g["dir"], "raw.py"), "w") as f:
        f.write(RAW_CLIENT)
    os.chmod(os.path.join(g["dir"], "raw.py"), 0o644)
    args = []
    for t in targets:
        args += ["'CONNECT %s'" % t, "'GET http://%s/'" % t]
    args.append(last)
    cmd = "/usr/bin/python3 %s/raw.py %s" % (g["dir"], " ".join(args))
    fs = {"readonlyPaths": [g["dir"]]}
    if surface == "oneshot":
        r = g["mxc"]({"network": net, "filesystem": fs, "process": {"commandLine": cmd}})
    else:
        r = session_factory(network=net, filesystem=fs).exec(cmd)
    assert r.rc == 0, r.describe()
    rows = [l.split("|") for l in r.stdout.splitlines() if l.count("|") == 3]
    assert len(rows) == 2 * len(targets) + 1, r.describe()
    assert rows[-1][2] == "200", rows[-1]
    return rows[:-1]


@pytest.mark.parametrize("surface", ["oneshot", "session"])
def test_special_addresses_are_refused_to_a_workload(governed, session_factory, surface):
    """Through mxc, not a stand-in: a workload in a governed sandbox asks its own proxy (with its
    own valid credential) for loopback, the metadata service and the forms that encode them —
    absolute-form GET and CONNECT — and is refused each (403, or 400 for a form no parser takes);
    a name the policy allows that resolves to loopback (DNS rebinding) is refused as
    special-address; the loopback origin never answers."""
    g = governed
    net = {"defaultPolicy": "block", "allowedHosts": ["api.example.test:8080", "*.example.test:8080",
                                                      "localhost:8080", "rebind.example.test:8080"]}
    # the proxy works: a public name goes through
    rows = _raw_rows(g, session_factory, surface, net, SPECIAL, "'GET http://api.example.test:8080/ok'")
    for method, target, status, why in rows:
        assert status in ("403", "400"), (method, target, status, why)
        if "rebind.example.test" in target:
            assert why == "special-address", (method, target, status, why)


@pytest.mark.parametrize("surface", ["oneshot", "session"])
def test_a_broad_cidr_never_reaches_this_host_from_a_workload(governed, world, session_factory, surface):
    """Issue 27 finding 8 through mxc: legacy allowedHosts `0.0.0.0/0:8080` (and a wildcard name
    that resolves to the host's own address) let a workload reach the internet on 8080, never
    this host's loopback or own address."""
    g = governed
    net = {"defaultPolicy": "block", "allowedHosts": ["0.0.0.0/0:8080", "*.example.test:8080"]}
    # the internet behind the same entry answers
    rows = _raw_rows(g, session_factory, surface, net, THIS_HOST, "'GET http://%s:8080/ok'" % WEB)
    for method, target, status, why in rows:
        assert (status, why) == ("403", "special-address"), (method, target, status, why)
    assert world["host_hits"] == [], world["host_hits"]
