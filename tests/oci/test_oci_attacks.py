"""The OCI runtimes' own classics (../shared/THREATS.md "An OCI runtime's own classics"), one
attack each, against mxc-oci.  Those test_oci.py already has are not repeated here:
  - CVE-2021-30465 (a mount target that is a symlink in the rootfs):
    test_symlink_mount_target_stays_inside_the_rootfs, test_symlink_bind_target_stays_inside
  - CVE-2025-31133 (the image's /dev/null a link into /proc): test_dev_null_symlink_in_the_image_is_refused
  - CVE-2019-5736 through exec (/proc/PID/exe of the joining runtime): test_exec_is_not_dumpable_before_its_exec
  - --preserve-fds with a directory (CVE-2024-21626's way in): test_preserve_fds_passes_a_pipe_and_refuses_a_directory
  - a config map onto host uid 0: test_config_mapping_host_root_is_refused
Hooks from the bundle: tests/oci/test_oci_hooks.py.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_attacks.py
"""
import grp
import hashlib
import os
import pwd
import secrets
import subprocess

import pytest

from test_oci import BUSYBOX, MXC_OCI, oci, own_slot  # noqa: F401  (the fixtures)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# --------------------------------------------------------------------------------------------
# CVE-2024-21626: process.cwd through a descriptor the runtime leaked into the container


# What a cwd in the host's /proc would show: the test's own command line, two levels up
PEEK = "cat ../../%d/cmdline 2>/dev/null | tr '\\0' ' '; echo; ls ../.. 2>/dev/null | head -c 2000"


@pytest.mark.parametrize("fd", range(3, 12))
def test_cwd_through_a_leaked_descriptor_stays_inside(oci, fd):
    """runc < 1.1.12 left a descriptor of the host's /sys/fs/cgroup open across its chdir:
    process.cwd "/proc/self/fd/N" put the container's cwd on the host.  Every descriptor
    mxc-oci's init holds when it changes directory is tried; the cwd may be refused, never a
    place outside the container's root."""
    def cwd(c):
        c["process"]["cwd"] = "/proc/self/fd/%d" % fd
    b = oci.bundle(["sh", "-c", PEEK % os.getpid()], cwd)
    rc, out, err = oci("run", "--bundle", b, "c1")
    # the process never runs: a descriptor's magic link refused, a closed one absent (before: the
    # bundle's and the rootfs's descriptors, fds 4 and 6, put the cwd on the host's side)
    assert out == "" and rc != 0, (rc, out, err)
    assert "process.cwd /proc/self/fd/%d: a magic link" % fd in err or "No such file" in err, err


@pytest.mark.parametrize("fd", range(3, 12))
def test_exec_cwd_through_a_leaked_descriptor_stays_inside(oci, fd):
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("c1", b)[0] == 0
    assert oci("start", "c1")[0] == 0
    rc, out, err = oci("exec", "--cwd", "/proc/self/fd/%d" % fd, "c1", "sh", "-c", PEEK % os.getpid())
    assert out == "" and rc != 0, (rc, out, err)
    assert "process.cwd /proc/self/fd/%d: a magic link" % fd in err or "No such file" in err, err


# --------------------------------------------------------------------------------------------
# CVE-2019-5736: the runtime's binary reached through /proc/self/exe


@pytest.mark.parametrize("how", ["args", "image-link"])
def test_process_that_is_the_runtime_s_own_binary_is_refused(oci, how):
    """The init is mxc-oci until its exec: an entrypoint of /proc/self/exe (or an image link to
    it) would run the host's mxc-oci binary as the container's process, which could then hold
    its descriptor.  The executable is resolved without magic links: refused."""
    before = sha(MXC_OCI)
    b = oci.bundle(["/proc/self/exe", "--version"], readonly=False)
    if how == "image-link":
        os.symlink("/proc/self/exe", os.path.join(b, "rootfs", "bin", "entry"))
        with open(os.path.join(b, "config.json")) as f:
            text = f.read()
        with open(os.path.join(b, "config.json"), "w") as f:
            f.write(text.replace('"/proc/self/exe"', '"/bin/entry"'))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert "mxc-oci" not in out, out
    assert rc != 0 and "a magic link" in err and "refused" in err, (rc, out, err)
    assert sha(MXC_OCI) == before


def test_exec_of_the_runtime_s_own_binary_is_refused(oci):
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("c1", b)[0] == 0
    assert oci("start", "c1")[0] == 0
    rc, out, err = oci("exec", "c1", "/proc/self/exe", "--version")
    assert "mxc-oci" not in out, out
    assert rc != 0 and "a magic link" in err and "refused" in err, (rc, out, err)


def test_container_root_cannot_write_a_host_root_binary_it_can_reach(oci):
    """The defence under the one above: even a host binary bind-mounted in (the shape of
    CVE-2019-5736: root-owned, executable) is not the container's root's to write, because that
    root is the range's uid on the host, not host root."""
    d = os.path.join(oci.base, "bin")
    os.makedirs(d)
    target = os.path.join(d, "runtime")
    with open(target, "wb") as f:
        f.write(b"#!/bin/sh\necho original\n")
    os.chmod(target, 0o755)
    before = sha(target)

    def mnt(c):
        c["mounts"].append({"destination": "/host-bin", "type": "bind", "source": d, "options": ["bind", "rw"]})
    b = oci.bundle(["sh", "-c", "echo pwned > /host-bin/runtime; echo pwned >> /host-bin/runtime; "
                    "chmod 777 /host-bin/runtime; echo done"], mnt)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert "done" in out
    assert sha(target) == before
    assert os.stat(target).st_mode & 0o777 == 0o755


# --------------------------------------------------------------------------------------------
# CVE-2019-16884 / CVE-2019-19921 / CVE-2023-27561: /proc in the rootfs is a symlink


@pytest.mark.parametrize("target", ["/evil", "../evil", "/tmp/evil"])
def test_proc_that_is_a_symlink_in_the_rootfs_is_refused(oci, target):
    """The image's /proc is a link: runc mounted proc where the link pointed and then applied its
    masks and labels through the link by path; a link the container (or a sibling sharing a
    volume) can repoint between those steps leaves the real procfs unmasked.  A proc or sysfs
    destination with a link anywhere on its path is refused."""
    b = oci.bundle(["sh", "-c", "head -c 100 /proc/kcore | wc -c; echo x > /proc/sys/kernel/hostname && echo w"],
                   readonly=False)
    os.rmdir(os.path.join(b, "rootfs", "proc"))
    os.makedirs(os.path.join(b, "rootfs", "evil"))
    os.makedirs(os.path.join(b, "rootfs", "tmp", "evil"), exist_ok=True)
    os.symlink(target, os.path.join(b, "rootfs", "proc"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert "w" not in out.split()
    assert rc != 0 and "is a symbolic link" in err and "refused" in err, (rc, out, err)


def test_sysfs_through_a_symlink_is_refused(oci):
    b = oci.bundle(["true"], readonly=False)
    os.rmdir(os.path.join(b, "rootfs", "sys"))
    os.makedirs(os.path.join(b, "rootfs", "evil"))
    os.symlink("evil", os.path.join(b, "rootfs", "sys"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc != 0 and "is a symbolic link" in err and "refused" in err, (rc, out, err)


# --------------------------------------------------------------------------------------------
# wrong idmaps (the config's own user namespace; mount idmaps: helper i-ovl)


@pytest.mark.parametrize("case", ["uid-nonroot-onto-0", "gid-onto-0", "uid-wraps", "second-map-onto-0"])
def test_config_maps_reaching_host_id_0_are_refused(oci, case):
    base = 1500000000
    ok = [{"containerID": 0, "hostID": base, "size": 65536}]
    uid, gid = list(ok), list(ok)
    if case == "uid-nonroot-onto-0":
        uid = [{"containerID": 1000, "hostID": 0, "size": 1}]
    elif case == "gid-onto-0":
        gid = [{"containerID": 0, "hostID": 0, "size": 1}]
    elif case == "uid-wraps":  # 2^32-1 + 2 wraps to host 0 in 32 bits
        uid = [{"containerID": 0, "hostID": 4294967295, "size": 2}]
    elif case == "second-map-onto-0":
        uid = [{"containerID": 0, "hostID": base, "size": 1}, {"containerID": 1, "hostID": 0, "size": 1}]

    def userns(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = uid
        c["linux"]["gidMappings"] = gid
    b = oci.bundle(["true"], userns)
    rc, _, err = oci.create("c1", b)
    assert rc != 0 and ("onto host" in err or "32 bits" in err or "32-bit" in err), err
    assert not os.path.exists(os.path.join(oci.root, "c1"))


# --------------------------------------------------------------------------------------------
# a config's own maps onto ids someone else on the host has (issue 34, finding 3): a local account,
# a group, a subordinate range, another container's claim — the rule mxc's own range slots follow


OWN = 1500000000  # the config's own user namespace elsewhere in these tests: no one's on the host


def own_maps(uid, gid, mounts=(), user=(0, 0)):
    def m(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = uid
        c["linux"]["gidMappings"] = gid
        c["process"]["user"] = {"uid": user[0], "gid": user[1]}
        for mnt in c["mounts"]:  # devpts's gid=5 (tty): not every map here has it
            mnt["options"] = [o for o in mnt.get("options", []) if not o.startswith("gid=")]
        c["mounts"].extend(mounts)
    return m


def own_bundle(oci, args, mutate, owner, targets=()):
    """A bundle whose rootfs is the mapped root's (the config's own maps: no idmapped rootfs), with
    the bind targets made beforehand."""
    b = oci.bundle(args, mutate)
    rootfs = os.path.join(b, "rootfs")
    for t in targets:
        path = os.path.join(rootfs, t.lstrip("/"))
        if t.endswith("/"):
            os.makedirs(path, exist_ok=True)
        else:
            open(path, "w").close()
    subprocess.run(["chown", "-R", "-h", "%d:%d" % owner, rootfs], check=True)
    return b


def test_a_gid_map_onto_the_shadow_group_is_refused(oci):
    """gidMappings {0 -> the group of /etc/shadow} and a read-only bind of /etc/shadow: the
    container's root group read it.  Refused naming the field and the group."""
    shadow = os.stat("/etc/shadow").st_gid
    if shadow == 0:
        pytest.skip("/etc/shadow belongs to group 0 here")
    bind = {"destination": "/shadow", "type": "bind", "source": "/etc/shadow", "options": ["bind", "ro"]}
    m = own_maps([{"containerID": 0, "hostID": OWN, "size": 65536}], [{"containerID": 0, "hostID": shadow,
                                                                       "size": 1}], [bind])
    b = own_bundle(oci, ["sh", "-c", "head -c 0 /shadow && echo READ || echo DENIED"], m, (OWN, shadow),
                   ["/shadow"])
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert "READ" not in out
    assert rc != 0 and "linux.gidMappings[0]: host ids %d..%d include group %d (%s)" % (
        shadow, shadow, shadow, grp.getgrgid(shadow).gr_name) in err, (out, err)
    assert not os.path.exists(os.path.join(oci.root, "c1"))


@pytest.fixture
def local_user(oci):
    """A local account made for the test (a system account: no subordinate range of its own), its
    home a 0700 directory it owns; removed afterwards."""
    taken = {p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    uid = next(u for u in range(45000, 60000) if u not in taken)
    name = "mxcv%s" % secrets.token_hex(4)
    home = os.path.join(oci.base, "home")
    os.mkdir(home, 0o700)
    os.chown(home, uid, 65534)
    subprocess.run(["useradd", "-r", "-N", "-g", "65534", "-u", str(uid), "-M", "-d", home, "-s",
                    "/usr/sbin/nologin", name], check=True)
    try:
        yield uid, name, home
    finally:
        subprocess.run(["userdel", name], check=True)


def test_a_uid_map_onto_local_accounts_cannot_reach_a_user_s_home(oci, local_user):
    """uidMappings {0 -> host 1, 65536}: container uid U-1 is the local user U and wrote
    authorized_keys into its 0700 home.  Refused naming the field and an account."""
    uid, name, home = local_user
    bind = {"destination": "/victim", "type": "bind", "source": home, "options": ["bind", "rw"]}
    m = own_maps([{"containerID": 0, "hostID": 1, "size": 65536}], [{"containerID": 0, "hostID": OWN,
                                                                    "size": 65536}], [bind], user=(uid - 1, 0))
    script = "mkdir -p /victim/.ssh && echo ssh-ed25519 AAAA > /victim/.ssh/authorized_keys && echo WROTE"
    b = own_bundle(oci, ["sh", "-c", script], m, (1, OWN), ["/victim/"])
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert not os.path.exists(os.path.join(home, ".ssh")) and "WROTE" not in out
    assert rc != 0 and "linux.uidMappings[0]: host ids 1..65536 include local account" in err, (out, err)
    assert not os.path.exists(os.path.join(oci.root, "c1"))


def test_a_map_onto_another_user_s_subordinate_range_is_refused(oci):
    """A line of /etc/subuid (another user's subordinate range, which its own rootless containers
    use) added for the test and removed in a finally: a config mapping onto it is refused."""
    start, name = 1600000000, "mxcs%s" % secrets.token_hex(4)
    line = "%s:%d:65536\n" % (name, start)
    with open("/etc/subuid", "a") as f:
        f.write(line)
    try:
        m = own_maps([{"containerID": 0, "hostID": start + 4096, "size": 1}],
                     [{"containerID": 0, "hostID": OWN, "size": 65536}])
        b = oci.bundle(["true"], m)
        rc, _, err = oci.create("c1", b)
        assert rc != 0 and ("linux.uidMappings[0]: host ids %d..%d include subordinate uid range %d+65536 of %s"
                            % (start + 4096, start + 4096, start, name)) in err, err
        assert not os.path.exists(os.path.join(oci.root, "c1"))
    finally:
        with open("/etc/subuid") as f:
            kept = [x for x in f if x != line]
        with open("/etc/subuid", "w") as f:
            f.writelines(kept)


def test_a_map_onto_another_container_s_claim_is_refused(oci, own_slot, monkeypatch):
    """c1's range claimed where an earlier region put it (MXC_RANGE_BASE then: outside today's
    region); c2's own maps onto it are refused naming the claim.  The slot is the test's own
    (own_slot, above the default region): a fixed one was another run's as well, and c1's create
    found no free range."""
    base = own_slot
    monkeypatch.setenv("MXC_RANGE_BASE", str(base))
    monkeypatch.setenv("MXC_RANGE_SLOTS", "1")
    rc, _, err = oci.create("c1", oci.bundle(["sleep", "30"]))
    assert rc == 0, err
    monkeypatch.delenv("MXC_RANGE_BASE")
    monkeypatch.delenv("MXC_RANGE_SLOTS")
    m = own_maps([{"containerID": 0, "hostID": base + 100, "size": 10}],
                 [{"containerID": 0, "hostID": OWN, "size": 65536}])
    rc, _, err = oci.create("c2", oci.bundle(["true"], m))
    assert rc != 0 and "include another container's range claim range-%d" % base in err, err
    assert not os.path.exists(os.path.join(oci.root, "c2"))


def test_uid_map_cannot_be_rewritten_from_inside(oci):
    """The maps are written once, by the parent; the container's root cannot widen them."""
    b = oci.bundle(["sh", "-c", "echo '0 0 1' > /proc/self/uid_map && echo rewrote; "
                    "echo '0 0 1' > /proc/1/gid_map && echo rewrote; cat /proc/self/uid_map"])
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert "rewrote" not in out
    assert out.split()[1] != "0"


# --------------------------------------------------------------------------------------------
# the runtime touching host devices (crun 1.8.1: exec -d --user 1000:1000 </dev/null chowned the
# host's /dev/null; runc's exec.bats checks for it)


def test_exec_and_create_as_another_user_never_chown_the_host_s_stdio(oci):
    def look():
        st = os.stat("/dev/null")
        return st.st_uid, st.st_gid, st.st_mode
    before = look()

    def user(c):
        c["process"]["user"] = {"uid": 1000, "gid": 1000}
    b = oci.bundle(["sleep", "1000"], user)
    assert oci.create("c1", b)[0] == 0  # its stdin: the host's /dev/null (Oci passes DEVNULL)
    assert oci("start", "c1")[0] == 0
    for args in (["--detach", "--user", "1000:1000"], ["--user", "1000:1000"], ["--user", "0:0"]):
        rc, out, err = oci("exec", *args, "c1", "true")
        assert rc == 0, err
    assert look() == before
