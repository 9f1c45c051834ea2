"""A shared writable mmap keeps set-id bits and file capabilities (docs/security.md "nothing the
workload makes is setuid/setgid on the host").

The kernel clears set-id bits and security.capability on write(2), truncate and chown, not on a
page-fault write through a MAP_SHARED mapping. A read-write grant is idmapped from its owner to the
sandbox's uid, so a set-id-root (or file-capability) binary already in a root-owned grant is the
workload's to open O_RDWR: rewritten through mmap it stayed 4755 root, and any host user who ran it
ran the workload's code as root. The defence: every set-id or file-capability file in a mount the
workload can write is bound onto itself read-only before the workload exists (src/base/setidscan.h),
so opening it for write is EROFS, and as a mount point it cannot be unlinked or renamed (EBUSY) nor
hard-linked (EXDEV).

Each test: the workload tries every way (direct, a hard link made first, a rename, a reopen through
/proc/self/fd, an mprotect upgrade of a read-only shared mapping, a file in a subdirectory); then the
host looks: every file is either byte-for-byte what it was, or carries no set-id bit or capability.
"""
import hashlib
import os
import shutil
import stat
import struct
import subprocess

import pytest

from conftest import HELPER

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (root-owned grants, set-id files)")

# security.capability v2, effective, permitted cap_setuid (7): what `setcap cap_setuid+ep` writes
FCAP = struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0)

# The workload's attack: name=result lines (ok, or the errno's name)
ATTACK = r'''
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
def err(e):
    return errno.errorcode.get(e, str(e))
def rewrite(fd, upgrade=False):
    a = libc.mmap(None, 4096, 1 if upgrade else 3, 1, fd, 0)  # PROT_READ[|PROT_WRITE], MAP_SHARED
    if a is None or a == 2**64 - 1:
        return err(ctypes.get_errno())
    if upgrade and libc.mprotect(a, 4096, 3) != 0:
        return err(ctypes.get_errno())
    ctypes.memmove(a + 64, b"MMAPPWN!", 8)
    libc.msync(a, 4096, 4)
    return "ok"
def attempt(name, fn):
    try:
        r = fn()
    except OSError as e:
        r = err(e.errno)
    print("%s=%s" % (name, r), flush=True)
g = sys.argv[1]
for f in sys.argv[2:]:
    attempt("direct:" + f, lambda: rewrite(os.open(os.path.join(g, f), os.O_RDWR)))
def via_link():
    os.link(g + "/hl", g + "/hl2")
    return rewrite(os.open(g + "/hl2", os.O_RDWR))
attempt("link", via_link)
def via_rename():
    os.rename(g + "/ren", g + "/ren2")
    return rewrite(os.open(g + "/ren2", os.O_RDWR))
attempt("rename", via_rename)
def unlink():
    os.unlink(g + "/suid")
    return "ok"
attempt("unlink", unlink)
def rename_dir():
    os.rename(g + "/sub", g + "/sub2")
    return "ok"
attempt("rename_dir", rename_dir)
def via_proc():
    ro = os.open(g + "/proc", os.O_RDONLY)
    return rewrite(os.open("/proc/self/fd/%d" % ro, os.O_RDWR))
attempt("procfd", via_proc)
def via_mprotect():
    try:
        fd = os.open(g + "/mprot", os.O_RDWR)
    except OSError:
        fd = os.open(g + "/mprot", os.O_RDONLY)
    return rewrite(fd, upgrade=True)
attempt("mprotect", via_mprotect)
'''


def digest(p):
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def privileged(p):
    st = os.lstat(p)
    try:
        cap = os.getxattr(p, "security.capability", follow_symlinks=False)
    except OSError:
        cap = None
    return bool(st.st_mode & stat.S_ISUID or (st.st_mode & stat.S_ISGID and st.st_mode & stat.S_IXGRP)
                or cap)


def planted(d, name, owner, mode, fcap=False):
    p = os.path.join(d, name)
    shutil.copy(HELPER, p)
    os.chown(p, owner, owner)
    os.chmod(p, mode)
    if fcap:
        os.setxattr(p, "security.capability", FCAP)
    assert privileged(p), p
    return p


def grant(host_dir, name, owner, files):
    """A read-write grant owned by owner holding set-id copies of the helper: {name: (mode, fcap)}."""
    d = host_dir(name, 0o755)
    os.chown(d, owner, owner)
    os.makedirs(os.path.join(d, "sub"))
    os.chown(os.path.join(d, "sub"), owner, owner)
    for f, (mode, fcap) in files.items():
        planted(d, f, owner, mode, fcap)
    return d


ROOT_FILES = {"suid": (0o4755, False), "sgid": (0o2755, False), "fcap": (0o755, True),
              "sub/deep": (0o4755, False), "hl": (0o4755, False), "ren": (0o4755, False),
              "proc": (0o4755, False), "mprot": (0o4755, False)}


def attack(sb, g, direct):
    py = "/usr/bin/python3"  # the system one: /usr is in the view
    r = sb.run("%s -c '%s' %s %s" % (py, ATTACK.replace("'", "'\\''"), g, " ".join(direct)))
    assert r.rc == 0, r.describe()
    return dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)


def host_unharmed(d, before):
    """Every file is unchanged, or no longer privileged (a set-id bit or capability): [] when so."""
    bad = []
    for dirpath, _, files in os.walk(d):
        for f in files:
            p = os.path.join(dirpath, f)
            orig = before.get(p) or before.get({"hl2": os.path.join(d, "hl"),
                                                 "ren2": os.path.join(d, "ren")}.get(f, ""))
            if privileged(p) and digest(p) != orig:
                bad.append(p)
    return bad


def test_mmap_cannot_rewrite_a_set_id_binary_in_a_root_grant(sandbox, host_dir):
    """A root-owned read-write grant holding setuid-root, setgid-root and cap_setuid copies of a
    program (one in a subdirectory made before the sandbox): no way of the workload's writes to
    them through a shared mapping; each is a read-only mount point."""
    g = grant(host_dir, "g-root", 0, ROOT_FILES)
    before = {os.path.join(dp, f): digest(os.path.join(dp, f)) for dp, _, fs in os.walk(g) for f in fs}
    res = attack(sandbox(filesystem={"readwritePaths": [g]}), g, ["suid", "sgid", "fcap", "sub/deep"])
    assert host_unharmed(g, before) == [], res
    for f in ("suid", "sgid", "fcap", "sub/deep"):
        assert res["direct:" + f] == "EROFS", res
    assert res["link"] == "EXDEV", res
    assert res["rename"] == "EBUSY", res
    assert res["unlink"] == "EBUSY", res
    assert res["rename_dir"] == "EBUSY", res  # the directory above a privileged file is pinned
    assert res["procfd"] == "EROFS", res
    assert res["mprotect"] == "EACCES", res


def test_mmap_cannot_rewrite_a_setuid_owner_binary_in_an_owners_grant(sandbox, host_dir):
    """The same with a grant owned by another user (uid 4321) and a setuid-4321 file in it: the
    workload writes as 4321 there, and 4321's privileges stay 4321's."""
    g = grant(host_dir, "g-alice", 4321, {"suid": (0o4755, False), "sgid": (0o2755, False)})
    before = {os.path.join(dp, f): digest(os.path.join(dp, f)) for dp, _, fs in os.walk(g) for f in fs}
    res = attack(sandbox(filesystem={"readwritePaths": [g]}), g, ["suid", "sgid"])
    assert host_unharmed(g, before) == [], res
    assert res["direct:suid"] == "EROFS" and res["direct:sgid"] == "EROFS", res
    assert res["unlink"] == "EBUSY", res


def test_plain_files_in_a_grant_stay_writable_through_mmap(sandbox, host_dir):
    """The defence binds only what is privileged: an ordinary executable in the grant (0755, no
    capability) is the workload's to rewrite, through mmap too, and a set-gid file without group
    execute (a mandatory-locking mark, no privilege) is left alone."""
    g = host_dir("g-plain", 0o755)
    planted_plain = os.path.join(g, "plain")
    shutil.copy(HELPER, planted_plain)
    os.chmod(planted_plain, 0o755)
    lock = os.path.join(g, "lock")
    with open(lock, "wb") as f:
        f.write(b"\0" * 8192)
    os.chmod(lock, 0o2644)
    before = digest(planted_plain)
    py = "/usr/bin/python3"  # the system one: /usr is in the view
    r = sandbox(filesystem={"readwritePaths": [g]}).run(
        "%s -c '%s' %s plain lock" % (py, ATTACK.replace("'", "'\\''"), g))
    assert r.rc == 0, r.describe()
    res = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
    assert res["direct:plain"] == "ok" and res["direct:lock"] == "ok", res
    assert digest(planted_plain) != before


def test_a_granted_set_id_file_and_a_grant_below_a_grant_are_read_only(sandbox, host_dir):
    """A read-write grant of one setuid-root file, and a read-write grant below another (walked
    once, through the outer one's walk or its own): each set-id file is EROFS to open for write."""
    d = host_dir("g-file", 0o755)
    one = planted(d, "one", 0, 0o4755)
    outer = grant(host_dir, "g-outer", 0, {"suid": (0o4755, False)})
    inner = os.path.join(outer, "sub")
    planted(inner, "inner", 0, 0o4755)
    before = {p: digest(p) for p in (one, os.path.join(outer, "suid"), os.path.join(inner, "inner"))}
    sb = sandbox(filesystem={"readwritePaths": [one, outer, inner]})
    res = attack(sb, outer, ["suid", "sub/inner", "../g-file/one"])
    assert all(res["direct:" + f] == "EROFS" for f in ("suid", "sub/inner", "../g-file/one")), res
    assert [p for p, h_ in before.items() if digest(p) != h_] == []


def _deep(d, levels, leaf_mode=None):
    """levels directories of 200-character names below d (a path longer than PATH_MAX), made one at
    a time by descriptor; leaf_mode: a copy of the helper there with that mode."""
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(levels):
            name = ("%03d" % i) * 66 + "xx"
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        if leaf_mode is not None:
            with open(HELPER, "rb") as src:
                data = src.read()
            f = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o755, dir_fd=fd)
            os.write(f, data)
            os.fchmod(f, leaf_mode)
            os.close(f)
    finally:
        os.close(fd)


def test_a_set_id_file_beyond_path_max_refuses_the_start(sandbox, host_dir):
    """The walk goes on below a path too long to name (4095 bytes), and only a privileged file
    found there refuses the start (fsview.setid, ENAMETOOLONG): nothing is left unwalked, and an
    ordinary deep tree starts."""
    g = host_dir("g-deep", 0o755)
    _deep(g, 25)
    assert sandbox(filesystem={"readwritePaths": [g]}).run("true").rc == 0
    g2 = host_dir("g-deep-suid", 0o755)
    _deep(g2, 25, 0o4755)
    try:
        text = sandbox(filesystem={"readwritePaths": [g2]}).run("true").stdout
    except AssertionError as e:  # a session: its start is what fails, and the fixture says so
        text = str(e)
    assert "fsview.setid" in text and "0x24" in text, text  # ENAMETOOLONG


def test_a_large_grant_s_walk_shared_out_finds_every_set_id_file(sandbox, host_dir):
    """Past 2000 files the walk is shared with forked workers, each checking a share of the
    directories the walk had not finished (src/base/setidscan.h): 80 directories of 100 files, a
    setuid-root file in each of them, and each is EROFS to open for write — none falls between the
    shares."""
    g = host_dir("g-large", 0o755)
    names = []
    for i in range(80):
        sub = os.path.join(g, "d%02d" % i)
        os.mkdir(sub)
        for j in range(100):
            with open(os.path.join(sub, "f%d" % j), "wb") as f:
                f.write(b"x" * 128)
        os.chmod(os.path.join(sub, "f%d" % (i * 7 % 100)), 0o4755)
        names.append("d%02d/f%d" % (i, i * 7 % 100))
    res = attack(sandbox(filesystem={"readwritePaths": [g]}), g, names)
    assert [n for n in names if res["direct:" + n] != "EROFS"] == [], res


def test_a_writable_mount_below_a_read_only_one_in_a_grant_is_walked(sandbox, host_dir):
    """A read-only mount in a read-write grant with a writable mount below it (host mounts): the walk
    enters the read-only one too, so the set-id-root file of the writable one is EROFS to open for
    write (review of this session's changes: the walk left the read-only mount, and with it the
    writable one below, whose file was rewritten through a shared mapping and kept 4755 root)."""
    g = host_dir("g-ro-rw", 0o755)
    ro, rw = os.path.join(g, "ro"), os.path.join(g, "ro", "rw")
    os.mkdir(ro)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=755", "mxc-test-ro", ro], check=True)
    try:
        os.mkdir(rw)
        subprocess.run(["mount", "-o", "remount,bind,ro", ro], check=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=755", "mxc-test-rw", rw], check=True)
        try:
            p = planted(rw, "suid", 0, 0o4755)
            before = digest(p)
            res = attack(sandbox(filesystem={"readwritePaths": [g]}), g, ["ro/rw/suid"])
            assert digest(p) == before, res
            assert res["direct:ro/rw/suid"] == "EROFS", res
        finally:
            subprocess.run(["umount", "-l", rw], check=False)
    finally:
        subprocess.run(["umount", "-l", ro], check=False)


def test_a_deep_chain_the_workload_makes_does_not_refuse_later_starts(sandbox, host_dir):
    """A chain of 530 directories the workload made with mkdir (no privileged file anywhere), beside
    2100 files (the walk shared out), does not refuse the next start of a sandbox granted it (review
    of this session's changes: fsview.setid ELOOP at every start, any sandbox of that grant)."""
    g = host_dir("g-deepdos", 0o755)
    for i in range(2100):
        open(os.path.join(g, "f%d" % i), "wb").close()
    sb = sandbox(filesystem={"readwritePaths": [g]})
    r = sb.run("cd %s && i=0; while [ $i -lt 530 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done" % g)
    assert r.rc == 0, r.describe()
    r = sandbox(filesystem={"readwritePaths": [g]}).run("touch %s/f0 && echo ok" % g)
    assert r.rc == 0 and "ok" in r.stdout, r.describe()


def test_a_set_id_file_deeper_than_the_walk_is_read_only(sandbox, host_dir):
    """512 directories down the walk stops and binds what is below read-only whole: a set-id-root
    file the host put 520 levels down is EROFS to open for write, and the start is not refused."""
    g = host_dir("g-deepsuid", 0o755)
    rel = "/".join(["d"] * 520)
    os.makedirs(os.path.join(g, rel))
    p = planted(os.path.join(g, rel), "suid", 0, 0o4755)
    before = digest(p)
    res = attack(sandbox(filesystem={"readwritePaths": [g]}), g, [rel + "/suid"])
    assert res["direct:" + rel + "/suid"] == "EROFS" and digest(p) == before, res
