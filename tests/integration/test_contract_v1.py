"""Contract 1.0.0 conformance (docs/wire-contract.md, "Contract 1.0.0"): the exact-version
dialect through mxc-exec — lxc-exec's streams and exit codes for one-shots, the dry-run report,
--available-backends, the schema's rules (version, null, unknown keys, backend sections), the
network postures, process.env, and the isolation_session lifecycle with settings under
isolationSession.<phase> and no --experimental.  tests/differential compares the one-shot
surface with upstream's own executor; this file pins our answers without it."""
import base64
import json
import os

import pytest


V = "1.0.0"
ALL_ALLOW = {"egress": {"default": "allow"}, "ingress": {"default": "allow", "hostLoopback": "allow"}}
THIS_MUST_NEVER_RUN = "echo THIS_MUST_NEVER_RUN"
IFACES = "sed -n 's/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev"  # the network interfaces the workload sees


def oneshot(cmd, **extra):
    req = {"version": V, "containment": "bubblewrap", "process": {"commandLine": cmd}}
    req.update(extra)
    return req


def run(mxc, req, flags=(), **kw):
    return mxc(req, flags=list(flags), via="file", **kw)


def stderr_envelope(r):
    last = r.stderr.strip().splitlines()[-1]
    i = last.index('{"error":')
    return json.loads(last[i:])["error"]


def assert_parse_error(r, needle=None):
    assert r.rc == 1 and r.stdout == "", r.describe()
    assert r.stderr.startswith("Request error\nConfiguration parse error: "), r.describe()
    if needle:
        assert needle in r.stderr, r.describe()


# ---- one-shot: streams and exit codes ----------------------------------------------------

def test_workload_output_and_exit_code(mxc):
    r = run(mxc, oneshot("echo out; echo err >&2; exit 3"))
    assert (r.rc, r.stdout, r.stderr) == (3, "out\n", "err\n"), r.describe()


@pytest.mark.parametrize("cmd,code", [("exit 0", 0), ("exit 300", 44), ("kill -9 $$", 137), ("exit 255", 255)])
def test_exit_codes_pass_through(mxc, cmd, code):
    assert run(mxc, oneshot(cmd)).rc == code


def test_parse_error_goes_to_stderr_with_exit_1(mxc):
    r = run(mxc, oneshot(THIS_MUST_NEVER_RUN, bogus=1))
    assert_parse_error(r, "unknown field `bogus`")
    assert "THIS_MUST_NEVER_RUN" not in r.stdout


def test_backend_not_on_linux(mxc):
    r = run(mxc, oneshot(THIS_MUST_NEVER_RUN, containment="seatbelt"))
    assert r.rc == 1 and r.stdout == "", r.describe()
    assert r.stderr.startswith("error: the 'seatbelt' backend is not available on Linux"), r.describe()


def test_experimental_backend_needs_the_flag(mxc):
    req = oneshot(THIS_MUST_NEVER_RUN, containment="hyperlight", version="1.1.0-alpha")
    r = run(mxc, req)
    assert r.rc == 1 and "experimental" in r.stderr, r.describe()
    r = run(mxc, req, flags=["--experimental"])
    assert r.rc == 1 and "not available" in r.stderr, r.describe()


def test_refused_by_the_matrix_is_an_envelope_on_stderr_exit_255(mxc):
    r = run(mxc, oneshot(THIS_MUST_NEVER_RUN, network={"ingress": {"default": "allow"}}))
    assert r.rc == 255 and r.stdout == "", r.describe()
    err = stderr_envelope(r)
    assert err["code"] == "backend_error" and "network" in err["message"]
    # the human message, immediately followed by the envelope
    assert r.stderr.strip().startswith(err["message"]), r.describe()


def test_timeout_is_an_envelope_on_stderr_exit_255(mxc):
    req = oneshot("echo started; sleep 30")
    req["process"]["timeout"] = 300
    r = run(mxc, req)
    assert r.rc == 255 and r.stdout == "started\n", r.describe()
    err = stderr_envelope(r)
    assert err["code"] == "backend_error" and "timed out after 300ms" in err["message"]
    assert err["details"] == {"timedOut": True, "timeoutMs": 300}


def test_config_by_positional_path_config_and_base64(mxc):
    req = oneshot("echo via")
    path = mxc.config_file(req)
    assert mxc(argv=[path]).stdout == "via\n"
    assert mxc(argv=["--config", path]).stdout == "via\n"
    b = base64.b64encode(json.dumps(req).encode()).decode()
    assert mxc(argv=["--config-base64", b]).stdout == "via\n"


# ---- dry run and discovery ----------------------------------------------------------------

def test_dry_run_passed(mxc):
    req = oneshot(THIS_MUST_NEVER_RUN, containerId="box-1")
    req["process"].update(cwd="/tmp", timeout=5000)
    r = run(mxc, req, flags=["--dry-run"])
    assert r.rc == 0 and r.stderr == "", r.describe()
    lines = r.stdout.splitlines()
    assert lines[:4] == ["Script code length: %d" % len(THIS_MUST_NEVER_RUN), "Working directory: /tmp",
                         "Script timeout: 5000", "Container name: box-1"], r.describe()
    assert lines[4].startswith("Runner completed in ") and lines[4].endswith("ms")
    assert lines[5] == "Dry run completed. Result: validation passed"


def test_dry_run_failed(mxc):
    r = run(mxc, oneshot(THIS_MUST_NEVER_RUN, ui={"clipboard": "all"}), flags=["--dry-run"])
    assert r.rc == 255, r.describe()
    assert r.stdout.splitlines()[-1].startswith("Dry run completed. Result: validation failed: ui"), r.describe()


def test_dry_run_parse_error_is_still_a_parse_error(mxc):
    assert_parse_error(run(mxc, oneshot("true", lifecycle=None), flags=["--dry-run"]), "null")


def test_available_backends(mxc):
    r = mxc(argv=["--available-backends"])
    assert r.rc == 0, r.describe()
    backends = json.loads(r.stdout)
    assert [b["backend"] for b in backends] == ["bubblewrap"]
    assert "proxyEnforcement" not in backends[0].get("capabilities", [])
    assert backends[0]["warnings"]


# ---- the schema -----------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["0.9.0-alpha", "1.0.0", "1.1.0-alpha"])
def test_registered_versions(mxc, version):
    assert run(mxc, oneshot("echo v", version=version)).stdout == "v\n"


@pytest.mark.parametrize("version", ["1.0.0-alpha", "2.0.0", "1.0.1", "1.1.0"])
def test_unregistered_versions(mxc, version):
    assert_parse_error(run(mxc, oneshot(THIS_MUST_NEVER_RUN, version=version)), "Unsupported contract version")


@pytest.mark.parametrize("path,value", [
    ("containment", None), ("containerId", None), ("lifecycle", None), ("process.cwd", None),
    ("process.env", None), ("process.timeout", None), ("filesystem", None), ("network", None),
    ("ui", None), ("telemetry", None), ("runtimeConfig", None)])
def test_null_is_refused(mxc, path, value):
    req = oneshot(THIS_MUST_NEVER_RUN)
    node = req
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value
    assert_parse_error(run(mxc, req), "null")


@pytest.mark.parametrize("extra,needle", [
    ({"experimental": {}}, "unknown field `experimental`"),
    ({"sandboxId": "iso:x"}, "unknown field `sandboxId`"),
    ({"network": {"allowOutbound": True}}, "unknown field `allowOutbound`"),
    ({"network": {"defaultPolicy": "block"}}, "unknown field `defaultPolicy`"),
    ({"processContainer": {}}, "Multiple containment backends configured"),
    ({"lxc": {"distribution": "alpine", "release": "3.23"}}, "Multiple containment backends configured"),
    ({"network": {"egress": {"default": "deny", "allow": [{"to": [{"cidr": "10.0.0.1/8"}]}]}}}, "host part"),
    ({"network": {"egress": {"default": "deny", "allow": [{"ports": [{"protocol": "icmp", "port": 1}]}]}}},
     "protocol='icmp'"),
    ({"runtimeConfig": {"networkProxy": "socks5://127.0.0.1:1"}}, "'http' or 'https'"),
    ({"runtimeConfig": {"networkProxy": "http://10.0.0.1:3128"}}, "localhost, 127.0.0.1, or [::1]"),
])
def test_schema_rules(mxc, extra, needle):
    assert_parse_error(run(mxc, oneshot(THIS_MUST_NEVER_RUN, **extra)), needle)


def test_missing_fields(mxc):
    assert_parse_error(run(mxc, {"version": V}), "missing field `process`")
    assert_parse_error(run(mxc, {"version": V, "process": {}}), "missing field `commandLine`")
    assert_parse_error(run(mxc, oneshot("")), "must not be empty")


def test_version_specific_fields(mxc):
    # 0.9.0-alpha's aliases, 1.1.0-alpha's sections
    r = run(mxc, oneshot(THIS_MUST_NEVER_RUN, containment="appcontainer", version="0.9.0-alpha"))
    assert r.rc == 1 and "'appcontainer' backend is not available" in r.stderr, r.describe()
    assert_parse_error(run(mxc, oneshot(THIS_MUST_NEVER_RUN, containment="appcontainer")), "unknown variant")
    assert run(mxc, oneshot("echo t", version="1.1.0-alpha", test={"message": "x"})).stdout == "t\n"
    assert_parse_error(run(mxc, oneshot(THIS_MUST_NEVER_RUN, test={"message": "x"})), "unknown field `test`")


# ---- network postures --------------------------------------------------------------------------

def test_blocked_posture_is_loopback_only(mxc):
    for net in (None, {"egress": {"default": "deny"}},
                {"egress": {"default": "deny"}, "ingress": {"default": "deny", "hostLoopback": "deny"}}):
        req = oneshot(IFACES)
        if net is not None:
            req["network"] = net
        r = run(mxc, req)
        assert (r.rc, r.stdout) == (0, "lo\n"), r.describe()


def test_all_allow_is_the_host_network(mxc):
    r = run(mxc, oneshot("cat /proc/net/dev | wc -l", network=ALL_ALLOW))
    host = len(open("/proc/net/dev").read().splitlines())
    assert r.rc == 0 and int(r.stdout) == host, r.describe()


# Rules, egress allow and hostLoopback allow are model 1 (tests/integration/test_network_models.py);
# what no model can deliver is refused before anything runs.
@pytest.mark.parametrize("net", [
    {"ingress": {"default": "allow"}},
    {"egress": {"default": "allow"}, "ingress": {"default": "allow"}},
    {"egress": {"default": "deny", "allow": [{"to": [{"cidr": "2001:db8::/32"}]}]}},
])
def test_other_shapes_are_refused_as_backend_error(mxc, net):
    r = run(mxc, oneshot(THIS_MUST_NEVER_RUN, network=net))
    assert r.rc == 255 and stderr_envelope(r)["code"] == "backend_error", r.describe()
    assert "THIS_MUST_NEVER_RUN" not in r.stdout


def test_network_proxy_without_a_port_is_refused_as_backend_error(mxc):
    r = run(mxc, oneshot(THIS_MUST_NEVER_RUN, runtimeConfig={"networkProxy": "http://127.0.0.1"}))
    assert r.rc == 255 and stderr_envelope(r)["code"] == "backend_error", r.describe()


# ---- process.env --------------------------------------------------------------------------------

def test_env_defaults(mxc):
    r = run(mxc, oneshot('echo "$PATH|$TERM"'))
    assert r.stdout == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin|xterm-256color\n"


def test_env_given_is_the_whole_environment(mxc):
    req = oneshot('echo "${TERM-unset}|$FOO"')
    req["process"]["env"] = ["FOO=bar"]
    assert run(mxc, req).stdout == "unset|bar\n"
    req["process"]["inheritDefaultEnv"] = True
    assert run(mxc, req).stdout == "xterm-256color|bar\n"


# ---- isolation_session in 1.0 --------------------------------------------------------------------

def test_session_lifecycle_without_experimental(mxc):
    prov = {"version": V, "phase": "provision", "containment": "isolation_session", "network": ALL_ALLOW,
            "isolationSession": {"provision": {"appId": "PFN:Contoso.App"}}}
    r = mxc(prov, flags=[])
    assert r.rc == 0, r.describe()
    sid = r.result["sandboxId"]
    ws = r.result["metadata"]["ephemeralWorkspacePath"]
    body = json.loads(base64.urlsafe_b64decode(sid[4:] + "=" * (-len(sid[4:]) % 4)))
    assert body["appId"] == "PFN:Contoso.App"
    phase = lambda p, **kw: mxc(dict({"version": V, "phase": p, "sandboxId": sid}, **kw), flags=[])
    assert phase("start").rc == 0
    assert phase("start").code == "already_started"
    r = phase("exec", process={"commandLine": "echo s > %s/f; cat %s/f" % (ws, ws)})
    assert (r.rc, r.stdout) == (0, "s\n"), r.describe()
    assert phase("exec", process={"commandLine": "exit 9"}).rc == 9
    assert phase("stop").rc == 0
    assert phase("exec", process={"commandLine": "true"}).code == "not_started"
    assert phase("start").rc == 0
    assert phase("exec", process={"commandLine": "cat %s/f" % ws}).stdout == "s\n"
    assert phase("deprovision").rc == 0
    assert phase("start").code == "stale_id"


@pytest.mark.parametrize("req,code", [
    ({"containment": "isolation_session"}, "malformed_request"),  # network is required
    ({"containment": "isolation_session", "network": {"ingress": {"default": "allow"}}}, "malformed_request"),
    ({"containment": "isolation_session", "network": ALL_ALLOW, "experimental": {}}, "malformed_request"),
    ({"containment": "isolation_session", "network": ALL_ALLOW, "ui": {}}, "malformed_request"),
    ({"containment": "isolation_session", "network": ALL_ALLOW,
      "isolationSession": {"start": {}}}, "malformed_request"),
    ({"containment": "isolation_session", "network": ALL_ALLOW,
      "isolationSession": {"provision": {"appId": "bad\u0007"}}}, "policy_validation"),
    ({"containment": "process", "network": ALL_ALLOW}, "malformed_request"),
    ({"containment": "wslc"}, "backend_unavailable"),
])
def test_provision_refusals(mxc, req, code):
    r = mxc(dict({"version": V, "phase": "provision"}, **req), flags=[])
    assert r.code == code, r.describe()


@pytest.mark.parametrize("sid,code", [("abc", "malformed_id"), ("zzz:abc", "unsupported_containment"),
                                      ("wslc:abc", "backend_unavailable"), ("iso:!!", "malformed_id")])
def test_id_routing(mxc, sid, code):
    assert mxc({"version": V, "phase": "start", "sandboxId": sid}, flags=[]).code == code


def test_start_takes_no_process(mxc):
    r = mxc({"version": V, "phase": "start", "sandboxId": "iso:abc", "process": {"commandLine": "x"}}, flags=[])
    assert r.code == "malformed_request" and "unknown field `process`" in r.error["message"], r.describe()


def test_provision_extension_filesystem_and_blocked_network(mxc, tmp_path):
    d = tmp_path / "granted"
    d.mkdir()
    (d / "f").write_text("granted\n")
    os.chmod(tmp_path, 0o755)
    prov = {"version": V, "phase": "provision", "containment": "isolation_session",
            "network": {"egress": {"default": "deny"}}, "filesystem": {"readonlyPaths": [str(d)]}}
    r = mxc(prov, flags=[])
    assert r.rc == 0, r.describe()
    sid = r.result["sandboxId"]
    assert mxc({"version": V, "phase": "start", "sandboxId": sid}, flags=[]).rc == 0
    r = mxc({"version": V, "phase": "exec", "sandboxId": sid,
             "process": {"commandLine": "cat %s/f; %s" % (d, IFACES)}}, flags=[])
    assert (r.rc, r.stdout) == (0, "granted\nlo\n"), r.describe()
    # policy is fixed at provision: an exec may not bring a network
    r = mxc({"version": V, "phase": "exec", "sandboxId": sid, "network": ALL_ALLOW,
             "process": {"commandLine": "true"}}, flags=[])
    assert r.code == "policy_validation", r.describe()
