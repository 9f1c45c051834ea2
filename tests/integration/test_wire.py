"""Wire contract of mxc-exec: envelopes, error codes, transport flags (DESIGN §2)."""
import base64
import json
import os
import re

import pytest

from conftest import (ERROR_CODES, MXC_EXEC, assert_error, assert_ok_envelope, oneshot_request,
                      parse_envelope)

# a decodable id of no sandbox: {"version":1,"agentUserName":"mxc-does-not-exist"}
STALE_ID = "iso:eyJ2ZXJzaW9uIjoxLCJhZ2VudFVzZXJOYW1lIjoibXhjLWRvZXMtbm90LWV4aXN0In0"


def b64url_decode_nopad(s):
    assert "=" not in s and "+" not in s and "/" not in s, s
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def all_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        out += [os.path.join(d, x) for x in dirs + files]
    return out


# ---------------------------------------------------------------------------------------------
# informational flags


def test_version(mxc):
    r = mxc(argv=["--version"])
    assert r.rc == 0, r.describe()
    assert re.search(r"\b\d+\.\d+\.\d+\b", r.stdout), r.describe()


def test_help_names_the_flags(mxc):
    r = mxc(argv=["--help"])
    assert r.rc == 0, r.describe()
    for flag in ("--config", "--config-base64", "--experimental", "--probe", "--dry-run",
                 "--debug", "--version"):
        assert flag in r.stdout, "help lacks %s:\n%s" % (flag, r.stdout)


def _keys(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield (prefix + "." + k).lower()
            yield from _keys(v, prefix + "." + k)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v, prefix)


def test_probe_reports_kernel_capabilities(mxc):
    r = mxc(argv=["--probe"])
    assert r.rc == 0, r.describe()
    obj = json.loads(r.stdout)
    assert isinstance(obj, dict), r.describe()
    keys = " ".join(_keys(obj))
    assert "landlock" in keys, keys
    assert re.search(r"userns|user_namespace|usernamespace|user-namespace", keys), keys
    assert "seccomp" in keys, keys
    assert "cgroup" in keys, keys


def test_no_config_is_an_error_envelope(mxc):
    r = mxc(argv=[])
    assert r.rc != 0
    # either usage on stderr or an error envelope; never a success
    env = parse_envelope(r.stdout)
    assert env is None or "error" in env, r.describe()


# ---------------------------------------------------------------------------------------------
# broken input always gets one malformed_request envelope on stdout


BROKEN = [
    pytest.param(b"", id="empty"),
    pytest.param(b"{", id="truncated"),
    pytest.param(b"not json", id="garbage"),
    pytest.param(b"[1,2,3]", id="array"),
    pytest.param(b"\"string\"", id="string"),
    pytest.param(b"null", id="null"),
    pytest.param(b'{"containment":"process"} trailing', id="trailing-garbage"),
    pytest.param(b'{"containment":"process",}', id="trailing-comma"),
    pytest.param(b'{"containment":"process","containment":"process"}', id="duplicate-key"),
    pytest.param(b'{"containment":"pro\\u0000cess"}', id="nul-in-string"),
    pytest.param(b'{"containment":"\xff\xfe"}', id="bad-utf8"),
    pytest.param(b'\xef\xbb\xbf{"containment":"process"}', id="bom"),
    pytest.param(b'{"phase":"start" /* c */, "sandboxId":"x"}', id="comment"),
    pytest.param(b"[" * 100000, id="deep-nesting"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":NaN}}', id="nan"),
    # JSONTestSuite's n_* shapes (inputs every parser must refuse), inside a request
    pytest.param(b'{"containment":"\\ud800"}', id="n-lone-high-surrogate"),
    pytest.param(b'{"containment":"\\udc00\\ud800"}', id="n-reversed-surrogates"),
    pytest.param(b'{"containment":"\\x41"}', id="n-bad-escape"),
    pytest.param(b'{"containment":"\\u00"}', id="n-short-unicode-escape"),
    pytest.param(b'{"containment":"pro\tcess"}', id="n-raw-tab-in-string"),
    pytest.param(b'{"containment":"pro\ncess"}', id="n-raw-newline-in-string"),
    pytest.param(b'{"containment":"\xc0\xaf"}', id="n-overlong-utf8"),
    pytest.param(b'{"containment":"\xed\xa0\x80"}', id="n-utf8-encoded-surrogate"),
    pytest.param(b'{"containment":"\xf8\x88\x80\x80\x80"}', id="n-five-byte-utf8"),
    pytest.param(b'{"containment":"\xf4\x90\x80\x80"}', id="n-beyond-u10ffff"),
    pytest.param(b"{'containment':'process'}", id="n-single-quotes"),
    pytest.param(b'{containment:"process"}', id="n-unquoted-key"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":01}}', id="n-leading-zero"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":+1}}', id="n-plus-sign"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":.5}}', id="n-no-int-part"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":1.}}', id="n-no-fraction-digits"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":-}}', id="n-lone-minus"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":Infinity}}', id="n-infinity"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":1e999}}', id="n-overflowing-real"),
    pytest.param(b'{"process":{"commandLine":"true","timeout":0x10}}', id="n-hex-number"),
    pytest.param(b'{"containment":"process"', id="n-unclosed-object"),
    pytest.param(b'{"containment" "process"}', id="n-missing-colon"),
    pytest.param(b'{"containment":"process" "phase":"start"}', id="n-missing-comma"),
    pytest.param(b'{"containment":"process"}}', id="n-extra-close"),
    pytest.param(b'{"process":{"commandLine":"true","env":[,]}}', id="n-lone-comma-array"),
    pytest.param(b'{"process":{"commandLine":"true","env":["a",,"b"]}}', id="n-double-comma"),
    pytest.param(b'{"containment":tru}', id="n-truncated-literal"),
    pytest.param(b'{"containment":TRUE}', id="n-capital-literal"),
    pytest.param(b'\x00{"containment":"process"}', id="n-leading-nul"),
    pytest.param(b'{"containment":"process"}\x00', id="n-trailing-nul"),
    pytest.param(b'\xff\xfe{\x00"\x00', id="n-utf16-bom"),
]


@pytest.mark.parametrize("data", BROKEN)
@pytest.mark.parametrize("flags", [[], ["--experimental"]], ids=["plain", "experimental"])
def test_broken_json_is_malformed_request_envelope(mxc, data, flags):
    r = mxc(data, flags=flags)
    err = assert_error(r, "malformed_request")
    assert r.stdout.count("\n") <= 1, "more than one line on stdout: %r" % r.stdout
    # a parse rejection is not an OS failure
    assert "nativeCode" not in err and "operation" not in err, err


@pytest.mark.parametrize("timeout", [-1, 1.5, 1e400, 2 ** 64, "500", True])
def test_timeout_wrong_type_or_range_is_malformed(mxc, timeout):
    data = '{"containment":"process","process":{"commandLine":"true","timeout":%s}}' % (
        json.dumps(timeout) if not isinstance(timeout, float) or timeout != float("inf")
        else "1e400")
    assert_error(mxc(data), "malformed_request")


def test_error_envelope_shape(mxc):
    r = mxc({"phase": "start", "sandboxId": STALE_ID})
    err = assert_error(r, "stale_id")
    assert set(err) <= {"code", "message", "operation", "nativeCode", "remediation", "details"}, err


# ---------------------------------------------------------------------------------------------
# --config-base64


def _b64_with_plus_slash_pad(req):
    """A request whose standard base64 encoding contains '+', '/' and '=' padding."""
    for n in range(0, 64):
        r = dict(req, _comment="?>" * n + "~~~???>>>")
        data = json.dumps(r).encode()
        enc = base64.b64encode(data).decode()
        if "+" in enc and "/" in enc and enc.endswith("="):
            return r, enc
    raise AssertionError("no suitable padding found")


def test_config_base64_standard_alphabet(mxc):
    req, enc = _b64_with_plus_slash_pad(oneshot_request("echo via-b64", helper=False))
    r = mxc(argv=["--config-base64", enc])
    assert r.rc == 0, r.describe()
    assert r.stdout == "via-b64\n", r.describe()


def test_config_base64_urlsafe_alphabet_rejected(mxc):
    req, enc = _b64_with_plus_slash_pad(oneshot_request("echo via-b64", helper=False))
    url = enc.replace("+", "-").replace("/", "_")
    r = mxc(argv=["--config-base64", url])
    assert_error(r, "malformed_request")
    assert "via-b64" not in r.stdout


@pytest.mark.parametrize("enc", ["!!!!", "e30", "e30===", "e3 0="], ids=["alphabet", "nopad",
                                                                        "overpad", "space"])
def test_config_base64_invalid(mxc, enc):
    assert_error(mxc(argv=["--config-base64", enc]), "malformed_request")


def test_config_base64_non_utf8(mxc):
    enc = base64.b64encode(b'{"containment":"\xc3\x28"}').decode()
    assert_error(mxc(argv=["--config-base64", enc]), "malformed_request")


def test_config_file_and_stdin_agree(mxc):
    req = oneshot_request("echo same", helper=False)
    a = mxc(req, via="stdin")
    b = mxc(req, via="file")
    c = mxc(req, via="base64")
    assert a.rc == b.rc == c.rc == 0, (a.describe(), b.describe(), c.describe())
    assert a.stdout == b.stdout == c.stdout == "same\n"


# ---------------------------------------------------------------------------------------------
# --experimental gate


@pytest.mark.parametrize("req", [
    {"containment": "isolation_session", "phase": "provision"},
    {"phase": "start", "sandboxId": STALE_ID},
    {"phase": "exec", "sandboxId": STALE_ID, "process": {"commandLine": "true"}},
], ids=["provision", "start", "exec"])
def test_state_aware_without_experimental(mxc, state_dir, req):
    r = mxc(req, flags=[])
    err = assert_error(r, "backend_unavailable")
    assert "--experimental" in err.get("remediation", ""), err
    assert all_files(state_dir) == [], all_files(state_dir)


# ---------------------------------------------------------------------------------------------
# unknown keys are malformed_request naming the JSON path


def _names_path(message, *parts):
    """message names the path parts in order (any separator: '.', '/', '[', quotes)."""
    pat = r"[^A-Za-z0-9_]*".join(re.escape(p) for p in parts)
    return re.search(pat, message) is not None


UNKNOWN = [
    ("top", {"containment": "process", "process": {"commandLine": "true"}, "bogusTop": 1},
     ["bogusTop"]),
    ("process", {"containment": "process", "process": {"commandLine": "true", "bogusProc": 1}},
     ["process", "bogusProc"]),
    ("filesystem", {"containment": "process", "process": {"commandLine": "true"},
                    "filesystem": {"readonlyPaths": [], "bogusFs": []}},
     ["filesystem", "bogusFs"]),
    ("network", {"containment": "process", "process": {"commandLine": "true"},
                 "network": {"defaultPolicy": "block", "bogusNet": True}},
     ["network", "bogusNet"]),
    ("ui", {"containment": "process", "process": {"commandLine": "true"},
            "ui": {"disable": True, "bogusUi": 1}}, ["ui", "bogusUi"]),
    ("lifecycle", {"containment": "process", "process": {"commandLine": "true"},
                   "lifecycle": {"destroyOnExit": True, "bogusLc": 1}},
     ["lifecycle", "bogusLc"]),
    ("provision-top", {"containment": "isolation_session", "phase": "provision",
                       "bogusProv": 1}, ["bogusProv"]),
    ("provision-filesystem", {"containment": "isolation_session", "phase": "provision",
                              "filesystem": {"bogusFs2": []}}, ["filesystem", "bogusFs2"]),
    ("start-top", {"phase": "start", "sandboxId": STALE_ID, "bogusStart": 1}, ["bogusStart"]),
    ("exec-process", {"phase": "exec", "sandboxId": STALE_ID,
                      "process": {"commandLine": "true", "bogusExec": 1}},
     ["process", "bogusExec"]),
]


@pytest.mark.parametrize("name,req,path", UNKNOWN, ids=[u[0] for u in UNKNOWN])
def test_unknown_key_names_path(mxc, state_dir, name, req, path):
    r = mxc(req)
    err = assert_error(r, "malformed_request")
    assert _names_path(err["message"], *path), "message does not name %s: %r" % (
        ".".join(path), err["message"])
    assert all_files(state_dir) == []


def test_experimental_section_is_permissive(mxc):
    # unknown keys inside our own experimental block are not a parse error
    r = mxc({"containment": "isolation_session", "phase": "provision",
             "experimental": {"isolation_session": {"somethingNew": {"x": 1}}}})
    assert_ok_envelope(r)


def test_foreign_experimental_section_rejected_on_provision(mxc):
    # spec 000's matrix: another backend's experimental section is rejected on provision
    r = mxc({"containment": "isolation_session", "phase": "provision",
             "experimental": {"somethingNew": {"x": 1}}})
    assert r.rc != 0 and r.envelope["error"]["code"] == "policy_validation", r.describe()


def test_schema_and_comment_allowed(mxc):
    req = oneshot_request("echo c", helper=False)
    req["$schema"] = "https://example.invalid/schema.json"
    req["_comment"] = "a comment"
    r = mxc(req)
    assert r.rc == 0 and r.stdout == "c\n", r.describe()


# ---------------------------------------------------------------------------------------------
# version field


@pytest.mark.parametrize("version", ["0.6.0", "0.8.0", "0.9.0", "0.9.0-beta.1"])
def test_version_accepted(mxc, version):
    req = oneshot_request("echo v", helper=False)
    req["version"] = version
    r = mxc(req)
    assert r.rc == 0 and r.stdout == "v\n", r.describe()


@pytest.mark.parametrize("version", ["0.5.0", "banana", "1", ""])
def test_version_rejected(mxc, version):
    req = oneshot_request("echo v", helper=False)
    req["version"] = version
    r = mxc(req)
    assert_error(r, "malformed_request")
    assert "v\n" != r.stdout


def test_version_newer_says_upgrade(mxc):
    req = oneshot_request("echo v", helper=False)
    req["version"] = "0.10.0"
    err = assert_error(mxc(req), "malformed_request")
    assert "upgrade" in (err["message"] + err.get("remediation", "")).lower(), err


def test_contract_version_newer_than_1_says_upgrade(mxc):
    # a newer contract than 1.x is answered the way contract 1.0 answers (lxc-exec's streams)
    req = oneshot_request("echo v", helper=False)
    req["version"] = "1.2.0"
    r = mxc(req)
    assert r.rc == 1 and r.stdout == "", r.describe()
    assert r.stderr.startswith("Request error\n") and "upgrade" in r.stderr, r.describe()


# ---------------------------------------------------------------------------------------------
# containment values


@pytest.mark.parametrize("containment", ["bubblewrap", "lxc", "seatbelt", "wslc", "microvm",
                                         "processcontainer"])
def test_unsupported_containment(mxc, containment):
    r = mxc({"containment": containment, "process": {"commandLine": "echo ran"}})
    err = assert_error(r, "unsupported_containment")
    assert err.get("remediation"), err
    assert "ran" not in r.stdout


def test_unknown_id_prefix_is_unsupported_containment(mxc):
    assert_error(mxc({"phase": "start", "sandboxId": "zzz:eyJ2ZXJzaW9uIjoxfQ"}),
                 "unsupported_containment")


@pytest.mark.parametrize("sid", ["iso:!!", "iso:e30=", "iso:a+b/", "iso: eyJ9", "iso:%2F",
                                 "iso:WzFd",  # a JSON array
                                 "iso:eyJ2ZXJzaW9uIjoxfQ"],  # no agentUserName
                         ids=["alphabet", "padding", "std-alphabet", "space", "percent",
                              "non-object", "missing-key"])
def test_malformed_ids(mxc, sid):
    assert_error(mxc({"phase": "start", "sandboxId": sid}), "malformed_id")


def test_id_version_newer_says_upgrade(mxc):
    body = base64.urlsafe_b64encode(b'{"version":2,"agentUserName":"mxc-x"}').decode().rstrip("=")
    err = assert_error(mxc({"phase": "start", "sandboxId": "iso:" + body}), "malformed_id")
    assert "upgrade" in (err["message"] + err.get("remediation", "")).lower(), err


def test_id_with_path_characters_never_touches_fs(mxc, state_dir):
    for name in ("../../etc", "a/b", "x\u0000y", ".."):
        body = base64.urlsafe_b64encode(json.dumps({"version": 1, "agentUserName": name})
                                        .encode()).decode().rstrip("=")
        r = mxc({"phase": "deprovision", "sandboxId": "iso:" + body})
        assert_error(r, ["malformed_id", "stale_id"])
    assert all_files(state_dir) == []


# ---------------------------------------------------------------------------------------------
# provision success shape, and rejected provisions leave nothing


def test_provision_envelope_and_id(mxc):
    r = mxc({"containment": "isolation_session", "phase": "provision"})
    res = assert_ok_envelope(r)
    sid = res["sandboxId"]
    assert sid.startswith("iso:"), sid
    decoded = b64url_decode_nopad(sid[4:])
    obj = json.loads(decoded.decode("utf-8"))
    assert list(obj)[:2] == ["version", "agentUserName"] and obj["version"] == 1, obj
    md = res["metadata"]
    assert md["agentUserName"] == obj["agentUserName"]
    assert re.fullmatch(r"\d+", md["agentUserSid"]), md
    ws = md["ephemeralWorkspacePath"]
    assert os.path.isabs(ws) and os.path.isdir(ws), md
    assert "appId" not in md
    # deterministic id: the encoding of exactly those keys, canonical
    canon = base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode()
    assert sid[4:] == canon.rstrip("="), (sid, canon)


def test_provision_appid_round_trips_in_id(mxc):
    r = mxc({"containment": "isolation_session", "phase": "provision",
             "experimental": {"isolation_session": {"provision": {"appId": ""}}}})
    res = assert_ok_envelope(r)
    obj = json.loads(b64url_decode_nopad(res["sandboxId"][4:]))
    assert obj.get("appId") == "", obj  # "" is distinct from absent


REJECTED_PROVISIONS = [
    ("appId-too-long", {"experimental": {"isolation_session": {"provision": {"appId": "a" * 257}}}},
     "policy_validation"),
    ("appId-control", {"experimental": {"isolation_session": {"provision": {"appId": "a\u0007"}}}},
     "policy_validation"),
    ("relative-path", {"filesystem": {"readonlyPaths": ["relative/dir"]}}, None),
    ("dotdot-path", {"filesystem": {"readwritePaths": ["/tmp/../etc"]}}, None),
    ("double-slash", {"filesystem": {"readonlyPaths": ["/usr//lib"]}}, None),
    ("blank-path", {"filesystem": {"deniedPaths": [""]}}, None),
    ("block-with-local", {"network": {"defaultPolicy": "block", "allowLocalNetwork": True}}, None),
    ("ui-clipboard", {"ui": {"disable": True, "clipboard": "all", "injection": False}},
     "policy_validation"),
    ("lifecycle", {"lifecycle": {"destroyOnExit": True}}, None),
    ("unknown-key", {"bogus": 1}, "malformed_request"),
    ("proxy", {"network": {"defaultPolicy": "allow", "allowLocalNetwork": True,
                           "proxy": {"localhost": 3128}}}, "policy_validation"),
    ("foreign-section", {"processContainer": {}}, None),
]


@pytest.mark.parametrize("name,extra,code", REJECTED_PROVISIONS,
                         ids=[x[0] for x in REJECTED_PROVISIONS])
def test_rejected_provision_creates_nothing(mxc, state_dir, name, extra, code):
    req = {"containment": "isolation_session", "phase": "provision"}
    req.update(extra)
    r = mxc(req)
    assert_error(r, code or ["policy_validation", "malformed_request"])
    assert all_files(state_dir) == [], all_files(state_dir)


def test_rejected_path_is_named(mxc):
    r = mxc({"containment": "isolation_session", "phase": "provision",
             "filesystem": {"readonlyPaths": ["/usr", "relative/dir"]}})
    err = assert_error(r, ["policy_validation", "malformed_request"])
    assert "relative/dir" in err["message"], err


# ---------------------------------------------------------------------------------------------
# one-shot surface


def test_oneshot_streams_and_exit_code(mxc):
    r = mxc(oneshot_request("echo out; echo err >&2; exit 3", helper=False))
    assert r.rc == 3 and r.stdout == "out\n" and "err\n" in r.stderr, r.describe()


def test_oneshot_signal_exit_code(mxc):
    r = mxc(oneshot_request("kill -KILL $$", helper=False))
    assert r.rc == 128 + 9, r.describe()


def test_oneshot_default_containment_is_process(mxc):
    r = mxc({"process": {"commandLine": "echo dflt"}})
    assert r.rc == 0 and r.stdout == "dflt\n", r.describe()


def test_oneshot_missing_command_line(mxc):
    assert_error(mxc({"containment": "process", "process": {}}), "malformed_request")


def test_debug_never_writes_stdout(mxc):
    r = mxc(oneshot_request("echo only-this", helper=False), flags=["--debug"])
    assert r.rc == 0 and r.stdout == "only-this\n", r.describe()


def test_debug_provision_stdout_is_one_envelope(mxc):
    r = mxc({"containment": "isolation_session", "phase": "provision"},
            flags=["--experimental", "--debug"])
    assert_ok_envelope(r)


def test_dry_run_does_not_run(mxc, host_dir):
    d = host_dir("dry")
    target = os.path.join(d, "ran")
    r = mxc(oneshot_request("touch %s" % target, filesystem={"readwritePaths": [d]}),
            flags=["--dry-run"])
    assert r.rc == 0, r.describe()
    assert parse_envelope(r.stdout) is not None, r.describe()
    assert not os.path.exists(target)


def test_dry_run_provision_creates_nothing(mxc, state_dir):
    r = mxc({"containment": "isolation_session", "phase": "provision"},
            flags=["--experimental", "--dry-run"])
    assert r.rc == 0, r.describe()
    assert all_files(state_dir) == [], all_files(state_dir)


def test_oneshot_rejection_is_envelope_on_stdout(mxc):
    r = mxc({"containment": "process", "process": {"commandLine": "echo ran"},
             "lifecycle": {"destroyOnExit": False}})
    assert_error(r, "backend_error")
    assert "ran" not in r.stdout


def test_oneshot_timeout_envelope_on_stderr(mxc):
    r = mxc(oneshot_request("echo before; sleep 30", timeout_ms=500, helper=False))
    assert r.rc == 255, r.describe()
    assert r.stdout.startswith("before\n"), r.describe()
    env = r.stderr_envelope
    assert env is not None, r.describe()
    err = env["error"]
    assert err["code"] == "backend_error"
    assert err["message"] == "timed out after 500 ms", err
    assert err["details"] == {"timedOut": True, "timeoutMs": 500}, err


def test_error_codes_closed_set():
    assert len(ERROR_CODES) == 12


def test_binary_under_test_exists():
    assert os.access(MXC_EXEC, os.X_OK)


@pytest.mark.parametrize("key", ["readonlyPaths", "readwritePaths"])
def test_a_grant_of_a_missing_path_is_refused_before_anything_runs(mxc, tmp_path, key):
    """Wire-contract D6: upstream's lxc-exec refuses it too (bwrap: "Can't find source path"); ours
    answers backend_error, operation fsview.grant, ENOENT, naming the path, and the workload never
    runs — a one-shot, and a session at its start (provision resolves no host path)."""
    missing = str(tmp_path / "not-there")
    rw = tmp_path / "rw"
    rw.mkdir(mode=0o777)
    os.chmod(rw, 0o777)
    marker = rw / "ran"
    fs = {"readwritePaths": [str(rw)]}
    fs[key] = fs.get(key, []) + [missing]
    r = mxc.oneshot("touch %s" % marker, filesystem=fs)
    err = assert_error(r, "backend_error")
    assert err.get("operation") == "fsview.grant" and err.get("nativeCode") == "0x2", err
    assert missing in err["message"] and err.get("remediation"), err
    assert not marker.exists() and not os.path.exists(missing)
    sid = mxc.provision(filesystem=fs)["sandboxId"]
    err = assert_error(mxc.phase("start", sid), "backend_error")
    assert err.get("operation") == "fsview.grant" and missing in err["message"], err
    assert not os.path.exists(missing)
