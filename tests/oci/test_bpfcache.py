"""A config's seccomp profile compiled once per state root (src/oci/bpfcache.h): the next container
with the same profile loads the program kept in <root>/@bpf, and only a program whose entry holds
exactly its profile, in a root-owned file, is ever used — a colliding or foreign entry is a miss,
never a weaker filter.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_bpfcache.py
"""
import json
import os
import struct

from test_oci import oci  # noqa: F401  (the fixture)

PROFILE = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
           "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
ALLOW_ALL = struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000)  # BPF_RET|BPF_K SECCOMP_RET_ALLOW


def bundle(oci):
    def mutate(c):
        c["linux"]["seccomp"] = PROFILE
    return oci.bundle(["sh", "-c", "mkdir /tmp/x 2>&1; echo rc=$?"], mutate=mutate, readonly=False)


def refused(oci, b, cid):
    rc, out, err = oci("run", "--bundle", b, cid)
    assert rc == 0, err
    return "rc=1" in out and "Operation not permitted" in out and not os.path.exists(os.path.join(b, "rootfs/tmp/x"))


def entries(oci):
    d = os.path.join(oci.root, "@bpf")
    return d, [n for n in os.listdir(d) if not n.startswith(".")]


def test_a_profile_is_compiled_once_and_its_entry_reused(oci):
    b = bundle(oci)
    assert refused(oci, b, "c1")
    d, names = entries(oci)
    assert len(names) == 1
    st = os.stat(d)
    assert st.st_uid == 0 and st.st_mode & 0o777 == 0o700
    f = os.path.join(d, names[0])
    st1 = os.lstat(f)
    assert st1.st_uid == 0 and st1.st_mode & 0o777 == 0o600
    with open(f, "rb") as fh:
        assert fh.read().startswith(b"mxc-oci-bpf 1\nlibseccomp ")
    # the second container with the same profile: the same entry (a miss would rename a new one in)
    assert refused(oci, b, "c2")
    assert os.lstat(f).st_ino == st1.st_ino and entries(oci)[1] == names
    # exec's process takes the container's profile through the cache too
    b3 = oci.bundle(["sleep", "100"], mutate=lambda c: c["linux"].__setitem__("seccomp", PROFILE))
    rc, _, err = oci.create("c3", b3)
    assert rc == 0, err
    assert oci("start", "c3")[0] == 0
    rc, out, err = oci("exec", "c3", "sh", "-c", "mkdir /tmp/y 2>&1; echo rc=$?")
    assert "rc=1" in out, out + err
    # `list` does not take the cache for a container
    rc, out, _ = oci("list", "--format", "json")
    assert "@bpf" not in out


def test_an_entry_for_another_profile_under_the_same_name_is_a_miss(oci):
    """A 64-bit name can collide: the entry's whole key must be this profile, or it is compiled again."""
    b = bundle(oci)
    assert refused(oci, b, "c1")
    d, (name,) = entries(oci)
    f = os.path.join(d, name)
    with open(f, "rb") as fh:
        data = fh.read()
    key, _, rest = data.partition(b"\n0\n") if b"\n0\n" in data else data.partition(b"\n1\n")
    other = key.replace(b"mkdirat", b"mkdiraX")
    assert other != key
    with open(f, "wb") as fh:  # another profile's key, a program that allows everything
        fh.write(other + b"\n0\n" + ALLOW_ALL)
    os.chmod(f, 0o600)
    assert refused(oci, b, "c2")
    with open(f, "rb") as fh:  # compiled again and stored under its own key
        assert fh.read().startswith(key + b"\n")


def test_an_entry_not_root_s_or_open_to_others_is_not_read(oci):
    b = bundle(oci)
    assert refused(oci, b, "c1")
    d, (name,) = entries(oci)
    f = os.path.join(d, name)
    with open(f, "rb") as fh:
        data = fh.read()
    i = data.index(b"\n", data.index(b"\n", data.index(b"\nlibseccomp") + 1) + 1)  # the end of the key
    forged = data[:i + 3] + ALLOW_ALL
    for uid, mode in ((1000, 0o600), (0, 0o644)):
        with open(f, "wb") as fh:
            fh.write(forged)
        os.chown(f, uid, 0)
        os.chmod(f, mode)
        assert refused(oci, b, "c-%d-%o" % (uid, mode))
    # and a cache directory open to others is not used at all
    os.chmod(d, 0o777)
    with open(f, "wb") as fh:
        fh.write(forged)
    os.chown(f, 0, 0)
    os.chmod(f, 0o600)
    assert refused(oci, b, "c-dir")
