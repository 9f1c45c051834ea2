"""mxc-oci on an overlay rootfs (docs/oci.md "An overlay rootfs"): Podman's default storage and
containerd's snapshotter hand the runtime a rootfs that is an overlay mount, which cannot itself be
idmapped.  mxc-oci re-makes it for the container from the same layers, each an idmapped clone, and
refuses what it cannot re-make exactly.  The overlays here are made by the test on the host (lower =
a busybox rootfs owned by root on disk) and unmounted by it.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_overlay.py
"""
import json
import os
import subprocess

import pytest

from test_oci import BUSYBOX, CLAIMS, make_rootfs, oci  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")


@pytest.fixture
def ovl(oci):  # noqa: F811
    """ovl(opts, at=None, cwd=None): an overlay mounted at bundle/rootfs (or `at`) with the mount
    options `opts` ({lower}, {upper}, {work} filled), unmounted at the end."""
    mounted = []
    d = os.path.join(oci.base, "layers")
    os.makedirs(os.path.join(d, "c"))
    make_rootfs(os.path.join(d, "lower"))
    os.makedirs(os.path.join(d, "c", "upper"))
    os.makedirs(os.path.join(d, "c", "work"))

    def mount(bundle, opts, at=None, cwd=None):
        target = at or os.path.join(bundle, "rootfs")
        os.makedirs(target, exist_ok=True)
        o = opts.format(lower=os.path.join(d, "lower"), upper=os.path.join(d, "c", "upper"),
                        work=os.path.join(d, "c", "work"))
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o", o, target], check=True, cwd=cwd)
        mounted.append(target)
        return target
    mount.dir = d
    try:
        yield mount
    finally:
        for t in reversed(mounted):
            subprocess.run(["umount", "-l", t], check=False)


def bundle_on(oci, args, readonly=False):  # noqa: F811
    """A bundle whose rootfs directory is empty (the overlay goes over it)."""
    b = oci.bundle(args, readonly=readonly)
    subprocess.run(["rm", "-rf", os.path.join(b, "rootfs")], check=True)
    os.makedirs(os.path.join(b, "rootfs"))
    return b


def test_overlay_rootfs_is_remade_from_idmapped_layers(oci, ovl):  # noqa: F811
    b = bundle_on(oci, ["sh", "-c", "id -u; stat -c %u /bin/busybox; echo hi > /tmp/new; mkdir /made; "
                        "stat -c %u /tmp/new; cat /proc/self/uid_map"])
    ovl(b, "lowerdir={lower},upperdir={upper},workdir={work}")
    rc, out, err = oci("run", "--bundle", b, "ov1")
    assert rc == 0, err
    lines = out.split("\n")
    # root inside, the image's root-owned files look root's, and what root writes is root's inside
    assert lines[:3] == ["0", "0", "0"], out + err
    cid, hid, n = (int(x) for x in lines[3].split())
    assert (cid, n) == (0, 65536) and hid >= 2 ** 31
    # the write went to the upper layer, as the image's own ids on disk; the lower is untouched
    new = os.path.join(ovl.dir, "c", "upper", "tmp", "new")
    st = os.stat(new)
    assert (st.st_uid, st.st_gid) == (0, 0)
    assert open(new).read() == "hi\n"
    assert os.path.isdir(os.path.join(ovl.dir, "c", "upper", "made"))
    assert not os.path.exists(os.path.join(ovl.dir, "lower", "tmp", "new"))
    # and the host's own mount of that overlay sees it
    assert open(os.path.join(b, "rootfs", "tmp", "new")).read() == "hi\n"


def test_read_only_overlay_of_lower_layers_only(oci, ovl):  # noqa: F811
    b = bundle_on(oci, ["sh", "-c", "id -u; stat -c %u /bin/busybox; touch /x 2>&1 || echo refused"],
                  readonly=True)
    os.makedirs(os.path.join(ovl.dir, "l2", "etc"))
    with open(os.path.join(ovl.dir, "l2", "etc", "top"), "w") as f:
        f.write("top layer\n")
    ovl(b, "lowerdir=%s:{lower}" % os.path.join(ovl.dir, "l2"))
    rc, out, err = oci("run", "--bundle", b, "ov2")
    assert rc == 0, err
    assert out.split("\n")[:2] == ["0", "0"] and "refused" in out


def test_overlay_whose_layer_path_was_swapped_is_refused(oci, ovl):  # noqa: F811
    """The layers are re-opened by the paths the mount's options name: a path that now names
    another directory (renamed away, another put in its place) must not become the container's
    root."""
    b = bundle_on(oci, ["true"])
    ovl(b, "lowerdir={lower},upperdir={upper},workdir={work}")
    c = os.path.join(ovl.dir, "c")
    os.rename(os.path.join(c, "upper"), os.path.join(c, "upper.old"))
    os.makedirs(os.path.join(c, "upper"))
    rc, _, err = oci("run", "--bundle", b, "ov3")
    assert rc != 0 and "a layer path was changed" in err, err


def test_overlay_with_relative_layer_paths_is_refused(oci, ovl):  # noqa: F811
    """containers/storage mounts with paths relative to its own directory when the options are
    long: they were resolved in the mounter's working directory, which mxc-oci cannot know."""
    b = bundle_on(oci, ["true"])
    ovl(b, "lowerdir=lower,upperdir=c/upper,workdir=c/work", cwd=ovl.dir)
    rc, _, err = oci("run", "--bundle", b, "ov4")
    assert rc != 0 and "a relative layer path" in err and "lowerdir=lower" in err, err


def test_overlay_layer_of_mxc_s_own_state_is_refused(oci, ovl):  # noqa: F811
    """A layer is a host directory handed to the container as a bind source is: mxc's own state
    (the claims directory) is refused."""
    os.makedirs(CLAIMS, exist_ok=True)
    b = bundle_on(oci, ["true"])
    ovl(b, "lowerdir=%s:{lower}" % CLAIMS)
    rc, _, err = oci("run", "--bundle", b, "ov5")
    assert rc != 0 and "claims" in err, err


def test_root_path_inside_an_overlay_is_refused(oci, ovl, monkeypatch):  # noqa: F811
    """Only the root of an overlay mount can be re-made; a directory inside one is refused (reached
    as an engine's storage root would be: the test's base listed in MXC_OCI_ROOTFS_ROOTS)."""
    b = bundle_on(oci, ["true"])
    os.makedirs(os.path.join(ovl.dir, "l2"))
    merged = ovl(b, "lowerdir=%s:{lower}" % os.path.join(ovl.dir, "l2"), at=os.path.join(oci.base, "merged"))
    monkeypatch.setenv("MXC_OCI_ROOTFS_ROOTS", oci.base)
    with open(os.path.join(b, "config.json")) as f:
        c = json.load(f)
    c["root"]["path"] = os.path.join(merged, "etc")
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f)
    rc, _, err = oci("run", "--bundle", b, "ov6")
    assert rc != 0 and "not the root of its mount" in err, err
