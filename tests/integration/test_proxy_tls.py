"""Issue 15, TLS trust and provider credentials: mxc-proxy terminates TLS for endpoints a credential
binds (a leaf minted by the sandbox's own CA), substitutes `mxc:cred:<name>:<revision>` placeholders
only for their binding, and re-originates TLS with full verification; everything else stays a spliced
tunnel.

NETWORK SAFETY: the same as test_proxy.py (whose world, namespaces and Proxy this file reuses): the
origins listen on documentation-range addresses inside a namespace the test made, names resolve from
a hosts file, nothing is sent anywhere else.
"""
import json
import os
import socket
import ssl
import subprocess
import threading
import time

import pytest

from test_proxy import OTHER, TOKEN, USER, WEB, WEB2, Proxy, auth, in_internet, world  # noqa: F401 (fixture)

SECRET = "ghp_REAL-SECRET-0123456789"
OTHER_SECRET = "OTHER-REAL-SECRET-abcdef"


def _openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    """A test CA (key and certificate in d, never the workspace) and a server certificate it signs
    for the origins' names and addresses."""
    os.makedirs(d, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
             "-out", "ca.pem", "-days", "2", "-subj", "/CN=%s" % name,
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", cwd=d)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "srv.key",
             "-out", "srv.csr", "-subj", "/CN=api.example.test", cwd=d)
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=DNS:api.example.test,DNS:other.test,DNS:untrusted.example.test,IP:%s,IP:%s\n"
                "extendedKeyUsage=serverAuth\n" % (WEB, WEB2))
    _openssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "srv.pem", "-days", "2", "-extfile", "ext", cwd=d)
    return {k: os.path.join(d, k + ".pem") for k in ("ca", "srv")} | {"key": os.path.join(d, "srv.key")}


class Origin:
    """An HTTPS origin in the test's internet namespace: answers every request with its head as JSON
    and keeps every head it received (self.heads) — what the upstream really saw."""

    def __init__(self, addr, port, pki):
        self.heads = []
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(pki["srv"], pki["key"])
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.s.bind((addr, port))
        self.s.listen(64)
        self.s.settimeout(0.2)
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        while not self.stop.is_set():
            try:
                c, _ = self.s.accept()
            except socket.timeout:
                continue
            threading.Thread(target=self.handle, args=(c,), daemon=True).start()
        self.s.close()

    def handle(self, raw):
        raw.settimeout(5)
        try:
            c = self.ctx.wrap_socket(raw, server_side=True)
            data = b""
            while b"\r\n\r\n" not in data:
                got = c.recv(4096)
                if not got:
                    break
                data += got
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            fields = [l.split(":", 1) for l in lines[1:]]
            cl = [int(v) for k, v in fields if k.lower() == "content-length"]
            chunked = any(k.lower() == "transfer-encoding" for k, v in fields)
            while (cl and len(body) < cl[0]) or (chunked and not body.endswith(b"0\r\n\r\n")):
                got = c.recv(4096)
                if not got:
                    break
                body += got
            self.heads.append(head.decode("latin-1"))
            out = json.dumps({"line": lines[0], "fields": [[k, v.strip()] for k, v in fields],
                              "body": body.decode("latin-1")}).encode()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(out), out))
            c.close()
        except (OSError, ssl.SSLError):
            raw.close()

    def close(self):
        self.stop.set()
        self.t.join()


@pytest.fixture
def tls(world):  # noqa: F811
    """Origins: api.example.test (WEB:8443) and other.test (OTHER:8443) with certificates of the test
    CA the proxy trusts; untrusted.example.test (WEB2:8443) with one of a CA nobody trusts."""
    tmp = world["tmp"]
    good, evil = make_ca(str(tmp / "pki"), "mxc test CA"), make_ca(str(tmp / "evil"), "evil CA")
    with open(world["hosts"], "a") as f:
        f.write("%s untrusted.example.test\n" % WEB2)
    with in_internet(world):  # the origins' sockets and threads in the internet's namespace
        origins = [Origin(WEB, 8443, good), Origin(OTHER, 8443, good), Origin(WEB2, 8443, evil)]
    made = []

    def make(creds, allowed=("api.example.test:8443", "other.test:8443", "untrusted.example.test:8443",
                             "api.example.test:8080", "other.test:8080", "%s:8443" % WEB), sandbox="t1", **extra):
        p = Proxy(world, list(allowed), credentials=creds, upstreamCa=good["ca"], sandbox=sandbox, **extra)
        made.append(p)
        st = p.status()
        assert st.startswith("ok\n-----BEGIN CERTIFICATE-----"), st
        p.ca_pem = st[3:]
        p.ca_file = str(tmp / ("ca-%d.pem" % len(made)))
        with open(p.ca_file, "w") as f:
            f.write(p.ca_pem)
        os.chmod(p.ca_file, 0o644)
        return p

    yield {"make": make, "api": origins[0], "other": origins[1], "untrusted": origins[2], "good": good,
           "world": world}
    for p in made:
        p.close()
    for o in origins:
        o.close()


CREDS = [{"name": "github", "revision": 3, "host": "api.example.test", "port": 8443, "pathPrefix": "/repos/",
          "secret": SECRET},
         {"name": "other", "revision": 1, "host": "other.test", "port": 8443, "secret": OTHER_SECRET},
         {"name": "bad", "revision": 1, "host": "untrusted.example.test", "port": 8443, "secret": OTHER_SECRET}]


def curl(p, url, *extra):
    """curl in the sandbox through the proxy, trusting the sandbox's CA; (status, body, stderr)."""
    r = p.in_sandbox("curl", "-sS", "--cacert", p.ca_file, "-o", "-", "-w", "\n%{http_code}", "-D", "/dev/stderr",
                     "-x", "http://%s:%s@127.0.0.1:3128" % (USER, TOKEN), "--max-time", "10", *extra, url)
    body, _, code = r.stdout.rpartition("\n")
    return code, body, r.stderr


def test_the_bound_endpoint_gets_the_secret_the_workload_only_the_placeholder(tls):
    p = tls["make"](CREDS)
    code, body, err = curl(p, "https://api.example.test:8443/repos/x?y=1", "-H", "Authorization: Bearer mxc:cred:github:3",
                           "-H", "X-Other: keep")
    assert code == "200", (code, body, err)
    got = json.loads(body)
    assert got["line"] == "GET /repos/x?y=1 HTTP/1.1"
    fields = dict((k.lower(), v) for k, v in got["fields"])
    assert fields["authorization"] == "Bearer " + SECRET and fields["x-other"] == "keep", got
    assert fields["host"] == "api.example.test:8443" and fields["connection"] == "close", got
    assert "proxy-authorization" not in fields
    # a body goes by its framing
    code, body, err = curl(p, "https://api.example.test:8443/repos/y", "-H", "Authorization: mxc:cred:github:3",
                           "--data-binary", "hello=1")
    assert code == "200" and json.loads(body)["body"] == "hello=1", (code, body, err)
    # a chunked body too, and nothing pipelined after it
    r = p.in_sandbox("sh", "-c", "printf hello | curl -sS --cacert %s -x http://%s:%s@127.0.0.1:3128 -H "
                     "'Transfer-Encoding: chunked' -H 'Authorization: mxc:cred:github:3' --data-binary @- "
                     "https://api.example.test:8443/repos/up" % (p.ca_file, USER, TOKEN))
    assert json.loads(r.stdout)["body"] == "5\r\nhello\r\n0\r\n\r\n", r
    audit = open(p.audit_path).read()
    assert SECRET not in audit and TOKEN not in audit
    recs = [json.loads(l) for l in audit.splitlines()]
    assert any(r.get("credential") == "github" and r["disposition"] == "allowed" for r in recs), recs


def test_curl_verifies_the_minted_leaf_and_the_ca_differs_per_sandbox(tls):
    a, b = tls["make"](CREDS, sandbox="sb-a"), None
    code, body, err = curl(a, "https://api.example.test:8443/repos/ok")
    assert code == "200", err
    assert "mxc sandbox sb-a CA" in subprocess.run(["openssl", "x509", "-noout", "-subject", "-in", a.ca_file],
                                                  capture_output=True, text=True).stdout
    a.close()
    b = tls["make"](CREDS, sandbox="sb-b")
    assert b.ca_pem != a.ca_pem
    # a leaf of sandbox b does not verify with sandbox a's CA
    r = b.in_sandbox("curl", "-sS", "--cacert", a.ca_file, "-x", "http://%s:%s@127.0.0.1:3128" % (USER, TOKEN),
                     "--max-time", "10", "https://api.example.test:8443/repos/ok")
    assert r.returncode == 60, r  # SSL certificate problem
    b.close()
    # an IP literal binding: the leaf carries the IP
    c = tls["make"]([{"name": "ip", "revision": 1, "host": WEB, "port": 8443, "secret": SECRET}], sandbox="sb-c")
    code, body, err = curl(c, "https://%s:8443/x" % WEB, "-H", "Authorization: mxc:cred:ip:1")
    assert code == "200" and SECRET in body, (code, body, err)


@pytest.mark.parametrize("url,header,reason", [
    ("https://api.example.test:8443/repos/x", "mxc:cred:github:2", "credential-revision"),
    ("https://api.example.test:8443/user", "mxc:cred:github:3", "credential-path"),
    ("https://api.example.test:8443/repos/../user", "mxc:cred:github:3", "credential-path"),
    # issue 27 finding 7: servlet containers cut ";params" before they normalise; a front that decodes
    # twice reads %252e as "."
    ("https://api.example.test:8443/repos/..;/admin", "mxc:cred:github:3", "credential-path"),
    ("https://api.example.test:8443/repos/..;/..;/admin", "mxc:cred:github:3", "credential-path"),
    ("https://api.example.test:8443/repos/%252e%252e/admin", "mxc:cred:github:3", "credential-path"),
    ("https://api.example.test:8443/repos/%252e%252e%252fadmin", "mxc:cred:github:3", "credential-path"),
    ("https://api.example.test:8443/repos/x", "mxc:cred:other:1", "credential-not-bound"),
    ("https://api.example.test:8443/repos/x", "mxc:cred:nobody:1", "credential-unknown"),
])
def test_placeholders_outside_their_binding_are_refused(tls, url, header, reason):
    p = tls["make"](CREDS)
    n = len(tls["api"].heads)
    code, body, err = curl(p, url, "--path-as-is", "-H", "Authorization: Bearer " + header)
    assert code == "403" and "x-mxc-deny-reason: " + reason in err.lower(), (code, err)
    assert len(tls["api"].heads) == n  # nothing reached the origin
    recs = p.audit()
    assert any(r["disposition"] == "denied" and r["reason"] == reason for r in recs), recs


def test_placeholders_to_unbound_hosts_are_refused_and_unbound_tunnels_stay_untouched(tls):
    p = tls["make"](CREDS[:1])
    # plain HTTP (absolute-form): refused before any connection
    r = p.curl("http://other.test:8080/", extra=("-H", "Authorization: mxc:cred:github:3"))
    assert r.stdout.endswith("403 000"), r
    # other.test:8443 is not bound here: a spliced tunnel, our CA is not in its path
    code, body, err = curl(p, "https://other.test:8443/x")
    assert code == "000" and "certificate" in err, err
    r = p.in_sandbox("curl", "-sS", "--cacert", tls["good"]["ca"], "-x", "http://%s:%s@127.0.0.1:3128" % (USER, TOKEN),
                     "--max-time", "10", "https://other.test:8443/x")
    assert r.returncode == 0 and json.loads(r.stdout)["line"] == "GET /x HTTP/1.1", r
    recs = p.audit()
    assert any(r["reason"] == "credential-not-bound" and r["dst_endpoint"]["hostname"] == "other.test" for r in recs)


def test_an_untrusted_upstream_never_gets_the_secret(tls):
    p = tls["make"](CREDS)
    code, body, err = curl(p, "https://untrusted.example.test:8443/x", "-H", "Authorization: mxc:cred:bad:1")
    assert code == "502" and "upstream-untrusted" in err, (code, err)
    assert tls["untrusted"].heads == []
    assert any(r["reason"] == "upstream-untrusted" for r in p.audit())


def test_the_ca_key_is_never_in_the_config_or_status_and_secrets_not_in_the_environment(tls):
    p = tls["make"](CREDS)
    assert "PRIVATE KEY" not in p.ca_pem
    env = open("/proc/%d/environ" % p.p.pid, "rb").read()
    cmd = open("/proc/%d/cmdline" % p.p.pid, "rb").read()
    assert SECRET.encode() not in env and SECRET.encode() not in cmd
    # the secrets and the CA key live in a process nobody else can read: nobody, not dumpable
    status = dict(l.split(":", 1) for l in open("/proc/%d/status" % p.p.pid).read().splitlines() if ":" in l)
    assert status["Uid"].split() == ["65534"] * 4 and int(status["CapEff"], 16) == 0, status
    assert os.stat("/proc/%d/mem" % p.p.pid).st_uid == 0


# ---- through the executor: network.credentials on both surfaces ------------------------------

WORKLOAD = r'''
set -u
echo "PLACEHOLDER=$GITHUB_TOKEN"
for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS DENO_CERT; do
  eval "echo VAR $v=\$$v"
done
curl -sS --max-time 10 -o /dev/null -w "BOUND %{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" https://api.example.test:8443/repos/x 2>&1
curl -sS --max-time 10 -o /dev/null -w "OUTSIDE %{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" https://api.example.test:8443/user
for t in '..;/admin' '..;/..;/admin' '%252e%252e/admin'; do
  curl -sS --path-as-is --max-time 10 -o /dev/null -w "ESCAPE $t %{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" "https://api.example.test:8443/repos/$t"
done
python3 -c "
import ssl, urllib.request
r = urllib.request.urlopen('https://api.example.test:8443/repos/py', timeout=10)
print('PY', r.status)"
if env | grep -q "$P1$P2"; then echo SECRET-IN-ENV; fi
if grep -rqs "$P1$P2" /tmp "$HOME" "$PWD" /proc/self/environ 2>/dev/null; then echo SECRET-IN-FILES; fi
'''

PROBE = ["P1=" + SECRET[:8], "P2=" + SECRET[8:]]  # the secret, never whole in the workload's own env
NET = {"defaultPolicy": "block", "allowedHosts": ["api.example.test:8443"],
       "credentials": [{"name": "github", "revision": 3, "host": "api.example.test", "port": 8443,
                        "pathPrefix": "/repos/", "secretEnv": "MXC_TEST_GH_SECRET", "env": "GITHUB_TOKEN"}]}


@pytest.fixture
def gtls(tls, mxc, monkeypatch):
    monkeypatch.setenv("MXC_PROXY_HOSTS_FILE", tls["world"]["hosts"])
    monkeypatch.setenv("MXC_PROXY_UPSTREAM_CA", tls["good"]["ca"])
    monkeypatch.setenv("MXC_TEST_GH_SECRET", SECRET)
    return tls


ESCAPES = ("..;/admin", "..;/..;/admin", "%252e%252e/admin")


def escapes_refused(lines, api):
    """Issue 27 finding 7: the workload's paths that leave /repos/ as an origin reads them got 403, and
    the origin never saw the secret on one."""
    return all("ESCAPE %s 403" % t in lines for t in ESCAPES) and not any(
        "Bearer " + SECRET in h and ("..;" in h.split("\r\n")[0] or "%25" in h.split("\r\n")[0]) for h in api.heads)


def _check_workload(out, api):
    lines = out.splitlines()
    assert "PLACEHOLDER=mxc:cred:github:3" in lines, out
    assert "BOUND 200" in lines and "OUTSIDE 403" in lines and "PY 200" in lines, out
    assert escapes_refused(lines, api), out
    assert "SECRET-IN-ENV" not in out and "SECRET-IN-FILES" not in out and SECRET not in out, out
    assert any("Bearer " + SECRET in h for h in api.heads)
    return dict(l[4:].split("=", 1) for l in lines if l.startswith("VAR "))


def _no_private_key(*dirs):
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in files:
                p = os.path.join(root, f)
                try:
                    with open(p, "rb") as fh:
                        assert b"PRIVATE KEY" not in fh.read(), p
                except OSError:
                    pass


def test_credentials_on_a_oneshot(gtls, mxc, host_dir):
    d = host_dir("work", 0o777)
    files = ('echo CA-HEAD $(head -1 "$DENO_CERT"); n=$(wc -c < "$DENO_CERT"); '
             'tail -c "$n" "$SSL_CERT_FILE" | cmp -s - "$DENO_CERT" && echo BUNDLE-ENDS-WITH-CA; '
             '[ $(wc -c < "$SSL_CERT_FILE") -gt $((n * 10)) ] && echo BUNDLE-HAS-ROOTS')
    r = mxc({"network": NET, "filesystem": {"readwritePaths": [d]},
             "process": {"commandLine": WORKLOAD + files, "env": PROBE}})
    assert r.rc == 0, r.describe()
    v = _check_workload(r.stdout, gtls["api"])
    assert v["SSL_CERT_FILE"].startswith(d + "/.mxc-proxy/oneshot-") and v["SSL_CERT_FILE"].endswith("/bundle.pem"), v
    assert v["DENO_CERT"] == os.path.dirname(v["SSL_CERT_FILE"]) + "/ca.pem", v
    out = r.stdout.splitlines()
    assert "CA-HEAD -----BEGIN CERTIFICATE-----" in out and "BUNDLE-ENDS-WITH-CA" in out, r.stdout
    assert "BUNDLE-HAS-ROOTS" in out, r.stdout
    _no_private_key(mxc.state_dir, mxc.state_dir + ".ws", d)
    assert not os.path.exists("/tmp/.mxc-proxy")
    # the run's end takes its CA files away (the cleaner runs once PID 1 is gone)
    for _ in range(100):
        if not os.path.exists(os.path.join(d, ".mxc-proxy")):
            break
        time.sleep(0.05)
    assert os.listdir(d) == [], os.listdir(d)
    # no grant to put the CA in: refused before anything runs
    r = mxc({"network": NET, "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "RAN" not in r.stdout and "network.credentials" in r.error["message"], r.describe()


def test_a_planted_link_is_never_followed(gtls, mxc, host_dir):
    d, target = host_dir("work2", 0o777), host_dir("elsewhere", 0o777)
    os.symlink(target, os.path.join(d, ".mxc-proxy"))
    r = mxc({"network": NET, "filesystem": {"readwritePaths": [d]}, "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "RAN" not in r.stdout, r.describe()
    assert os.listdir(target) == []


def test_credentials_need_governed_egress_and_the_callers_variable(gtls, mxc, monkeypatch, host_dir):
    fs = {"readwritePaths": [host_dir("work3", 0o777)]}
    bad = dict(NET, defaultPolicy="allow")
    r = mxc({"network": bad, "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "RAN" not in r.stdout and "network.credentials" in r.error["message"], r.describe()
    r = mxc({"network": {"credentials": NET["credentials"]}, "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "network.credentials" in r.error["message"], r.describe()
    badhost = dict(NET, credentials=[dict(NET["credentials"][0], host="bad host")])
    r = mxc({"network": badhost, "filesystem": fs, "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "RAN" not in r.stdout and r.error["code"] == "policy_validation", r.describe()
    assert "network.credentials[0].host" in r.error["message"] and SECRET not in r.stdout, r.describe()
    monkeypatch.delenv("MXC_TEST_GH_SECRET")
    r = mxc({"network": NET, "filesystem": fs, "process": {"commandLine": "echo RAN"}})
    assert r.rc != 0 and "RAN" not in r.stdout and "MXC_TEST_GH_SECRET" in r.error["message"], r.describe()
    assert "credentials[0].secretEnv" in r.error["message"], r.describe()


def test_credentials_in_a_session_from_start_to_stop(gtls, mxc, session_factory):
    s = session_factory(network=NET)
    for _ in range(2):
        r = s.exec(WORKLOAD, env=PROBE)
        assert r.rc == 0, r.describe()
        v = _check_workload(r.stdout, gtls["api"])
    assert v["SSL_CERT_FILE"].startswith(s.workspace + "/.mxc-proxy/"), (v, s.workspace)
    with open(v["NODE_EXTRA_CA_CERTS"]) as f:  # the workspace is at the same path on the host
        assert f.read().startswith("-----BEGIN CERTIFICATE-----")
    # the state keeps the binding, never the secret
    for root, _, files in os.walk(mxc.state_dir):
        for f in files:
            try:
                data = open(os.path.join(root, f), "rb").read()
            except OSError:
                continue
            assert SECRET.encode() not in data, f
    _no_private_key(mxc.state_dir, mxc.state_dir + ".ws")
    # the session's audit (beside its state): the credential's name, never its secret
    audits = [os.path.join(r_, f) for r_, _, fs in os.walk(mxc.state_dir) for f in fs if f == "proxy-audit.jsonl"]
    recs = [json.loads(l) for a in audits for l in open(a)]
    assert any(x.get("credential") == "github" and x["disposition"] == "allowed" for x in recs), recs
    assert any(x["reason"] == "credential-path" for x in recs), recs
    # another session: another CA
    s2 = session_factory(network=NET)
    v2 = _check_workload(s2.exec(WORKLOAD, env=PROBE).stdout, gtls["api"])
    with open(v["NODE_EXTRA_CA_CERTS"]) as f1, open(v2["NODE_EXTRA_CA_CERTS"]) as f2:
        assert f1.read() != f2.read()
    assert s.stop().rc == 0 and s2.stop().rc == 0
    # a start after a stop reads the secret again (and draws a new CA)
    assert s.start().rc == 0
    _check_workload(s.exec(WORKLOAD, env=PROBE).stdout, gtls["api"])
    assert s.stop().rc == 0
