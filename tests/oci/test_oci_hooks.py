"""mxc-oci's hooks (docs/oci.md "Hooks"): every phase of the runtime spec, the state JSON on the
hook's stdin, args/env/timeout, the failure semantics, where each phase runs, and the trust rule
for the host-side hooks (they run as host root): the config must be root's alone, and the binary
root's, reached through directories only root can write, never beneath the bundle or the rootfs,
exec'd through the descriptor that was checked.

Host-side hook scripts live in a directory of /run (root's, 0755) made by the test: /var/tmp and
/tmp are writable by everyone (sticky or not), so a hook there is refused by design.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_hooks.py
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from conftest import wait_until
from test_oci import BUSYBOX, MXC_OCI, Oci, claims_of, dead, oci  # noqa: F401 (oci: the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK),
                                reason="needs root and busybox-static (scripts/deps.sh)")


@pytest.fixture
def hookdir():
    """A directory only root can write (its parents too), for the host-side hooks' scripts."""
    d = tempfile.mkdtemp(prefix="mxc-oci-hooks-", dir="/run")
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def script(path, body, mode=0o755):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, mode)
    return path


def hooks(**phases):
    def mutate(c):
        c["hooks"] = phases
    return mutate


def log_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


# A hook that appends {"phase", "state" (its stdin), "args", "env"} to the log LOG.
LOGGER = ('state=$(cat); printf \'{"phase": "%s", "state": %s, "args": "%s", "env": "%s"}\\n\' '
          '"$1" "$state" "$*" "$K" >> {log}')


def test_every_phase_runs_in_order_with_the_state_on_stdin(oci, hookdir):
    log = os.path.join(hookdir, "log")
    h = script(os.path.join(hookdir, "h.sh"), LOGGER.replace("{log}", log))

    def host(phase):
        return [{"path": h, "args": ["h.sh", phase, "x"], "env": ["K=v-" + phase], "timeout": 60}]
    # createContainer: the host's binary, run by the init as the container's root, its cwd the rootfs
    # (before pivot_root); startContainer: the container's own binary, as the container's process
    cc = script(os.path.join(hookdir, "cc.sh"), 'cat > ./cc-state; id -u > ./cc-uid; cat /proc/self/uid_map > ./cc-map')
    b = oci.bundle(["sh", "-c", "cat /cc-state; echo; cat /sc-state; echo; cat /cc-uid /sc-uid"],
                   hooks(prestart=host("prestart"), createRuntime=host("createRuntime"),
                         createContainer=[{"path": cc}],
                         startContainer=[{"path": "/sc.sh", "args": ["sc.sh"]}],
                         poststart=host("poststart"), poststop=host("poststop")), readonly=False)
    script(os.path.join(b, "rootfs", "sc.sh"), "cat > /sc-state; id -u > /sc-uid")
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    got = log_lines(log)
    assert [g["phase"] for g in got] == ["prestart", "createRuntime", "poststart", "poststop"]
    for g in got:
        assert g["state"]["id"] == "c1" and g["state"]["bundle"] == b and g["state"]["ociVersion"].startswith("1.")
        assert g["args"] == g["phase"] + " x" and g["env"] == "v-" + g["phase"]
    assert [g["state"]["status"] for g in got] == ["creating", "creating", "running", "stopped"]
    assert "pid" not in got[3]["state"] and got[0]["state"]["pid"] == got[2]["state"]["pid"] > 1
    lines = out.splitlines()
    cstate, sstate = json.loads(lines[0]), json.loads(lines[1])
    assert cstate["status"] == "creating" and cstate["pid"] == got[0]["state"]["pid"]
    assert sstate["status"] == "created" and sstate["id"] == "c1"
    assert lines[2:] == ["0", "0"]  # root of the container's user namespace, both
    with open(os.path.join(b, "rootfs", "cc-map")) as f:
        assert f.read().split()[1] != "0"  # not host root: its user namespace maps 0 onto the range


def test_create_runtime_failure_fails_create_and_leaves_nothing(oci, hookdir):
    """... and goes on to the end of the lifecycle: poststop runs (status stopped)."""
    bad = script(os.path.join(hookdir, "bad.sh"), "cat >/dev/null; echo hook-says-no >&2; exit 3")
    log = os.path.join(hookdir, "log")
    h = script(os.path.join(hookdir, "h.sh"), LOGGER.replace("{log}", log))
    b = oci.bundle(["true"], hooks(createRuntime=[{"path": bad}], poststop=[{"path": h, "args": ["h", "poststop"]}]))
    rc, out, err = oci.create("c1", b)
    assert rc != 0 and "hooks.createRuntime[0] %s: exit status 3" % bad in err, err
    assert "hook-says-no" in err
    got = log_lines(log)
    assert [(g["phase"], g["state"]["status"]) for g in got] == [("poststop", "stopped")]
    assert not os.path.exists(os.path.join(oci.root, "c1"))
    assert claims_of(os.path.join(oci.root, "c1")) == []


@pytest.mark.parametrize("phase", ["prestart", "createContainer"])
def test_prestart_and_create_container_failure_fail_create(oci, hookdir, phase):
    bad = script(os.path.join(hookdir, "bad.sh"), "exit 4")
    b = oci.bundle(["true"], hooks(**{phase: [{"path": bad}]}))
    rc, out, err = oci.create("c1", b)
    assert rc != 0 and "hooks.%s[0] %s: exit status 4" % (phase, bad) in err, err
    assert not os.path.exists(os.path.join(oci.root, "c1"))


def test_start_container_failure_fails_start_and_the_process_never_runs(oci):
    b = oci.bundle(["sh", "-c", "echo ran > /ran"], hooks(startContainer=[{"path": "/bin/false"}]), readonly=False)
    assert oci.create("c1", b)[0] == 0
    rc, out, err = oci("start", "c1")
    assert rc != 0 and "a startContainer hook failed" in err, err
    assert wait_until(lambda: oci.state("c1")["status"] == "stopped")
    assert not os.path.exists(os.path.join(b, "rootfs", "ran"))
    rc, out, err = oci("run", "--bundle", b, "c2")  # the container's stderr is run's: the hook's error on it
    assert rc != 0 and "hooks.startContainer[0] /bin/false: exit status 1" in err, err
    assert not os.path.exists(os.path.join(b, "rootfs", "ran"))


def test_poststart_and_poststop_failures_are_warnings(oci, hookdir):
    bad = script(os.path.join(hookdir, "bad.sh"), "exit 5")
    b = oci.bundle(["echo", "hi"], hooks(poststart=[{"path": bad}], poststop=[{"path": bad}]))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out == "hi\n"
    assert "warning: hooks.poststart[0] %s: exit status 5" % bad in err
    assert "warning: hooks.poststop[0] %s: exit status 5" % bad in err


def test_timeout_kills_the_hook_s_process_group_and_fails_the_phase(oci, hookdir):
    pidfile = os.path.join(hookdir, "bg")
    slow = script(os.path.join(hookdir, "slow.sh"), "sleep 1000 & echo $! > %s; sleep 1000" % pidfile)
    b = oci.bundle(["true"], hooks(createRuntime=[{"path": slow, "timeout": 1}]))
    rc, out, err = oci.create("c1", b)
    assert rc != 0 and "hooks.createRuntime[0] %s: timed out after 1 s (killed)" % slow in err, err
    bg = int(open(pidfile).read())
    assert wait_until(lambda: dead(bg))  # what the hook started went with it
    assert not os.path.exists(os.path.join(oci.root, "c1"))


@pytest.mark.parametrize("field,value,why", [
    ("path", "rel/x", "hooks.createRuntime[0].path must be an absolute path"),
    ("timeout", 0, "hooks.createRuntime[0].timeout must be a number of seconds greater than zero"),
    ("args", "x", "hooks.createRuntime[0].args must be an array of strings"),
])
def test_malformed_hooks_are_refused_naming_the_field(oci, field, value, why):
    h = {"path": "/bin/true"}
    h[field] = value
    b = oci.bundle(["true"], hooks(createRuntime=[h]))
    rc, out, err = oci.create("c1", b)
    assert rc != 0 and why in err, err


def test_a_system_binary_through_the_bin_link_is_allowed(oci):
    """/bin is a link to usr/bin here: links are followed where only root could have made them."""
    b = oci.bundle(["true"], hooks(createRuntime=[{"path": "/bin/true"}], poststop=[{"path": "/usr/bin/true"}]))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0 and "warning" not in err, err


# --------------------------------------------------------------------------------------------
# attacks: a bundle writer who is not root must not get a root hook to run a binary they control


@pytest.fixture
def victim(hookdir):
    """A root-owned marker file the attacker's hook would make."""
    return os.path.join(hookdir, "pwned")


def evil_body(victim):
    return "id -u > %s" % victim


def test_config_json_not_root_s_is_refused(oci, victim):
    b = oci.bundle(["true"], hooks(createRuntime=[{"path": "/bin/sh", "args": ["sh", "-c", evil_body(victim)]}]))
    os.chown(os.path.join(b, "config.json"), 65534, 65534)  # written by someone else
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc != 0 and "config.json: hooks: refused: this config.json (or its bundle directory) is not root's" in err
    assert not os.path.exists(victim)
    os.chown(os.path.join(b, "config.json"), 0, 0)
    os.chmod(os.path.join(b, "config.json"), 0o666)  # root's, but anyone may rewrite it
    rc, out, err = oci("run", "--bundle", b, "c2")
    assert rc != 0 and "config.json: hooks: refused" in err
    os.chmod(os.path.join(b, "config.json"), 0o644)
    os.chmod(b, 0o777)  # a bundle directory anyone can swap config.json in
    rc, out, err = oci("run", "--bundle", b, "c3")
    assert rc != 0 and "config.json: hooks: refused" in err
    assert not os.path.exists(victim)


def test_a_hard_link_to_root_s_config_is_refused(oci, victim):
    """A user who cannot write root's config but can link it (protected_hardlinks off) into a
    bundle of theirs: a config with more than one name is not root's word."""
    b = oci.bundle(["true"], hooks(poststop=[{"path": "/bin/sh", "args": ["sh", "-c", evil_body(victim)]}]))
    os.link(os.path.join(b, "config.json"), os.path.join(oci.base, "other-name"))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc != 0 and "config.json: hooks: refused" in err
    assert not os.path.exists(victim)


@pytest.mark.parametrize("where", ["rootfs", "bundle", "rootfs-by-link"])
def test_hook_binary_in_the_bundle_or_rootfs_is_refused(victim, hookdir, where):
    """Image layers are root's on disk (and a container's writes into its rootfs land as the
    image's ids): a root-owned binary there is still the image's, not the host's.  The bundle
    here sits where only root can write (as containerd's and Podman's do), so only the bundle
    rule stands between the image and host root."""
    oci = Oci(os.path.join(hookdir, "b"))
    os.makedirs(oci.base)
    b = oci.bundle(["true"])
    rootfs = os.path.join(b, "rootfs")
    target = {"rootfs": os.path.join(rootfs, "evil"), "bundle": os.path.join(b, "evil"),
              "rootfs-by-link": os.path.join(rootfs, "evil")}[where]
    script(target, evil_body(victim))
    path = target
    if where == "rootfs-by-link":  # a link a root-owned directory holds, into the rootfs
        path = os.path.join(hookdir, "link")
        os.symlink(target, path)
    with open(os.path.join(b, "config.json")) as f:
        c = json.load(f)
    c["hooks"] = {"createRuntime": [{"path": path}]}
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc != 0 and "is the bundle or the container's rootfs, or beneath it: refused" in err, err
    assert not os.path.exists(victim)


@pytest.mark.parametrize("case", ["sticky-dir", "not-root-s", "group-writable", "dir-not-root-s", "link-out"])
def test_hook_binary_someone_else_could_write_is_refused(oci, victim, hookdir, case):
    sub = os.path.join(hookdir, "sub")
    os.makedirs(sub)
    path = script(os.path.join(sub, "evil"), evil_body(victim))
    if case == "sticky-dir":
        path = script(os.path.join(oci.base, "evil"), evil_body(victim))  # below /var/tmp (1777)
    elif case == "not-root-s":
        os.chown(path, 65534, 65534)
    elif case == "group-writable":
        os.chmod(path, 0o775)
    elif case == "dir-not-root-s":
        os.chown(sub, 65534, 65534)
    elif case == "link-out":  # a root-owned link into a directory everyone can write
        out = script(os.path.join(oci.base, "evil"), evil_body(victim))
        os.symlink(out, os.path.join(sub, "link"))
        path = os.path.join(sub, "link")
    b = oci.bundle(["true"], hooks(createRuntime=[{"path": path}]))
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc != 0 and "is not root's alone" in err and "refused" in err, err
    assert not os.path.exists(victim)


def test_poststop_binary_is_checked_again_when_it_runs(oci, victim, hookdir):
    """create checked the binary; by delete it was handed to someone else: refused then (a
    warning: poststop's failure does not stop the delete), never run."""
    path = script(os.path.join(hookdir, "late"), evil_body(victim))
    b = oci.bundle(["sleep", "1000"], hooks(poststop=[{"path": path}]))
    assert oci.create("c1", b)[0] == 0
    os.chown(path, 65534, 65534)
    rc, out, err = oci("delete", "--force", "c1")
    assert rc == 0, err
    assert "warning: config.json: hooks.poststop[0]: hook %s" % path in err and "is not root's alone" in err
    assert not os.path.exists(victim)


def test_host_side_hooks_of_a_pod_member_run_in_the_runtime_s_namespaces(oci, hookdir):
    """create joins a pod's network, IPC and UTS namespaces before the clone; prestart and
    createRuntime still run in the runtime's own (the spec's "runtime namespace")."""
    a = oci.bundle(["sleep", "1000"])
    pidfile = os.path.join(oci.base, "pid-a")
    assert oci.create("pod-a", a, "--pid-file", pidfile)[0] == 0
    pa = int(open(pidfile).read())
    log = os.path.join(hookdir, "ns")
    h = script(os.path.join(hookdir, "ns.sh"), "cat >/dev/null; echo \"$1 $(readlink /proc/self/ns/net) "
               "$(readlink /proc/self/ns/uts)\" >> %s" % log)

    def join(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] in ("network", "ipc", "uts"):
                n["path"] = "/proc/%d/ns/%s" % (pa, {"network": "net"}.get(n["type"], n["type"]))
        c["mounts"] = [m for m in c["mounts"] if m["type"] not in ("sysfs", "mqueue")]
        c.pop("hostname", None)
        c["hooks"] = {p: [{"path": h, "args": ["ns.sh", p]}] for p in ("prestart", "createRuntime", "poststart")}
    b = oci.bundle(["true"], join)
    rc, out, err = oci("run", "--bundle", b, "pod-b")
    assert rc == 0, err
    with open(log) as f:
        got = [l.split() for l in f.read().splitlines()]
    host = [os.readlink("/proc/self/ns/net"), os.readlink("/proc/self/ns/uts")]
    assert [g[0] for g in got] == ["prestart", "createRuntime", "poststart"]
    assert all(g[1:] == host for g in got), (got, host)
    assert os.readlink("/proc/%d/ns/net" % pa) != host[0]
    assert oci("delete", "--force", "pod-a")[0] == 0


def test_start_container_timeout_kills_the_hook_inside_the_container(oci):
    """startContainer runs as the container's process, under its seccomp baseline: its timeout
    still holds (the hook and what it started are killed, start fails, the process never runs)."""
    b = oci.bundle(["sh", "-c", "echo ran > /ran"],
                   hooks(startContainer=[{"path": "/bin/sh", "args": ["sh", "-c", "sleep 1000 & sleep 1000"],
                                          "timeout": 1}]), readonly=False)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc != 0 and "hooks.startContainer[0] /bin/sh: timed out after 1 s (killed)" in err, err
    assert not os.path.exists(os.path.join(b, "rootfs", "ran"))


# ---- the rootfs at root.path (the runtime spec's lifecycle: hooks address it by its path) ----

def mountinfo_points(pid="self"):
    with open("/proc/%s/mountinfo" % pid) as f:
        return [l.split()[4] for l in f]


def test_create_runtime_hook_mounts_into_the_container_at_root_path(oci, hookdir):
    """runc's hooks.bats: a createRuntime hook (host root, the runtime's namespaces) enters the
    container's mount namespace by the state's pid and bind-mounts a host file onto
    $ROOTFS/lib/marker: the rootfs is attached at root.path there, and the mount is the container's."""
    src = os.path.join(hookdir, "lib.so")
    with open(src, "w") as f:
        f.write("from-create-runtime\n")
    h = script(os.path.join(hookdir, "cr.sh"),
               'pid=$(sed -n \'s/.*"pid": *\\([0-9]*\\).*/\\1/p\'); touch "$1/lib/marker" && '
               'nsenter -m -t "$pid" mount --bind "%s" "$1/lib/marker"' % src)
    b = oci.bundle(["cat", "/lib/marker"], readonly=False)
    rootfs = os.path.join(b, "rootfs")
    os.makedirs(os.path.join(rootfs, "lib"))
    with open(os.path.join(b, "config.json")) as f:
        c = json.load(f)
    c["hooks"] = {"createRuntime": [{"path": h, "args": ["cr.sh", rootfs]}]}
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f)
    rc, out, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    assert out == "from-create-runtime\n"
    assert os.path.join(rootfs, "lib", "marker") not in mountinfo_points()  # never the host's


def test_create_container_hook_sees_the_host_s_tmp_and_its_cwd_is_root_path(oci):
    """A createContainer hook (the container's mount namespace, before pivot_root, cwd the rootfs)
    sees the host's /tmp as the host has it (the rootfs no longer covers it) and the rootfs at
    root.path: its cwd reads back as root.path; what it binds from /tmp is in the container."""
    d = tempfile.mkdtemp(prefix="mxc-oci-hooks-", dir="/tmp")
    try:
        os.chmod(d, 0o755)
        src = os.path.join(d, "lib.so")
        with open(src, "w") as f:
            f.write("from-create-container\n")
        os.chmod(src, 0o644)
        b = oci.bundle(["cat", "/marker", "/cwd-seen"], hooks(createContainer=[{
            "path": "/bin/sh", "args": ["sh", "-c", "readlink /proc/self/cwd > ./cwd-seen && touch ./marker && "
                                        "mount --bind %s ./marker" % src]}]), readonly=False)
        rc, out, err = oci("run", "--bundle", b, "c1")
        assert rc == 0, err
        assert out == "from-create-container\n%s\n" % os.path.realpath(os.path.join(b, "rootfs"))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_the_rootfs_attach_never_propagates_to_the_host(oci):
    """The bundle on a shared mount of the host's: the rootfs attached at root.path in the init's
    namespace (private before the attach) is not seen by the host, nor anything the hooks mount."""
    b = oci.bundle(["sleep", "1000"])
    subprocess.run(["mount", "--bind", b, b], check=True)
    try:
        subprocess.run(["mount", "--make-shared", b], check=True)
        mine = lambda: [m for m in mountinfo_points() if m == "/" or m.startswith(b)]  # others mount in parallel
        before = mine()
        assert oci.create("c1", b)[0] == 0
        pid = oci.state("c1")["pid"]
        assert mine() == before
        rootfs = os.path.realpath(os.path.join(b, "rootfs"))
        assert rootfs not in mountinfo_points()
        assert os.listdir(rootfs) and not os.path.ismount(rootfs)
        assert "/" in mountinfo_points(pid) and rootfs not in mountinfo_points(pid)  # pivoted: not by its path
        assert oci("delete", "--force", "c1")[0] == 0
    finally:
        subprocess.run(["umount", "-l", b])


@pytest.mark.parametrize("swap", ["directory", "symlink-to-host-root"])
def test_root_path_swapped_before_the_clone_is_not_followed(oci, swap):
    """A second sandbox that can write root.path's parent (its own rootfs) renames the rootfs away
    after create opened it and puts another directory, or a symlink to the host's /, in its place
    before the init attaches the tree: the init attaches onto the directory create opened (its cwd
    by descriptor), never the path looked up again; nothing of the host is covered."""
    b = oci.bundle(["cat", "/marker"])
    rootfs = os.path.join(b, "rootfs")
    with open(os.path.join(rootfs, "marker"), "w") as f:
        f.write("the-opened-rootfs\n")
    env = dict(os.environ, MXC_FAULT_OCI_BEFORE_CLONE="1")
    with open(os.path.join(b, "out"), "wb") as out, tempfile.TemporaryFile() as errf:
        p = subprocess.Popen([MXC_OCI, "--root", oci.root, "create", "--bundle", b, "c1"], stdin=subprocess.DEVNULL,
                             stdout=out, stderr=errf, env=env)
        try:
            def stopped():
                with open("/proc/%d/stat" % p.pid) as f:
                    return f.read().rsplit(")", 1)[1].split()[0] == "T"
            assert wait_until(stopped, timeout=20)
            os.rename(rootfs, rootfs + ".real")
            if swap == "directory":
                os.makedirs(rootfs)
                with open(os.path.join(rootfs, "marker"), "w") as f:
                    f.write("the-impostor\n")
            else:
                os.symlink("/", rootfs)
            before = mountinfo_points()
            os.kill(p.pid, signal.SIGCONT)
            p.wait(timeout=60)
            errf.seek(0)
            err = errf.read().decode(errors="replace")
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert p.returncode == 0, err
    mine = lambda pts: [m for m in pts if m == "/" or m.startswith(b)]  # others' tests mount in parallel
    assert mine(mountinfo_points()) == mine(before)
    assert oci("start", "c1")[0] == 0
    assert wait_until(lambda: oci.state("c1")["status"] == "stopped", timeout=20)
    with open(os.path.join(b, "out")) as f:
        assert f.read() == "the-opened-rootfs\n"
    assert oci("delete", "c1")[0] == 0
