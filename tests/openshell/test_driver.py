"""mxc-openshell-driver (issue 37, first stage) driven as OpenShell's gateway drives a compute
driver: gRPC over a unix socket with Python grpcio, the messages from the pinned contract
(proto/openshell) compiled by protoc at test time into a temporary directory.

What is built so far and tested here: GetCapabilities, GetGatewayListenerRequirements,
ValidateSandboxCreate (accepted spec, each refusal with its status code and message),
GetSandbox/ListSandboxes over the state directory (empty; records surviving a restart; the
sandbox token never echoed), the calls not built yet (UNIMPLEMENTED, saying so), unknown
fields ignored, and the trust boundary: the socket 0600 (0660 with --socket-group), a
non-root user refused by it, a socket directory or state directory another user could swap
refused, a live socket never taken over.  docs/openshell.md lists each guarantee with its test.

Environment: MXC_OPENSHELL_DRIVER, the binary under test (default <repo>/build/mxc-openshell-driver).
"""
import os
import shutil
import signal
import socket
import stat
import subprocess
import time

import pytest

grpc = pytest.importorskip("grpc")

from driver_env import DRIVER, NOBODY, REPO, SVC, Driver, make_base, pb  # noqa: E402,F401 (pb: the module fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a second user for the socket test)")


@pytest.fixture
def base():
    b = make_base()
    yield b
    shutil.rmtree(b, ignore_errors=True)


@pytest.fixture
def driver(pb, base):
    d = Driver(pb, base).start()
    yield d
    d.stop()


def good_sandbox(pb, **over):
    sb = pb.DriverSandbox(id="sb-1", name="one", namespace="default", workspace="ws1")
    sb.spec.log_level = "info"
    sb.spec.environment["GREETING"] = "hi"
    sb.spec.command.extend(["/bin/sh", "-c", "echo hi"])
    sb.spec.tty = True
    sb.spec.sandbox_token = "eyJhbGciOi.eyJzdWIiOi.c2ln"
    t = sb.spec.template
    t.image = "docker.io/library/busybox:latest"
    t.labels["team"] = "a"
    t.environment["EXTRA"] = "1"
    t.resources.cpu_request = "500m"
    t.resources.cpu_limit = "2"
    t.resources.memory_request = "256Mi"
    t.resources.memory_limit = "4Gi"
    return sb


def validate(driver, sb):
    return driver.call("ValidateSandboxCreate", driver.pb.ValidateSandboxCreateRequest(sandbox=sb),
                       driver.pb.ValidateSandboxCreateResponse)


def test_capabilities(driver, pb):
    caps = driver.call("GetCapabilities", pb.GetCapabilitiesRequest(), pb.GetCapabilitiesResponse)
    assert caps.driver_name == "mxc"
    assert caps.driver_version.endswith("(supervisor configured)")
    assert caps.default_image == ""
    assert caps.gateway_manages_lifecycle is False
    reqs = driver.call("GetGatewayListenerRequirements", pb.GetGatewayListenerRequirementsRequest(),
                       pb.GetGatewayListenerRequirementsResponse)
    assert list(reqs.requirements) == []


@pytest.mark.parametrize("url,want", [("http://127.0.0.1:8080/", "127.0.0.1:8080"), ("https://[::1]:9443", "[::1]:9443"),
                                      ("http://10.1.2.3", "10.1.2.3:80"), ("http://gateway.example.test:8080/", None)])
def test_listener_requirements_name_the_gateway_s_exact_address(pb, base, url, want):
    """--gateway-endpoint an address: the gateway is asked to listen on exactly it (the sandboxes'
    egress admits that address and port alone); a name: nothing asked."""
    d = Driver(pb, base, extra=["--gateway-endpoint", url]).start()
    try:
        reqs = d.call("GetGatewayListenerRequirements", pb.GetGatewayListenerRequirementsRequest(),
                      pb.GetGatewayListenerRequirementsResponse)
        got = [r.exact_bind_address for r in reqs.requirements]
        assert got == ([want] if want else []), got
        assert all(r.WhichOneof("selector") == "exact_bind_address" and r.reason for r in reqs.requirements)
    finally:
        d.stop()


@pytest.mark.parametrize("url", ["127.0.0.1:8080", "ftp://127.0.0.1:8080", "http://127.0.0.1:0/", "http://127.0.0.1:65536",
                                 "http://127.0.0.1:08080", "http://127.1:8080", "http://[::1:8080", "http://[zz]:1",
                                 "http://user@127.0.0.1:8080", "http://127.0.0.1:8080?x", "http://", "http://a_b:80"])
def test_a_malformed_gateway_endpoint_is_refused_at_start(pb, base, url):
    r = subprocess.run([DRIVER, "--socket", os.path.join(base, "run", "driver.sock"), "--state-dir",
                        os.path.join(base, "state"), "--gateway-endpoint", url], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and '--gateway-endpoint "%s": ' % url in r.stderr, r.stderr


def test_capabilities_say_no_supervisor_and_creates_are_refused(pb, base):
    d = Driver(pb, base, supervisor=False).start()
    try:
        caps = d.call("GetCapabilities", pb.GetCapabilitiesRequest(), pb.GetCapabilitiesResponse)
        assert "no supervisor configured" in caps.driver_version
        code, msg = d.refused("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest(sandbox=good_sandbox(pb)),
                              pb.ValidateSandboxCreateResponse)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "no supervisor is configured" in msg
    finally:
        d.stop()


def test_validate_accepts_a_well_formed_spec(driver, pb):
    validate(driver, good_sandbox(pb))
    sb = good_sandbox(pb)
    del sb.spec.command[:]           # the image's own command: an omission kept
    sb.spec.template.ClearField("resources")
    validate(driver, sb)


def _quantity(field, value):
    def mutate(sb):
        setattr(sb.spec.template.resources, field, value)
    return mutate


def _set(path, value):
    def mutate(sb):
        obj = sb
        for p in path[:-1]:
            obj = getattr(obj, p)
        setattr(obj, path[-1], value)
    return mutate


def _gpu(sb):
    sb.spec.resource_requirements.gpu.count = 1


def _struct(field):
    def mutate(sb):
        getattr(sb.spec.template, field).update({"filesystem_policy": {"read_only": ["/usr"]}})
    return mutate


def _policy(doc):
    def mutate(sb):
        sb.spec.template.driver_config.update(doc)
    return mutate


def _env(where, key):
    def mutate(sb):
        (sb.spec if where == "spec" else sb.spec.template).environment[key] = "x"
    return mutate


def _no_spec(sb):
    sb.ClearField("spec")


def _empty_arg0(sb):
    sb.spec.command[0] = ""


INVALID, PRECONDITION = "INVALID_ARGUMENT", "FAILED_PRECONDITION"
REFUSALS = [
    ("bad-cpu-suffix", _quantity("cpu_limit", "500x"), INVALID, 'template.resources.cpu_limit "500x" has an unknown suffix'),
    ("negative", _quantity("cpu_request", "-1"), INVALID, 'template.resources.cpu_request "-1" has a sign'),
    ("exponent", _quantity("memory_limit", "1e9"), INVALID, "has an exponent"),
    ("milli-bytes", _quantity("memory_request", "100m"), INVALID, "is less than a byte's unit"),
    ("fraction-byte", _quantity("memory_request", "1.5"), INVALID, "is not a whole number of bytes"),
    ("sub-millicore", _quantity("cpu_request", "0.0005"), INVALID, "is finer than a millicore"),
    ("too-large", _quantity("memory_limit", "9999999Ei"), INVALID, "is too large"),
    ("space", _quantity("cpu_limit", "1 "), INVALID, "has white space"),
    ("zero-cpu", _quantity("cpu_limit", "0"), INVALID, "cpu_limit is 0"),
    ("tiny-memory", _quantity("memory_limit", "1Mi"), INVALID, "memory_limit is below 4Mi"),
    ("request-above-limit", _quantity("memory_request", "8Gi"), INVALID, "memory_request is above memory_limit"),
    ("no-spec", _no_spec, INVALID, "sandbox.spec is missing"),
    ("empty-id", _set(["id"], ""), INVALID, "sandbox.id is empty"),
    ("bad-id", _set(["id"], "../etc"), INVALID, "sandbox.id is malformed"),
    ("bad-name", _set(["name"], "a b"), INVALID, "sandbox.name is malformed"),
    ("empty-image", _set(["spec", "template", "image"], ""), INVALID, "template.image is empty"),
    ("image-space", _set(["spec", "template", "image"], "busy box"), INVALID, "template.image is not an image reference"),
    ("log-level", _set(["spec", "log_level"], "loud"), INVALID, 'spec.log_level "loud" is none of'),
    ("env-name", _env("spec", "A-B"), INVALID, 'spec.environment: the name "A-B" is not a variable name'),
    ("template-env-name", _env("template", "1X"), INVALID, 'template.environment: the name "1X"'),
    ("empty-argv0", _empty_arg0, INVALID, "spec.command[0] is empty"),
    ("token", _set(["spec", "sandbox_token"], "a b"), INVALID, "spec.sandbox_token is not a token"),
    ("agent-socket", _set(["spec", "template", "agent_socket_path"], "run/a.sock"), INVALID,
     "template.agent_socket_path is not an absolute socket path"),
    ("agent-socket-dotdot", _set(["spec", "template", "agent_socket_path"], "/run/.."), INVALID,
     "template.agent_socket_path is not an absolute socket path"),
    ("agent-socket-dot", _set(["spec", "template", "agent_socket_path"], "/run/."), INVALID,
     "template.agent_socket_path is not an absolute socket path"),
    ("gpu", _gpu, PRECONDITION, "spec.resource_requirements.gpu: the mxc driver gives a sandbox no GPU"),
    ("platform-config", _struct("platform_config"), PRECONDITION, "template.platform_config is not read by the mxc driver"),
    ("policy-version", _struct("driver_config"), INVALID, "template.driver_config: the policy's version must be 1"),
    ("policy-unknown", _policy({"version": 1, "sandbox_kind": "x"}), INVALID,
     "template.driver_config: the policy has an unknown field sandbox_kind"),
    ("policy-relative", _policy({"version": 1, "filesystem_policy": {"read_only": ["usr"]}}), INVALID,
     "template.driver_config: filesystem_policy.read_only[0] is not absolute"),
    ("policy-root-writable", _policy({"version": 1, "filesystem_policy": {"read_write": ["/"]}}), INVALID,
     "filesystem_policy.read_write[0] is the whole filesystem"),
    ("policy-run-as", _policy({"version": 1, "process": {"run_as_user": "root"}}), INVALID,
     "template.driver_config: process.run_as_user: mxc gives every sandbox a uid of its own"),
    ("policy-network-without-proxy", _policy({"version": 1, "network_policies": {"r": {"endpoints": [
        {"host": "example.com", "port": 443}]}}}), INVALID, "need egress_proxy = true"),
    ("policy-ui", _policy({"version": 1, "ui": {"allow_graphical_ui": False}}), INVALID,
     "ui: the isolation_session backend supports no ui section"),
    ("policy-not-finite", _policy({"version": 1, "x": float("inf")}), INVALID,
     "template.driver_config.x is not a finite number"),
]


@pytest.mark.parametrize("mutate,code,message", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_validate_refusals(driver, pb, mutate, code, message):
    sb = good_sandbox(pb)
    mutate(sb)
    got_code, got_msg = driver.refused("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest(sandbox=sb),
                                       pb.ValidateSandboxCreateResponse)
    assert got_code.name == code, got_msg
    assert message in got_msg
    assert os.listdir(os.path.join(driver.state, "sandboxes")) == []


def test_validate_reads_driver_config_as_mxc_policy(pb, base):
    """driver_config is mxc's policy document, read by mxc-gateway's own policy mapper under
    the driver's host configuration (--config: [openshell.drivers.mxc] as mxc-gateway reads
    it): network rules need egress_proxy there."""
    policy = {"version": 1, "filesystem_policy": {"read_only": ["/usr", "/etc"], "read_write": ["/var/tmp"]},
              "landlock": {"compatibility": "hard_requirement"},
              "network_policies": {"r": {"endpoints": [{"host": "api.example.com", "port": 443}]}}}
    conf = os.path.join(base, "driver.toml")
    with open(conf, "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "/usr/bin/mxc-exec"\negress_proxy = true\n')
    d = Driver(pb, base, extra=["--config", conf]).start()
    try:
        sb = good_sandbox(pb)
        sb.spec.template.driver_config.update(policy)
        validate(d, sb)
        sb.spec.template.driver_config["network_policies"]["r"]["endpoints"][0]["port"] = 443.5
        code, msg = d.refused("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest(sandbox=sb),
                              pb.ValidateSandboxCreateResponse)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and msg.startswith("template.driver_config: "), msg
    finally:
        d.stop()
    with open(conf, "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "/usr/bin/mxc-exec"\nsocket_path = "/x"\n')
    _fails(pb, base, "[openshell.drivers.mxc] has an unknown key socket_path", extra=["--config", conf])


def _grant(sb, lst, path):
    sb.spec.template.driver_config.update({"version": 1, "filesystem_policy": {lst: [path]}})
    return sb


def test_a_driver_with_no_grant_root_grants_no_host_path(pb, base):
    """A tenant's driver_config names host paths; the operator decides which (review of issue 37:
    a driver_config bound read-only /etc and read-write /tmp of the host). With no --grant-root
    every filesystem grant is refused, at Validate and at Create, naming the flag."""
    d = Driver(pb, base, grant_roots=()).start()
    try:
        for lst in ("read_only", "read_write"):
            for call, req, resp in (("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest,
                                     pb.ValidateSandboxCreateResponse),
                                    ("CreateSandbox", pb.CreateSandboxRequest, pb.CreateSandboxResponse)):
                code, msg = d.refused(call, req(sandbox=_grant(good_sandbox(pb), lst, "/usr")), resp)
                assert code == grpc.StatusCode.INVALID_ARGUMENT, msg
                assert "grants no host path" in msg and "--grant-root" in msg, msg
        assert os.listdir(os.path.join(d.state, "sandboxes")) == []
        validate(d, good_sandbox(pb))  # a sandbox granting nothing is still made
    finally:
        d.stop()


def test_grants_are_judged_inside_the_grant_roots_as_the_kernel_resolves_them(pb, base):
    """--grant-root DIR: a grant is admitted only when its canonical path lies inside DIR
    (component-wise: DIR-suffix is not inside DIR), links resolved as the kernel will."""
    root = os.path.join(base, "shared")
    os.makedirs(os.path.join(root, "proj"))
    os.makedirs(root + "x")
    os.symlink("/etc", os.path.join(root, "etc-link"))
    d = Driver(pb, base, grant_roots=(root,)).start()
    try:
        validate(d, _grant(good_sandbox(pb), "read_write", os.path.join(root, "proj")))
        validate(d, _grant(good_sandbox(pb), "read_only", root))
        for path, why in (("/etc", "outside every --grant-root"), ("/usr", "outside every --grant-root"),
                          (root + "x", "outside every --grant-root"),
                          (os.path.join(root, "etc-link"), "(/etc on this host), outside every --grant-root"),
                          (os.path.join(root, "proj", ".."), "has a . or .. component")):
            code, msg = d.refused("ValidateSandboxCreate",
                                  pb.ValidateSandboxCreateRequest(sandbox=_grant(good_sandbox(pb), "read_only", path)),
                                  pb.ValidateSandboxCreateResponse)
            assert code == grpc.StatusCode.INVALID_ARGUMENT, (path, msg)
            assert why in msg, (path, msg)
    finally:
        d.stop()
    _fails(pb, base, "--grant-root relative is not an absolute path", extra=["--grant-root", "relative"])
    _fails(pb, base, "is not a directory", extra=["--grant-root", os.path.join(base, "nope")])


def test_validate_malformed_messages(driver, pb):
    code, msg = driver.refused("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest(),
                               pb.ValidateSandboxCreateResponse)
    assert (code, msg) == (grpc.StatusCode.INVALID_ARGUMENT, "sandbox is missing")
    code, msg = driver.refused("ValidateSandboxCreate", b"\x0a\xff\xff", pb.ValidateSandboxCreateResponse)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert msg == "the request is not a ValidateSandboxCreateRequest"


def test_what_protoc_c_would_hide_is_refused(driver, pb):
    """A string holding a NUL byte would reach mxc cut short (protoc-c makes C strings): "a\\0b"
    as an argument of the exact command, an environment value, an id.  protoc-c 1.4 lets a
    string that is not UTF-8 through (proto3 forbids it).  A driver_config nested
    deeper than the unpacking may recurse would exhaust the driver's stack."""
    for mutate, field in [(lambda sb: sb.spec.command.append("a\0b"), "sandbox.spec.command"),
                          (lambda sb: sb.spec.environment.__setitem__("K", "v\0w"), "sandbox.spec.environment.value"),
                          (lambda sb: setattr(sb, "id", "sb\0x"), "sandbox.id")]:
        sb = good_sandbox(pb)
        mutate(sb)
        code, msg = driver.refused("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest(sandbox=sb),
                                   pb.ValidateSandboxCreateResponse)
        assert (code, msg) == (grpc.StatusCode.INVALID_ARGUMENT, field + " holds a NUL byte")
    code, msg = driver.refused("GetSandbox", pb.GetSandboxRequest(sandbox_id="sb-1\0../x"), pb.GetSandboxResponse)
    assert (code, msg) == (grpc.StatusCode.INVALID_ARGUMENT, "sandbox_id holds a NUL byte")
    for raw in [b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"a\xe2\x82"]:  # bad byte, overlong '/', surrogate, cut
        code, msg = driver.refused("GetSandbox", b"\x0a" + bytes([len(raw)]) + raw, pb.GetSandboxResponse)
        assert (code, msg) == (grpc.StatusCode.INVALID_ARGUMENT, "sandbox_id is not UTF-8 (a proto3 string)")
    sb = good_sandbox(pb)
    cur = sb.spec.template.driver_config
    for _ in range(25):   # three messages a level: Struct, its map entry, Value
        cur = cur.get_or_create_struct("a")
    code, msg = driver.refused("ValidateSandboxCreate", pb.ValidateSandboxCreateRequest(sandbox=sb),
                               pb.ValidateSandboxCreateResponse)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert msg.startswith("sandbox.spec.template.driver_config.fields.value.struct_value.fields")
    assert msg.endswith("nests messages more than 64 deep")
    assert driver.call("GetCapabilities", pb.GetCapabilitiesRequest(), pb.GetCapabilitiesResponse).driver_name == "mxc"


def test_unknown_fields_are_ignored(driver, pb):
    # field 99 (a string) and field 100 (a varint), unknown to this contract
    extra = b"\x9a\x06\x03abc\xa0\x06\x07"
    caps = driver.call("GetCapabilities", extra, pb.GetCapabilitiesResponse)
    assert caps.driver_name == "mxc"
    validate(driver, pb.DriverSandbox.FromString(good_sandbox(pb).SerializeToString() + extra))


def test_transport_bounds_and_bad_peers(driver, pb):
    """A message over 4 MiB, a compressed message, a peer that does not speak HTTP/2 and one
    that leaves mid-call: each refused or dropped alone, and the driver serves on, also to
    many callers at once."""
    big = driver.channel.unary_unary(SVC + "ValidateSandboxCreate")
    with pytest.raises(grpc.RpcError) as ei:
        big(b"\x0a" + b"\xff" * 3 + b"\x7f" + b"x" * (5 << 20), timeout=20)
    assert ei.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert ei.value.details().startswith("the request is larger than 4194304 bytes"), ei.value.details()
    gz = grpc.insecure_channel("unix:" + driver.sock, compression=grpc.Compression.Gzip)
    try:
        rpc = gz.unary_unary(SVC + "GetCapabilities")
        with pytest.raises(grpc.RpcError) as ei:
            rpc(b"\x9a\x06\x40" + b"a" * 64, timeout=10)  # an unknown field, compressible
        assert ei.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert "compressed messages are not accepted" in ei.value.details()
    finally:
        gz.close()
    with socket.socket(socket.AF_UNIX) as s:  # not HTTP/2: closed
        s.connect(driver.sock)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(10)
        while s.recv(4096):
            pass
    with socket.socket(socket.AF_UNIX) as s:  # the preface, half a frame, gone
        s.connect(driver.sock)
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x10\x01")
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        names = list(ex.map(lambda _: driver.call("GetCapabilities", pb.GetCapabilitiesRequest(),
                                                  pb.GetCapabilitiesResponse).driver_name, range(200)))
    assert names == ["mxc"] * 200


def test_unknown_sandbox_calls_and_workspaces(driver, pb, base):
    """Stop/Start of an unknown sandbox: NOT_FOUND; its Delete: deleted false.  A workspace: a
    directory of the driver's, made idempotently, removed when no sandbox of it is left."""
    for method, req, rep in [("StopSandbox", pb.StopSandboxRequest(sandbox_id="sb-1"), pb.StopSandboxResponse),
                             ("StartSandbox", pb.StartSandboxRequest(sandbox_id="sb-1"), pb.StartSandboxResponse)]:
        assert driver.refused(method, req, rep) == (grpc.StatusCode.NOT_FOUND, "no sandbox sb-1"), method
    assert not driver.call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id="sb-1"), pb.DeleteSandboxResponse).deleted
    ws = os.path.join(base, "state", "workspaces", "w1")
    for _ in range(2):
        driver.call("EnsureWorkspace", pb.EnsureWorkspaceRequest(workspace="w1"), pb.EnsureWorkspaceResponse)
        assert stat.S_IMODE(os.stat(ws).st_mode) == 0o700
    assert driver.refused("EnsureWorkspace", pb.EnsureWorkspaceRequest(workspace="../x"), pb.EnsureWorkspaceResponse) \
        == (grpc.StatusCode.INVALID_ARGUMENT, "workspace is malformed")
    # a sandbox of the workspace holds it (a record, as Create writes it)
    with open(os.path.join(base, "state", "sandboxes", "sb-9"), "wb") as f:
        f.write(pb.DriverSandbox(id="sb-9", name="nine", workspace="w1").SerializeToString())
    code, msg = driver.refused("DeleteWorkspace", pb.DeleteWorkspaceRequest(workspace="w1"), pb.DeleteWorkspaceResponse)
    assert (code, msg) == (grpc.StatusCode.FAILED_PRECONDITION,
                           "workspace w1 still has sandbox sb-9: delete its sandboxes first") and os.path.isdir(ws)
    os.unlink(os.path.join(base, "state", "sandboxes", "sb-9"))
    for _ in range(2):
        driver.call("DeleteWorkspace", pb.DeleteWorkspaceRequest(workspace="w1"), pb.DeleteWorkspaceResponse)
        assert not os.path.exists(ws)
    unknown = driver.channel.unary_unary("/openshell.compute.v1.ComputeDriver/Nope")
    with pytest.raises(grpc.RpcError) as ei:
        unknown(b"", timeout=10)
    assert ei.value.code() == grpc.StatusCode.UNIMPLEMENTED


def _watch(d):
    return d.channel.unary_stream(SVC + "WatchSandboxes", request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=d.pb.WatchSandboxesEvent.FromString)(d.pb.WatchSandboxesRequest())


def test_watch_opens_and_stays_open(driver, pb):
    """The gateway's watch loop: the stream opens (headers) with no event on an empty state,
    stays open, and the driver serves other calls meanwhile; the caller's cancel ends it."""
    it = _watch(driver)
    it.initial_metadata()
    assert driver.call("GetCapabilities", pb.GetCapabilitiesRequest(), pb.GetCapabilitiesResponse).driver_name == "mxc"
    time.sleep(0.3)
    assert it.running()
    it.cancel()
    assert len(driver.call("ListSandboxes", pb.ListSandboxesRequest(), pb.ListSandboxesResponse).sandboxes) == 0


def test_list_empty_and_get_unknown(driver, pb):
    got = driver.call("ListSandboxes", pb.ListSandboxesRequest(), pb.ListSandboxesResponse)
    assert list(got.sandboxes) == []
    code, msg = driver.refused("GetSandbox", pb.GetSandboxRequest(sandbox_id="nope"), pb.GetSandboxResponse)
    assert (code, msg) == (grpc.StatusCode.NOT_FOUND, "no sandbox nope")
    code, msg = driver.refused("GetSandbox", pb.GetSandboxRequest(sandbox_id="../x"), pb.GetSandboxResponse)
    assert (code, msg) == (grpc.StatusCode.INVALID_ARGUMENT, "sandbox_id is malformed")


def test_restarted_driver_serves_the_same_list(pb, base):
    """A record in the state directory (what CreateSandbox will write) is reported by List,
    Get and Watch, without its spec (the sandbox token is never echoed), and the same after a restart;
    a stray file, a link and a dot file beside it are skipped."""
    sbdir = os.path.join(base, "state", "sandboxes")
    os.mkdir(sbdir, 0o700)
    rec = good_sandbox(pb)
    rec.status.sandbox_name = "one"
    rec.status.conditions.add(type="Ready", status="True", reason="Running")
    with open(os.path.join(sbdir, "sb-1"), "wb") as f:
        f.write(rec.SerializeToString())
    with open(os.path.join(sbdir, "junk"), "wb") as f:
        f.write(b"\xff\xff\xff")
    with open(os.path.join(sbdir, ".sb-2.tmp"), "wb") as f:
        f.write(rec.SerializeToString())
    os.symlink(os.path.join(sbdir, "sb-1"), os.path.join(sbdir, "sb-3"))
    seen = []
    for _ in range(2):
        d = Driver(pb, base).start()
        try:
            got = d.call("ListSandboxes", pb.ListSandboxesRequest(), pb.ListSandboxesResponse)
            one = d.call("GetSandbox", pb.GetSandboxRequest(sandbox_id="sb-1", sandbox_name="one"),
                         pb.GetSandboxResponse).sandbox
            code, _ = d.refused("GetSandbox", pb.GetSandboxRequest(sandbox_id="sb-1", sandbox_name="two"),
                                pb.GetSandboxResponse)
            assert code == grpc.StatusCode.NOT_FOUND
            it = _watch(d)
            watched = [next(it)]  # the snapshot of each record; then the stream stays open
            time.sleep(0.2)
            assert it.running()
            d.proc.send_signal(signal.SIGTERM)  # with the watch open: a clean stop (a GOAWAY)
            assert d.proc.wait(timeout=10) == 0
            with pytest.raises(grpc.RpcError) as ei:
                next(it)
            assert ei.value.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            d.stop()
        assert [s.id for s in got.sandboxes] == ["sb-1"]
        assert not got.sandboxes[0].HasField("spec") and not one.HasField("spec")
        assert b"eyJhbGciOi" not in got.SerializeToString()
        assert one.status.conditions[0].type == "Ready"
        assert watched[0].WhichOneof("payload") == "sandbox" and watched[0].sandbox.sandbox.id == "sb-1"
        assert not watched[0].sandbox.sandbox.HasField("spec")
        seen.append(got.SerializeToString())
    assert seen[0] == seen[1]


def test_socket_is_0600_and_refuses_another_user(driver):
    st = os.stat(driver.sock)
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0
    pid = os.fork()
    if pid == 0:  # another user, who can look the socket up (run/ is 0755) but not connect
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(driver.sock)
            os._exit(0)
        except PermissionError:
            os._exit(13)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 13


def test_socket_group_is_0660(pb, base):
    d = Driver(pb, base, extra=["--socket-group", str(NOBODY)]).start()
    try:
        st = os.stat(d.sock)
        assert stat.S_IMODE(st.st_mode) == 0o660 and st.st_gid == NOBODY
    finally:
        d.stop()
    assert not os.path.exists(d.sock)  # removed at exit


def _fails(pb, base, needle, extra=(), supervisor=True):
    d = Driver(pb, base, supervisor=supervisor, extra=extra)
    p = subprocess.run(d.args, capture_output=True, text=True, timeout=10)
    assert p.returncode == 1, p.stderr
    assert needle in p.stderr
    assert not os.path.exists(d.sock)


def test_refuses_places_another_user_could_swap(pb, base):
    os.chmod(os.path.join(base, "state"), 0o777)
    _fails(pb, base, "the state directory")
    os.chmod(os.path.join(base, "state"), 0o700)
    os.chmod(os.path.join(base, "run"), 0o777)
    _fails(pb, base, "the socket's directory")
    os.chmod(os.path.join(base, "run"), 0o755)
    os.chown(os.path.join(base, "run"), NOBODY, NOBODY)
    _fails(pb, base, "the socket's directory")
    os.chown(os.path.join(base, "run"), 0, 0)
    os.rename(os.path.join(base, "state"), os.path.join(base, "state.real"))
    os.symlink(os.path.join(base, "state.real"), os.path.join(base, "state"))
    _fails(pb, base, "the state directory")
    os.unlink(os.path.join(base, "state"))
    os.rename(os.path.join(base, "state.real"), os.path.join(base, "state"))
    os.chmod(os.path.join(base, "openshell-sandbox"), 0o777)
    _fails(pb, base, "may be changed by another user")
    os.chmod(os.path.join(base, "openshell-sandbox"), 0o755)
    with open(os.path.join(base, "run", "driver.sock"), "w"):
        pass
    d = Driver(pb, base)
    p = subprocess.run(d.args, capture_output=True, text=True, timeout=10)
    assert p.returncode == 1 and "not a stale socket of ours" in p.stderr
    assert os.path.isfile(d.sock)  # not ours to remove
    os.unlink(d.sock)


def test_live_socket_is_not_taken_over_and_a_stale_one_is(pb, base):
    d = Driver(pb, base).start()
    try:
        other = os.path.join(base, "state2")  # a state directory of its own: one driver per state directory
        os.mkdir(other, 0o700)
        p = subprocess.run([other if a == d.state else a for a in d.args], capture_output=True, text=True, timeout=10)
        assert p.returncode == 1 and "served by another driver" in p.stderr, p.stderr
        assert d.call("GetCapabilities", pb.GetCapabilitiesRequest(), pb.GetCapabilitiesResponse).driver_name == "mxc"
    finally:
        d.proc.kill()   # no clean exit: the socket stays behind, stale
        d.proc.wait()
        d.stop()
    assert os.path.exists(d.sock)
    d2 = Driver(pb, base).start()
    try:
        assert d2.call("GetCapabilities", pb.GetCapabilitiesRequest(), pb.GetCapabilitiesResponse).driver_name == "mxc"
    finally:
        d2.stop()


def test_socket_activation(pb, base):
    """Started by systemd's socket activation (systemd-socket-activate passes the listening socket as
    fd 3 with LISTEN_PID/LISTEN_FDS), the driver serves on it and leaves it to its owner at a stop.
    Refused: two descriptors, fd 3 not a socket, a socket anyone may connect to."""
    if not shutil.which("systemd-socket-activate"):
        pytest.skip("needs systemd-socket-activate (systemd)")
    d = Driver(pb, base)
    act = subprocess.Popen(["systemd-socket-activate", "-l", d.sock, *d.args], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 10
        while not os.path.exists(d.sock) and time.time() < deadline:
            time.sleep(0.02)
        assert not os.stat(d.sock).st_mode & 0o002  # systemd-socket-activate's own mode: not world-writable
        ch = grpc.insecure_channel("unix:" + d.sock)
        rpc = ch.unary_unary(SVC + "GetCapabilities", request_serializer=lambda m: m.SerializeToString(),
                             response_deserializer=pb.GetCapabilitiesResponse.FromString)
        assert rpc(pb.GetCapabilitiesRequest(), timeout=10).driver_name == "mxc"
        ch.close()
    finally:
        act.send_signal(signal.SIGTERM)
        rc = act.wait(timeout=10)
        err = act.stderr.read()
    assert rc == 0, err
    assert os.path.exists(d.sock), "the activated driver removed systemd's socket"
    os.unlink(d.sock)
    for fds, three in (("2", "3</dev/null 4</dev/null"), ("1", "3</dev/null")):
        r = subprocess.run(["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=%s exec "$0" "$@" %s' % (fds, three), *d.args],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "socket activation" in r.stderr, (fds, r.stderr)
    act = subprocess.Popen(["systemd-socket-activate", "-l", d.sock, *d.args], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 10
        while not os.path.exists(d.sock) and time.time() < deadline:
            time.sleep(0.02)
        os.chmod(d.sock, 0o666)  # anyone may connect
        with socket.socket(socket.AF_UNIX) as s:  # the first connection starts the driver, which refuses
            s.connect(d.sock)
        rc = act.wait(timeout=10)
        err = act.stderr.read()
    finally:
        if act.poll() is None:
            act.kill()
            act.wait()
    assert rc == 1 and "socket activation: anyone may connect to" in err, err
    os.unlink(d.sock)


def test_man_page_renders_and_usage():
    page = os.path.join(REPO, "man", "mxc-openshell-driver.1")
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr, r.stderr
    text = open(page).read()
    for opt in ("socket", "state\\-dir", "supervisor", "socket\\-group", "config", "mxc\\-oci", "podman",
                "gateway\\-endpoint"):
        assert "\\-\\-" + opt in text, opt
    r = subprocess.run([DRIVER, "--socket", "/x"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("usage: mxc-openshell-driver --socket PATH --state-dir DIR")


def _rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def _h2_frame(kind, flags, sid, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + sid.to_bytes(4, "big") + payload


def test_streams_held_open_cannot_grow_the_driver_without_bound(driver, pb):
    """Review of issue 37: a peer opening many streams, each filled to just under the 4 MiB message
    bound and never ended, grew the driver by every byte (25 GiB over 64 connections).  Request
    bytes held at once are budgeted per connection and for the driver: beyond, a stream is refused."""
    import threading
    path = "/openshell.compute.v1.ComputeDriver/ValidateSandboxCreate".encode()
    hdr = b"\x83\x86\x01\x01x\x04" + bytes([len(path)]) + path + b"\x00\x0ccontent-type\x10application/grpc"
    s = socket.socket(socket.AF_UNIX)
    s.connect(driver.sock)
    cv = threading.Condition()
    win, done = {0: 65535}, []

    def reader():
        buf = b""
        while True:
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if not d:
                break
            buf += d
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                n, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
                sid, p, buf = int.from_bytes(buf[5:9], "big") & 0x7fffffff, buf[9:9 + n], buf[9 + n:]
                with cv:
                    if kind == 4 and not flags & 1:
                        s.sendall(_h2_frame(4, 1, 0))
                    elif kind == 8:
                        win[sid] = win.get(sid, 65535) + (int.from_bytes(p, "big") & 0x7fffffff)
                    elif kind in (3, 7):
                        win[sid] = -(1 << 40)
                    cv.notify_all()
        with cv:
            done.append(True)
            cv.notify_all()
    before = _rss_kib(driver.proc.pid)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _h2_frame(4, 0, 0))  # first: then the acks
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    sids, per, chunk = [2 * i + 1 for i in range(10)], 3 << 20, b"\x00" * 16384
    for sid in sids:
        win[sid] = 65535
        s.sendall(_h2_frame(1, 4, sid, hdr))
    sent = dict.fromkeys(sids, 0)
    for sid in sids:                     # 10 streams x 3 MiB, none ended: 30 MiB offered
        while sent[sid] < per:
            with cv:
                if not cv.wait_for(lambda: done or min(win[0], win[sid]) >= len(chunk), timeout=3):
                    break
                if done or win[sid] < 0:
                    break
                win[0] -= len(chunk)
                win[sid] -= len(chunk)
            s.sendall(_h2_frame(0, 0, sid, chunk))
            sent[sid] += len(chunk)
    grown = _rss_kib(driver.proc.pid) - before
    try:
        s.shutdown(socket.SHUT_RDWR)  # wakes the reader's recv, which close alone does not
    except OSError:
        pass
    s.close()
    t.join(10)
    assert sum(sent.values()) >= 20 << 20, sent           # the driver read them (its windows reopened)
    with open("/proc/%d/maps" % driver.proc.pid) as f:
        sanitized = "libasan" in f.read()                # ASan's quarantine keeps every freed buffer
    assert sanitized or grown < 16 << 10, (grown, sent)   # at most its budgets held (8 MiB a connection)
    assert driver.call("GetCapabilities", b"", pb.GetCapabilitiesResponse).driver_name == "mxc"  # it serves on
