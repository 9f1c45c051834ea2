"""process.apparmorProfile (docs/oci.md "AppArmor"; issue 39): containerd's CRI sets it on every
container of a node with AppArmor ("cri-containerd.apparmor.d", its runtime/default), and mxc-oci
applies it as runc does: "exec PROFILE" written to the process's AppArmor exec attribute
(/proc/thread-self/attr/apparmor/exec, else attr/exec) of the host's /proc, just before the
container's execve, in create's init and in exec.

Where the kernel has no AppArmor (this machine), runc's write of that attribute fails and so does
its container: mxc-oci refuses the field the same way (before anything runs, naming it), never
dropping a profile it was asked for.  The runc comparison runs runc itself on this kernel.  The
attribute's own path (the write, the fallback, no link followed) is tests/unit/test_apparmor.c.
"""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import wait_until
from test_oci import make_rootfs, oci  # noqa: F401 (fixture)

PROFILE = "cri-containerd.apparmor.d"   # containerd's CRI: its RuntimeDefault profile's name


def apparmor_enabled():
    """runc's test (libcontainer/apparmor isEnabled)."""
    try:
        os.stat("/sys/kernel/security/apparmor")
        with open("/sys/module/apparmor/parameters/enabled") as f:
            return f.read(1) == "Y"
    except OSError:
        return False


AA = apparmor_enabled()
no_aa = pytest.mark.skipif(AA, reason="this kernel has AppArmor enabled: the profile is applied there")


def with_profile(p):
    return lambda c: c["process"].__setitem__("apparmorProfile", p)


@no_aa
def test_a_profile_on_a_kernel_without_apparmor_is_refused_naming_it(oci):  # noqa: F811
    b = oci.bundle(["true"], mutate=with_profile(PROFILE))
    rc, _, err = oci.create("aa1", b)
    assert rc != 0
    assert ('process.apparmorProfile "%s": this kernel has no AppArmor enabled' % PROFILE) in err, err
    assert oci("state", "aa1")[0] != 0      # nothing was made
    rc, _, err = oci("run", "--bundle", b, "aa2")
    assert rc != 0 and "process.apparmorProfile" in err, err


@no_aa
@pytest.mark.skipif(not shutil.which("runc"), reason="needs runc (the reference)")
def test_runc_fails_the_same_config_on_this_kernel():
    """The behaviour matched: runc with the same profile fails on this kernel (its write of the exec
    attribute is refused), and runs the same bundle without it."""
    base = tempfile.mkdtemp(prefix="mxc-aa-runc-", dir="/var/tmp")
    try:
        make_rootfs(os.path.join(base, "rootfs"))
        subprocess.run(["runc", "spec", "--bundle", base], check=True)
        cfg = os.path.join(base, "config.json")
        with open(cfg) as f:
            c = json.load(f)
        c["process"].update(terminal=False, args=["true"])

        def run(cid, conf):
            with open(cfg, "w") as f:
                json.dump(conf, f)
            return subprocess.run(["runc", "--root", os.path.join(base, "state"), "run", "--bundle", base, cid],
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        r = run("plain%d" % os.getpid(), c)
        assert r.returncode == 0, r.stderr     # the harness: runc runs this bundle here
        c["process"]["apparmorProfile"] = PROFILE
        r = run("aa%d" % os.getpid(), c)
        assert r.returncode != 0 and "apparmor" in r.stderr, r.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_an_empty_profile_is_none_and_a_wrong_type_is_refused(oci):  # noqa: F811
    b = oci.bundle(["true"], mutate=with_profile(""))
    rc, _, err = oci("run", "--bundle", b, "e1")
    assert rc == 0, err                        # runc: "" applies nothing
    b = oci.bundle(["true"], mutate=with_profile(5))
    rc, _, err = oci("run", "--bundle", b, "e2")
    assert rc != 0 and "process.apparmorProfile" in err and "a string" in err, err
    b = oci.bundle(["true"], mutate=with_profile(PROFILE + "\nchangeprofile unconfined"))
    rc, _, err = oci("run", "--bundle", b, "e3")
    assert rc != 0 and "process.apparmorProfile" in err and "control character" in err, err


@no_aa
def test_exec_s_profile_is_refused_the_same_way_and_the_container_runs_on(oci):  # noqa: F811
    """exec's process.json as containerd's shim writes it (the container's process, apparmorProfile
    included) and runc's --apparmor flag: refused naming the field; the container is untouched."""
    b = oci.bundle(["sleep", "1000"])
    assert oci.create("x1", b)[0] == 0
    assert oci("start", "x1")[0] == 0
    proc = {"args": ["true"], "cwd": "/", "env": ["PATH=/bin"], "user": {"uid": 0, "gid": 0},
            "apparmorProfile": PROFILE}
    pf = os.path.join(oci.base, "process.json")
    with open(pf, "w") as f:
        json.dump(proc, f)
    rc, _, err = oci("exec", "--process", pf, "x1")
    assert rc == 255 and 'process.apparmorProfile "%s"' % PROFILE in err, err
    rc, _, err = oci("exec", "--apparmor", "other-profile", "x1", "true")
    assert rc == 255 and 'process.apparmorProfile "other-profile"' in err, err
    assert oci("exec", "x1", "true")[0] == 0
    assert oci.state("x1")["status"] == "running"
    assert oci("delete", "--force", "x1")[0] == 0


@pytest.mark.skipif(not AA, reason="this kernel has no AppArmor")
def test_the_profile_confines_the_process_where_the_kernel_has_apparmor(oci):  # noqa: F811
    """On an AppArmor kernel: "unconfined" (always loaded) is what the process then runs under, in the
    init and in exec (containerd's own profile needs apparmor_parser; this kernel could not try it)."""
    b = oci.bundle(["sleep", "1000"], mutate=with_profile("unconfined"))
    assert oci.create("u1", b)[0] == 0
    assert oci("start", "u1")[0] == 0
    assert wait_until(lambda: oci("exec", "u1", "cat", "/proc/1/attr/current")[1].startswith("unconfined"), 30)
    assert oci("exec", "u1", "cat", "/proc/self/attr/current")[1].startswith("unconfined")
    assert oci("delete", "--force", "u1")[0] == 0
