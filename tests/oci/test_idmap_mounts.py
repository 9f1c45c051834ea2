"""mxc-oci: idmapped bind mounts, a mount's uidMappings/gidMappings and the spec's idmap/ridmap
options (docs/oci.md "Idmapped bind mounts").  A mapping (containerID = the id on disk, hostID =
the id it shows as) says what the container writes through the mount, so both sides must be ids
the container owns: never host root's, never another's ("wrong idmaps", THREATS.md).

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_idmap_mounts.py
"""
import os
import subprocess

import pytest

from test_oci import BUSYBOX, oci  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")

BASE = 1500000000  # the config's own user namespace, below mxc's regions


def own_userns(c):
    c["linux"]["namespaces"].append({"type": "user"})
    c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": BASE, "size": 65536}]
    c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": BASE, "size": 65536}]


def shared_dir(oci, owner):  # noqa: F811
    d = os.path.join(oci.base, "vol")
    os.makedirs(d)
    with open(os.path.join(d, "f"), "w") as f:
        f.write("x\n")
    os.chown(d, owner, owner)
    os.chown(os.path.join(d, "f"), owner, owner)
    os.chmod(d, 0o755)
    return d


def bundle(oci, args, mutate):  # noqa: F811
    b = oci.bundle(args, mutate)
    subprocess.run(["chown", "-R", "-h", "%d:%d" % (BASE, BASE), os.path.join(b, "rootfs")], check=True)
    return b


def test_idmapped_bind_within_the_container_s_own_ids(oci):  # noqa: F811
    """A directory owned on disk by the container's uid 1000 (host BASE+1000), mapped onto the
    container's root: root inside owns it, and what root writes there lands as BASE+1000."""
    vol = shared_dir(oci, BASE + 1000)

    def m(c):
        own_userns(c)
        c["mounts"].append({"destination": "/vol", "type": "bind", "source": vol, "options": ["rbind", "idmap"],
                            "uidMappings": [{"containerID": BASE + 1000, "hostID": BASE, "size": 1}],
                            "gidMappings": [{"containerID": BASE + 1000, "hostID": BASE, "size": 1}]})
    b = bundle(oci, ["sh", "-c", "stat -c %u:%g /vol/f; touch /vol/g && stat -c %u:%g /vol/g"], m)
    rc, out, err = oci("run", "--bundle", b, "m1")
    assert rc == 0, err
    assert out.split() == ["0:0", "0:0"], out
    st = os.stat(os.path.join(vol, "g"))
    assert (st.st_uid, st.st_gid) == (BASE + 1000, BASE + 1000)


def test_idmapped_bind_mapping_the_disk_s_root_is_refused(oci):  # noqa: F811
    """The classic: disk 0 mapped onto the container's root, so container root writes (and owns
    what is there) as host root."""
    vol = shared_dir(oci, 0)

    def m(c):
        own_userns(c)
        c["mounts"].append({"destination": "/vol", "type": "bind", "source": vol, "options": ["rbind"],
                            "uidMappings": [{"containerID": 0, "hostID": BASE, "size": 65536}],
                            "gidMappings": [{"containerID": 0, "hostID": BASE, "size": 65536}]})
    b = bundle(oci, ["sh", "-c", "touch /vol/g"], m)
    rc, _, err = oci("run", "--bundle", b, "m2")
    assert rc != 0 and "mounts[" in err and "write as the disk's uid 0..65535" in err and "refused" in err, err
    assert not os.path.exists(os.path.join(vol, "g"))


def test_idmapped_bind_onto_host_root_is_refused(oci):  # noqa: F811
    vol = shared_dir(oci, BASE)

    def m(c):
        c["mounts"].append({"destination": "/vol", "type": "bind", "source": vol, "options": ["rbind"],
                            "uidMappings": [{"containerID": BASE, "hostID": 0, "size": 1}],
                            "gidMappings": [{"containerID": BASE, "hostID": 0, "size": 1}]})
    b = oci.bundle(["true"], m)
    rc, _, err = oci("run", "--bundle", b, "m3")
    assert rc != 0 and "mounts[" in err and "onto host uid 0: refused" in err, err


def test_idmapped_bind_writing_as_a_host_id_outside_the_range_is_refused(oci):  # noqa: F811
    """With mxc's range: a bind mapped so the container's root writes as host uid 1000 (an id it
    does not own) is refused; so is idmap with no mappings (the container's own maps put the
    disk's 0 under its root)."""
    vol = shared_dir(oci, 1000)
    for i, extra in enumerate([{"uidMappings": [{"containerID": 1000, "hostID": 2 ** 31, "size": 1}],
                                "gidMappings": [{"containerID": 1000, "hostID": 2 ** 31, "size": 1}]}, {}]):
        def m(c):
            c["mounts"].append(dict({"destination": "/vol", "type": "bind", "source": vol,
                                     "options": ["rbind", "idmap"]}, **extra))
        b = oci.bundle(["sh", "-c", "touch /vol/g"], m)
        rc, _, err = oci("run", "--bundle", b, "m4%d" % i)
        assert rc != 0 and "which it does not own" in err and "refused" in err, err
        assert not os.path.exists(os.path.join(vol, "g"))


@pytest.mark.parametrize("mount,why", [
    ({"destination": "/t", "type": "tmpfs", "source": "tmpfs", "options": ["idmap"]}, "is a bind mount"),
    ({"destination": "/t", "type": "bind", "source": "/tmp", "options": ["rbind"],
      "uidMappings": [{"containerID": 1, "hostID": 1, "size": 1}]}, "given together"),
])
def test_idmapped_mount_shapes_refused(oci, mount, why):  # noqa: F811
    b = oci.bundle(["true"], lambda c: c["mounts"].append(mount))
    rc, _, err = oci("run", "--bundle", b, "m5")
    assert rc != 0 and why in err, err
