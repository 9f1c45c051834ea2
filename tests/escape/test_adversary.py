"""The workload as an adversary who has read our source (issue 9, THREATS.md, last section).

Every attack runs on both surfaces where it applies — a one-shot `process` request, and execs
inside a live isolation session — and asserts the specific refusal and that the host is
unchanged: no setuid bit, /dev/null's mode and times, nothing created outside the policy.
"""
import base64
import ctypes
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import (HELPER, MXC_EXEC, Sandbox, Session, assert_ok_envelope, errno_of, h,
                      parse_envelope, unique, verb_result, wait_until)

CLAIMS = "/var/lib/mxc/claims"
UID_BASE = int(os.environ.get("MXC_UID_BASE", "2100000000"))
UID_COUNT = int(os.environ.get("MXC_UID_COUNT", "65536"))


def ok(r):
    assert r.rc == 0, r.describe()
    return r.stdout


def root_dir(parent, name, mode=0o755):
    """A directory owned by root with the given mode (as a caller's own project would be)."""
    d = os.path.join(parent, name)
    os.makedirs(d, exist_ok=True)
    os.chown(d, 0, 0)
    os.chmod(d, mode)
    return d


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def setid_files(d):
    out = []
    for dirpath, dirnames, filenames in os.walk(d):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                out.append(p)
    return out


# ------------------------------------------------------------------------------------------------
# 1. no workload is host root


def test_setuid_root_binary_cannot_be_planted(sandbox, scratch):
    g = root_dir(scratch, "g")
    sb = sandbox(filesystem={"readwritePaths": [g]})
    out = ok(sb.run("cp /bin/bash %s/rootsh && chmod 6755 %s/rootsh; echo chmod=$?; "
                    "install -m 4755 /bin/sh %s/s2; echo install=$?; " % (g, g, g)
                    + h("setid", g) + " 2>&1"))
    assert "chmod=1" in out and "install=1" in out, out
    for verb in ("setid_chmod", "setid_fchmod", "setid_fchmodat", "setid_fchmodat2", "setid_open",
                 "setid_openat", "setid_creat", "setid_mknod", "setid_mknodat", "setid_mkdir",
                 "setid_tmpfile"):
        assert errno_of(out, verb) == "EPERM", (verb, out)
    assert errno_of(out, "setid_openat2") == "ENOSYS", out  # its mode is out of seccomp's reach
    assert errno_of(out, "chmod_plain") == "ok", out  # ordinary modes still work
    assert verb_result(out, "setid_scan") == "none", out
    # on the host: the copy exists (writes into the grant work), owned by the grant's owner,
    # and nothing anywhere in the grant carries setuid/setgid
    st = os.stat(os.path.join(g, "rootsh"))
    assert (st.st_uid, st.st_gid) == (0, 0), st
    assert setid_files(g) == [], setid_files(g)


def test_host_device_nodes_cannot_be_changed(sandbox):
    """Every attempt would leave the node as it is even if it got through (same mode, same
    owner, only times and ctime would move): a broken build must not break the host."""
    before = os.stat("/dev/null")
    sb = sandbox()
    out = ok(sb.run("chmod 666 /dev/null 2>&1; chmod 0666 /dev/zero 2>&1; touch -c /dev/null 2>&1; "
                    "touch -c /dev/zero 2>&1; chown 0:0 /dev/null 2>&1; "
                    "truncate -s 0 /dev/null 2>&1; echo data > /dev/null && echo write-ok; true"))
    assert out.count("Read-only file system") >= 4, out
    assert "write-ok" in out, out  # the device itself still works
    after = os.stat("/dev/null")
    assert (after.st_mode, after.st_uid, after.st_ctime_ns, after.st_mtime_ns) == \
        (before.st_mode, before.st_uid, before.st_ctime_ns, before.st_mtime_ns)


def test_per_user_limits_are_the_sandbox_uids_own(sandbox, scratch):
    """The sandbox exhausts its inotify instances; host root can still make one."""
    d = root_dir(scratch, "inotify", 0o777)
    marker = os.path.join(d, "holding")
    sb = sandbox(filesystem={"readwritePaths": [d]})
    res = {}
    t = threading.Thread(target=lambda: res.update(r=sb.run(h("inotify_hold", marker))))
    t.start()
    try:
        assert wait_until(lambda: os.path.exists(marker), 60)
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(0o2000000)
        assert fd >= 0, "host root cannot make an inotify instance: %d" % ctypes.get_errno()
        os.close(fd)
    finally:
        if os.path.exists(marker):
            os.unlink(marker)
        t.join(90)
    out = res["r"].stdout
    assert verb_result(out, "inotify_hold").startswith("EMFILE"), out


def _claimed_uid(line):
    inner, outer, count = line.split()
    return int(inner), int(outer), int(count)


def test_oneshot_uid_is_claimed_from_the_range_and_released(mxc):
    r = mxc.oneshot("cat /proc/self/uid_map; id -u; id -g; echo $USER")
    lines = ok(r).split("\n")
    inner, outer, count = _claimed_uid(lines[0])
    assert (inner, count) == (1000, 1), lines
    assert UID_BASE <= outer < UID_BASE + UID_COUNT, lines
    assert lines[1:4] == ["1000", "1000", "agent"], lines
    # released once the run is over (by the detached cleaner, after PID 1's teardown)
    assert wait_until(lambda: not os.path.exists(os.path.join(CLAIMS, str(outer))), 30)


def test_session_uid_is_not_root_inside_or_out(session):
    r = session.exec("cat /proc/self/uid_map; id -u; id -un; echo $HOME")
    lines = ok(r).split("\n")
    inner, outer, count = _claimed_uid(lines[0])
    assert (inner, count) == (1000, 1) and str(outer) == session.metadata["agentUserSid"], lines
    assert UID_BASE <= outer < UID_BASE + UID_COUNT, lines
    assert lines[1:4] == ["1000", session.metadata["agentUserName"], session.workspace], lines
    claim = json.load(open(os.path.join(CLAIMS, str(outer))))
    assert claim["kind"] == "session", claim
    assert session.workspace in [w["path"] for w in claim["writable"]], claim
    assert_ok_envelope(session.deprovision())
    assert not os.path.exists(os.path.join(CLAIMS, str(outer)))


def _claim(uid):
    with open(os.path.join(CLAIMS, str(uid))) as f:
        return json.load(f)


def test_a_workspace_nested_deeper_than_a_removal_pass_is_removed_at_deprovision(session):
    """Review of issue 37: the tree removal refused anything deeper than 256 levels (ELOOP), and
    deprovision ignores the workspace's removal: a workload that nested its workspace 300 deep got
    `{"result":{}}` and left the workspace on disk, its uid claim released, nothing naming it for
    --gc (a disk filled across sandboxes).  Now what lies deeper is moved up and removed too."""
    ws = session.workspace
    r = session.exec("cd %s && i=0; while [ $i -lt 300 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done; "
                     "chmod 500 %s/d/d; echo made" % (ws, ws))
    assert r.rc == 0 and "made" in r.stdout, r.describe()
    assert_ok_envelope(session.deprovision())
    assert not os.path.exists(ws), ws


def test_claims_are_host_wide(mxc, scratch):
    """Two state roots on one host never hand out the same uid: the claim is in one place, it
    names the sandbox that holds it, and one root's deprovision never releases the other's."""
    other = tempfile.mkdtemp(prefix="mxc-other-root-")
    os.chmod(other, 0o755)
    oenv = {"MXC_STATE_DIR": other}
    b = None
    try:
        a = mxc.provision()
        b = mxc.provision(env=oenv)
        ua, ub = a["metadata"]["agentUserSid"], b["metadata"]["agentUserSid"]
        assert ua != ub
        assert _claim(ua)["stateDir"].startswith(mxc.state_dir + "/"), _claim(ua)
        assert _claim(ub)["stateDir"].startswith(other + "/"), _claim(ub)
        # a one-shot meanwhile gets a uid of its own, neither of theirs
        _, outer, _ = _claimed_uid(ok(mxc.oneshot("cat /proc/self/uid_map")).split("\n")[0])
        assert str(outer) not in (ua, ub)
        assert_ok_envelope(mxc.phase("deprovision", b["sandboxId"], env=oenv))
        assert not os.path.exists(os.path.join(CLAIMS, ub))
        assert _claim(ua)["stateDir"].startswith(mxc.state_dir + "/"), "b's deprovision released a's"
        assert_ok_envelope(mxc.phase("deprovision", a["sandboxId"]))
        assert not os.path.exists(os.path.join(CLAIMS, ua))
    finally:
        if b is not None:
            mxc.phase("deprovision", b["sandboxId"], env=oenv)
        shutil.rmtree(other, ignore_errors=True)
        shutil.rmtree(other + ".ws", ignore_errors=True)


def _one_free_uid():
    """A range of one uid that nothing holds, outside the default range (so that no other
    sandbox of this host, tests running beside us included, can claim it meanwhile)."""
    import random
    for _ in range(1000):
        u = 2100070000 + random.randrange(1000000)
        if not os.path.exists(os.path.join(CLAIMS, str(u))):
            return u
    pytest.skip("no unclaimed uid to test with")


def test_a_failed_claim_never_releases_another_sandboxs(mxc, scratch):
    """MXC_UID_COUNT=1 across two state roots: session A holds the one uid; a provision from the
    other root fails (no free uid) and must not delete A's claim on its way out (it used to:
    the failed claim left the name it last tried, A's, for the failure path to release), and a
    one-shot is refused while A lives instead of running as A's host uid."""
    u = _one_free_uid()
    rng = {"MXC_UID_BASE": str(u), "MXC_UID_COUNT": "1"}
    other = tempfile.mkdtemp(prefix="mxc-other-root-")
    os.chmod(other, 0o755)
    oenv = dict(rng, MXC_STATE_DIR=other)
    claim = os.path.join(CLAIMS, str(u))
    a = None
    try:
        a = Session(mxc, mxc.provision(env=rng))
        assert_ok_envelope(a.start(env=rng))
        assert a.metadata["agentUserSid"] == str(u), a.metadata
        held = open(claim).read()
        for _ in range(3):
            r = mxc({"containment": "isolation_session", "phase": "provision"}, env=oenv)
            assert r.rc != 0 and r.error and "no free uid" in r.error["message"], r.describe()
            assert os.path.exists(claim) and open(claim).read() == held, "A's claim was released"
            assert os.listdir(other) == [] or all(n.startswith(".") for n in os.listdir(other)), \
                os.listdir(other)
        r = mxc.oneshot("cat /proc/self/uid_map", host_env=rng)
        assert r.rc != 0 and r.error and "no free uid" in r.error["message"], r.describe()
        assert open(claim).read() == held, "A's claim was released"
        # A still runs as its uid
        _, outer, _ = _claimed_uid(ok(a.exec("cat /proc/self/uid_map")).split("\n")[0])
        assert outer == u
        assert_ok_envelope(a.deprovision())
        a = None
        assert not os.path.exists(claim)
        # the uid is free again: a one-shot gets it, and gives it back
        _, outer, _ = _claimed_uid(ok(mxc.oneshot("cat /proc/self/uid_map", host_env=rng))
                                   .split("\n")[0])
        assert outer == u
        assert wait_until(lambda: not os.path.exists(claim), 30)
    finally:
        if a is not None:
            a.stop()
            a.deprovision()
        shutil.rmtree(other, ignore_errors=True)
        shutil.rmtree(other + ".ws", ignore_errors=True)
        if os.path.exists(claim) and json.load(open(claim)).get("stateDir", "").startswith(
                (mxc.state_dir, other)):
            os.unlink(claim)


def test_proc_kernel_info_masked(sandbox):
    sb = sandbox()
    files = ["/proc/slabinfo", "/proc/vmallocinfo", "/proc/pagetypeinfo", "/proc/kallsyms",
             "/proc/timer_list", "/proc/sched_debug", "/proc/keys", "/proc/key-users",
             "/proc/kcore", "/proc/kmsg", "/proc/kpageflags"]
    out = ok(sb.run("for p in %s; do n=$(head -c 64 $p 2>/dev/null | wc -c); echo \"$p $n\"; done"
                    % " ".join(files)))
    for line in out.splitlines():
        path, n = line.split()
        assert n == "0", "%s readable inside: %s" % (path, out)


# ------------------------------------------------------------------------------------------------
# 2. masks that hold against the agent: renaming what was masked


@pytest.fixture
def masked_project(scratch):
    """P (read-write), P/.git/hooks (read-only), P/cfg/secret.txt (denied)."""
    p = root_dir(scratch, "P", 0o777)
    hooks = os.path.join(p, ".git", "hooks")
    os.makedirs(hooks)
    for d in (os.path.join(p, ".git"), hooks):
        os.chmod(d, 0o777)
    write(os.path.join(hooks, "pre-commit"), "#!/bin/sh\necho original hook\n", 0o777)
    os.makedirs(os.path.join(p, "cfg"))
    os.chmod(os.path.join(p, "cfg"), 0o777)
    token = unique("SECRET")
    write(os.path.join(p, "cfg", "secret.txt"), token + "\n", 0o666)
    policy = {"readwritePaths": [p], "readonlyPaths": [hooks],
              "deniedPaths": [os.path.join(p, "cfg", "secret.txt")]}
    return p, token, policy


RENAME_ATTACK = ("mv {p}/cfg {p}/cfg2 2>&1; mv {p}/.git {p}/.git2 2>&1; "
                 "mv {p}/.git/hooks {p}/h2 2>&1; mv {p}/cfg/secret.txt {p}/s2 2>&1; "
                 "rm -rf {p}/cfg 2>&1; true")


def _assert_masks_hold(sb, p, token):
    out = ok(sb.run("cat {p}/cfg/secret.txt 2>&1; cat {p}/cfg2/secret.txt 2>&1; "
                    "{{ echo pwned >> {p}/.git/hooks/pre-commit; }} 2>&1; "
                    "{{ echo pwned >> {p}/.git2/hooks/pre-commit; }} 2>&1; true".format(p=p)))
    assert token not in out, out
    assert "Read-only file system" in out, out
    assert open(os.path.join(p, ".git", "hooks", "pre-commit")).read() == \
        "#!/bin/sh\necho original hook\n"
    return out


def _assert_rename_refused(out, p, token):
    # the pinned directories and the masks are mount points: EBUSY; moving a mount point to
    # another directory makes mv copy and delete, which the read-only mount and the mask stop
    assert "cfg2': Device or resource busy" in out and ".git2': Device or resource busy" in out, out
    assert out.count("Device or resource busy") >= 3, out
    for name in ("cfg", ".git"):
        assert os.path.isdir(os.path.join(p, name)), "renamed on the host: " + out
    assert not os.path.exists(os.path.join(p, "cfg2"))
    assert open(os.path.join(p, "cfg", "secret.txt")).read() == token + "\n"


def test_masks_survive_renames_across_two_runs(mxc, masked_project):
    p, token, policy = masked_project
    sb = Sandbox(mxc, "process", filesystem=policy)
    _assert_rename_refused(ok(sb.run(RENAME_ATTACK.format(p=p))), p, token)
    _assert_masks_hold(sb, p, token)


def test_masks_survive_renames_across_a_session_restart(mxc, masked_project):
    p, token, policy = masked_project
    sb = Sandbox(mxc, "session", filesystem=policy)
    _assert_rename_refused(ok(sb.run(RENAME_ATTACK.format(p=p))), p, token)
    _assert_masks_hold(sb, p, token)
    assert_ok_envelope(sb.session.stop())
    assert_ok_envelope(sb.session.start())
    _assert_masks_hold(sb, p, token)


def test_missing_masked_path_under_a_writable_grant_fails_closed(mxc, backend, scratch):
    p = root_dir(scratch, "proj", 0o777)
    policy = {"readwritePaths": [p], "readonlyPaths": [os.path.join(p, ".git", "hooks")]}
    if backend == "process":
        r = Sandbox(mxc, "process", filesystem=policy).run("true")
    else:
        s = mxc.provision(filesystem=policy)
        r = mxc.phase("start", s["sandboxId"])
    assert r.rc != 0 and r.error, r.describe()
    assert r.error["code"] == "backend_error" and r.error.get("nativeCode") == "0x2", r.describe()
    assert ".git/hooks" in r.error["message"] and r.error.get("remediation"), r.describe()
    assert not os.path.exists(os.path.join(p, ".git")), "the setup created it on the host"


def test_missing_masked_path_outside_writable_grants_is_skipped(sandbox, scratch):
    d = root_dir(scratch, "ro-only")
    sb = sandbox(filesystem={"readonlyPaths": [d], "deniedPaths": [os.path.join(d, "nope")]})
    assert ok(sb.run("echo fine")) == "fine\n"


def test_grant_below_a_denied_path_is_reachable(sandbox, scratch):
    p = root_dir(scratch, "P2", 0o777)
    b = os.path.join(p, "b")
    c = os.path.join(b, "c")
    os.makedirs(c)
    write(os.path.join(b, "hidden.txt"), "HIDDEN\n")
    write(os.path.join(c, "shown.txt"), "SHOWN\n")
    sb = sandbox(filesystem={"readwritePaths": [p], "deniedPaths": [b], "readonlyPaths": [c]})
    out = ok(sb.run("cat %s/shown.txt; cat %s/hidden.txt 2>&1; ls %s 2>&1; { echo x > %s/new; } 2>&1; "
                    "true" % (c, b, b, c)))
    assert "SHOWN" in out and "HIDDEN" not in out, out
    assert "Permission denied" in out, out
    assert "Read-only file system" in out, out


def test_denied_symlink_masks_link_and_target(sandbox, scratch):
    d = root_dir(scratch, "links")
    real = root_dir(d, "real")
    write(os.path.join(real, "secret"), "TARGET-SECRET\n")
    os.symlink(os.path.join(real, "secret"), os.path.join(d, "link"))
    sb = sandbox(filesystem={"readonlyPaths": [d], "deniedPaths": [os.path.join(d, "link")]})
    out = ok(sb.run("cat %s/link 2>&1; cat %s/secret 2>&1; t=$(readlink %s/link 2>/dev/null); "
                    "echo \"readlink=$? [$t]\"; true" % (d, real, d)))
    assert "TARGET-SECRET" not in out, out
    assert out.count("Permission denied") == 2, out
    # the link itself is masked too: there is no link left to read, so not even where it points
    assert "readlink=1 []" in out, out


def test_denied_symlink_in_a_read_write_grant_masks_its_target(sandbox, scratch):
    """Issue 27, finding 10: `deniedPaths: [D/link]` with link -> D/secret inside a read-write grant D
    masked the link, but D/secret stayed readable (a link in the sandbox's own writable area was not
    followed).  The target is masked as the caller sees it, and the link too — also when the link is
    relative, and when it points into a directory of the grant."""
    d = root_dir(scratch, "rwlinks", 0o777)
    write(os.path.join(d, "secret"), "RW-TARGET-SECRET\n", 0o666)
    sub = root_dir(d, "keys", 0o777)
    write(os.path.join(sub, "id"), "RW-DIR-SECRET\n", 0o666)
    os.symlink(os.path.join(d, "secret"), os.path.join(d, "link"))
    os.symlink("keys", os.path.join(d, "dirlink"))
    sb = sandbox(filesystem={"readwritePaths": [d],
                             "deniedPaths": [os.path.join(d, "link"), os.path.join(d, "dirlink")]})
    out = ok(sb.run("cat %s/secret 2>&1; cat %s/link 2>&1; cat %s/keys/id 2>&1; cat %s/dirlink/id 2>&1; "
                    "echo fine > %s/other && cat %s/other; true" % (d, d, d, d, d, d)))
    assert "RW-TARGET-SECRET" not in out and "RW-DIR-SECRET" not in out, out
    assert out.count("Permission denied") + out.count("Not a directory") >= 4, out
    assert "fine" in out, out  # the rest of the grant is the workload's


def test_grant_through_a_symlinked_parent_works(sandbox, scratch):
    """A PATH entry like /usr/local/cuda/bin, where cuda is a symlink: resolved as the caller
    sees it, and reachable inside under the caller's path."""
    d = root_dir(scratch, "opt")
    real_bin = root_dir(root_dir(d, "cuda-12.4"), "bin")
    write(os.path.join(real_bin, "tool"), "#!/bin/sh\necho tool-ran\n", 0o755)
    os.symlink("cuda-12.4", os.path.join(d, "cuda"))
    sb = sandbox(filesystem={"readonlyPaths": [os.path.join(d, "cuda", "bin")]})
    out = ok(sb.run("%s/cuda/bin/tool; ls %s/cuda-12.4/bin" % (d, d)))
    assert out.split() == ["tool-ran", "tool"], out


def _setup(mxc, backend, policy):
    """The setup of a sandbox with this policy: a one-shot run, or a session's provision and
    start (whichever answers first with an error)."""
    if backend == "process":
        return Sandbox(mxc, "process", filesystem=policy).run("true")
    r = mxc({"containment": "isolation_session", "phase": "provision", "filesystem": policy})
    if r.rc == 0:
        r = mxc.phase("start", r.result["sandboxId"])
    return r


def _assert_link_refused(r, link):
    assert r.rc != 0 and r.error, r.describe()
    assert r.error.get("operation") == "fsview.resolve" and r.error.get("nativeCode") == "0x28", \
        r.describe()
    assert "symlink %s," % link in r.error["message"], r.describe()
    assert "this or another live sandbox can write" in r.error["message"], r.describe()


def test_symlink_in_a_live_sandboxs_writable_area_is_refused(mxc, session_factory, scratch, backend):
    shared = root_dir(scratch, "shared", 0o777)
    root_dir(shared, "real")
    session_factory(filesystem={"readwritePaths": [shared]})  # a live sandbox can write it
    link = os.path.join(shared, "lnk")
    os.symlink("real", link)
    _assert_link_refused(_setup(mxc, backend, {"readonlyPaths": [link]}), link)


INDEX = "/var/lib/mxc/claims.roots"  # the index of writable roots beside the claims (src/lib/wroots.h)


def test_a_live_sandboxs_writable_area_is_found_after_the_index_is_lost(mxc, session_factory, scratch):
    """The index's entries are not synced: the first lookup of a boot (its marker another boot's)
    rebuilds it from every claim, so a root whose entry a crash lost is found again."""
    shared = root_dir(scratch, "shared", 0o777)
    root_dir(shared, "real")
    session_factory(filesystem={"readwritePaths": [shared]})
    st = os.stat(shared)
    entry = os.path.join(INDEX, "%d-%d" % (st.st_dev, st.st_ino))
    assert os.listdir(entry), "the session's entry"
    shutil.rmtree(entry)  # as a crash before the entry reached the disk would have it
    for m in [m for m in os.listdir(INDEX) if m.startswith(".boot-")]:
        os.rename(os.path.join(INDEX, m), os.path.join(INDEX, ".boot-an-earlier-boot"))
    link = os.path.join(shared, "lnk")
    os.symlink("real", link)
    _assert_link_refused(_setup(mxc, "process", {"readonlyPaths": [link]}), link)
    assert os.listdir(entry), "rebuilt"


@pytest.mark.parametrize("grant", ["readwritePaths", "readonlyPaths"])
def test_the_index_of_writable_roots_is_never_granted(mxc, grant):
    """A sandbox that could write the index could remove a root from it (and one that reads it
    learns what the others can write): refused as mxc's claims directory is."""
    mxc.oneshot("true")  # the index made
    r = _setup(mxc, "process", {grant: [INDEX]})
    assert r.rc != 0 and "index of writable roots" in (r.error or {}).get("message", ""), r.describe()


def test_an_index_entry_counts_only_while_its_claim_lists_the_directory(mxc, scratch):
    """An entry left behind (its claim released by a process killed before it pruned it, or a claim
    of that name that now lists other directories) is not a writable root: the lookup reads the
    claim it names.  --gc removes it."""
    shared = root_dir(scratch, "shared", 0o777)
    root_dir(shared, "real")
    link = os.path.join(shared, "lnk")
    os.symlink("real", link)
    mxc.oneshot("true")  # the index made and current for this boot
    st = os.stat(shared)
    entry = os.path.join(INDEX, "%d-%d" % (st.st_dev, st.st_ino))
    os.mkdir(entry, 0o700)
    claims = sorted(os.listdir("/var/lib/mxc/claims"))
    live = [c for c in claims if not c.startswith(".")][:1]
    for name in ["2099999999"] + live:  # a claim that does not exist; another's, which lists other dirs
        open(os.path.join(entry, name), "w").close()
    r = _setup(mxc, "process", {"readonlyPaths": [link]})
    assert r.rc == 0, r.describe()
    g = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, text=True, env=mxc.env(), timeout=120)
    assert g.returncode == 0, g.stdout + g.stderr
    assert json.loads(g.stdout)["result"]["swept"]["writableIndex"] >= 1 + len(live), g.stdout
    assert not os.path.exists(entry), os.listdir(entry)


def test_symlink_refused_while_sandboxes_sharing_the_area_come_and_go(mxc, scratch):
    """The race: a grant resolved right after another sandbox's claim on a writable directory was
    made sees it (its index entry is made before the provision answers), and one resolved after
    the claim is released does not; meanwhile other sessions with the same directory are made and
    released (each release prunes the directory's entries under the index's exclusive lock) and
    never remove a live claim's entry."""
    shared = root_dir(scratch, "shared", 0o777)
    root_dir(shared, "real")
    link = os.path.join(shared, "lnk")
    os.symlink("real", link)
    stop, errors = threading.Event(), []

    def churn():
        while not stop.is_set():
            try:
                sid = mxc.provision(filesystem={"readwritePaths": [shared]})["sandboxId"]
            except AssertionError as e:
                errors.append(e)
                return
            mxc.phase("deprovision", sid)

    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(12):
            sid = mxc.provision(filesystem={"readwritePaths": [shared]})["sandboxId"]
            _assert_link_refused(_setup(mxc, "process", {"readonlyPaths": [link]}), link)
            assert mxc.phase("deprovision", sid).rc == 0
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    r = _setup(mxc, "process", {"readonlyPaths": [link]})  # none left that can write it
    assert r.rc == 0, r.describe()


def test_symlink_in_the_sandboxs_own_writable_grant_is_refused(mxc, scratch, backend):
    """No other sandbox is live: the link lies in this sandbox's own read-write grant, where its
    workload could have planted it (or swap it between runs)."""
    own = root_dir(scratch, "own", 0o777)
    root_dir(own, "real")
    link = os.path.join(own, "lnk")
    os.symlink("real", link)
    _assert_link_refused(_setup(mxc, backend, {"readwritePaths": [own], "readonlyPaths": [link]}),
                         link)
    assert sorted(os.listdir(own)) == ["lnk", "real"], os.listdir(own)


# ------------------------------------------------------------------------------------------------
# 3. masks that hold against the host: editors replace files by rename


def test_host_edits_do_not_unmask_a_running_session(mxc, scratch):
    p = root_dir(scratch, "hp", 0o777)
    env = os.path.join(p, ".env")
    secrets = os.path.join(p, "secrets")
    conf = os.path.join(p, "conf.json")
    write(env, "TOKEN=one\n", 0o666)
    os.makedirs(secrets)
    write(os.path.join(secrets, "key"), "KEY-ONE\n", 0o666)
    write(conf, '{"a": 1}\n', 0o666)
    sb = Sandbox(mxc, "session", filesystem={"readwritePaths": [p], "deniedPaths": [env, secrets],
                                             "readonlyPaths": [conf]})
    probe = ("cat {e} 2>&1; ls {s} 2>&1; cat {s}/key 2>&1; {{ echo pwned >> {c}; }} 2>&1; cat {c}; "
             "true").format(e=env, s=secrets, c=conf)
    out = ok(sb.run(probe))
    assert "TOKEN" not in out and "KEY-" not in out and "Read-only" in out, out
    # the host edits the usual ways: sed -i (write a copy, rename it over), move a directory
    # away and make a new one, an editor saving conf.json
    subprocess.run(["sed", "-i", "s/one/two/", env], check=True)
    os.rename(secrets, secrets + ".old")
    os.makedirs(secrets)
    write(os.path.join(secrets, "key"), "KEY-TWO\n", 0o666)
    write(conf + ".swp", '{"a": 2}\n', 0o666)
    os.rename(conf + ".swp", conf)
    out = ok(sb.run(probe))
    assert "TOKEN" not in out and "KEY-" not in out, out
    assert "Read-only file system" in out, out
    assert open(conf).read() == '{"a": 2}\n', "the sandbox appended to a read-only file"


def test_host_edit_during_a_run_is_masked_again_from_the_next_run(mxc, scratch, backend):
    """The documented gap (docs/security.md, known gaps), pinned on both surfaces: a host
    `sed -i` of a denied file while a one-shot or a session exec runs drops the mask for what
    is left of that run (the kernel detaches a mount whose dentry is replaced, and gives no
    hook before it does); the next one-shot builds its masks afresh, and the session's next
    exec re-masks before anything of it runs."""
    p = root_dir(scratch, "ep", 0o777)
    env = os.path.join(p, ".env")
    write(env, "TOKEN=one\n", 0o666)
    ready, go = os.path.join(p, "ready"), os.path.join(p, "go")
    sb = Sandbox(mxc, backend, filesystem={"readwritePaths": [p], "deniedPaths": [env]})
    probe = "cat {e} 2>&1; true".format(e=env)
    out = ok(sb.run(probe))
    assert "TOKEN" not in out and "Permission denied" in out, out
    # a run in flight: masked when it starts; the host edits; it looks again
    running = mxc.popen(sb.request("cat {e} 2>&1; touch {r}; n=0; while [ ! -e {g} ] && "
                                   "[ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done; echo ---; "
                                   "cat {e} 2>&1; true".format(e=env, r=ready, g=go)))
    try:
        assert wait_until(lambda: os.path.exists(ready), 60), "the run never started"
        subprocess.run(["sed", "-i", "s/one/two/", env], check=True)
        open(go, "w").close()
        stdout, stderr = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
            running.communicate()
    before, _, after = stdout.decode().partition("---\n")
    assert "TOKEN" not in before and "Permission denied" in before, stdout
    # the window: this run saw the host's new file (if this fails the gap is closed — update
    # docs/security.md and make this assertion the defence's)
    assert "TOKEN=two" in after, stdout
    # the next run (a fresh one-shot; the session's next exec) is masked again
    for _ in range(2):
        out = ok(sb.run(probe))
        assert "TOKEN" not in out and "Permission denied" in out, out
    assert open(env).read() == "TOKEN=two\n"


# ------------------------------------------------------------------------------------------------
# 4. setup never follows a link: racing a concurrent sandbox's setup


def test_symlink_swap_race_against_setup(mxc, scratch, backend):
    """Sandbox A (a live session with S read-write) swaps S/x between a directory and a symlink
    to a directory R outside every policy, as fast as it can; sandbox B's setups, whose policy
    names S/x/y/f.conf, either run with the real file or fail closed — and R stays empty.
    R is world-writable: a session's setup runs in its holder as the sandbox's own uid, which a
    root-only R would stop by permissions alone (the test could then not catch a setup that
    follows the link there); a one-shot's setup as root would write into either."""
    s = root_dir(scratch, "S", 0o777)
    # R outside /tmp: the holder's own mount namespace covers /tmp with the new root
    r_dir = tempfile.mkdtemp(prefix="mxc-race-R-", dir="/var/tmp")
    os.chmod(r_dir, 0o777)
    x = root_dir(s, "x", 0o777)
    os.makedirs(os.path.join(x, "y"))
    write(os.path.join(x, "y", "f.conf"), "REAL\n")
    os.symlink(r_dir, os.path.join(s, "x.alt"))
    a = Sandbox(mxc, "session", filesystem={"readwritePaths": [s]})
    swapper = mxc.popen(a.request(h("swaploop", s, 20)))
    outcomes = {"ran": 0, "refused": 0}
    try:
        deadline = time.monotonic() + 15
        policy = {"readonlyPaths": [s, os.path.join(s, "x", "y", "f.conf")]}
        while time.monotonic() < deadline:
            if backend == "process":
                r = Sandbox(mxc, "process", filesystem=policy).run("cat %s/x/y/f.conf" % s)
            else:
                res = mxc.provision(filesystem=policy)
                r = mxc.phase("start", res["sandboxId"])
                if r.rc == 0:
                    r = mxc.exec(res["sandboxId"], "cat %s/x/y/f.conf" % s)
                    mxc.phase("stop", res["sandboxId"])
                mxc.phase("deprovision", res["sandboxId"])
            if r.rc == 0:
                assert r.stdout == "REAL\n", r.describe()
                outcomes["ran"] += 1
            elif r.rc == 1 and r.envelope is None:
                # ran; the real x had just been swapped to x.alt, with the grant on it
                assert r.stdout == "", r.describe()
                outcomes["ran"] += 1
            else:
                assert r.error and r.error["code"] == "backend_error", r.describe()
                outcomes["refused"] += 1
            if os.listdir(r_dir):
                break
    finally:
        swapper.kill()
        swapper.communicate()
        leftovers = os.listdir(r_dir)
        shutil.rmtree(r_dir, ignore_errors=True)
    assert leftovers == [], "setup created %r in R" % leftovers
    assert outcomes["ran"] + outcomes["refused"] >= 10, outcomes


# ------------------------------------------------------------------------------------------------
# 5. requests stay secret: an earlier exec scanning /proc


def test_earlier_exec_cannot_read_a_later_execs_request(mxc, scratch):
    d = root_dir(scratch, "scan", 0o777)
    log = os.path.join(d, "hits")
    marker = unique("GHTOKEN")
    needles = os.path.join(d, "needles")
    write(needles, marker + "\nconfig-base64\nmxc-exec\n", 0o644)
    sb = Sandbox(mxc, "session", filesystem={"readwritePaths": [d]})
    scanner = mxc.popen(sb.request(h("scan_proc", 12, log, needles) + " > %s/report" % d))
    time.sleep(1)
    for i in range(15):
        req = sb.request("echo run-%d; sleep 0.2" % i, env=["GITHUB_TOKEN=" + marker])
        r = mxc(req, via="base64")  # as the SDK calls: the request in argv
        assert r.rc == 0 and r.stdout == "run-%d\n" % i, r.describe()
    scanner.communicate(timeout=60)
    report = open(os.path.join(d, "report")).read()
    assert verb_result(report, "scan_proc").startswith("ok"), report
    hits = open(log).read() if os.path.exists(log) else ""
    assert marker not in hits, "a later exec's request leaked: " + hits[:500]
    assert "hits=0" in report, report


def test_workload_cannot_see_mxcs_processes(sandbox):
    sb = sandbox()
    out = ok(sb.run("for p in /proc/[0-9]*; do echo ${p#/proc/}; done; "
                    "cat /proc/1/cmdline /proc/1/environ 2>&1; true"))
    pids = [int(x) for x in out.split() if x.isdigit()]
    assert 1 not in pids, out
    assert "mxc-exec" not in out and "config" not in out, out


def test_an_exec_cannot_touch_another_exec_of_its_session(mxc, scratch):
    """THREATS: ptrace, process_vm_readv, /proc/PID/mem and signals against a sibling exec (same uid,
    same PID namespace). Each exec is a Landlock domain of its own: the victim is invisible in /proc
    (hidepid=invisible), cannot be signalled (Landlock's signal scope) or traced or read, and runs on."""
    d = root_dir(scratch, "sibling", 0o777)
    pidfile = os.path.join(d, "pid")
    sb = Sandbox(mxc, "session", filesystem={"readwritePaths": [d]})
    victim = mxc.popen(sb.request("echo $$ > %s/pid.tmp && mv %s/pid.tmp %s; exec sleep 60" % (d, d, pidfile)))
    try:
        assert wait_until(lambda: os.path.exists(pidfile), 20), "the victim exec never ran"
        pid = open(pidfile).read().strip()
        assert pid.isdigit(), pid
        r = mxc(sb.request("; ".join([
            h("kill", pid, 9), h("kill", pid, 0), h("ptrace_attach", pid), h("process_vm_readv", pid, "400000"),
            h("read", "/proc/%s/mem" % pid), h("read", "/proc/%s/environ" % pid),
            "test -e /proc/%s && echo proc: visible || echo proc: invisible" % pid])))
        assert r.rc == 0, r.describe()
        assert errno_of(r.stdout, "kill") == "EPERM", r.describe()  # both kills: the first line answers
        assert r.stdout.count("kill: EPERM") == 2, r.describe()
        assert errno_of(r.stdout, "ptrace_attach") in ("EPERM", "ESRCH"), r.describe()
        assert errno_of(r.stdout, "process_vm_readv") in ("EPERM", "ESRCH"), r.describe()
        reads = [l.split(": ")[1] for l in r.stdout.splitlines() if l.startswith("read:")]
        assert reads == ["ENOENT", "ENOENT"], r.describe()
        assert "proc: invisible" in r.stdout, r.describe()
        time.sleep(0.2)
        assert victim.poll() is None, "the victim exec died"
    finally:
        sb.session.stop()
        victim.communicate(timeout=30)


# ------------------------------------------------------------------------------------------------
# a setup failure says where it happened


def test_setup_failure_in_pid1_reports_its_stage(mxc, backend):
    """A grant whose place in the view is one of mxc's own symlinks (/dev/ptmx -> pts/ptmx):
    PID 1 refuses to mount through it, and its stage and errno reach the caller.  Whether the
    caller's last send found PID 1 still there is left to timing here; the next test makes
    the lost-message case certain."""
    policy = {"readonlyPaths": ["/dev/ptmx"]}
    if backend == "process":
        r = Sandbox(mxc, "process", filesystem=policy).run("true")
    else:
        s = mxc.provision(filesystem=policy)
        r = mxc.phase("start", s["sandboxId"])
    assert r.rc != 0 and r.error, r.describe()
    assert r.error.get("operation") == "fsview.grants", r.describe()
    assert r.error.get("nativeCode") == "0x28", r.describe()


def test_setup_failure_reported_when_pid1_is_gone_before_the_cgroup_is_handed_over(mxc):
    """The lost-MSG_FAIL case, made certain: on the direct one-shot path PID 1 builds the view
    while the caller makes the cgroup; the caller's sends are held back (strace delays every
    sendmsg of mxc-exec itself, not of PID 1), so PID 1 fails at fsview.grants, queues its
    MSG_FAIL and exits before the caller's MSG_CGROUP_DONE goes out — that send fails (EPIPE),
    and the queued stage and errno must still be the answer, not 'PID 1 died during setup'."""
    if not shutil.which("strace"):
        pytest.fail("strace is missing: scripts/deps.sh installs it")
    req = {"containment": "process", "process": {"commandLine": "true"},
           "filesystem": {"readonlyPaths": ["/dev/ptmx"]}}
    for i in range(3):
        log = os.path.join(mxc.scratch, "strace-%d" % i)
        p = subprocess.run(["strace", "-qq", "-o", log, "-e", "trace=sendmsg",
                            "-e", "inject=sendmsg:delay_enter=300000", MXC_EXEC, "--config", "-"],
                           input=json.dumps(req).encode(), capture_output=True, env=mxc.env(),
                           timeout=60)
        trace = open(log).read()
        # the case under test happened: a send of the caller's found PID 1 gone
        assert any("sendmsg(" in line and "= -1 EPIPE" in line for line in trace.splitlines()), trace
        env = parse_envelope(p.stdout)
        assert p.returncode != 0 and env and "error" in env, (p.returncode, p.stdout, p.stderr)
        err = env["error"]
        assert err.get("operation") == "fsview.grants", err
        assert err.get("nativeCode") == "0x28", err
        assert "Too many levels of symbolic links" in err["message"], err
