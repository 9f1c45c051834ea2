"""root.path is an image's, never a host directory (issue 34, finding 1; docs/oci.md "Which root.path
is admitted", src/oci/rootfs.h).  The rootfs is attached idmapped with the disk's 0 under the
container's root: a host directory there would be host root's files in the container's hands.
Each shape of the attack — an absolute host directory, a `rootfs` symlink to one, "../x", mxc's
own state — is refused with a message naming why, and nothing of the host is read or written.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_rootfs_escape.py
"""
import json
import os

import pytest

from test_oci import BUSYBOX, CLAIMS, make_rootfs, oci  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")

# what the workload tries on the directory it was given: read root's 0600 secret, leave a root file
ATTACK = "cat /secret; echo planted > /planted; ls -ln /planted"


def host_dir(oci, name="hostdir"):
    """A host directory that looks like a rootfs, with a 0600 root-owned secret in it."""
    d = os.path.join(oci.base, name)
    make_rootfs(d)
    with open(os.path.join(d, "secret"), "w") as f:
        f.write("host-secret\n")
    os.chmod(os.path.join(d, "secret"), 0o600)
    return d


def attack(oci, root_path, cid, prepare=None):
    def mut(c):
        c["root"]["path"] = root_path
    b = oci.bundle(["sh", "-c", ATTACK], mut, readonly=False)
    if prepare:
        prepare(b)
    rc, out, err = oci("run", "--bundle", b, cid)
    return rc, out, err


def untouched(d):
    assert not os.path.exists(os.path.join(d, "planted")), "the container wrote into the host directory"


def test_absolute_host_directory_is_refused(oci):  # noqa: F811
    d = host_dir(oci)
    rc, out, err = attack(oci, d, "rf1")
    assert rc != 0 and "host-secret" not in out, (rc, out, err)
    assert "root.path %s: an absolute path outside the bundle and outside the operator's storage roots" % d in err, err
    untouched(d)


def test_absolute_etc_is_refused(oci):  # noqa: F811
    rc, out, err = attack(oci, "/etc", "rf2")
    assert rc != 0 and "root:" not in out and "outside the bundle" in err, (rc, out, err)
    assert not os.path.exists("/etc/planted")


def test_rootfs_symlink_to_a_host_directory_is_refused(oci):  # noqa: F811
    d = host_dir(oci)

    def swap(b):
        os.rename(os.path.join(b, "rootfs"), os.path.join(b, "rootfs.real"))
        os.symlink(d, os.path.join(b, "rootfs"))
    rc, out, err = attack(oci, "rootfs", "rf3", swap)
    assert rc != 0 and "host-secret" not in out, (rc, out, err)
    assert "root.path rootfs: resolved beneath the bundle: a symbolic link on the way" in err, err
    untouched(d)


def test_rootfs_through_a_symlinked_directory_is_refused(oci):  # noqa: F811
    """A link anywhere on the way, not only the last component."""
    d = host_dir(oci)
    rc, out, err = attack(oci, "via/.", "rf4", lambda b: os.symlink(d, os.path.join(b, "via")))
    assert rc != 0 and "a symbolic link on the way" in err, (rc, out, err)
    untouched(d)


@pytest.mark.parametrize("rel", ["../hostdir", "rootfs/../../hostdir"])
def test_dotdot_out_of_the_bundle_is_refused(oci, rel):  # noqa: F811
    d = host_dir(oci)
    rc, out, err = attack(oci, rel, "rf5")
    assert rc != 0 and "host-secret" not in out, (rc, out, err)
    assert "root.path %s: resolved beneath the bundle: it leads out" % rel in err, err
    untouched(d)


def test_absolute_path_through_the_bundle_that_leads_out_is_refused(oci):  # noqa: F811
    d = host_dir(oci)
    b_next = os.path.join(oci.base, "bundle%d" % (oci.n + 1))
    rc, out, err = attack(oci, b_next + "/../hostdir", "rf6")
    assert rc != 0 and "it leads out" in err, (rc, out, err)
    untouched(d)


def test_mxc_s_own_state_is_refused(oci, monkeypatch):  # noqa: F811
    """/var/lib/mxc (the range claims) as the rootfs: refused outright, and still refused when the
    operator's storage roots are (wrongly) made to cover it."""
    os.makedirs(CLAIMS, exist_ok=True)
    rc, out, err = attack(oci, "/var/lib/mxc", "rf7")
    assert rc != 0 and "outside the bundle" in err, (rc, out, err)
    monkeypatch.setenv("MXC_OCI_ROOTFS_ROOTS", "/var/lib")
    rc, out, err = attack(oci, "/var/lib/mxc", "rf8")
    assert rc != 0 and "root.path /var/lib/mxc" in err and "claims" in err, (rc, out, err)
    assert not os.path.exists("/var/lib/mxc/planted")
    assert not os.path.exists(os.path.join(CLAIMS, "planted"))


def test_absolute_path_inside_the_bundle_runs(oci):  # noqa: F811
    """containerd and hand-made bundles: an absolute root.path inside the bundle is resolved beneath it."""
    b = oci.bundle(["echo", "in-bundle"])
    with open(os.path.join(b, "config.json")) as f:
        c = json.load(f)
    c["root"]["path"] = os.path.join(b, "rootfs")
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f)
    rc, out, err = oci("run", "--bundle", b, "rf9")
    assert rc == 0 and out.strip() == "in-bundle", (rc, out, err)


def test_a_listed_storage_root_admits_what_is_beneath_it(oci, monkeypatch):  # noqa: F811
    """The operator's list (MXC_OCI_ROOTFS_ROOTS): beneath a root-owned, root-only-writable storage
    root the image's directory runs; the storage root itself, a path leading out of it, and a storage
    root others can write are refused."""
    store = os.path.join(oci.base, "storage")
    os.makedirs(store, mode=0o700)
    img = host_dir(oci, "storage/vfs/dir/abc")
    monkeypatch.setenv("MXC_OCI_ROOTFS_ROOTS", "/nonexistent:" + store)
    rc, out, err = attack(oci, img, "rf10")
    assert rc == 0 and "host-secret" in out, (rc, out, err)   # the image's own file, its own root
    os.unlink(os.path.join(img, "planted"))
    rc, out, err = attack(oci, store, "rf11")
    assert rc != 0 and "outside the operator's storage roots" in err, (rc, out, err)
    rc, out, err = attack(oci, store + "/vfs/../..", "rf12")
    assert rc != 0 and "beneath the storage root %s: it leads out" % store in err, (rc, out, err)
    os.chmod(store, 0o777)
    rc, out, err = attack(oci, img, "rf13")
    assert rc != 0 and "is not a directory root's alone" in err, (rc, out, err)
    untouched(img)


def test_a_rootfs_beneath_a_directory_anyone_can_write_is_refused(oci):  # noqa: F811
    """A bundle (or a directory on the way) that anyone can write, /tmp's kind, holds what others
    made — a root service's private directory among them: "inside the bundle" proves nothing there."""
    host_dir(oci, "shared/private")        # root's, as a service's private directory would be
    os.chmod(os.path.join(oci.base, "shared"), 0o1777)
    moved = []

    def into(b):
        os.rename(os.path.join(oci.base, "shared"), os.path.join(b, "shared"))
        moved.append(os.path.join(b, "shared", "private"))
    rc, out, err = attack(oci, "shared/private", "rf14", into)
    assert rc != 0 and "host-secret" not in out, (rc, out, err)
    assert "root.path shared/private: resolved beneath the bundle: a directory on the way is writable by everyone " \
           "(mode 1777)" in err, err
    untouched(moved[0])
    rc, out, err = attack(oci, "rootfs", "rf15", lambda b: os.chmod(b, 0o1777))
    assert rc != 0 and "writable by everyone" in err, (rc, out, err)
