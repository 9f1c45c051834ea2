"""Kubernetes' CRI on mxc-oci, end to end without a kubelet (docs/kubernetes.md "What was tested").

A kubelet runs pods by calling containerd's CRI plugin over gRPC (runtime.v1 RuntimeService and
ImageService).  This test is that caller: RunPodSandbox with runtime_handler "mxc", CreateContainer,
StartContainer, ExecSync, ListContainers, ContainerStatus, StopContainer, RemoveContainer,
StopPodSandbox, RemovePodSandbox — so "Kubernetes runs pods on mxc" is measured at the API
Kubernetes itself uses.

- The CRI proto is containerd's vendored copy, from Debian's containerd source package (fetched and
  pinned by tests/oci/cri/api.sh, cached under build/); the Python stubs are made at test time by
  python3-grpc-tools.
- containerd runs with the CRI plugin on, its own root, state, socket and config, the runtime entries
  of docs/kubernetes.md's TOML as written there (BinaryName pointed at this build's mxc-oci, the shim's
  Root in the test's directory), in a NETWORK NAMESPACE THE TEST MAKES: CNI's bridge and the pods'
  veths are made inside it, never on the host's network.  CNI: Debian's containernetworking-plugins
  (bridge + host-local; CRI adds loopback) on 192.0.2.0/24 (TEST-NET-1, documentation), no gateway,
  no masquerade.  The sandbox image (busybox-static with `sleep` as its command: a pause that does not
  reap) and the workload image are imported locally: nothing is pulled.
- At the end: no process, mount, cgroup, range claim, pod network namespace or veth of the test's is
  left.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import wait_until
from crinode import CNI_BIN, IMAGE, cri_node
from test_containerd import claims_naming
from test_oci import BUSYBOX, MXC_OCI, make_rootfs


pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("containerd") or not shutil.which("containerd-shim-runc-v2")
    or not os.access(BUSYBOX, os.X_OK) or not all(os.access(os.path.join(CNI_BIN, p), os.X_OK)
                                                  for p in ("bridge", "host-local", "loopback"))
    or subprocess.run([sys.executable, "-c", "import grpc, grpc_tools"], capture_output=True).returncode != 0,
    reason="needs root, containerd 1.6, busybox-static, containernetworking-plugins, python3-grpcio and "
           "python3-grpc-tools (scripts/deps.sh)")


@pytest.fixture(scope="module")
def cri():
    netns = "mxccri%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        subprocess.run(["ip", "-n", netns, "link", "set", "lo", "up"], check=True)
        with cri_node(netns) as c:
            yield c
    finally:
        subprocess.run(["ip", "netns", "del", netns], check=False)


def pod_netns_path(c, pod):
    info = json.loads(c.pod_status(pod).info["info"])
    for ns in info["runtimeSpec"]["linux"]["namespaces"]:
        if ns["type"] == "network":
            return ns["path"]
    raise AssertionError("no network namespace path in the sandbox's spec")


def uid_map(text):
    return [tuple(int(x) for x in line.split()) for line in text.strip().split("\n")]


def test_harness_with_runc(cri):
    """The same CRI calls with the node's default runtime (runc): the harness works, and its uid_map
    check does tell (runc's pod runs as host root)."""
    cfg = cri.pod_config()
    pod = cri.run_pod(cfg, handler="runc")
    cri.pods_netns.append(pod_netns_path(cri, pod))
    c = cri.start(pod, cfg, "c", ["sleep", "1000"])
    rc, out, err = cri.exec(c, ["sh", "-c", "id -u; cat /proc/self/uid_map"])
    assert rc == 0, err
    lines = out.strip().split("\n")
    assert lines[0] == "0" and any(h == 0 for _, h, _ in uid_map("\n".join(lines[1:]))), out
    cri.remove_container(c)
    cri.remove_pod(pod)


def test_pod_through_the_cri_on_mxc(cri):
    pb = cri.pb
    cfg = cri.pod_config()
    pod = cri.run_pod(cfg)
    netns = pod_netns_path(cri, pod)
    cri.pods_netns.append(netns)
    st = cri.pod_status(pod).status
    assert st.state == pb.SANDBOX_READY
    ip = st.network.ip
    assert ip.startswith("192.0.2."), st.network
    # the sandbox (pause) container runs on mxc-oci: its state is under the mxc entry's Root
    assert os.listdir(os.path.join(cri.base, "runc-mxc", "k8s.io")) == [pod]

    web = cri.start(pod, cfg, "web", ["sh", "-c", "mkdir -p /tmp/www; echo pod-ok > /tmp/www/index.html; "
                                                  "exec httpd -f -p 127.0.0.1:8080 -h /tmp/www"])
    rc, out, err = cri.exec(web, ["sh", "-c", "id -u; cat /proc/self/uid_map"])
    assert rc == 0, err
    lines = out.strip().split("\n")
    assert lines[0] == "0"
    m = uid_map("\n".join(lines[1:]))
    assert m == [(0, m[0][1], 65536)] and m[0][1] >= 2 ** 31, out   # nothing maps onto host 0
    # the CRI's mounts: /sys/fs/cgroup (no cgroup namespace on a v1 node) read-only, the container's own
    # cgroup as its root; /dev/mqueue of the pod's IPC namespace; the pod's /etc/hosts and resolv.conf
    rc, out, err = cri.exec(web, ["sh", "-c", "grep -E ' /(sys/fs/cgroup|dev/mqueue|etc/hosts|etc/resolv.conf) ' "
                                              "/proc/self/mountinfo; touch /sys/fs/cgroup/x 2>/dev/null || echo ro"])
    assert rc == 0, err
    assert out.strip().split("\n")[-1] == "ro" and " /dev/mqueue " in out and " /etc/hosts " in out, out
    # one range for the pod (web joined the sandbox's user namespace, which owns the IPC and UTS
    # namespaces containerd passes by path): the sandbox's range claim, and a member's claim on it for
    # web (and client's below)
    assert len(claims_naming(cri.base)) == 2

    # a second container of the pod: the pod's eth0 and address, the first's server on 127.0.0.1
    client = cri.start(pod, cfg, "client", ["sleep", "1000"])

    def fetch():
        fetch.last = cri.exec(client, ["sh", "-c", "wget -q -O - http://127.0.0.1:8080/"])
        return fetch.last[0] == 0 and fetch.last[1] == "pod-ok\n"
    assert wait_until(fetch, 30, 0.5), fetch.last
    rc, out, err = cri.exec(client, ["sh", "-c", "ls /sys/class/net; cat /proc/self/uid_map"])
    assert rc == 0, err
    assert sorted(out.split()[:2]) == ["eth0", "lo"], out
    m2 = uid_map("\n".join(out.strip().split("\n")[2:]))
    assert m2 == m, out   # the pod's one range, as web's
    assert len(claims_naming(cri.base)) == 3

    # ListContainers and ContainerStatus
    items = cri.rt.ListContainers(pb.ListContainersRequest(filter=pb.ContainerFilter(pod_sandbox_id=pod)),
                                  timeout=30).containers
    assert sorted((x.metadata.name, x.state) for x in items) == [("client", pb.CONTAINER_RUNNING),
                                                                ("web", pb.CONTAINER_RUNNING)]
    s = cri.status(web)
    assert s.status.state == pb.CONTAINER_RUNNING and s.status.image.image == IMAGE
    spec = json.loads(s.info["info"])["runtimeSpec"]
    assert spec["annotations"]["io.kubernetes.cri.sandbox-id"] == pod

    cri.rt.StopContainer(pb.StopContainerRequest(container_id=web, timeout=10), timeout=120)
    s = cri.status(web).status
    # pid 1 of its PID namespace without a SIGTERM handler: the CRI's SIGKILL once the grace period is over
    assert s.state == pb.CONTAINER_EXITED and s.exit_code == 128 + 9, s
    for c in (client, web):
        cri.remove_container(c)
    assert not cri.rt.ListContainers(pb.ListContainersRequest(filter=pb.ContainerFilter(pod_sandbox_id=pod)),
                                     timeout=30).containers
    cri.remove_pod(pod)
    assert not [p for p in cri.rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=30).items if p.id == pod]
    assert not os.path.exists(netns)
    assert [l for l in cri.links() if l not in ("lo", "mxccri0")] == []   # the pod's veth is gone
    assert os.listdir(os.path.join(cri.base, "runc-mxc", "k8s.io")) == []
    assert claims_naming(cri.base) == []


def test_port_80_and_every_gid_ping_range_in_a_cri_pod(cri):
    """Without containerd options: httpd on :80 in a pod (the pod's network namespace, containerd's,
    belongs to the host's user namespace; mxc-oci sets that namespace's own
    ip_unprivileged_port_start to 0 for a container granted CAP_NET_BIND_SERVICE, docs/oci.md);
    and the pod sysctl containerd's enable_unprivileged_icmp writes, net.ipv4.ping_group_range
    "0 2147483647", runs the pod (it was refused) and is written as the sandbox's own gids."""
    pb = cri.pb
    cfg = cri.pod_config()
    cfg.linux.sysctls["net.ipv4.ping_group_range"] = "0 2147483647"
    pod = cri.run_pod(cfg)
    netns = pod_netns_path(cri, pod)
    cri.pods_netns.append(netns)
    assert cri.pod_status(pod).status.state == pb.SANDBOX_READY
    host_port_start = open("/proc/sys/net/ipv4/ip_unprivileged_port_start").read()
    host_ping = open("/proc/sys/net/ipv4/ping_group_range").read()
    web = cri.start(pod, cfg, "web80", ["sh", "-c", "mkdir -p /tmp/www; echo port-80 > /tmp/www/index.html; "
                                                    "exec httpd -f -p 80 -h /tmp/www"])
    client = cri.start(pod, cfg, "client80", ["sleep", "1000"])

    def fetch():
        fetch.last = cri.exec(client, ["sh", "-c", "wget -q -O - http://127.0.0.1:80/"])
        return fetch.last[0] == 0 and fetch.last[1] == "port-80\n"
    assert wait_until(fetch, 30, 0.5), fetch.last

    def in_pod(path):
        return subprocess.run(["nsenter", "--net=" + netns, "cat", path], capture_output=True, text=True,
                              check=True).stdout.split()
    assert in_pod("/proc/sys/net/ipv4/ip_unprivileged_port_start") == ["0"]
    lo, hi = (int(x) for x in in_pod("/proc/sys/net/ipv4/ping_group_range"))
    assert hi - lo == 65535 and lo >= 2 ** 31, (lo, hi)      # one range's gids, none of the host's
    assert open("/proc/sys/net/ipv4/ip_unprivileged_port_start").read() == host_port_start
    assert open("/proc/sys/net/ipv4/ping_group_range").read() == host_ping
    for c in (client, web):
        cri.remove_container(c)
    cri.remove_pod(pod)
    assert not os.path.exists(netns)


def test_a_pod_sharing_its_process_namespace_is_one_identity(cri):
    """shareProcessNamespace (the CRI's PID mode POD, critest's default): containerd 1.6 passes the
    sandbox's PID namespace by /proc/PID/ns/pid and no user namespace; mxc-oci proves it the sandbox's
    (a live container of its store) and the member joins the user namespace owning it: one range for
    the pod.  An emptyDir of two containers: each reads and writes the other's files, owned by the
    writer's container uid 0 (never 65534); each sees the other's processes."""
    pb = cri.pb
    ns = pb.NamespaceOption(network=pb.POD, pid=pb.POD, ipc=pb.POD)
    cfg = cri.pod_config(ns=ns)
    pod = cri.run_pod(cfg)
    cri.pods_netns.append(pod_netns_path(cri, pod))
    empty = os.path.join(cri.base, "emptydir-" + pod[:12])
    os.makedirs(empty)
    os.chmod(empty, 0o777)                   # the kubelet's emptyDir
    mount = [pb.Mount(container_path="/shared", host_path=empty)]
    app = cri.start(pod, cfg, "app", ["sh", "-c", "echo from-app > /shared/app; exec sleep 1000"], mount, ns=ns)
    side = cri.start(pod, cfg, "sidecar", ["sh", "-c", "echo from-side > /shared/side; exec sleep 1001"], mount,
                     ns=ns)
    assert wait_until(lambda: all(os.path.exists(os.path.join(empty, f)) for f in ("app", "side")), 30)
    rc, out, err = cri.exec(side, ["sh", "-c", "echo by-side >> /shared/app && cat /shared/app && ls -n /shared && "
                                              "cat /proc/self/uid_map && cat /proc/[0-9]*/cmdline | tr '\\0' ' '"])
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[:2] == ["from-app", "by-side"], out
    owners = {l.split()[-1]: (l.split()[2], l.split()[3]) for l in lines if l.startswith("-")}
    assert owners == {"app": ("0", "0"), "side": ("0", "0")}, out
    assert "sleep 1000" in out and "sleep 1001" in out, out      # the app's process, seen from the sidecar
    m = uid_map([l for l in lines if l.strip().startswith("0 ")][0])
    rc, out, err = cri.exec(app, ["sh", "-c", "echo by-app >> /shared/side && cat /shared/side && "
                                             "cat /proc/self/uid_map"])
    assert rc == 0 and out.split("\n")[:2] == ["from-side", "by-app"], (out, err)
    assert uid_map("\n".join(out.strip().split("\n")[2:])) == m and m[0][1] >= 2 ** 31, out  # one range, not host 0
    assert os.stat(os.path.join(empty, "app")).st_uid == m[0][1] == os.stat(os.path.join(empty, "side")).st_uid
    for c in (side, app):
        cri.remove_container(c)
    cri.remove_pod(pod)
    assert claims_naming(cri.base) == []
    shutil.rmtree(empty)


def test_a_pod_without_a_shared_process_namespace_is_one_identity(cri):
    """A pod without shareProcessNamespace (the CRI's PID mode CONTAINER): containerd 1.6 passes the
    sandbox's IPC and UTS namespaces by /proc/PID/ns/... (the network namespace CNI's) and no user
    namespace; mxc-oci proves them the sandbox's (owned by the user namespace of a live container of
    its store) and the member joins that user namespace: one range for the pod.  An emptyDir of two
    containers: each reads and writes the other's files with its own uid (0, never 65534); neither
    sees the other's processes (a PID namespace each)."""
    pb = cri.pb
    cfg = cri.pod_config()
    pod = cri.run_pod(cfg)
    cri.pods_netns.append(pod_netns_path(cri, pod))
    empty = os.path.join(cri.base, "emptydir-" + pod[:12])
    os.makedirs(empty)
    os.chmod(empty, 0o777)                   # the kubelet's emptyDir
    mount = [pb.Mount(container_path="/shared", host_path=empty)]
    app = cri.start(pod, cfg, "app", ["sh", "-c", "echo from-app > /shared/app; exec sleep 1000"], mount)
    side = cri.start(pod, cfg, "sidecar", ["sh", "-c", "echo from-side > /shared/side; exec sleep 1001"], mount)
    assert wait_until(lambda: all(os.path.exists(os.path.join(empty, f)) for f in ("app", "side")), 30)
    rc, out, err = cri.exec(side, ["sh", "-c", "echo by-side >> /shared/app && cat /shared/app && ls -n /shared && "
                                              "cat /proc/self/uid_map && cat /proc/[0-9]*/cmdline | tr '\\0' ' '"])
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[:2] == ["from-app", "by-side"], out
    owners = {l.split()[-1]: (l.split()[2], l.split()[3]) for l in lines if l.startswith("-")}
    assert owners == {"app": ("0", "0"), "side": ("0", "0")}, out
    assert "sleep 1001" in out and "sleep 1000" not in out, out  # its own process only, not the app's
    m = uid_map([l for l in lines if l.strip().startswith("0 ")][0])
    rc, out, err = cri.exec(app, ["sh", "-c", "echo by-app >> /shared/side && cat /shared/side && "
                                             "cat /proc/self/uid_map && cat /proc/[0-9]*/cmdline | tr '\\0' ' '"])
    assert rc == 0 and out.split("\n")[:2] == ["from-side", "by-app"], (out, err)
    assert "sleep 1000" in out and "sleep 1001" not in out, out
    assert uid_map("\n".join(l for l in out.strip().split("\n")[2:] if l.strip().startswith("0 "))) == m
    assert m[0][1] >= 2 ** 31, m                                 # one range, not host 0
    assert os.stat(os.path.join(empty, "app")).st_uid == m[0][1] == os.stat(os.path.join(empty, "side")).st_uid
    for c in (side, app):
        cri.remove_container(c)
    cri.remove_pod(pod)
    assert claims_naming(cri.base) == []
    shutil.rmtree(empty)


# --------------------------------------------------------------------------------------------
# AppArmor (docs/kubernetes.md step 2, docs/oci.md "AppArmor"): on a node with AppArmor the CRI puts
# its profile (cri-containerd.apparmor.d for RuntimeDefault) in process.apparmorProfile

from test_apparmor import AA, PROFILE  # noqa: E402


def test_the_kubelet_s_apparmor_profile_on_mxc(cri):
    """A container config with RuntimeDefault AppArmor, as a kubelet sends it on an AppArmor node.
    On a kernel with AppArmor the pod runs on mxc confined by containerd's profile.  On one without
    (this machine): containerd refuses the profile itself, for runc and mxc alike ("apparmor is not
    supported"), so the spec containerd writes on an AppArmor node — this pod's own runtime spec, as
    containerd made it, with process.apparmorProfile as its WithDefaultProfile sets it — is run by
    mxc-oci directly: refused naming the field (runc fails it too: tests/oci/test_apparmor.py), and
    the very same spec without the profile runs (the harness: it is the profile, nothing else)."""
    import grpc
    pb = cri.pb
    cfg = cri.pod_config()
    pod = cri.run_pod(cfg)
    cri.pods_netns.append(pod_netns_path(cri, pod))
    if AA:
        c = cri.start(pod, cfg, "confined", ["sleep", "1000"], apparmor=True)
        spec = json.loads(cri.status(c).info["info"])["runtimeSpec"]
        assert spec["process"]["apparmorProfile"] == PROFILE
        rc, out, err = cri.exec(c, ["cat", "/proc/self/attr/current"])
        assert rc == 0 and out.startswith(PROFILE), (out, err)
        cri.remove_pod(pod)
        return
    for handler, p, pcfg in (("mxc", pod, cfg), ("runc", None, None)):
        if p is None:
            pcfg = cri.pod_config()
            p = cri.run_pod(pcfg, handler="runc")
            cri.pods_netns.append(pod_netns_path(cri, p))
        with pytest.raises(grpc.RpcError) as ei:
            cri.start(p, pcfg, "confined", ["sleep", "1000"], apparmor=True)
        assert "apparmor is not supported" in ei.value.details(), (handler, ei.value.details())
        if handler == "runc":
            cri.remove_pod(p)
    # the kubelet's default on this node (no AppArmor field) runs; its spec is the one run below
    c = cri.start(pod, cfg, "plain", ["sleep", "1000"])
    spec = json.loads(cri.status(c).info["info"])["runtimeSpec"]
    assert "apparmorProfile" not in spec["process"]
    bundle = os.path.join(cri.base, "aa-bundle")
    make_rootfs(os.path.join(bundle, "rootfs"))
    spec["root"] = {"path": "rootfs", "readonly": False}
    spec["process"]["args"] = ["echo", "cri-spec-ran"]
    spec["linux"]["cgroupsPath"] = cri.cgparent + "/aa-direct"

    def run(cid, profile):
        conf = json.loads(json.dumps(spec))
        if profile:
            conf["process"]["apparmorProfile"] = profile    # containerd's apparmor.WithDefaultProfile
        with open(os.path.join(bundle, "config.json"), "w") as f:
            json.dump(conf, f)
        return subprocess.run([MXC_OCI, "--root", os.path.join(cri.base, "aa-state"), "run", "--bundle", bundle,
                               cid], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    r = run("aa1", PROFILE)
    assert r.returncode != 0, r.stdout
    assert 'process.apparmorProfile "%s": this kernel has no AppArmor enabled' % PROFILE in r.stderr, r.stderr
    r = run("aa2", None)
    assert (r.returncode, r.stdout) == (0, "cri-spec-ran\n"), r.stderr
    assert os.listdir(os.path.join(cri.base, "aa-state")) == []
    cri.remove_container(c)
    cri.remove_pod(pod)


# --------------------------------------------------------------------------------------------
# a governed pod: io.mxc.* pod annotations through the CRI (pod_annotations), applied by the
# sandbox container in the CNI-made namespace (docs/oci.md "Annotations")
#
# NETWORK SAFETY: the world of tests/integration/test_proxy.py: containerd runs in its "host"
# namespace (the node; the CNI bridge and the pods' veths are made there), the origins listen on
# documentation-range addresses in its "internet" namespace, names resolve from a hosts file (no DNS
# query).  The pods are on 198.18.0.0/24 (benchmarking range) behind the node's bridge; forwarding is
# on in the node's namespace only (the bridge plugin's isGateway).  Every packet goes to loopback or to
# an address inside those namespaces.

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from test_oci_network import NET, WORKLOAD, origin, proxies_of  # noqa: E402,F401 (fixture)
from test_proxy import HOST_ADDR, WEB, world  # noqa: E402,F401 (fixture)
from test_proxy_tls import SECRET  # noqa: E402

POD_SUBNET = "198.18.0.0/24"


def test_governed_pod_through_the_cri(world, origin):  # noqa: F811
    ns_sh = lambda n, *a: subprocess.run(["ip", "netns", "exec", n] + list(a), check=True,  # noqa: E731
                                         capture_output=True, text=True)
    ns_sh(world["far"], "ip", "route", "add", POD_SUBNET, "via", HOST_ADDR)
    with cri_node(world["host"], subnet=POD_SUBNET, gateway=True) as cri:
        pb = cri.pb
        usr = [pb.Mount(container_path="/usr", host_path="/usr", readonly=True)]
        direct = ("curl -sS --max-time 5 --noproxy '*' -o /dev/null http://%s:8080/ 2>/dev/null && echo DIRECT-WEB-OK "
                  "|| echo DIRECT-WEB-FAIL; curl -sS --max-time 5 --noproxy '*' -o /dev/null http://%s:8080/ "
                  "2>/dev/null && echo DIRECT-NODE-OK || echo DIRECT-NODE-FAIL" % (WEB, HOST_ADDR))
        # the harness: a pod without annotations on the same node reaches the origin's network directly
        plain_cfg = cri.pod_config()
        plain = cri.run_pod(plain_cfg)
        cri.pods_netns.append(pod_netns_path(cri, plain))
        pc = cri.start(plain, plain_cfg, "plain", ["sleep", "1000"], mounts=usr)
        rc, out, err = cri.exec(pc, ["sh", "-c", direct])
        assert (rc, out.split()) == (0, ["DIRECT-WEB-OK", "DIRECT-NODE-OK"]), (out, err)
        cri.remove_pod(plain)

        hits = len(world["host_hits"])
        cfg = cri.pod_config(annotations={"io.mxc.version": "1", "io.mxc.network": json.dumps(NET)})
        pod = cri.run_pod(cfg)
        netns = pod_netns_path(cri, pod)
        cri.pods_netns.append(netns)
        audit = os.path.join(cri.base, "runc-mxc", "k8s.io", pod, "proxy-audit.jsonl")
        px = proxies_of(audit)
        assert len(px) == 1, px       # the sandbox (pause) container applied the pod's policy
        app = cri.start(pod, cfg, "agent", ["sleep", "1000"], mounts=usr)
        spec = json.loads(cri.status(app).info["info"])["runtimeSpec"]
        assert spec["annotations"]["io.mxc.network"] == json.dumps(NET)   # pod_annotations passed them
        rc, out, err = cri.exec(app, ["sh", "-c", WORKLOAD + direct])
        assert rc == 0, err
        lines = out.splitlines()
        assert "PLACEHOLDER=mxc:cred:github:3" in lines, lines
        assert "BOUND 200" in lines and "OUTSIDE 403" in lines, lines
        assert "OTHER 403" in lines and "PLAIN 403" in lines and "DIRECT refused" in lines, lines
        assert "DIRECT-WEB-FAIL" in lines and "DIRECT-NODE-FAIL" in lines, lines
        assert SECRET not in out
        assert any("Bearer " + SECRET in h and h.startswith("GET /repos/x ") for h in origin.heads), origin.heads
        assert len(world["host_hits"]) == hits   # the node's own services got nothing from the pod
        recs = [json.loads(l) for l in open(audit)]
        assert any(r["disposition"] == "denied" and r["dst_endpoint"]["hostname"] == "other.test" for r in recs)
        cri.remove_container(app)
        cri.remove_pod(pod)
        assert wait_until(lambda: not proxies_of(audit) if os.path.exists(audit) else True, 30)
        assert not [p for p in px if os.path.exists("/proc/%d" % p)], px

        # a tenant's annotation opening the node's loopback (issue 34, finding 4): the pod is refused, naming it
        bad = cri.pod_config(annotations={"io.mxc.version": "1", "io.mxc.network": json.dumps(
            {"defaultPolicy": "block", "allowedHosts": ["127.0.0.1:8080"]})})
        with pytest.raises(Exception) as refused:
            cri.run_pod(bad)
        assert "reaches loopback 127.0.0.0/8" in str(refused.value), refused.value
        assert len(world["host_hits"]) == hits
