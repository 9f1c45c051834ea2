"""Nothing a workload writes is privileged on the host (issue 34, finding 2; docs/oci.md
"Capabilities", docs/security.md).

The rootfs is attached idmapped, the container's 0 onto disk 0, so what the container's root
writes is root's on disk. The finding: with Podman's default capabilities (CAP_SETFCAP among them)
the workload wrote security.capability (cap_setuid,cap_setgid) on a copy of a binary; the kernel
stored it with its rootid mapped to disk 0 — a plain capability of a 0:0 file — and uid 65534 on
the host ran the copy holding cap_setuid. The decision: file capabilities and set-id bits are
impossible to create. CAP_SETFCAP is accepted in config.json (every engine's default set names
it) and never held, by the init, an exec (--cap too), or a createContainer hook; set-id modes are
refused by the engine's seccomp baseline, which answers before a config's own profile.

Every test: the workload tries every way (the helper's `fcaps` and `setid` verbs, busybox's chmod
4755, chmod g+s on a directory, setcap when the image has it), then the host looks: no file under
the rootfs / upper layer / grant has a security.capability or a set-id bit it did not have, and a
host uid 65534 running the workload's copy of a binary holds no capability. ACLs are set (the
owner may): they change no set-id bit, add no capability, and grant only access to that file.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_fcaps.py
"""
import hashlib
import json
import os
import shutil
import stat
import struct
import subprocess
import tempfile

import pytest

from conftest import errno_of, h, verb_result
from test_oci import BUSYBOX, MXC_OCI, PODMAN_CAPS, add_helper, make_rootfs, oci  # noqa: F401 (oci: the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK)
                                or not shutil.which("setpriv"),
                                reason="needs root, busybox-static and setpriv")

CAP_SETFCAP = 31

# The workload's attempts, in a container whose image has /bin/mxc-test-helper: a copy of busybox
# (the finding's copied binary) given file capabilities every way, ACLs, set-id modes every way.
# The host's setcap (libcap) and install (coreutils) are copied into the image when the host has them.
ATTEMPTS = ("cat /bin/busybox > /w/busybox; chmod 755 /w/busybox; mkdir -p /w/d /w/s /w/g; "
            "if [ -x /bin/setcap ]; then setcap cap_setuid,cap_setgid+ep /w/busybox; echo setcap=$?; fi; "
            "if [ -x /bin/install ]; then install -m 6755 /bin/busybox /w/inst; echo install=$?; fi; "
            "/bin/mxc-test-helper fcaps /w/busybox /w/d; /bin/mxc-test-helper setid /w/s; "
            "cat /bin/busybox > /w/su; chmod 4755 /w/su; echo chmod4755=$?; chmod g+s /w/g; echo chmodgs=$?; "
            "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status")
TOOLS = [t for t in ("setcap", "install") if shutil.which(t)]


def add_tools(rootfs):
    """The host's setcap and install and the libraries they load, into rootfs/bin and their paths."""
    for t in TOOLS:
        path = os.path.realpath(shutil.which(t))
        libs = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
        for lib in [w for w in libs.split() if w.startswith("/")]:
            dst = os.path.join(rootfs, lib.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.realpath(lib), dst)
        shutil.copy2(path, os.path.join(rootfs, "bin", t))


def snapshot(root):
    """{path: (set-id bits, security.capability or None)} of everything under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in [""] + dirnames + filenames:
            p = os.path.join(dirpath, n) if n else dirpath
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                continue
            try:
                cap = os.getxattr(p, "security.capability", follow_symlinks=False)
            except OSError:
                cap = None
            out[p] = (st.st_mode & (stat.S_ISUID | stat.S_ISGID), cap)
    return out


def new_privileged(before, after):
    """Paths that gained a set-id bit or a file capability between two snapshots."""
    return sorted(p for p, (setid, cap) in after.items()
                  if (setid and setid != before.get(p, (0, None))[0])
                  or (cap is not None and cap != before.get(p, (0, None))[1]))


def nobody_runs(binary):
    """What a host uid 65534 holds running `binary` (a busybox copy): its Cap* lines."""
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary, "grep", "-E",
                        "^Cap(Prm|Eff):", "/proc/self/status"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return dict(l.split(":\t") for l in r.stdout.splitlines())


def caps_of(out):
    return {k: int(v, 16) for k, v in (l.split(":\t") for l in out.splitlines() if l.startswith("Cap"))}


def assert_refused(out):
    """The workload's view: every file capability refused, every set-id mode refused, ACLs
    harmless; its own capability sets without CAP_SETFCAP."""
    for verb in ("fcaps_v2", "fcaps_v3", "fcaps_trusted"):
        assert errno_of(out, verb) == "EPERM", (verb, out)
    assert verb_result(out, "fcaps_scan") == "none", out
    # ACLs: the owner may set them; the mode bits they leave carry no set-id bit
    assert errno_of(out, "acl_access") == "ok" and errno_of(out, "acl_default") == "ok", out
    assert int(verb_result(out, "acl_mode"), 8) & 0o6000 == 0, out
    assert int(verb_result(out, "acl_child_mode"), 8) & 0o6000 == 0, out
    for verb in ("setid_chmod", "setid_fchmod", "setid_fchmodat", "setid_open", "setid_openat", "setid_creat",
                 "setid_mknod", "setid_mknodat", "setid_mkdir", "setid_tmpfile"):
        assert errno_of(out, verb) == "EPERM", (verb, out)
    assert verb_result(out, "setid_scan") == "none", out
    assert "chmod4755=1" in out and "chmodgs=1" in out, out
    if "setcap" in TOOLS:
        assert "setcap=" in out and "setcap=0" not in out, out
    if "install" in TOOLS:
        assert "install=1" in out, out
    for k, v in caps_of(out).items():
        assert not v & (1 << CAP_SETFCAP), (k, out)


def assert_host_clean(root, before, copy):
    """The host's view of what the workload left under root."""
    held = nobody_runs(copy)
    gained = (new_privileged(before, snapshot(root)), int(held["CapPrm"], 16), int(held["CapEff"], 16))
    assert gained == ([], 0, 0), gained
    # the access ACL's grant is on that file alone: it names 65534, a container uid mapped to disk
    # 65534 through the rootfs's idmapping, and the file is the container's own
    acl = os.getxattr(copy, "system.posix_acl_access")
    named = [int.from_bytes(acl[i + 4:i + 8], "little") for i in range(4, len(acl), 8)
             if int.from_bytes(acl[i:i + 2], "little") in (0x02, 0x08)]  # ACL_USER, ACL_GROUP
    assert named == [65534], named
    assert not os.stat(copy).st_mode & 0o6000


def podman_caps(c):
    c["process"]["capabilities"] = {k: list(PODMAN_CAPS) for k in ("bounding", "effective", "permitted")}


def with_helper(oci, args, mutate, readonly=False):
    b = oci.bundle(args, mutate, readonly=readonly)
    add_helper(b)
    add_tools(os.path.join(b, "rootfs"))
    os.makedirs(os.path.join(b, "rootfs", "w"))
    for d in (b, os.path.join(b, "rootfs")):
        os.chmod(d, 0o755)  # a host uid 65534 reaches the copy (the finding's shape)
    os.chmod(oci.base, 0o755)
    return b


# --------------------------------------------------------------------------------------------
# a hand-made bundle: the finding as reported


def test_bundle_podman_default_caps_leave_no_file_capability(oci):
    b = with_helper(oci, ["sh", "-c", ATTEMPTS], podman_caps)
    before = snapshot(os.path.join(b, "rootfs"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert_host_clean(os.path.join(b, "rootfs"), before, os.path.join(b, "rootfs", "w", "busybox"))
    assert_refused(out)
    # the rest of Podman's set is held: CAP_SETUID, CAP_CHOWN, ... (bits 0-30 asked, 31 withheld)
    eff = caps_of(out)["CapEff"]
    assert eff & (1 << 7) and eff & (1 << 0), out


def test_setfcap_is_never_held_whatever_the_config_asks(oci):
    """Asked in every set, ambient and inheritable too: accepted (Podman's defaults must run), held
    in none; the features say so; create prints nothing about it."""
    def every_set(c):
        c["process"]["capabilities"] = {k: ["CAP_SETFCAP", "CAP_SETUID"] for k in
                                        ("bounding", "effective", "permitted", "inheritable", "ambient")}
        c["process"]["user"] = {"uid": 1000, "gid": 1000}
    b = with_helper(oci, ["sh", "-c", "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status"], every_set)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0 and err == "", err
    caps = caps_of(out)
    assert set(caps) == {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}, out
    for k, v in caps.items():
        assert v == 1 << 7, (k, out)  # CAP_SETUID alone, through the uid change (ambient)
    rc, out, _ = oci("features")
    f = json.loads(out)
    assert rc == 0 and "CAP_SETFCAP" not in f["linux"]["capabilities"]
    assert "CAP_SETFCAP" in f["annotations"]["io.github.mxc.capabilities.withheld"]


def test_exec_with_cap_setfcap_holds_none(oci):
    b = with_helper(oci, ["sleep", "1000"], podman_caps)
    before = snapshot(os.path.join(b, "rootfs"))
    with open(os.path.join(b, "out"), "wb") as o:
        rc, _, err = oci("run", "--detach", "--bundle", b, "c1", out=o)
    assert rc == 0, err
    rc, out, err = oci("exec", "--cap", "CAP_SETFCAP", "c1", "sh", "-c", ATTEMPTS)
    assert rc == 0, err
    proc = os.path.join(oci.base, "process.json")
    with open(proc, "w") as f:
        json.dump({"args": ["sh", "-c", "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status"],
                   "cwd": "/", "env": ["PATH=/bin"], "user": {"uid": 0, "gid": 0},
                   "capabilities": {k: ["CAP_SETFCAP"] for k in
                                    ("bounding", "effective", "permitted", "inheritable", "ambient")}}, f)
    rc, out2, err = oci("exec", "--process", proc, "c1")
    assert rc == 0, err
    oci("kill", "c1", "KILL")
    assert_host_clean(os.path.join(b, "rootfs"), before, os.path.join(b, "rootfs", "w", "busybox"))
    assert_refused(out)
    for k, v in caps_of(out2).items():
        assert not v & (1 << CAP_SETFCAP), (k, out2)


def test_set_id_modes_refused_under_a_config_s_own_profile(oci):
    """A config's seccomp profile that allows everything, loaded after the baseline: the baseline
    answers first, and still refuses every set-id mode."""
    def allow_all(c):
        podman_caps(c)
        c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
                                 "syscalls": [{"names": ["chmod", "fchmod", "fchmodat", "open", "openat", "mknod",
                                                         "mknodat", "mkdir", "mkdirat", "creat", "setxattr",
                                                         "fsetxattr", "lsetxattr"], "action": "SCMP_ACT_ALLOW"}]}
    b = with_helper(oci, ["sh", "-c", ATTEMPTS], allow_all)
    before = snapshot(os.path.join(b, "rootfs"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert_host_clean(os.path.join(b, "rootfs"), before, os.path.join(b, "rootfs", "w", "busybox"))
    assert_refused(out)


def test_create_container_hook_holds_no_setfcap(oci):
    """A createContainer hook runs in the container's namespaces as its root (before pivot_root):
    it holds the container's capabilities, never CAP_SETFCAP."""
    hookdir = tempfile.mkdtemp(prefix="mxc-oci-fcaps-", dir="/run")
    try:
        os.chmod(hookdir, 0o755)
        cc = os.path.join(hookdir, "cc.sh")
        with open(cc, "w") as f:
            f.write("#!/bin/sh\ncat >/dev/null; grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status > ./cc-caps\n")
        os.chmod(cc, 0o755)

        def hook(c):
            podman_caps(c)
            c["hooks"] = {"createContainer": [{"path": cc}]}
        b = with_helper(oci, ["true"], hook)
        rc, _, err = oci("run", "--bundle", b, "c1")
        assert rc == 0, err
        with open(os.path.join(b, "rootfs", "cc-caps")) as f:
            caps = caps_of(f.read())
        assert caps and all(not v & (1 << CAP_SETFCAP) for v in caps.values()), caps
    finally:
        shutil.rmtree(hookdir, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# engine sessions: a read-write grant of a root-owned directory


def test_engine_grant_gets_no_file_capability(sandbox, scratch):
    g = os.path.join(scratch, "g")
    os.makedirs(g)
    os.chmod(g, 0o755)  # root's, as a caller's project directory is
    before = snapshot(g)
    sb = sandbox(filesystem={"readwritePaths": [g]})
    setcap = "setcap cap_setuid,cap_setgid+ep %s/busybox; echo setcap=$?; " % g if shutil.which("setcap") else ""
    r = sb.run("cp %s %s/busybox && chmod 755 %s/busybox; mkdir %s/d %s/s; " % (BUSYBOX, g, g, g, g) + setcap
               + h("fcaps", g + "/busybox", g + "/d") + "; " + h("setid", g + "/s")
               + "; grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status")
    assert r.rc == 0, r.describe()
    out = r.stdout
    for verb in ("fcaps_v2", "fcaps_v3", "fcaps_trusted"):
        assert errno_of(out, verb) == "EPERM", (verb, out)
    assert verb_result(out, "fcaps_scan") == "none", out
    if setcap:
        assert "setcap=0" not in out, out
    assert verb_result(out, "setid_scan") == "none", out
    assert int(verb_result(out, "acl_mode"), 8) & 0o6000 == 0, out
    # the engine's workload holds no capability at all
    assert all(v == 0 for k, v in caps_of(out).items() if k != "CapBnd"), out
    held = nobody_runs(os.path.join(g, "busybox"))
    gained = (new_privileged(before, snapshot(g)), int(held["CapPrm"], 16), int(held["CapEff"], 16))
    assert gained == ([], 0, 0), gained


# --------------------------------------------------------------------------------------------
# engines' rootfs modes: Podman vfs and overlay, containerd's overlayfs snapshotter, each with its
# own default capabilities (CAP_SETFCAP among them); the image has the helper


def helper_rootfs(base, set_id=False):
    """A busybox rootfs with mxc-test-helper and a /w (base/hb/rootfs; set_id: base/hbs/rootfs,
    with the image's own set-id files, IMAGE_SET_ID: copies of busybox, root's)."""
    hb = os.path.join(base, "hbs" if set_id else "hb")
    make_rootfs(os.path.join(hb, "rootfs"))
    add_helper(hb)
    add_tools(os.path.join(hb, "rootfs"))
    os.makedirs(os.path.join(hb, "rootfs", "w"))
    if set_id:
        plant_set_id(os.path.join(hb, "rootfs"), fcap=False)  # an image tar carries no xattr here
    return os.path.join(hb, "rootfs")


def copied_out_and_run(paths, base):
    """Each of the workload's copies, copied out as commit/export/cp -a would (xattrs kept) to a
    place a host uid 65534 reaches, and run by it: what it holds."""
    assert paths, "the workload's copy is not in the storage"
    out = os.path.join(base, "out")
    os.makedirs(out, exist_ok=True)
    os.chmod(out, 0o755)
    held = []
    for i, p in enumerate(paths):
        dst = os.path.join(out, "busybox%d" % i)
        shutil.copy2(p, dst)  # copystat copies the xattrs, security.capability too
        os.rename(dst, os.path.join(out, "busybox"))
        h_ = nobody_runs(os.path.join(out, "busybox"))
        held.append((int(h_["CapPrm"], 16), int(h_["CapEff"], 16)))
    return held


def workload_copies(snap):
    return [p for p in snap if p.endswith("/w/busybox")]


@pytest.fixture(scope="module", params=["vfs", "overlay"])
def podman(request):
    if not shutil.which("podman"):
        pytest.skip("needs podman")
    import podman_env
    for p in podman_env.session("mxc-podman-fcaps-", request.param, no_pids_limit=True):
        rootfs = helper_rootfs(p.base)
        tar = os.path.join(p.base, "hb.tar")
        subprocess.run(["tar", "-C", rootfs, "-cf", tar, "."], check=True)
        p("import", tar, "localhost/mxc-bbh:1")
        tar = os.path.join(p.base, "hbs.tar")
        subprocess.run(["tar", "-C", helper_rootfs(p.base, True), "-cf", tar, "."], check=True)
        p("import", tar, "localhost/mxc-bbs:1")
        p.driver = request.param
        yield p


def test_podman_default_caps_leave_no_file_capability(podman):
    storage = os.path.join(podman.base, "storage")
    before = snapshot(storage)
    r = podman("run", "--name", "f1", "--network", "none", "--cgroups=disabled", "--tmpfs",
               "/sys/fs/cgroup:ro,notmpcopyup", "localhost/mxc-bbh:1", "sh", "-c", ATTEMPTS)
    try:
        after = snapshot(storage)
        held = copied_out_and_run(workload_copies(after), podman.base)
        gained = (new_privileged(before, after), held)
        assert gained == ([], [(0, 0)] * len(held)), gained
        assert_refused(r.stdout)
        if podman.driver == "overlay":  # the writes are in the container's upper layer
            upper = podman("inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", "f1").stdout.strip()
            assert os.path.exists(os.path.join(upper, "w", "busybox"))
    finally:
        podman("rm", "-f", "f1", check=False)


@pytest.fixture(scope="module")
def ctrd():
    import test_containerd
    if not all(shutil.which(x) for x in ("containerd", "ctr", "containerd-shim-runc-v2")):
        pytest.skip("needs containerd 1.6, ctr, containerd-shim-runc-v2")
    for c in test_containerd.ctrd.__wrapped__():
        tar = os.path.join(c.base, "hb.tar")
        test_containerd.write_oci_image(tar, helper_rootfs(c.base), "localhost/mxc-bbh:1")
        c("images", "import", "--snapshotter", "overlayfs", tar)
        tar = os.path.join(c.base, "hbs.tar")
        test_containerd.write_oci_image(tar, helper_rootfs(c.base, True), "localhost/mxc-bbs:1")
        c("images", "import", "--snapshotter", "overlayfs", tar)
        try:
            yield c
        finally:
            c("images", "rm", "localhost/mxc-bbh:1", check=False)
            c("images", "rm", "localhost/mxc-bbs:1", check=False)


def test_containerd_overlayfs_default_caps_leave_no_file_capability(ctrd):
    snaps = os.path.join(ctrd.base, "root", "io.containerd.snapshotter.v1.overlayfs")
    before = snapshot(snaps)
    cid = ctrd.cid()
    r = ctrd("run", *ctrd.run_args(MXC_OCI, snapshotter="overlayfs"), "localhost/mxc-bbh:1", cid, "sh", "-c",
             ATTEMPTS)
    try:
        after = snapshot(snaps)
        held = copied_out_and_run(workload_copies(after), ctrd.base)
        gained = (new_privileged(before, after), held)
        assert gained == ([], [(0, 0)] * len(held)), gained
        assert_refused(r.stdout)
    finally:
        ctrd("task", "delete", cid, check=False)
        ctrd("container", "rm", cid, check=False)


# --------------------------------------------------------------------------------------------
# a set-id or file-capability file the image already has, rewritten through a shared mapping (the
# kernel keeps set-id bits and security.capability on a page-fault write): each is bound read-only
# onto itself before the workload exists (src/base/setidscan.h)

# security.capability v2, effective, permitted cap_net_raw (13): a `setcap cap_net_raw+ep` ping
FCAP_NET_RAW = struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0)

MMAP_ATTEMPTS = ("H=/bin/mxc-test-helper; B='/bin/busybox'; $B ln /bin/hl /bin/hl2; echo ln=$?; "
                 "$B mv /bin/ren /bin/ren2; echo mv=$?; "
                 "$H mmapw /bin/su /bin/sg /bin/ping /usr/lib/deep/x /bin/hl2 /bin/ren2 /bin/hl /bin/ren; "
                 "$H mmapw -u /bin/up; $B rm -f /bin/su; echo rm=$?; $B mv /usr/lib/deep /usr/lib/deep2; "
                 "echo mvdir=$?")


def digests(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                if not os.path.islink(p):
                    with open(p, "rb") as fh:
                        out[p] = hashlib.sha256(fh.read()).hexdigest()
            except OSError:
                pass  # an earlier container's snapshot, being removed
    return out


def privileged(p):
    st = os.lstat(p)
    try:
        cap = os.getxattr(p, "security.capability", follow_symlinks=False)
    except OSError:
        cap = None
    return bool(st.st_mode & stat.S_ISUID or (st.st_mode & stat.S_ISGID and st.st_mode & stat.S_IXGRP) or cap)


IMAGE_SET_ID = (("bin/su", 0o4755), ("bin/sg", 0o2755), ("usr/lib/deep/x", 0o4755), ("bin/hl", 0o4755),
                ("bin/ren", 0o4755), ("bin/up", 0o4755))


def plant_set_id(r, fcap=True):
    """IMAGE_SET_ID under the rootfs r, and (fcap) a cap_net_raw /bin/ping."""
    os.makedirs(os.path.join(r, "usr", "lib", "deep"), exist_ok=True)
    for name, mode in IMAGE_SET_ID + ((("bin/ping", 0o755),) if fcap else ()):
        p = os.path.join(r, name)
        shutil.copy(BUSYBOX, p)
        os.chmod(p, mode)
        if name == "bin/ping":
            os.setxattr(p, "security.capability", FCAP_NET_RAW)


def assert_mmap_refused(out, files):
    for f in files:
        assert errno_of(out, "mmapw:" + f) == "EROFS", (f, out)
    assert errno_of(out, "mmapw:/bin/up") == "EACCES", out
    assert "ln=1" in out and "mv=1" in out and "rm=1" in out and "mvdir=1" in out, out


def rewritten_privileged(before, root):
    """Privileged files under root whose content is no file's of before (an engine's copy of the
    image made by the run — Podman's vfs — is new by path, not by content)."""
    after = digests(root)
    known = set(before.values())
    return [p for p in after if os.path.exists(p) and privileged(p) and after[p] not in known]


MMAP_FILES = ["/bin/su", "/bin/sg", "/usr/lib/deep/x", "/bin/hl", "/bin/ren"]


def test_podman_image_set_id_files_cannot_be_rewritten_through_mmap(podman):
    """The same through Podman (vfs: a copy; overlay: the open for write is refused before any
    copy-up): no privileged file anywhere in its storage was rewritten."""
    storage = os.path.join(podman.base, "storage")
    before = digests(storage)
    r = podman("run", "--name", "m1", "--network", "none", "--cgroups=disabled", "--tmpfs",
               "/sys/fs/cgroup:ro,notmpcopyup", "localhost/mxc-bbs:1", "sh", "-c", MMAP_ATTEMPTS)
    try:
        assert_mmap_refused(r.stdout, MMAP_FILES)
        assert rewritten_privileged(before, storage) == []
    finally:
        podman("rm", "-f", "m1", check=False)


def test_containerd_image_set_id_files_cannot_be_rewritten_through_mmap(ctrd):
    """The same through containerd's overlayfs snapshotter."""
    snaps = os.path.join(ctrd.base, "root", "io.containerd.snapshotter.v1.overlayfs")
    before = digests(snaps)
    cid = ctrd.cid()
    r = ctrd("run", *ctrd.run_args(MXC_OCI, snapshotter="overlayfs"), "localhost/mxc-bbs:1", cid, "sh", "-c",
             MMAP_ATTEMPTS)
    try:
        assert_mmap_refused(r.stdout, MMAP_FILES)
        assert rewritten_privileged(before, snaps) == []
    finally:
        ctrd("task", "delete", cid, check=False)
        ctrd("container", "rm", cid, check=False)


def test_bundle_image_set_id_files_cannot_be_rewritten_through_mmap(oci):
    """A read-write rootfs whose image has a 4755 root `su`, a 2755 `sg`, a cap_net_raw `ping` and
    a set-id file deep in /usr/lib: the container's root (Podman's default capabilities) opens none
    for write (EROFS, direct, after a hard link or a rename, or by an mprotect upgrade of a read-only
    mapping); it can neither unlink, rename nor hard-link them, nor rename the directory above one;
    on the host every privileged file is byte-for-byte the image's."""
    b = with_helper(oci, ["sh", "-c", MMAP_ATTEMPTS], podman_caps)
    r = os.path.join(b, "rootfs")
    plant_set_id(r)
    before = digests(r)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert_mmap_refused(out, ["/bin/su", "/bin/sg", "/bin/ping", "/usr/lib/deep/x", "/bin/hl", "/bin/ren"])
    assert rewritten_privileged(before, r) == [], out


def test_a_deep_chain_the_container_makes_does_not_refuse_its_next_create(oci):  # noqa: F811
    """A container writes a chain of 530 directories into its read-write rootfs (no privileged file
    anywhere); the next container of that rootfs (a restart) is created and runs: the init's walk
    binds what lies 512 levels down read-only instead of failing the create (review of this
    session's changes: root.path ELOOP, every later create of that rootfs)."""
    b = oci.bundle(["sh", "-c", "mkdir /chain && cd /chain && i=0; while [ $i -lt 530 ]; do mkdir d && cd d || exit 1; "
                    "i=$((i+1)); done"], readonly=False)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert oci("delete", "c1")[0] in (0, 1)
    rc, out, err = oci("run", "--bundle", b, "c2")
    assert rc == 0, err
