"""Kubernetes' critest (cri-tools v1.26.1) on containerd 1.6 with docs/kubernetes.md's runtime entries:
once with runtime handler "runc", once with "mxc"; the specs runc passes and mxc fails, each checked
against run.sh's allowed differences (docs/oci.md "critest").  Called by tests/oci/critest/run.sh.

- The node: tests/oci/crinode.py's cri_node (containerd with the CRI plugin in a network namespace this
  script makes, CNI's bridge on 192.0.2.0/24 with the bridge as the pods' gateway so that critest, run in
  that namespace, reaches the pods' addresses; CNI's portmap for hostPort).
- critest's images (registry.k8s.io/e2e-test-images/..., gcr.io/k8s-staging-cri-tools/...) are stood
  in by images made here from busybox-static, pushed with skopeo to a registry (Debian's
  docker-registry, distribution 2.8) on the namespace's loopback; containerd's CRI registry mirrors
  point both registries at it.  Nothing leaves the namespace (its only other link is the CNI bridge).
- run.sh runs this in an IPC namespace of its own (unshare --ipc): critest's HostIpc specs make shared
  memory segments (ipcmk) in the "node's" IPC namespace and leave them; that namespace goes with us.
- Usage: critest.py CRITEST OUTDIR HANDLER...; writes OUTDIR/HANDLER.junit.xml, OUTDIR/HANDLER.log and
  OUTDIR/HANDLER.results (one "passed|failed|skipped<TAB>spec" line per spec); exit 0 when every
  critest run finished and nothing is left behind (the verdict is run.sh's).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from conftest import wait_until  # noqa: E402
from crinode import cri_node  # noqa: E402
from test_containerd import stop_process, write_oci_image  # noqa: E402
from test_oci import BUSYBOX  # noqa: E402

REGISTRY = "127.0.0.1:5000"
E2E = "registry.k8s.io/e2e-test-images/"
CRI_TOOLS = "gcr.io/k8s-staging-cri-tools/"
PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PASSWD = ("root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nbin:x:2:2:bin:/bin:/bin/false\n"
          "sys:x:3:3:sys:/dev:/bin/false\nsync:x:4:100:sync:/bin:/bin/sync\nmail:x:8:8:mail:/var/spool/mail:/bin/false\n"
          "www-data:x:33:33:www-data:/var/www:/bin/false\noperator:x:37:37:Operator:/var:/bin/false\n"
          "nobody:x:65534:65534:nobody:/home:/bin/false\n")            # busybox's image's
NNP = "/usr/local/bin/nnp"
PAUSE = "/usr/local/bin/pause"
SANDBOX = "registry.k8s.io/pause:3.6"
GROUP = ("root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\ndisk:x:6:\nmail:x:8:\nwheel:x:10:root\n"
         "www-data:x:33:\noperator:x:37:\nstaff:x:50:\nusers:x:100:\nnogroup:x:65534:\n")


def web(port, first=""):
    """A web server's command: /bin/nginx (NGINX), `first` echoed to the log before (httpd's
    "httpd -D FOREGROUND")."""
    return ["sh", "-c", "%sexec /bin/nginx 'master process' %d" % (("echo '%s'; " % first) if first else "", port)]


# (references, command, image config, files added) -- critest v1.26.1's Linux images, pkg/validate and
# pkg/framework; the digest-pinned test-image-digest cannot be stood in (its digest is the original's)
IMAGES = [
    ([SANDBOX], [PAUSE], {}, {}),
    ([E2E + "busybox:1.29-2"], ["sh"], {}, {}),
    ([E2E + "nonewprivs:1.3"], [NNP], {}, {}),
    ([E2E + "nginx:1.14-2"], web(80), {}, {}),
    ([E2E + "httpd:2.4.39-4"], web(80, "AH00094: Command line: 'httpd -D FOREGROUND'"), {}, {}),
    ([CRI_TOOLS + "hostnet-nginx-amd64:latest"], web(12003), {}, {}),
    ([CRI_TOOLS + "test-image-user-uid:latest"], ["sh"], {"User": "1002"}, {}),
    ([CRI_TOOLS + "test-image-user-username:latest"], ["sh"], {"User": "www-data"}, {}),
    ([CRI_TOOLS + "test-image-user-uid-group:latest"], ["sh"], {"User": "1003:users"}, {}),
    ([CRI_TOOLS + "test-image-user-username-group:latest"], ["sh"], {"User": "www-data:users"}, {}),
    ([CRI_TOOLS + "test-image-predefined-group:latest"], ["sh"], {"User": "1000"},
     {"etc/passwd": PASSWD + "default-user:x:1000:1000::/home/default-user:/bin/sh\n",
      "etc/group": GROUP + "default-user:x:1000:\ngroup-defined-in-image:x:50000:default-user\n"}),
    ([CRI_TOOLS + "test-image-latest:latest", CRI_TOOLS + "test-image-tag:test", CRI_TOOLS + "test-image-tag:all"],
     ["sh"], {}, {"test-image": "latest\n"}),
    ([CRI_TOOLS + "test-image-1:latest"], ["sh"], {}, {"test-image": "1\n"}),
    ([CRI_TOOLS + "test-image-2:latest"], ["sh"], {}, {"test-image": "2\n"}),
    ([CRI_TOOLS + "test-image-3:latest"], ["sh"], {}, {"test-image": "3\n"}),
    ([CRI_TOOLS + "test-image-tags:1", CRI_TOOLS + "test-image-tags:2", CRI_TOOLS + "test-image-tags:3"],
     ["sh"], {}, {"test-image": "tags\n"}),
]

MIRRORS = "".join('\n[plugins."io.containerd.grpc.v1.cri".registry.mirrors."%s"]\n  endpoint = ["http://%s"]\n'
                  % (host, REGISTRY) for host in ("registry.k8s.io", "gcr.io"))


# busybox-static (Debian's) has neither pgrep nor ipcs, which critest runs in its busybox image
PGREP = """#!/bin/sh
# pgrep NAME: the pids whose command name contains NAME (critest's stand-in image)
st=1
for d in /proc/[0-9]*; do
  read -r c < "$d/comm" 2>/dev/null || continue
  case "$c" in *"$1"*) [ "${d#/proc/}" = "$$" ] || { echo "${d#/proc/}"; st=0; };; esac
done
exit $st
"""
IPCS = """#!/bin/sh
# ipcs -m: the IPC namespace's shared memory segments, key and id (critest's stand-in image)
echo; echo "------ Shared Memory Segments --------"; echo "key        shmid      owner      perms      bytes"
tail -n +2 /proc/sysvipc/shm | while read -r key id perms size rest; do echo "$key $id $perms $size"; done
"""
NGINX = """#!/bin/sh
# nginx 'master process' PORT: busybox httpd on PORT serving nginx's welcome page, this process named
# nginx (pidof), its pid in /var/run/nginx.pid and "master process" in its command line, as nginx's
# master; a TERM ends it (critest's stand-in image)
echo $$ > /var/run/nginx.pid
mkdir -p /tmp/www && echo '<h1>Welcome to nginx!</h1>' > /tmp/www/index.html
httpd -p "$2" -h /tmp/www || exit 1
trap 'exit 0' TERM
while :; do sleep 1; done
"""
PAUSE_C = r"""#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int s) { (void)s; exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
    signal(SIGINT, quit); signal(SIGTERM, quit); signal(SIGCHLD, reap);
    for (;;) pause();
}
"""
NNP_C = r"""#include <stdio.h>
#include <unistd.h>
int main(void) { printf("Effective uid: %d\n", (int)geteuid()); return 0; }
"""


def busybox_rootfs(path, files, prog=None, progs=None):
    """busybox-static with every applet it has hard-linked in /bin (as busybox's image: a masked
    applet is that path alone), pgrep, ipcs and nginx as scripts, busybox's /etc/passwd and /etc/group,
    `files` added; prog: one of `progs` (path in the image: the host's file) added, nnp set-uid root
    (the nonewprivs image's), pause (the sandbox's: not a sleep, which critest's pgrep would find)."""
    for d in ("bin", "etc", "proc", "dev", "sys", "tmp", "root", "var/www", "var/run", "home", "usr/local/bin"):
        os.makedirs(os.path.join(path, d))
    os.chmod(os.path.join(path, "tmp"), 0o1777)
    bb = os.path.join(path, "bin", "busybox")
    shutil.copy2(BUSYBOX, bb)
    applets = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True, check=True).stdout.split()
    for a in applets:
        if a != "busybox":
            os.link(bb, os.path.join(path, "bin", a))
    for d in ("sbin", "usr/bin", "usr/sbin"):
        os.symlink("/bin", os.path.join(path, d))
    files = dict({"etc/passwd": PASSWD, "etc/group": GROUP, "bin/pgrep": PGREP, "bin/ipcs": IPCS,
                  "bin/nginx": NGINX}, **files)
    for name, text in files.items():
        with open(os.path.join(path, name), "w") as f:
            f.write(text)
    for s in ("pgrep", "ipcs", "nginx"):
        os.chmod(os.path.join(path, "bin", s), 0o755)
    if prog:
        shutil.copy2(progs[prog], path + prog)
        os.chmod(path + prog, 0o4755 if prog == NNP else 0o755)


def program(work, name, text):
    """A static program of the stand-in images (gcc -static, the host's glibc)."""
    src = os.path.join(work, name + ".c")
    with open(src, "w") as f:
        f.write(text)
    subprocess.run(["cc", "-static", "-O2", "-o", os.path.join(work, name), src], check=True)
    return os.path.join(work, name)


def in_netns(netns, argv, **kw):
    return subprocess.run(["nsenter", "--net=/run/netns/" + netns] + argv, **kw)


def push_images(work, netns):
    """The stand-in images, pushed to the registry on the namespace's loopback under their references'
    repositories (the mirrors strip the registry's host name)."""
    progs = {NNP: program(work, "nnp", NNP_C), PAUSE: program(work, "pause", PAUSE_C)}
    for n, (refs, cmd, config, files) in enumerate(IMAGES):
        rootfs = os.path.join(work, "img%d" % n)
        busybox_rootfs(rootfs, files, cmd[0] if cmd[0] in progs else None, progs)
        tar = rootfs + ".tar"
        write_oci_image(tar, rootfs, refs[0], cmd, dict({"Env": [PATH]}, **config))
        shutil.rmtree(rootfs)
        for ref in refs:
            repo = ref.split("/", 1)[1]
            r = in_netns(netns, ["skopeo", "copy", "-q", "--dest-tls-verify=false", "oci-archive:" + tar,
                                 "docker://%s/%s" % (REGISTRY, repo)], capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                raise AssertionError("skopeo copy %s: %s" % (ref, r.stderr))


def start_registry(work, netns):
    conf = os.path.join(work, "registry.yml")
    with open(conf, "w") as f:
        f.write("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s/registry\n"
                "  delete:\n    enabled: true\nhttp:\n  addr: %s\n" % (work, REGISTRY))
    log = open(os.path.join(work, "registry.log"), "wb")
    p = subprocess.Popen(["nsenter", "--net=/run/netns/" + netns, "docker-registry", "serve", conf],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    log.close()

    def up():
        return in_netns(netns, ["curl", "-sf", "-o", "/dev/null", "http://%s/v2/" % REGISTRY],
                        capture_output=True).returncode == 0
    if not wait_until(lambda: p.poll() is None and up(), 30):
        stop(p)
        raise AssertionError("the registry did not start: " + open(os.path.join(work, "registry.log")).read())
    return p


def stop(p):
    stop_process(p, 30)


def results(junit):
    """{spec: passed|failed|skipped} from ginkgo's JUnit report."""
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        name = tc.get("name")
        if name.startswith("[BeforeSuite]") or name.startswith("[AfterSuite]") or name.startswith("[SynchronizedB"):
            key = "failed" if tc.find("failure") is not None or tc.find("error") is not None else None
            if key:
                out[name] = key
            continue
        name = name[len("[It] "):] if name.startswith("[It] ") else name
        if tc.find("skipped") is not None:
            out[name] = "skipped"
        elif tc.find("failure") is not None or tc.find("error") is not None:
            out[name] = "failed"
        else:
            out[name] = "passed"
    return out


def run_critest(critest, cri, netns, out, handler, tmp):
    """critest with `handler`; its temporary directories (pod logs, hostPath volumes) under `tmp`."""
    junit = os.path.join(out, handler + ".junit.xml")
    t0 = time.time()
    with open(os.path.join(out, handler + ".log"), "wb") as log:
        r = in_netns(netns, [critest, "--runtime-endpoint", "unix://" + cri.sock, "--image-endpoint",
                             "unix://" + cri.sock, "--runtime-handler", handler, "--ginkgo.succinct",
                             "--ginkgo.no-color", "--ginkgo.junit-report=" + junit, "--config", "/dev/null"],
                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=3600, cwd=out,
                     env=dict(os.environ, TMPDIR=tmp))
    res = results(junit)
    with open(os.path.join(out, handler + ".results"), "w") as f:
        for name in sorted(res):
            f.write("%s\t%s\n" % (res[name], name))
    counts = {k: sum(1 for v in res.values() if v == k) for k in ("passed", "failed", "skipped")}
    print("critest %s: %d passed, %d failed, %d skipped (exit %d, %d s)" % (
        handler, counts["passed"], counts["failed"], counts["skipped"], r.returncode, time.time() - t0))
    sys.stdout.flush()


def main():
    critest, out, handlers = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2]), sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    netns = "mxccrit%d" % os.getpid()
    work = tempfile.mkdtemp(prefix="mxc-critest-", dir="/var/tmp")
    subprocess.run(["ip", "netns", "add", netns], check=True)
    reg = None
    try:
        in_netns(netns, ["ip", "link", "set", "lo", "up"], check=True)
        reg = start_registry(work, netns)
        push_images(work, netns)
        with cri_node(netns, gateway=True, portmap=True, extra_toml=MIRRORS, sandbox_image=SANDBOX) as cri:
            for h in handlers:
                tmp = os.path.join(work, "tmp-" + h)
                os.makedirs(tmp)
                run_critest(critest, cri, netns, out, h, tmp)
                cri.pods_netns += pods_netns(cri)
    finally:
        if reg is not None:
            stop(reg)
        subprocess.run(["ip", "netns", "del", netns], check=False)
        # critest's mount propagation specs mount under their hostPath (in work) and do not unmount
        # when they fail
        with open("/proc/self/mountinfo") as f:
            left = [line.split()[4] for line in f if line.split()[4].startswith(work + "/")]
        for m in reversed(left):
            subprocess.run(["umount", "-l", m], check=False)
        shutil.rmtree(work, ignore_errors=True)
        if left:
            print("critest: %d mount(s) critest left under its hostPath volumes, unmounted" % len(left))


def pods_netns(cri):
    """The network namespaces of the pods critest left (cri_node removes the pods and checks them)."""
    import json
    paths = []
    for p in cri.rt.ListPodSandbox(cri.pb.ListPodSandboxRequest(), timeout=30).items:
        try:
            info = json.loads(cri.pod_status(p.id).info["info"])
            paths += [n["path"] for n in info["runtimeSpec"]["linux"]["namespaces"]
                      if n["type"] == "network" and n.get("path")]
        except Exception:  # noqa: BLE001 -- removed meanwhile
            pass
    return paths


if __name__ == "__main__":
    main()
