"""process.noNewPrivileges false, honoured inside the container's own ids: a set-uid program of the
image owned by the container's root (disk 0, the idmapped rootfs shows it as the container's 0)
raises a uid-1000 process to the container's root — on the host, the range's base, never 0 — and
no further (absent is false, the spec's default); true keeps no_new_privs, so it stays 1000.  exec's
process.json and `exec --no-new-privs` the same way.  The seccomp baseline and a config's own
profile are still loaded (the process keeps CAP_SYS_ADMIN of its own user namespace to load them,
and loses it at its execve).  A set-uid file in a bind (host files) gains nothing: binds are nosuid.
(The image's busybox drops a set-uid it does not need for `id`: its FEATURE_SUID; the test's
helper keeps it, and prints /proc/self/status.)

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_nnp.py
"""
import json
import os
import shutil
import time

import pytest

from test_oci import add_helper, host_maps, oci  # noqa: F401  (the fixture)
from test_oci_escape import HELPER

ZERO = "0000000000000000"


def _status(out):
    f = {}
    for line in out.splitlines():
        k = line.split(":")[0]
        if k in ("Uid", "Gid", "CapEff", "CapPrm", "NoNewPrivs", "Seccomp", "Seccomp_filters"):
            f[k] = line.split(":", 1)[1].split()
    return f


def _suid_bundle(oci, args, nnp, where="rootfs", profile=False, readonly=True):  # noqa: F811
    d = os.path.join(oci.base, "suid-host")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)

    def mutate(c):
        c["process"]["user"] = {"uid": 1000, "gid": 1000}
        if nnp is None:
            c["process"].pop("noNewPrivileges", None)
        else:
            c["process"]["noNewPrivileges"] = nnp
        if where == "bind":
            c["mounts"].append({"destination": "/suid", "type": "bind", "source": d, "options": ["bind", "ro"]})
        if profile:  # a config's own profile: allow all but getppid (EPERM) (proves it is loaded)
            c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
                                     "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO"}]}
    b = oci.bundle(args, mutate, readonly=readonly)
    add_helper(b)
    exe = os.path.join(d if where == "bind" else os.path.join(b, "rootfs", "suid"), "helper-suid")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    shutil.copy(HELPER, exe)
    os.chown(exe, 0, 0)      # disk 0: the container's root through the idmapped rootfs
    os.chmod(exe, 0o4755)
    return b


def test_no_new_privileges_false_raises_to_the_container_s_root_only(oci):  # noqa: F811
    b = _suid_bundle(oci, ["sh", "-c", "grep -E '^Cap(Prm|Eff)' /proc/self/status; /suid/helper-suid status"],
                     False)
    rc, out, err = oci("run", "--bundle", b, "nnp-off")
    assert rc == 0, err
    f = _status(out)
    assert f["Uid"] == ["1000", "0", "0", "0"], out     # the set-uid bit honoured: the container's root
    assert f["NoNewPrivs"] == ["0"], out
    assert f["Seccomp"] == ["2"] and int(f["Seccomp_filters"][0]) >= 1, out  # the baseline still loaded
    # no CAP_SYS_ADMIN (bit 21) left from the loader: not in uid 1000's sets (its grep), nor in the
    # raised process's (the config's bounding set: what a set-uid root program gets)
    caps = [int(line.split()[1], 16) for line in out.splitlines() if line.startswith(("CapPrm", "CapEff"))]
    assert caps[:2] == [0, 0], out
    assert not int(f["CapPrm"][0], 16) & (1 << 21) and int(f["CapPrm"][0], 16) == int(f["CapEff"][0], 16), out


def test_no_new_privileges_false_as_the_container_s_root(oci):  # noqa: F811
    def root(c):
        c["process"]["noNewPrivileges"] = False
    b = oci.bundle(["sh", "-c", "grep -E '^(CapPrm|CapBnd|NoNewPrivs|Seccomp:)' /proc/self/status"], root)
    rc, out, err = oci("run", "--bundle", b, "nnp-root")
    assert rc == 0, err
    f = {line.split(":")[0]: line.split()[1] for line in out.splitlines()}
    assert f["NoNewPrivs"] == "0" and f["Seccomp"] == "2", out
    assert f["CapPrm"] == f["CapBnd"] and not int(f["CapPrm"], 16) & (1 << 21), out


def test_the_raised_process_is_the_range_s_base_on_the_host(oci):  # noqa: F811
    b = _suid_bundle(oci, ["/suid/helper-suid", "wait_file", "/never", "600"], False)
    pidfile = os.path.join(oci.base, "pid-nnp")
    assert oci.create("nnp-host", b, "--pid-file", pidfile)[0] == 0
    assert oci("start", "nnp-host")[0] == 0
    pid = int(open(pidfile).read())
    base = host_maps(pid)[0][1]
    assert base > 0
    uids = None
    for _ in range(100):
        with open("/proc/%d/status" % pid) as f:
            uids = [line.split()[1:] for line in f if line.startswith("Uid:")][0]
        if uids[1] == str(base):
            break
        time.sleep(0.1)
    assert uids == [str(base + 1000), str(base), str(base), str(base)], (uids, base)  # never 0
    assert oci("delete", "--force", "nnp-host")[0] == 0


def test_no_new_privileges_true_keeps_the_uid(oci):  # noqa: F811
    b = _suid_bundle(oci, ["/suid/helper-suid", "status"], True)
    rc, out, err = oci("run", "--bundle", b, "nnp-on")
    assert rc == 0, err
    f = _status(out)
    assert f["Uid"] == ["1000"] * 4 and f["NoNewPrivs"] == ["1"], out
    assert f["CapEff"] == [ZERO] and f["CapPrm"] == [ZERO], out


def test_no_new_privileges_absent_is_the_spec_s_false(oci):  # noqa: F811
    """Absent is false (the spec's default): Go's runtimes (containerd, Podman) serialize a false
    noNewPrivileges by omitting it, so a kubelet's allowPrivilegeEscalation (true by default)
    reaches mxc-oci as no field at all."""
    b = _suid_bundle(oci, ["/suid/helper-suid", "status"], None)
    rc, out, err = oci("run", "--bundle", b, "nnp-absent")
    assert rc == 0, err
    f = _status(out)
    assert f["Uid"] == ["1000", "0", "0", "0"] and f["NoNewPrivs"] == ["0"], out


def test_a_set_uid_file_in_a_bind_gains_nothing_without_no_new_privs(oci):  # noqa: F811
    b = _suid_bundle(oci, ["/suid/helper-suid", "status"], False, where="bind")
    rc, out, err = oci("run", "--bundle", b, "nnp-bind")
    assert rc == 0, err
    f = _status(out)
    assert f["Uid"] == ["1000"] * 4 and f["NoNewPrivs"] == ["0"], out  # binds are nosuid
    assert f["CapEff"] == [ZERO] and f["CapPrm"] == [ZERO], out


def test_the_config_s_profile_is_loaded_without_no_new_privs(oci):  # noqa: F811
    b = _suid_bundle(oci, ["sh", "-c", "mxc-test-helper pid; /suid/helper-suid status"], False,
                     profile=True)
    rc, out, err = oci("run", "--bundle", b, "nnp-prof")
    assert rc == 0, err
    assert "ppid=-1 " in out, out          # getppid: EPERM, the profile's
    f = _status(out)
    assert f["Uid"] == ["1000", "0", "0", "0"] and int(f["Seccomp_filters"][0]) >= 2, out


def test_exec_honours_no_new_privileges(oci):  # noqa: F811
    b = _suid_bundle(oci, ["sleep", "60"], False)
    assert oci.create("nnp-exec", b)[0] == 0
    assert oci("start", "nnp-exec")[0] == 0
    rc, out, err = oci("exec", "nnp-exec", "/suid/helper-suid", "status")   # the config's: false
    assert rc == 0, err
    assert _status(out)["Uid"] == ["1000", "0", "0", "0"], out
    rc, out, err = oci("exec", "--no-new-privs", "nnp-exec", "/suid/helper-suid", "status")
    assert rc == 0, err
    assert _status(out)["Uid"] == ["1000"] * 4 and _status(out)["NoNewPrivs"] == ["1"], out
    for nnp, want in ((True, ["1000"] * 4), (False, ["1000", "0", "0", "0"])):
        proc = os.path.join(oci.base, "process.json")
        with open(proc, "w") as f:
            json.dump({"args": ["/suid/helper-suid", "status"], "cwd": "/", "user": {"uid": 1000, "gid": 1000},
                       "env": ["PATH=/bin"], **({"noNewPrivileges": True} if nnp else {})}, f)
        rc, out, err = oci("exec", "--process", proc, "nnp-exec")
        assert rc == 0, err
        assert _status(out)["Uid"] == want, (nnp, out)
    assert oci("delete", "--force", "nnp-exec")[0] == 0


def test_host_network_scope_is_still_applied_without_no_new_privs(oci):  # noqa: F811
    """The host network's Landlock scope (landlock_restrict_self) needs no_new_privs or CAP_SYS_ADMIN:
    it is loaded with the kept CAP_SYS_ADMIN (a failed load fails the run), and none is left after."""
    from test_oci import _no_netns

    def mutate(c):
        _no_netns(c)
        c["process"]["noNewPrivileges"] = False
        c["process"]["user"] = {"uid": 1000, "gid": 1000}
    b = oci.bundle(["sh", "-c", "grep -E '^(NoNewPrivs|CapPrm)' /proc/self/status"], mutate)
    rc, out, err = oci("run", "--bundle", b, "nnp-hostnet")
    assert rc == 0, err
    assert out.split() == ["CapPrm:", "0000000000000000", "NoNewPrivs:", "0"], out


@pytest.mark.parametrize("uid", [0, 1000])
def test_the_waiting_init_s_loader_capability_is_out_of_the_container_s_reach(oci, uid):  # noqa: F811
    """The attack on the window: the init (uid 0 or 1000) waits for start holding CAP_SYS_ADMIN of the container's user
    namespace (kept to load the filters without no_new_privs); a process exec'd into the created
    container as its root, and as uid 1000, cannot ptrace it nor read its memory, descriptors or
    environment (the baseline refuses ptrace; the kernel refuses a tracer not holding every capability
    its target holds)."""
    b = _suid_bundle(oci, ["sleep", "60"], False)
    with open(os.path.join(b, "config.json")) as f:
        c = json.load(f)
    c["process"]["user"] = {"uid": uid, "gid": uid}
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f)
    assert oci.create("nnp-window", b)[0] == 0
    probe = ("mxc-test-helper ptrace_attach 1; grep CapEff /proc/1/status; "
             "cat /proc/1/environ >/dev/null 2>&1 && echo environ: read || echo environ: refused; "
             "ls /proc/1/fd >/dev/null 2>&1 && echo fd: listed || echo fd: refused; "
             "head -c1 /proc/1/mem >/dev/null 2>&1 && echo mem: read || echo mem: refused")
    for user in ("0:0", "1000:1000"):
        rc, out, err = oci("exec", "--user", user, "nnp-window", "sh", "-c", probe)
        assert rc == 0, err
        assert "ptrace_attach: EPERM" in out, out
        assert int(out.split("CapEff:")[1].split()[0], 16) & (1 << 21), out   # the init holds it ...
        assert "environ: refused" in out and "fd: refused" in out and "mem: refused" in out, (user, out)
    assert oci("delete", "--force", "nnp-window")[0] == 0


def test_no_new_privileges_false_in_a_read_write_rootfs(oci):  # noqa: F811
    """A read-write rootfs's set-id files are bound read-only (a shared mapping would keep their bit
    on the host: setidscan.h) but not nosuid: the image's set-uid program still raises to the
    container's root, and is still not writable (critest's "should allow privilege escalation when
    false" failed with the binds nosuid)."""
    b = _suid_bundle(oci, ["sh", "-c", "/suid/helper-suid status; grep ' /suid/helper-suid ' /proc/self/mountinfo"],
                     False, readonly=False)
    rc, out, err = oci("run", "--bundle", b, "nnp-rw")
    assert rc == 0, err
    f = _status(out)
    assert f["Uid"] == ["1000", "0", "0", "0"] and f["NoNewPrivs"] == ["0"], out
    bind = [line.split() for line in out.splitlines() if " /suid/helper-suid " in line]
    assert bind and bind[-1][5].split(",")[0] == "ro" and "nosuid" not in bind[-1][5], out
