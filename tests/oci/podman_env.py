"""One Podman 4.3 of a test's own, for tests/oci/test_podman*.py: its storage, run and tmp
directories and a containers.conf under a fresh directory in /var/tmp; mxc-oci declared as the
runtime named crun (Podman 4.3 grants --cgroups=disabled only to runtimes it knows by name: see
docs/oci.md "Podman"); a busybox-static image imported as localhost/mxc-bb:1 (nothing pulled);
everything removed at the end.  The runtime keeps its default --root, /run/mxc-oci (Podman's
cleanup process calls `delete` without --runtime-flag options)."""
import os
import shutil
import subprocess
import tempfile

from test_oci import MXC_OCI, make_rootfs

IMAGE = "localhost/mxc-bb:1"


def session(prefix, driver, no_pids_limit, in_base=False):
    """A generator for a module fixture: yields p(*args, timeout=120, check=True), which runs this
    Podman, with p.base, p.cmd and p.env; in_base: in its base directory (conmon leaves an "oom"
    file in its working directory when a container is OOM-killed)."""
    base = tempfile.mkdtemp(prefix=prefix, dir="/var/tmp")
    conf = os.path.join(base, "containers.conf")
    with open(conf, "w") as f:
        f.write('[containers]\ndefault_sysctls = []\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n'
                + ('pids_limit = 0\n' if no_pids_limit else '')
                + '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
                # the operator lists this Podman's storage root as one whose images mxc-oci may take as
                # root.path (src/oci/rootfs.h); conmon hands the runtime only the environment named here
                'conmon_env_vars = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", '
                '"MXC_OCI_ROOTFS_ROOTS=%s"]\n' % os.path.join(base, "storage")
                + 'runtime = "crun"\n[engine.runtimes]\ncrun = ["%s"]\n' % MXC_OCI)
    env = dict(os.environ, CONTAINERS_CONF=conf, MXC_OCI_ROOTFS_ROOTS=os.path.join(base, "storage"))
    cmd = ["podman", "--root", os.path.join(base, "storage"), "--runroot", os.path.join(base, "run"),
           "--tmpdir", os.path.join(base, "tmp"), "--storage-driver", driver]

    def p(*args, timeout=120, check=True):
        r = subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=timeout,
                           stdin=subprocess.DEVNULL, cwd=base if in_base else None)
        if check:
            assert r.returncode == 0, r.stdout + r.stderr
        return r
    p.base, p.cmd, p.env = base, cmd, env
    rootfs = os.path.join(base, "rootfs")
    make_rootfs(rootfs)
    tar = os.path.join(base, "bb.tar")
    subprocess.run(["tar", "-C", rootfs, "-cf", tar, "."], check=True)
    p("import", tar, IMAGE)
    try:
        yield p
    finally:
        p("rm", "-af", "-t", "0", check=False)
        p("rmi", "-af", check=False)
        shutil.rmtree(base, ignore_errors=True)


def gone(cid):
    """mxc-oci's state of the container is gone (Podman's cleanup deleted it)."""
    return not os.path.exists(os.path.join("/run/mxc-oci", cid))
