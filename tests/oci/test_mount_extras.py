"""mxc-oci: a tmpfs mount's `tmpcopyup` (Podman asks it for --tmpfs) and linux.rootfsPropagation
(docs/oci.md "tmpcopyup and rootfsPropagation").

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_mount_extras.py
"""
import os
import re

import pytest

from test_oci import BUSYBOX, oci  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")


def tmpfs_at(dest, *opts):
    def m(c):
        c["mounts"].append({"destination": dest, "type": "tmpfs", "source": "tmpfs",
                            "options": ["nosuid", "nodev", "tmpcopyup", *opts]})
    return m


def test_tmpcopyup_copies_the_image_s_files_into_the_tmpfs(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", "cat /data/f; stat -c %u:%g:%a /data/f /data/d /data/suid; readlink /data/l; "
                    "echo new > /data/g && cat /data/g; grep ' /data ' /proc/self/mounts | cut -d' ' -f3"],
                   tmpfs_at("/data"))
    d = os.path.join(b, "rootfs", "data")
    os.makedirs(os.path.join(d, "d"))
    with open(os.path.join(d, "f"), "w") as f:
        f.write("from the image\n")
    os.chown(os.path.join(d, "f"), 1000, 1000)
    os.chmod(os.path.join(d, "d"), 0o750)
    with open(os.path.join(d, "suid"), "w") as f:
        f.write("x")
    os.chmod(os.path.join(d, "suid"), 0o4755)
    os.symlink("f", os.path.join(d, "l"))
    rc, out, err = oci("run", "--bundle", b, "t1")
    assert rc == 0, err
    assert out.split("\n")[:7] == ["from the image", "1000:1000:644", "0:0:750", "0:0:755", "f", "new", "tmpfs"], out
    # the write went to the tmpfs, not the image
    assert not os.path.exists(os.path.join(d, "g"))


def test_tmpcopyup_copies_links_as_links_never_following_them(oci):  # noqa: F811
    """The copy runs in the init before pivot_root, where an absolute link in the image would
    resolve on the HOST: a link to a host file (or to /) must be copied as a link."""
    secret = os.path.join(oci.base, "host-secret")
    with open(secret, "w") as f:
        f.write("host-secret\n")
    os.chmod(secret, 0o644)
    b = oci.bundle(["sh", "-c", "readlink /data/leak; readlink /data/root; cat /data/leak 2>&1; "
                    "grep -rs '^host-secret$' /data/ || echo clean"], tmpfs_at("/data"))
    d = os.path.join(b, "rootfs", "data")
    os.makedirs(d)
    os.symlink(secret, os.path.join(d, "leak"))
    os.symlink("/", os.path.join(d, "root"))
    rc, out, err = oci("run", "--bundle", b, "t2")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[:2] == [secret, "/"] and "host-secret" not in lines and lines[-2] == "clean", out


def test_tmpcopyup_read_only_tmpfs_is_filled_then_read_only(oci):  # noqa: F811
    b = oci.bundle(["sh", "-c", "cat /data/f; touch /data/g 2>&1 || true"], tmpfs_at("/data", "ro"))
    os.makedirs(os.path.join(b, "rootfs", "data"))
    with open(os.path.join(b, "rootfs", "data", "f"), "w") as f:
        f.write("ro copy\n")
    rc, out, err = oci("run", "--bundle", b, "t3")
    assert rc == 0, err
    assert out.startswith("ro copy\n") and "Read-only file system" in out, out


def test_tmpcopyup_only_on_tmpfs(oci):  # noqa: F811
    def m(c):
        c["mounts"].append({"destination": "/x", "type": "bind", "source": oci.base, "options": ["rbind",
                                                                                              "tmpcopyup"]})
    b = oci.bundle(["true"], m)
    rc, _, err = oci("run", "--bundle", b, "t4")
    assert rc != 0 and "tmpcopyup" in err and "an option of a tmpfs mount" in err, err


def host_peer_groups():
    with open("/proc/self/mountinfo") as f:
        return set(re.findall(r"(?:shared|master):(\d+)", f.read()))


@pytest.mark.parametrize("prop,want", [("rshared", "shared:"), ("runbindable", "unbindable"),
                                       ("rslave", None), ("private", None)])
def test_rootfs_propagation_applies_inside_and_never_reaches_the_host(oci, prop, want):  # noqa: F811
    """The rootfs is a private clone: `shared` makes it a peer group of the container's own, with no
    member (and no master) in the host's mount namespace."""
    def m(c):
        c["linux"]["rootfsPropagation"] = prop
    b = oci.bundle(["sh", "-c", "grep -E '^[0-9]+ [0-9]+ [^ ]+ [^ ]+ / ' /proc/self/mountinfo"], m)
    rc, out, err = oci("run", "--bundle", b, "p1")
    assert rc == 0, err
    fields = out.split(" - ")[0].split()[6:]  # the optional fields of the root's line
    if want:
        assert any(f.startswith(want) for f in fields), out
    else:
        assert not fields, out
    groups = set(re.findall(r"(?:shared|master):(\d+)", " ".join(fields)))
    assert not groups & host_peer_groups(), (out, groups)


def test_rootfs_propagation_unknown_is_refused(oci):  # noqa: F811
    b = oci.bundle(["true"], lambda c: c["linux"].__setitem__("rootfsPropagation", "sideways"))
    rc, _, err = oci("run", "--bundle", b, "p2")
    assert rc != 0 and "linux.rootfsPropagation" in err, err
