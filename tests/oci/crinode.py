"""A CRI node's containerd config as docs/kubernetes.md writes it, shared by tests/oci/test_cri.py (the
CRI driven over gRPC) and tests/oci/critest/critest.py (Kubernetes' critest on the same node).

- cri_config: containerd 1.6's config with the CRI plugin, everything under `base` (root, state,
  socket: test_containerd.base_config), the runtime entries of docs/kubernetes.md's TOML as written
  there, BinaryName pointed at `mxc_oci`, the shims' state roots in `base`, CNI's directories, and
  `extra` TOML appended (critest: the registry mirrors).
- cri_node: that containerd in a network namespace of the caller's, the two local images imported,
  the CRI client (Cri, stubs from containerd's vendored proto); everything removed at the end and
  nothing left (asserted).
- cni_conflist: CNI's bridge + host-local on a subnet of the caller's (inside a network namespace the
  caller made), portmap added on request.
"""
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from conftest import wait_until
from test_containerd import (base_config, cgroup_dirs, claims_naming, mounts_under, pids_naming, stop_process,
                             write_oci_image)
from test_oci import MXC_OCI, make_rootfs

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CNI_BIN = "/usr/lib/cni"
PAUSE = "localhost/mxc-pause:1"
IMAGE = "localhost/mxc-bb:1"
SUBNET = "192.0.2.0/24"
CNI_CACHE = "/var/lib/cni/results"


def cri_config(base, sock, mxc_oci, sandbox_image, extra=""):
    """docs/kubernetes.md's TOML as written there, with `mxc_oci` as BinaryName and the caller's own:
    the sandbox image, CNI's directories, the shims' state roots."""
    with open(os.path.join(REPO, "docs", "kubernetes.md")) as f:
        block = re.search(r"```toml\n(.*?)```", f.read(), re.S).group(1)
    block = "\n".join(line for line in block.split("\n") if not line.startswith("version"))
    cri = '[plugins."io.containerd.grpc.v1.cri"]\n'
    assert cri in block and 'BinaryName = "/usr/bin/mxc-oci"' in block
    block = block.replace(cri, cri + '  sandbox_image = "%s"\n' % sandbox_image, 1)
    block = block.replace('BinaryName = "/usr/bin/mxc-oci"',
                          'BinaryName = "%s"\n  Root = "%s/runc-mxc"' % (mxc_oci, base), 1)
    runc = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n'
    assert runc in block                  # the docs' runc entry (SystemdCgroup = false: cgroupfs node)
    block = block.replace(runc, runc + '  Root = "%s/runc"\n' % base, 1)
    block += ('\n[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = "%s"\n  conf_dir = "%s/cni"\n'
              '  max_conf_num = 1\n' % (CNI_BIN, base))
    return base_config(base, sock, cri=True) + block + extra


def cni_conflist(base, subnet, gateway, portmap=False):
    """bridge + host-local; with gateway, the bridge has the subnet's first address and is the pods'
    default route (the bridge plugin then turns forwarding on in containerd's namespace: the caller's).
    portmap: the CRI's hostPort mappings (DNAT in containerd's namespace)."""
    plugins = [{"type": "bridge", "bridge": "mxccri0", "isGateway": gateway, "ipMasq": False,
                "ipam": {"type": "host-local", "ranges": [[{"subnet": subnet}]],
                         "routes": [{"dst": "0.0.0.0/0"}] if gateway else [],
                         "dataDir": os.path.join(base, "ipam")}}]
    if portmap:
        plugins.append({"type": "portmap", "capabilities": {"portMappings": True}})
    return {"cniVersion": "1.0.0", "name": "mxccri", "plugins": plugins}


class Cri:
    """containerd with the CRI plugin in a network namespace of the test's own; the CRI client."""

    def __init__(self, base, pb, grpc_mod, netns):
        self.base = base
        self.sock = os.path.join(base, "c.sock")
        self.netns = netns
        self.cgparent = "/mxccri-" + netns
        self.pb = pb
        ch = grpc_mod.insecure_channel("unix://" + self.sock)
        import api_pb2_grpc
        self.rt = api_pb2_grpc.RuntimeServiceStub(ch)
        self.img = api_pb2_grpc.ImageServiceStub(ch)
        self.channel = ch
        self.n = 0

    def ctr(self, *args):
        return subprocess.run(["ctr", "--address", self.sock, "--namespace", "k8s.io", *args], capture_output=True,
                              text=True, timeout=120)

    def image_present(self, ref):
        r = self.img.ImageStatus(self.pb.ImageStatusRequest(image=self.pb.ImageSpec(image=ref)), timeout=30)
        return r.image.id != ""

    def pod_config(self, annotations=None, ns=None):
        self.n += 1
        name = "pod%d" % self.n
        return self.pb.PodSandboxConfig(
            metadata=self.pb.PodSandboxMetadata(name=name, uid="uid-%d-%d" % (os.getpid(), self.n),
                                                namespace="mxctest", attempt=0),
            hostname=name, log_directory=os.path.join(self.base, "logs", name),
            annotations=annotations or {},
            linux=self.pb.LinuxPodSandboxConfig(cgroup_parent=self.cgparent,
                                                security_context=self.pb.LinuxSandboxSecurityContext(
                                                    namespace_options=ns or self.ns_options())))

    def ns_options(self):
        """What a kubelet sends for a pod without shareProcessNamespace or host namespaces: the pod's
        network and IPC, a PID namespace per container (the CRI's zero value, POD, shares the
        sandbox's by path: test_a_pod_sharing_its_process_namespace_is_one_identity)."""
        return self.pb.NamespaceOption(network=self.pb.POD, pid=self.pb.CONTAINER, ipc=self.pb.POD)

    def container_config(self, name, command, pod, mounts=(), apparmor=False, ns=None):
        """apparmor: the container's AppArmor as a kubelet sends RuntimeDefault (runtime/default) on an
        AppArmor node, in both fields of this CRI version (the profile and the deprecated string)."""
        sc = self.pb.LinuxContainerSecurityContext(namespace_options=ns or self.ns_options())
        if apparmor:
            sc.apparmor.CopyFrom(self.pb.SecurityProfile(profile_type=self.pb.SecurityProfile.RuntimeDefault))
            sc.apparmor_profile = "runtime/default"
        return self.pb.ContainerConfig(
            metadata=self.pb.ContainerMetadata(name=name), image=self.pb.ImageSpec(image=IMAGE),
            command=command, log_path=name + ".log", mounts=list(mounts),
            envs=[self.pb.KeyValue(key="PATH", value="/bin:/usr/bin")],
            linux=self.pb.LinuxContainerConfig(security_context=sc))

    def run_pod(self, cfg, handler="mxc"):
        return self.rt.RunPodSandbox(self.pb.RunPodSandboxRequest(config=cfg, runtime_handler=handler),
                                     timeout=120).pod_sandbox_id

    def start(self, pod, cfg, name, command, mounts=(), apparmor=False, ns=None):
        c = self.rt.CreateContainer(self.pb.CreateContainerRequest(
            pod_sandbox_id=pod, config=self.container_config(name, command, cfg, mounts, apparmor, ns),
            sandbox_config=cfg), timeout=120).container_id
        self.rt.StartContainer(self.pb.StartContainerRequest(container_id=c), timeout=120)
        return c

    def exec(self, cid, cmd):
        r = self.rt.ExecSync(self.pb.ExecSyncRequest(container_id=cid, cmd=cmd, timeout=60), timeout=90)
        return r.exit_code, r.stdout.decode(), r.stderr.decode()

    def status(self, cid):
        return self.rt.ContainerStatus(self.pb.ContainerStatusRequest(container_id=cid, verbose=True), timeout=30)

    def pod_status(self, pod):
        return self.rt.PodSandboxStatus(self.pb.PodSandboxStatusRequest(pod_sandbox_id=pod, verbose=True),
                                        timeout=30)

    def remove_container(self, cid):
        self.rt.StopContainer(self.pb.StopContainerRequest(container_id=cid, timeout=10), timeout=120)
        self.rt.RemoveContainer(self.pb.RemoveContainerRequest(container_id=cid), timeout=120)

    def remove_pod(self, pod):
        self.rt.StopPodSandbox(self.pb.StopPodSandboxRequest(pod_sandbox_id=pod), timeout=120)
        self.rt.RemovePodSandbox(self.pb.RemovePodSandboxRequest(pod_sandbox_id=pod), timeout=120)

    def remove_all(self):
        for p in self.rt.ListPodSandbox(self.pb.ListPodSandboxRequest(), timeout=30).items:
            try:
                self.remove_pod(p.id)    # stops and removes its containers as well
            except Exception:            # noqa: BLE001 -- best effort; the leftover checks tell
                pass

    def links(self):
        r = subprocess.run(["ip", "-n", self.netns, "-o", "link"], capture_output=True, text=True, check=True)
        return [line.split(":")[1].strip().split("@")[0] for line in r.stdout.split("\n") if line.strip()]


def _host_links():
    r = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True)
    return [line.split(":")[1].strip().split("@")[0] for line in r.stdout.split("\n") if line.strip()]


@contextlib.contextmanager
def cri_node(netns, subnet=SUBNET, gateway=False, portmap=False, extra_toml="", sandbox_image=PAUSE):
    """containerd with the CRI plugin in the network namespace `netns` (the test's), the images
    imported; yields the client.  portmap: CNI's portmap after the bridge (hostPort); extra_toml:
    appended to containerd's config (critest: the registry mirrors); sandbox_image: the pods' sandbox
    image (critest: a pause pulled from its registry).  At the end: every pod removed, containerd stopped, and nothing of
    the test's left (processes, mounts, pod namespaces, veths, cgroups, range claims, CNI results)."""
    base = tempfile.mkdtemp(prefix="mxc-cri-", dir="/var/tmp")
    os.chmod(base, 0o755)
    stubs = os.path.join(base, "stubs")
    r = subprocess.run(["bash", os.path.join(REPO, "tests", "oci", "cri", "api.sh"), stubs], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise AssertionError("the CRI API's stubs could not be made: " + r.stdout + r.stderr)
    sys.path.insert(0, stubs)
    import grpc
    import api_pb2
    c = Cri(base, api_pb2, grpc, netns)
    cg_before = set(cgroup_dirs(c.cgparent.lstrip("/")))
    links_before = set(c.links())
    os.makedirs(os.path.join(base, "cni"))
    with open(os.path.join(base, "cni", "10-mxccri.conflist"), "w") as f:
        json.dump(cni_conflist(base, subnet, gateway, portmap), f)
    conf = os.path.join(base, "config.toml")
    with open(conf, "w") as f:
        f.write(cri_config(base, c.sock, MXC_OCI, sandbox_image, extra_toml))
    log = open(os.path.join(base, "containerd.log"), "wb")
    # only the network namespace is the test's: the mounts containerd makes are the host's mount
    # namespace's, where the leftover checks see them.  Its environment (the shims' and mxc-oci's) is
    # this process's.
    d = subprocess.Popen(["nsenter", "--net=/run/netns/" + netns, "containerd", "--config", conf],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    c.pods_netns = []
    try:
        def up():
            try:
                c.rt.Version(c.pb.VersionRequest(), timeout=5)
                return True
            except grpc.RpcError:
                return False
        assert wait_until(lambda: d.poll() is None and up(), 60), open(os.path.join(base, "containerd.log")).read()
        rootfs = os.path.join(base, "rootfs")
        make_rootfs(rootfs)
        os.chmod(os.path.join(rootfs, "tmp"), 0o1777)
        for link in ("lib", "lib64"):    # the host's /usr bound at /usr: curl and its libraries
            os.symlink("usr/" + link, os.path.join(rootfs, link))
        for ref, cmd in ((PAUSE, ("sleep", "2147483647")), (IMAGE, ("sh",))):
            tar = os.path.join(base, ref.split("/")[1].replace(":", "-") + ".tar")
            write_oci_image(tar, rootfs, ref, cmd)
            r = c.ctr("images", "import", "--snapshotter", "overlayfs", tar)
            assert r.returncode == 0, r.stdout + r.stderr
            # the CRI sees the image locally: RunPodSandbox and CreateContainer pull nothing
            assert wait_until(lambda: c.image_present(ref), 30), ref
        yield c
    finally:
        try:
            c.remove_all()
        except Exception:                # noqa: BLE001
            pass
        c.channel.close()
        stop_process(d)
        log.close()
        left = pids_naming(base)
        for p in left:
            os.kill(p, signal.SIGKILL)
        mnts = mounts_under(base)
        for m in reversed(mnts):
            subprocess.run(["umount", "-l", m], check=False)
        netns_left = [p for p in c.pods_netns if os.path.exists(p)]
        for p in netns_left:
            subprocess.run(["umount", p], check=False)
            try:
                os.unlink(p)
            except OSError:
                pass
        veths = [l for l in c.links() if l not in links_before and l != "mxccri0"]
        subprocess.run(["ip", "-n", netns, "link", "del", "mxccri0"], check=False, capture_output=True)
        host_links = [l for l in _host_links() if l == "mxccri0"]
        for p in sorted(cgroup_dirs(c.cgparent.lstrip("/")), key=len, reverse=True):
            try:
                os.rmdir(p)              # the pod parent the test named, empty by now
            except OSError:
                pass
        cg_left = [p for p in cgroup_dirs(c.cgparent.lstrip("/")) if p not in cg_before]
        claims = claims_naming(base)
        # libcni's result cache (containerd 1.6 does not let it be moved): the pods' entries are gone
        cni_cache = [f for f in os.listdir(CNI_CACHE) if f.startswith("mxccri-")] if os.path.isdir(CNI_CACHE) else []
        if os.environ.get("MXC_CRI_KEEP_LOG"):
            shutil.copy(os.path.join(base, "containerd.log"), os.environ["MXC_CRI_KEEP_LOG"])
        sys.path.remove(stubs)
        shutil.rmtree(base, ignore_errors=True)
        assert not left, "processes left: %s" % left
        assert not mnts, "mounts left: %s" % mnts
        assert not netns_left, "pod network namespaces left: %s" % netns_left
        assert not veths, "veths left in the test's namespace: %s" % veths
        assert not host_links, "a link of the test on the host: %s" % host_links
        assert not cg_left, "cgroups left: %s" % cg_left
        assert not claims, "range claims left: %s" % claims
        assert not cni_cache, "CNI results left: %s" % cni_cache
