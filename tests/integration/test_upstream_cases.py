"""Issue 28: requests where mxc answered differently from upstream MXC 1.0.1's exact 1.0.0 parser, on
both entry points — mxc-exec (the wire's executor) and libmxc_ffi.so (what SDK 1.0.1 loads) — and,
where the SDK package is installed (tests/sdk/install.sh), upstream's own libmxc_ffi.so as the
oracle for the same request.  Only requests that are refused before anything runs are sent to
upstream's library: nothing of upstream's ever starts a workload here."""
import ctypes  # noqa: F401  (the child below uses it; imported here so a missing ctypes fails early)
import json
import os
import subprocess
import sys

import pytest

from conftest import MXC_EXEC

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OURS = os.path.join(os.path.dirname(MXC_EXEC), "libmxc_ffi.so")
UPSTREAM = os.path.join(REPO, "tests", "sdk", "node_modules", "@microsoft", "mxc-sdk", "bin", "x64", "libmxc_ffi.so")
V = "1.0.0"
ALL_ALLOW = {"egress": {"default": "allow"}, "ingress": {"default": "allow", "hostLoopback": "allow"}}
NEVER = "echo THIS_MUST_NEVER_RUN"
CODES = {1: "malformed_request", 2: "unsupported_containment", 3: "unsupported_phase", 4: "backend_unavailable",
         5: "malformed_id", 6: "stale_id", 7: "not_provisioned", 8: "not_started", 9: "already_started",
         10: "already_stopped", 11: "policy_validation", 12: "backend_error"}

# One request through a library's contract-1.0 entry points, in a child process (a library that
# crashes fails the case, not the suite): a one-shot through mxc_run_json, an exec through
# mxc_run_state_aware_exec_json, any other phase through mxc_run_state_aware_json.
_CHILD = r'''
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
req = sys.argv[2]
class Err(ctypes.Structure):
    _fields_ = [(f, ctypes.c_char_p) for f in ("message", "operation", "native_code", "remediation")]
class Run(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int32), ("exit_code", ctypes.c_int32), ("timed_out", ctypes.c_int32),
                ("out", ctypes.c_char_p), ("err", ctypes.c_char_p), ("error", Err), ("meta", ctypes.c_char_p)]
class Phase(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int32), ("response", ctypes.c_char_p), ("error", Err)]
phase = json.loads(req).get("phase")
if phase is None or phase == "exec":
    r = Run()
    fn = lib.mxc_run_json if phase is None else lib.mxc_run_state_aware_exec_json
    fn(req.encode(), 0, ctypes.byref(r))
    out = {"status": r.status, "message": r.error.message and r.error.message.decode(),
           "stdout": r.out and r.out.decode(errors="replace")}
else:
    r = Phase()
    lib.mxc_run_state_aware_json(req.encode(), 0, 0, ctypes.byref(r))
    out = {"status": r.status, "message": r.error.message and r.error.message.decode(), "stdout": None}
print(json.dumps(out))
'''


def through_library(lib, req, env=None):
    p = subprocess.run([sys.executable, "-c", _CHILD, lib, json.dumps(req)], capture_output=True, text=True,
                       timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    out["code"] = CODES.get(out["status"], "ok" if out["status"] == 0 else out["status"])
    return out


def through_executor(mxc, req):
    """The code mxc-exec answers with: its parse errors and backend refusals are lxc-exec's stderr forms."""
    r = mxc(req, flags=[], via="file")
    if r.stderr.startswith("Request error\nConfiguration parse error: "):
        return "malformed_request", r
    if r.stderr.startswith("error: the '") and "backend is not available" in r.stderr:
        return "unsupported_containment", r
    if r.code:
        return r.code, r
    return "ok", r


CASES = [
    # 1. an empty rules list is rules: IsolationSession's all-allow is "without rules"
    ("isolation_session one-shot, egress.allow []",
     {"containment": "isolation_session", "process": {"commandLine": NEVER},
      "network": {"egress": {"default": "allow", "allow": []}, "ingress": ALL_ALLOW["ingress"]}},
     "malformed_request", "without rules"),
    ("isolation_session one-shot, egress.deny []",
     {"containment": "isolation_session", "process": {"commandLine": NEVER},
      "network": {"egress": {"default": "allow", "deny": []}, "ingress": ALL_ALLOW["ingress"]}},
     "malformed_request", "without rules"),
    ("isolation_session provision, all-allow with egress.allow []",
     {"phase": "provision", "containment": "isolation_session",
      "network": {"egress": {"default": "allow", "allow": []}, "ingress": ALL_ALLOW["ingress"]}},
     "malformed_request", None),
    # 2. route first: a backend this host lacks is said before its options are judged
    ("exec on a wslc: id with a non-loopback networkProxy",
     {"phase": "exec", "sandboxId": "wslc:abc", "process": {"commandLine": NEVER},
      "runtimeConfig": {"networkProxy": "http://proxy.example:8080"}},
     "backend_unavailable", "WSLc"),
    ("exec on a wslc: id with networkProxy and egress allow",
     {"phase": "exec", "sandboxId": "wslc:abc", "process": {"commandLine": NEVER},
      "runtimeConfig": {"networkProxy": "http://localhost:8080"}, "network": {"egress": {"default": "allow"}}},
     "backend_unavailable", "WSLc"),
    ("wslc one-shot with a non-loopback networkProxy",
     {"containment": "wslc", "process": {"commandLine": NEVER},
      "runtimeConfig": {"networkProxy": "http://proxy.example:8080"}},
     "unsupported_containment", None),
    # ... but a malformed proxy URL is malformed whatever it routes to
    ("exec on a wslc: id with an ftp networkProxy",
     {"phase": "exec", "sandboxId": "wslc:abc", "process": {"commandLine": NEVER},
      "runtimeConfig": {"networkProxy": "ftp://proxy.example:8080"}},
     "malformed_request", "'http' or 'https'"),
    ("exec on an iso: id with a non-loopback networkProxy",
     {"phase": "exec", "sandboxId": "iso:abc", "process": {"commandLine": NEVER},
      "runtimeConfig": {"networkProxy": "http://proxy.example:8080"}},
     "malformed_request", "localhost, 127.0.0.1, or [::1]"),
    # 3. sections of backends this host lacks are still checked
    ("processcontainer: a capability with a comma",
     {"containment": "processcontainer", "process": {"commandLine": NEVER},
      "processContainer": {"capabilities": ["internetClient,privateNetworkClientServer"]}},
     "malformed_request", "must not contain a comma"),
    ("processcontainer: a reserved learning-mode capability",
     {"containment": "processcontainer", "process": {"commandLine": NEVER},
      "processContainer": {"capabilities": ["LearningModeLogging"]}},
     "malformed_request", "reserved"),
    ("processcontainer: a blank allowedProxyPeer",
     {"containment": "processcontainer", "process": {"commandLine": NEVER},
      "processContainer": {"network": {"allowedProxyPeer": " "}}},
     "malformed_request", "allowedProxyPeer must not be blank"),
    ("processcontainer: an empty allowedProxyPeer",
     {"containment": "processcontainer", "process": {"commandLine": NEVER},
      "processContainer": {"network": {"allowedProxyPeer": ""}}},
     "malformed_request", "allowedProxyPeer must not be blank"),
    ("seatbelt with a processContainer capability comma: the value before the section count",
     {"containment": "seatbelt", "process": {"commandLine": NEVER},
      "processContainer": {"capabilities": ["a,b"]}},
     "malformed_request", "must not contain a comma"),
    ("processcontainer: an allowedProxyPeer without a networkProxy",
     {"containment": "processcontainer", "process": {"commandLine": NEVER},
      "processContainer": {"network": {"allowedProxyPeer": "x"}}},
     "malformed_request", "allowedProxyPeer requires runtimeConfig.networkProxy"),
    ("processcontainer with a good section: this host lacks it",
     {"containment": "processcontainer", "process": {"commandLine": NEVER},
      "processContainer": {"capabilities": ["internetClient"], "learningMode": False}},
     "unsupported_containment", None),
    # 5. the message names the section a backend allows and the unrelated ones
    ("lxc with a seatbelt section",
     {"containment": "lxc", "process": {"commandLine": NEVER}, "lxc": {"distribution": "a", "release": "b"},
      "seatbelt": {}},
     "malformed_request", "'containment' is 'lxc' (allows the 'lxc' section), but the config also includes "
                          "unrelated backend section(s): seatbelt"),
    ("processcontainer with a seatbelt section",
     {"containment": "processcontainer", "process": {"commandLine": NEVER}, "processContainer": {},
      "seatbelt": {}},
     "malformed_request", "(allows the 'processContainer' section), but the config also includes unrelated "
                          "backend section(s): seatbelt"),
    ("isolation_session one-shot with a seatbelt section",
     {"containment": "isolation_session", "process": {"commandLine": NEVER}, "seatbelt": {}, "network": ALL_ALLOW},
     "malformed_request", "(allows the 'isolationSession' section), but the config also includes unrelated "
                          "backend section(s): seatbelt"),
]


@pytest.fixture(scope="module")
def upstream():
    return UPSTREAM if os.path.exists(UPSTREAM) else None


@pytest.mark.parametrize("name,req,code,needle", CASES, ids=[c[0] for c in CASES])
def test_answer_as_upstreams_exact_parser(mxc, upstream, name, req, code, needle):
    req = dict(req, version=V)
    ours_exec, r = through_executor(mxc, req)
    assert ours_exec == code, (name, r.describe())
    assert "THIS_MUST_NEVER_RUN" not in r.stdout
    ours_lib = through_library(OURS, req, env=mxc.env())
    assert ours_lib["code"] == code, (name, ours_lib)
    if needle:
        assert needle in (ours_lib["message"] or ""), (name, ours_lib)
        assert needle in r.stderr + json.dumps(r.error or {}), (name, r.describe())
    if upstream:
        theirs = through_library(upstream, req)
        assert theirs["code"] == code, ("upstream", name, theirs)
        if needle and code == "malformed_request":
            assert needle in (theirs["message"] or ""), ("upstream", name, theirs)


def test_empty_rules_list_elsewhere_is_no_rule(mxc):
    """Outside IsolationSession's all-allow rule an empty list is no rule at all (the posture is the
    defaults'): a process one-shot with egress deny and `allow: []` is the blocked posture and runs."""
    req = {"version": V, "containment": "process", "process": {"commandLine": "echo ran"},
           "network": {"egress": {"default": "deny", "allow": []}}}
    code, r = through_executor(mxc, req)
    assert code == "ok" and r.stdout == "ran\n", r.describe()
