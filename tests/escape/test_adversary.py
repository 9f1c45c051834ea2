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

from conftest import (HELPER, MXC_EXEC, Sandbox, assert_ok_envelope, errno_of, h, unique,
                      verb_result, wait_until)

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


def test_claims_are_host_wide(mxc, scratch):
    """Two state roots on one host never hand out the same uid: the claim is in one place."""
    other = tempfile.mkdtemp(prefix="mxc-other-root-")
    try:
        a = mxc.provision()
        b = mxc.provision(env={"MXC_STATE_DIR": other})
        ua, ub = a["metadata"]["agentUserSid"], b["metadata"]["agentUserSid"]
        assert ua != ub
        for u in (ua, ub):
            assert os.path.exists(os.path.join(CLAIMS, u)), u
        mxc.phase("deprovision", b["sandboxId"], env={"MXC_STATE_DIR": other})
    finally:
        shutil.rmtree(other, ignore_errors=True)


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
    out = ok(sb.run("cat %s/link 2>&1; cat %s/secret 2>&1; readlink %s/link; true"
                    % (d, real, d)))
    assert "TARGET-SECRET" not in out, out
    assert out.count("Permission denied") == 2, out


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


def test_symlink_in_a_live_sandboxs_writable_area_is_refused(mxc, session_factory, scratch):
    shared = root_dir(scratch, "shared", 0o777)
    root_dir(shared, "real")
    session_factory(filesystem={"readwritePaths": [shared]})  # a live sandbox can write it
    os.symlink("real", os.path.join(shared, "lnk"))
    r = Sandbox(mxc, "process", filesystem={"readonlyPaths": [os.path.join(shared, "lnk")]}).run("true")
    assert r.rc != 0 and r.error, r.describe()
    assert r.error.get("nativeCode") == "0x28" and "another live sandbox" in r.error["message"], r.describe()


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


# ------------------------------------------------------------------------------------------------
# 4. setup never follows a link: racing a concurrent sandbox's setup


def test_symlink_swap_race_against_setup(mxc, scratch, backend):
    """Sandbox A (a live session with S read-write) swaps S/x between a directory and a symlink
    to a root-only directory R, as fast as it can; sandbox B's setups, whose policy names
    S/x/y/f.conf, either run with the real file or fail closed — and R stays empty."""
    s = root_dir(scratch, "S", 0o777)
    # R outside /tmp: the holder's own mount namespace covers /tmp with the new root
    r_dir = tempfile.mkdtemp(prefix="mxc-race-R-", dir="/var/tmp")
    os.chmod(r_dir, 0o700)
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


# ------------------------------------------------------------------------------------------------
# a setup failure says where it happened


def test_setup_failure_in_pid1_reports_its_stage(mxc, backend):
    """A grant whose place in the view is one of mxc's own symlinks (/dev/ptmx -> pts/ptmx):
    PID 1 refuses to mount through it, and its stage and errno reach the caller (they used to
    be lost behind 'the sandbox's PID 1 died during setup')."""
    policy = {"readonlyPaths": ["/dev/ptmx"]}
    if backend == "process":
        r = Sandbox(mxc, "process", filesystem=policy).run("true")
    else:
        s = mxc.provision(filesystem=policy)
        r = mxc.phase("start", s["sandboxId"])
    assert r.rc != 0 and r.error, r.describe()
    assert r.error.get("operation") == "fsview.grants", r.describe()
    assert r.error.get("nativeCode") == "0x28", r.describe()
