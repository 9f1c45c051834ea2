"""linux.devices beyond the six defaults (src/oci/devices.c, docs/oci.md "Devices").

An allowlisted character device (fuse, net/tun, kvm, GPU render nodes) is the host's node
bind-mounted at the config's path, checked by fstat on the opened node; everything else —
block devices, /dev/mem, /dev/kmsg, a path that claims one device with another's numbers —
is refused naming the device.  A host node is never chowned or chmodded."""
import os
import stat

import pytest

from test_oci import oci  # noqa: F401  (the fixture)
from test_podman import OPTS, podman  # noqa: F401  (the fixture)


def dev(path, major, minor, typ="c", **extra):
    d = {"path": path, "type": typ, "major": major, "minor": minor}
    d.update(extra)
    return d


def with_devices(*devs, rules=None):
    def mutate(c):
        c["linux"]["devices"] = list(devs)
        # the template's rules (runc's: deny all) would deny every device given; each test says its own
        c["linux"].setdefault("resources", {})["devices"] = rules if rules is not None else []
    return mutate


def host_node(path):
    st = os.stat(path)
    return (st.st_mode, st.st_uid, st.st_gid, st.st_rdev, st.st_ctime_ns)


def needs(path, major, minor):
    try:
        st = os.stat(path)
    except OSError:
        pytest.skip("%s is not on this host" % path)
    if not stat.S_ISCHR(st.st_mode) or (os.major(st.st_rdev), os.minor(st.st_rdev)) != (major, minor):
        pytest.skip("%s is not %d:%d here" % (path, major, minor))
    return st


def test_allowlisted_char_devices_are_the_host_s_nodes_and_never_chowned(oci):
    fuse = needs("/dev/fuse", 10, 229)
    needs("/dev/net/tun", 10, 200)
    before = {p: host_node(p) for p in ("/dev/fuse", "/dev/net/tun")}
    mode = stat.S_IMODE(fuse.st_mode)
    b = oci.bundle(["sh", "-c", "stat -c '%n %F %t:%T' /dev/fuse /dev/net/tun"],
                   mutate=with_devices(dev("/dev/fuse", 10, 229, fileMode=stat.S_IFCHR | mode,
                                           uid=fuse.st_uid, gid=fuse.st_gid),
                                       dev("/dev/net/tun", 10, 200)))
    rc, out, err = oci("run", "--bundle", b, "d1")
    assert rc == 0, err
    assert "/dev/fuse character special file a:e5" in out, out
    assert "/dev/net/tun character special file a:c8" in out, out
    after = {p: host_node(p) for p in before}
    assert after == before  # owner, mode and ctime: never chowned or chmodded


@pytest.mark.parametrize("d,word", [
    (dev("/dev/vda", 254, 0, "b"), "block"),
    (dev("/dev/loop0", 7, 0, "b"), "block"),
    (dev("/dev/sda", 8, 0, "b"), "block"),
    (dev("/dev/mem", 1, 1), "/dev/mem"),
    (dev("/dev/kmem", 1, 2), "kmem"),
    (dev("/dev/kmsg", 1, 11), "kmsg"),
    (dev("/dev/fuse", 1, 1), "/dev/mem"),        # a path claiming fuse with /dev/mem's numbers
    (dev("/dev/dri/card0", 226, 0), "display"),  # a card node: the host's display (a render node is allowed)
    (dev("/dev/ttyS0", 4, 64), "serial"),
    (dev("/dev/fuse", 10, 229, "u"), "block"),   # an unbuffered block device
])
def test_raw_host_devices_are_refused_naming_them(oci, d, word):
    before = host_node("/dev/kmsg")
    b = oci.bundle(["true"], mutate=with_devices(d))
    rc, _, err = oci("run", "--bundle", b, "d2")
    assert rc != 0 and "linux.devices[0]" in err and word in err, err
    assert not os.path.exists(os.path.join(oci.root, "d2"))
    assert host_node("/dev/kmsg") == before


def test_a_path_whose_host_node_is_another_device_is_refused(oci):
    # the config says /dev/fuse is tun (10:200): the host's /dev/fuse is 10:229, checked on the
    # opened node — never the string
    needs("/dev/fuse", 10, 229)
    b = oci.bundle(["true"], mutate=with_devices(dev("/dev/fuse", 10, 200)))
    rc, _, err = oci("run", "--bundle", b, "d3")
    assert rc != 0 and "/dev/fuse" in err and "10:229" in err, err


def test_a_mode_or_owner_other_than_the_host_node_s_is_refused(oci):
    fuse = needs("/dev/fuse", 10, 229)
    before = host_node("/dev/fuse")
    other = 0o666 if stat.S_IMODE(fuse.st_mode) != 0o666 else 0o600
    for extra in ({"fileMode": other}, {"uid": fuse.st_uid + 1}, {"gid": fuse.st_gid + 1}):
        b = oci.bundle(["true"], mutate=with_devices(dev("/dev/fuse", 10, 229, **extra)))
        rc, _, err = oci("run", "--bundle", b, "d4")
        assert rc != 0 and "/dev/fuse" in err and "host" in err, (extra, err)
    assert host_node("/dev/fuse") == before


def test_a_device_the_cgroup_rules_deny_is_refused_not_given(oci):
    # no devices cgroup is made: a granted node would be usable whatever the rules say
    needs("/dev/fuse", 10, 229)
    deny = [{"allow": False, "access": "rwm"}, {"allow": True, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]
    b = oci.bundle(["true"], mutate=with_devices(dev("/dev/fuse", 10, 229), rules=deny))
    rc, _, err = oci("run", "--bundle", b, "d5")
    assert rc != 0 and "linux.resources.devices" in err and "/dev/fuse" in err, err
    allow = deny + [{"allow": True, "type": "c", "major": 10, "minor": 229, "access": "rwm"}]
    b = oci.bundle(["true"], mutate=with_devices(dev("/dev/fuse", 10, 229), rules=allow))
    rc, _, err = oci("run", "--bundle", b, "d6")
    assert rc == 0, err


def test_a_symlink_at_the_device_path_in_the_rootfs_is_not_followed(oci):
    needs("/dev/fuse", 10, 229)

    def mutate(c):
        with_devices(dev("/dev/fuse", 10, 229))(c)
        c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/dev"]
    b = oci.bundle(["true"], mutate=mutate)
    os.makedirs(os.path.join(b, "rootfs", "dev"), exist_ok=True)
    with open(os.path.join(b, "rootfs", "target"), "w") as f:
        f.write("x")
    os.symlink("/target", os.path.join(b, "rootfs", "dev", "fuse"))
    rc, _, err = oci("run", "--bundle", b, "d7")
    assert rc != 0 and "/dev/fuse" in err and "symbolic link" in err, err


def test_podman_device_fuse(podman):
    # `podman run --device /dev/fuse`: Podman copies the host node's mode and owner into the config
    needs("/dev/fuse", 10, 229)
    before = host_node("/dev/fuse")
    r = podman("run", "--rm", *OPTS, "--device", "/dev/fuse", "localhost/mxc-bb:1", "stat", "-c", "%F %t:%T",
               "/dev/fuse")
    assert "character special file a:e5" in r.stdout, r.stdout
    r = podman("run", "--rm", *OPTS, "--device", "/dev/kmsg", "localhost/mxc-bb:1", "true", check=False)
    assert r.returncode != 0 and "kmsg" in r.stderr, r.stderr
    assert host_node("/dev/fuse") == before


def test_dev_ptmx_is_the_container_s_own_devpts(oci):
    # dev.bats "redundant default /dev/ptmx": 5:2 at /dev/ptmx is served by /dev/ptmx -> pts/ptmx,
    # the container's own devpts (a pty made there is the container's), never the host's node
    b = oci.bundle(["sh", "-c", "ls -lLn /dev/ptmx; readlink /dev/ptmx"],
                   mutate=with_devices(dev("/dev/ptmx", 5, 2)))
    rc, out, err = oci("run", "--bundle", b, "p1")
    assert rc == 0, err
    f = out.split()
    assert f[0] == "crw-rw-rw-" and f[2:6] == ["0", "0", "5,", "2"], out
    assert out.strip().endswith("pts/ptmx"), out
