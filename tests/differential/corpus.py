"""The differential corpus: contract-1.0 one-shot requests, valid and invalid.

Every case is sent, unchanged, to upstream's `lxc-exec` (from @microsoft/mxc-sdk@1.0.1) and to
ours.  A case whose outcome is allowed to differ names the difference (`differs="Dn"`); each Dn is
listed with its reason in docs/wire-contract.md ("Differences from upstream").  A case whose
upstream outcome depends on what the host has installed names that (`varies="Dn"`): it is
compared only on a host where upstream's answer is the one documented (see HOST_DEPENDENT).
Workloads print a marker so that a request that must be refused and still ran is caught.
"""
import copy
import json
import shutil

BASE = {"version": "1.0.0", "containment": "bubblewrap", "process": {"commandLine": "echo ok"}}


def with_(path, value, base=None):
    """BASE (or base) with the dotted path set to value (value DELETE removes it)."""
    req = copy.deepcopy(BASE if base is None else base)
    node = req
    parts = path.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    if value is DELETE:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    return req


DELETE = object()

# Upstream's bubblewrap decides network rules, egress allow and runtimeConfig.networkProxy by
# whether slirp4netns (and, for rules, iptables) is on PATH: without them it refuses them with
# backend_error; with them it may run them.  Such cases are compared only on a host without
# slirp4netns (varies="D14"); there, those we run (network models 1 and 2) differ (D15).
HOST_DEPENDENT = {"D14": lambda: shutil.which("slirp4netns") is None}
ALL_ALLOW = {"egress": {"default": "allow"}, "ingress": {"default": "allow", "hostLoopback": "allow"}}


def cases():
    c = []

    def add(name, req, differs=None, varies=None):
        c.append({"name": name, "request": req, "differs": differs, "varies": varies})

    # --- bytes and JSON ---------------------------------------------------------------
    add("not JSON", "this is not json")
    add("empty input", "")
    add("JSON array", "[]")
    add("JSON null", "null")
    add("empty object", "{}")
    add("trailing garbage", json.dumps(BASE) + " x")
    add("duplicate key", '{"version":"1.0.0","version":"1.0.0","process":{"commandLine":"echo ok"}}')
    # --- version ----------------------------------------------------------------------
    add("version 1.0.0", BASE)
    add("version 0.9.0-alpha", with_("version", "0.9.0-alpha"))
    add("version 1.1.0-alpha", with_("version", "1.1.0-alpha"))
    add("version missing", with_("version", DELETE), differs="D1")
    for v in ("9.9.9", "1.0", "1.0.0-alpha", "2.0.0", ""):
        add(f"version {v!r} unregistered", with_("version", v))
    for v in ("0.8.0", "0.8.0-alpha", "0.6.0", "0.9.1-alpha"):
        add(f"version {v} (legacy dialect)", with_("version", v), differs="D1")
    add("version integer", with_("version", 1))
    add("version null", with_("version", None))
    add("version object", with_("version", {}))
    # --- top level --------------------------------------------------------------------
    add("unknown top-level field", with_("bogus", 1))
    add("$schema string", with_("$schema", "https://example.invalid/schema.json"))
    add("$schema integer", with_("$schema", 5))
    add("_comment object", with_("_comment", {"any": ["thing", 1]}))
    add("_comment string", with_("_comment", "note"))
    # the request nests 1 level at the top; _comment adds its own
    add("nesting 32 levels", with_("_comment", json.loads("[" * 31 + "]" * 31)))
    add("nesting 33 levels", with_("_comment", json.loads("[" * 32 + "]" * 32)), differs="D12")
    add("request over 1 MiB", with_("_comment", "x" * (1 << 20)), differs="D12")
    add("containerId string", with_("containerId", "my-container"))
    add("containerId integer", with_("containerId", 7))
    add("containerId null", with_("containerId", None))
    add("experimental block", with_("experimental", {}))
    add("phase-less sandboxId", with_("sandboxId", "iso:abc"))
    # --- containment ------------------------------------------------------------------
    add("containment absent", with_("containment", DELETE))
    add("containment process", with_("containment", "process"))
    add("containment lxc", with_("containment", "lxc"), differs="D5")
    add("containment lxc with section", with_("lxc", {"distribution": "alpine", "release": "3.23"},
                                              with_("containment", "lxc")), differs="D5")
    for v in ("processcontainer", "seatbelt", "wslc"):
        add(f"containment {v}", with_("containment", v))
    add("containment isolation_session without network", with_("containment", "isolation_session"))
    add("containment isolation_session, network all-allow",
        with_("network", ALL_ALLOW, with_("containment", "isolation_session")), differs="D2")
    for lst in ("allow", "deny"):  # an empty rules list is rules: "without rules" (issue 28)
        add("containment isolation_session, all-allow with egress.%s []" % lst,
            with_("network", {"egress": {"default": "allow", lst: []}, "ingress": ALL_ALLOW["ingress"]},
                  with_("containment", "isolation_session")))
    add("containment isolation_session, network egress deny",
        with_("network", {"egress": {"default": "deny"}}, with_("containment", "isolation_session")))
    for v in ("vm", "microvm", "hyperlight", "windows_sandbox", "appcontainer", "macos_sandbox", "BUBBLEWRAP", "docker"):
        add(f"containment {v} (1.0)", with_("containment", v))
    add("containment null", with_("containment", None))
    add("containment integer", with_("containment", 3))
    # --- backend sections -------------------------------------------------------------
    add("processContainer section with bubblewrap", with_("processContainer", {}))
    add("lxc section with bubblewrap", with_("lxc", {"distribution": "alpine", "release": "3.23"}))
    add("seatbelt section with bubblewrap", with_("seatbelt", {}))
    add("wslc section with bubblewrap", with_("wslc", {"image": "alpine:latest"}))
    add("appContainer section (1.0)", with_("appContainer", {}))
    add("processContainer with processcontainer",
        with_("processContainer", {"leastPrivilege": True}, with_("containment", "processcontainer")))
    # a section's values are judged on every host, before the backend is (issue 28)
    add("processContainer capability with a comma",
        with_("processContainer", {"capabilities": ["a,b"]}, with_("containment", "processcontainer")))
    add("processContainer reserved capability",
        with_("processContainer", {"capabilities": ["permissiveLearningMode"]}, with_("containment", "processcontainer")))
    add("processContainer blank allowedProxyPeer",
        with_("processContainer", {"network": {"allowedProxyPeer": " "}}, with_("containment", "processcontainer")))
    add("processContainer capability comma beside seatbelt",
        with_("processContainer", {"capabilities": ["a,b"]}, with_("containment", "seatbelt")))
    add("processContainer unknown key",
        with_("processContainer", {"bogus": 1}, with_("containment", "processcontainer")))
    add("lxc section missing release", with_("lxc", {"distribution": "alpine"}, with_("containment", "lxc")))
    add("seatbelt with seatbelt", with_("seatbelt", {"guiAccess": False}, with_("containment", "seatbelt")))
    add("wslc with wslc", with_("wslc", {"image": "alpine:latest", "gpu": False}, with_("containment", "wslc")))
    # --- lifecycle --------------------------------------------------------------------
    add("lifecycle empty", with_("lifecycle", {}))
    add("lifecycle destroyOnExit true", with_("lifecycle", {"destroyOnExit": True}))
    add("lifecycle destroyOnExit false", with_("lifecycle", {"destroyOnExit": False}), differs="D3")
    add("lifecycle preservePolicy false", with_("lifecycle", {"preservePolicy": False}))
    add("lifecycle preservePolicy true", with_("lifecycle", {"preservePolicy": True}), differs="D3")
    add("lifecycle as the SDK sends it", with_("lifecycle", {"destroyOnExit": True, "preservePolicy": False}))
    add("lifecycle unknown key", with_("lifecycle", {"bogus": True}))
    add("lifecycle destroyOnExit string", with_("lifecycle", {"destroyOnExit": "yes"}))
    add("lifecycle null", with_("lifecycle", None))
    add("lifecycle array", with_("lifecycle", []), differs="D9")
    # --- process ----------------------------------------------------------------------
    add("process missing", with_("process", DELETE))
    add("process null", with_("process", None))
    add("process empty object", with_("process", {}))
    add("process string", with_("process", "echo ok"))
    add("commandLine empty", with_("process.commandLine", ""))
    add("commandLine integer", with_("process.commandLine", 5))
    add("commandLine null", with_("process.commandLine", None))
    add("process unknown key", with_("process.bogus", 1))
    add("process legacy args key", with_("process.args", ["a"]))
    add("workload exit 3", with_("process.commandLine", "exit 3"))
    add("workload exit 300", with_("process.commandLine", "exit 300"))
    add("workload exit 255", with_("process.commandLine", "exit 255"))
    add("workload kills itself", with_("process.commandLine", "kill -9 $$"))
    for sig in ("TERM", "INT", "HUP"):
        add(f"workload kills itself with SIG{sig}", with_("process.commandLine", f"kill -{sig} $$"), differs="D10")
    add("workload writes stderr", with_("process.commandLine", "echo err >&2; echo out"))
    add("workload reads empty stdin", with_("process.commandLine", "cat; echo done"))
    add("workload sees sh", with_("process.commandLine", "test -n \"$0\" && echo ok"))
    add("cwd /tmp", with_("process.cwd", "/tmp"))
    add("cwd /", with_("process.cwd", "/"))
    # a relative path is the caller's working directory's (D4): "rel" is missing there, which is D11's refusal
    add("cwd relative", with_("process.cwd", "rel"), differs="D11")
    add("cwd relative, climbing", with_("process.cwd", "../rel"), differs="D4")
    add("cwd relative, from home", with_("process.cwd", "~/rel"), differs="D4")
    add("cwd absolute, missing in the sandbox", with_("process.cwd", "/nonexistent/mxc-diff"), differs="D11")
    add("cwd integer", with_("process.cwd", 5))
    add("cwd null", with_("process.cwd", None))
    add("env empty", with_("process.env", []))
    add("env one entry", with_("process.env", ["FOO=bar"], with_("process.commandLine", "echo $FOO")))
    add("env value with =", with_("process.env", ["A=b=c"], with_("process.commandLine", "echo $A")))
    add("env entry without =", with_("process.env", ["NOEQUALS"]))
    add("env entry with empty name", with_("process.env", ["=x"]), differs="D13")
    add("env PATH empty", with_("process.env", ["PATH="]), differs="D13")
    add("env 256 entries", with_("process.env", ["V%d=1" % i for i in range(256)]))
    add("env 257 entries", with_("process.env", ["V%d=1" % i for i in range(257)]), differs="D12")
    add("env string", with_("process.env", "FOO=bar"))
    add("env integer entry", with_("process.env", [1]))
    add("env null entry", with_("process.env", [None]))
    add("env null", with_("process.env", None))
    add("env object", with_("process.env", {"FOO": "bar"}))
    add("inheritDefaultEnv true", with_("process.inheritDefaultEnv", True,
                                        with_("process.env", ["FOO=bar"])))
    add("inheritDefaultEnv false", with_("process.inheritDefaultEnv", False))
    add("inheritDefaultEnv string", with_("process.inheritDefaultEnv", "yes"))
    add("timeout 0", with_("process.timeout", 0))
    add("timeout 5000", with_("process.timeout", 5000))
    add("timeout max u32", with_("process.timeout", 4294967295))
    add("timeout -1", with_("process.timeout", -1))
    add("timeout 2^32", with_("process.timeout", 4294967296))
    add("timeout float", with_("process.timeout", 1.5))
    add("timeout string", with_("process.timeout", "10"))
    add("timeout null", with_("process.timeout", None))
    add("timeout expires", with_("process.timeout", 300, with_("process.commandLine", "sleep 5")))
    add("timeout not reached", with_("process.timeout", 5000, with_("process.commandLine", "exit 4")))
    # --- filesystem -------------------------------------------------------------------
    add("filesystem empty", with_("filesystem", {}))
    add("filesystem three empty lists", with_("filesystem", {"readwritePaths": [], "readonlyPaths": [],
                                                             "deniedPaths": []}))
    add("readonlyPaths /usr", with_("filesystem", {"readonlyPaths": ["/usr"]}))
    add("readwritePaths /tmp", with_("filesystem", {"readwritePaths": ["/tmp"]}))
    add("deniedPaths /etc/hostname", with_("filesystem", {"deniedPaths": ["/etc/hostname"]},
                                           with_("process.commandLine", "cat /etc/hostname; true")))
    add("readonlyPaths relative", with_("filesystem", {"readonlyPaths": ["relative/dir"]}), differs="D6")
    add("deniedPaths relative", with_("filesystem", {"deniedPaths": ["rel"]}))
    add("readonlyPaths relative, climbing", with_("filesystem", {"readonlyPaths": ["../relative/dir"]}),
        differs="D4")
    add("readonlyPaths absolute, not normalised", with_("filesystem", {"readonlyPaths": ["/usr/./lib"]}),
        differs="D4")
    add("readwritePaths missing path", with_("filesystem", {"readwritePaths": ["/nonexistent/mxc-diff"]}),
        differs="D6")
    add("readonlyPaths missing path", with_("filesystem", {"readonlyPaths": ["/nonexistent/mxc-diff"]}),
        differs="D6")
    add("deniedPaths missing path", with_("filesystem", {"deniedPaths": ["/nonexistent/mxc-diff"]}))
    add("readonlyPaths string", with_("filesystem", {"readonlyPaths": "/usr"}))
    add("readonlyPaths integer entry", with_("filesystem", {"readonlyPaths": [1]}))
    add("readonlyPaths null", with_("filesystem", {"readonlyPaths": None}))
    add("filesystem null", with_("filesystem", None))
    add("filesystem unknown key", with_("filesystem", {"bogus": []}))
    add("filesystem legacy clearPolicyOnExit", with_("filesystem", {"clearPolicyOnExit": True}))
    add("readonlyPaths empty string", with_("filesystem", {"readonlyPaths": [""]}))
    add("readwritePaths empty string", with_("filesystem", {"readwritePaths": ["/tmp", ""]}))
    add("deniedPaths blank string", with_("filesystem", {"deniedPaths": ["  "]}))
    # --- fallback ---------------------------------------------------------------------
    add("fallback empty", with_("fallback", {}))
    add("fallback allowDaclMutation true", with_("fallback", {"allowDaclMutation": True}))
    add("fallback allowDaclMutation string", with_("fallback", {"allowDaclMutation": "x"}))
    add("fallback unknown key", with_("fallback", {"bogus": 1}))
    # --- ui ---------------------------------------------------------------------------
    add("ui empty", with_("ui", {}))
    add("ui as the SDK sends it", with_("ui", {"disable": True, "clipboard": "none", "injection": False}))
    add("ui disable false", with_("ui", {"disable": False}), differs="D7")
    add("ui clipboard read", with_("ui", {"clipboard": "read"}), differs="D7")
    add("ui clipboard all", with_("ui", {"clipboard": "all"}), differs="D7")
    add("ui injection true", with_("ui", {"injection": True}), differs="D7")
    add("ui clipboard bogus", with_("ui", {"clipboard": "bogus"}))
    add("ui unknown key", with_("ui", {"bogus": 1}))
    add("ui disable string", with_("ui", {"disable": "yes"}))
    # --- telemetry --------------------------------------------------------------------
    add("telemetry enabled false", with_("telemetry", {"enabled": False}))
    add("telemetry enabled true", with_("telemetry", {"enabled": True}))
    add("telemetry empty", with_("telemetry", {}))
    add("telemetry unknown key", with_("telemetry", {"bogus": 1}))
    add("telemetry string", with_("telemetry", "on"))
    # --- network ----------------------------------------------------------------------
    add("network empty", with_("network", {}))
    add("network egress empty", with_("network", {"egress": {}}))
    add("network egress deny", with_("network", {"egress": {"default": "deny"}}))
    add("network egress deny, ingress deny", with_("network", {"egress": {"default": "deny"},
                                                               "ingress": {"default": "deny",
                                                                           "hostLoopback": "deny"}}))
    add("network ingress deny only", with_("network", {"ingress": {"default": "deny"}}))
    add("network egress allow", with_("network", {"egress": {"default": "allow"}}), varies="D14", differs="D15")
    add("network all-allow", with_("network", ALL_ALLOW), differs="D2")
    add("network ingress allow", with_("network", {"egress": {"default": "deny"},
                                                   "ingress": {"default": "allow"}}))
    add("network hostLoopback allow", with_("network", {"ingress": {"hostLoopback": "allow"}}))
    add("network egress default block", with_("network", {"egress": {"default": "block"}}))
    rule = {"to": [{"cidr": "127.0.0.1/32"}], "ports": [{"protocol": "tcp", "port": 8080}]}
    add("network egress allow rule", with_("network", {"egress": {"default": "deny", "allow": [rule]}}),
        varies="D14", differs="D15")
    add("network egress deny rule", with_("network", {"egress": {"default": "allow",
                                                                 "deny": [{"to": [{"cidr": "10.0.0.0/8"}]}]}}),
        varies="D14", differs="D15")
    add("network rule ipv6 cidr", with_("network", {"egress": {"default": "deny",
                                                               "allow": [{"to": [{"cidr": "::1/128"}]}]}}),
        varies="D14")
    add("network rule with except", with_("network", {"egress": {"default": "deny", "allow": [
        {"to": [{"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}]}]}}), varies="D14",
        differs="D15")
    add("network rule bad cidr", with_("network", {"egress": {"default": "deny",
                                                              "allow": [{"to": [{"cidr": "300.1.1.1/8"}]}]}}))
    add("network rule cidr not a string", with_("network", {"egress": {"default": "deny",
                                                                       "allow": [{"to": [{"cidr": 5}]}]}}))
    add("network rule missing cidr", with_("network", {"egress": {"default": "deny", "allow": [{"to": [{}]}]}}))
    add("network rule bad except", with_("network", {"egress": {"default": "deny", "allow": [
        {"to": [{"cidr": "10.0.0.0/8", "except": ["nope"]}]}]}}))
    add("network rule icmp with port", with_("network", {"egress": {"default": "deny", "allow": [
        {"ports": [{"protocol": "icmp", "port": 1}]}]}}))
    add("network rule endPort without port", with_("network", {"egress": {"default": "deny", "allow": [
        {"ports": [{"endPort": 90}]}]}}))
    add("network rule endPort below port", with_("network", {"egress": {"default": "deny", "allow": [
        {"ports": [{"port": 90, "endPort": 80}]}]}}))
    add("network rule port 0", with_("network", {"egress": {"default": "deny", "allow": [
        {"ports": [{"port": 0}]}]}}))
    add("network rule port 65536", with_("network", {"egress": {"default": "deny", "allow": [
        {"ports": [{"port": 65536}]}]}}))
    add("network rule protocol sctp", with_("network", {"egress": {"default": "deny", "allow": [
        {"ports": [{"protocol": "sctp"}]}]}}))
    add("network rule unknown key", with_("network", {"egress": {"default": "deny", "allow": [{"bogus": 1}]}}))
    add("network rule empty", with_("network", {"egress": {"default": "deny", "allow": [{}]}}), varies="D14", differs="D15")
    add("network rule to empty", with_("network", {"egress": {"default": "deny", "allow": [{"to": []}]}}))
    add("network rule ports empty", with_("network", {"egress": {"default": "deny", "allow": [{"ports": []}]}}))
    add("network deny rule to empty", with_("network", {"egress": {"default": "allow", "deny": [
        {"to": [], "ports": [{"port": 80}]}]}}))
    add("network rule to and ports empty", with_("network", {"egress": {"default": "deny", "allow": [
        {"to": [{"cidr": "10.0.0.0/8"}], "ports": []}]}}))
    add("network egress unknown key", with_("network", {"egress": {"default": "deny", "bogus": 1}}))
    add("network ingress unknown key", with_("network", {"ingress": {"bogus": 1}}))
    add("network egress null", with_("network", {"egress": None}))
    add("network null", with_("network", None))
    for legacy in ("allowOutbound", "defaultPolicy", "allowLocalNetwork", "allowedHosts", "blockedHosts",
                   "enforcementMode", "proxy", "removeRulesOnExit"):
        add(f"network legacy {legacy}", with_("network", {legacy: True}))
    # --- runtimeConfig ----------------------------------------------------------------
    add("runtimeConfig empty", with_("runtimeConfig", {}))
    deny = {"egress": {"default": "deny"}}
    add("networkProxy loopback with egress deny",
        with_("runtimeConfig", {"networkProxy": "http://127.0.0.1:3128"}, with_("network", deny)), varies="D14",
        differs="D15")
    add("networkProxy without network",
        with_("runtimeConfig", {"networkProxy": "http://127.0.0.1:3128"}), varies="D14",
        differs="D15")
    add("networkProxy socks5",
        with_("runtimeConfig", {"networkProxy": "socks5://127.0.0.1:1080"}, with_("network", deny)))
    add("networkProxy remote host",
        with_("runtimeConfig", {"networkProxy": "http://proxy.example.invalid:3128"}, with_("network", deny)))
    add("networkProxy not a URL", with_("runtimeConfig", {"networkProxy": "not a url"}, with_("network", deny)))
    add("networkProxy with allow rule", with_("runtimeConfig", {"networkProxy": "http://127.0.0.1:3128"},
                                              with_("network", {"egress": {"default": "deny", "allow": [rule]}})))
    add("networkProxy integer", with_("runtimeConfig", {"networkProxy": 5}))
    add("runtimeConfig unknown key", with_("runtimeConfig", {"bogus": 1}))
    # --- a request as the SDK builds it -------------------------------------------------
    add("SDK-shaped request", {
        "version": "1.0.0", "containerId": "0123456789abcdef0123456789abcdef", "containment": "process",
        "lifecycle": {"destroyOnExit": True, "preservePolicy": False},
        "process": {"commandLine": "echo ok", "timeout": 0},
        "filesystem": {"readwritePaths": [], "readonlyPaths": [], "deniedPaths": []}})
    add("SDK-shaped request, blocked network", {
        "version": "1.0.0", "containerId": "x", "containment": "bubblewrap",
        "lifecycle": {"destroyOnExit": True, "preservePolicy": False},
        "process": {"commandLine": "echo ok", "timeout": 5000, "cwd": "/tmp", "env": ["FOO=bar"],
                    "inheritDefaultEnv": True},
        "filesystem": {"readwritePaths": [], "readonlyPaths": ["/usr"], "deniedPaths": []},
        "network": {"egress": {"default": "deny"}, "ingress": {"default": "deny", "hostLoopback": "deny"}},
        "telemetry": {"enabled": False}, "ui": {"disable": True, "clipboard": "none", "injection": False}})
    # --- 0.9.0-alpha and 1.1.0-alpha where they differ --------------------------------
    add("0.9 containment appcontainer", with_("containment", "appcontainer", with_("version", "0.9.0-alpha")))
    add("0.9 containment macos_sandbox", with_("containment", "macos_sandbox", with_("version", "0.9.0-alpha")))
    add("0.9 appContainer section with bubblewrap", with_("appContainer", {}, with_("version", "0.9.0-alpha")))
    add("1.1 containment hyperlight", with_("containment", "hyperlight", with_("version", "1.1.0-alpha")))
    add("1.1 containment microvm", with_("containment", "microvm", with_("version", "1.1.0-alpha")))
    add("1.1 containment windows_sandbox", with_("containment", "windows_sandbox", with_("version", "1.1.0-alpha")))
    add("1.1 containment vm", with_("containment", "vm", with_("version", "1.1.0-alpha")))
    add("1.1 hyperlight section with bubblewrap", with_("hyperlight", {"runtime": "bash"},
                                                        with_("version", "1.1.0-alpha")))
    add("1.1 test section with bubblewrap", with_("test", {"message": "x"}, with_("version", "1.1.0-alpha")))
    add("1.0 hyperlight section", with_("hyperlight", {"runtime": "bash"}))
    # --- state-aware requests are not one-shot requests ---------------------------------
    add("state-aware start to the one-shot executor",
        {"version": "1.0.0", "phase": "start", "sandboxId": "iso:abc"}, differs="D8")
    return c
