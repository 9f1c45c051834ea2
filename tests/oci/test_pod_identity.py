"""A pod is one identity (issue 36, item 4): a member container joins its pod's user namespace (and
PID namespace) by path, as CRI runtimes make pods (the pause container first, every member joining
its namespaces by /proc/PID/ns/...), and shares the pod's one id range:
  - an emptyDir bound into two containers of one pod: each reads and writes the other's files, owned
    by the writer's container uid (never 65534);
  - the pod's shared PID namespace: a member sees the pod's processes;
  - the proof is on the descriptor mxc-oci opened: the user namespace must be the init's of a live
    container of this store with a range claim (never the host's, never a process's own), the PID
    namespace that sibling's; a config's own maps must be the pod's;
  - the range stays claimed while a member lives (its own claim on it), its first container gone.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_pod_identity.py
"""
import glob
import json
import os
import subprocess
import time

import pytest

from test_oci import CLAIMS, dead, host_maps, oci  # noqa: F401  (the fixture)

POD_NS = ("user", "pid", "network", "ipc", "uts")


def _member(pa, share=POD_NS, shared_dir=None, **paths):
    """A CRI pod member's namespaces: those in share joined by /proc/pa/ns/..., paths overriding."""
    names = {"network": "net", "user": "user", "pid": "pid", "ipc": "ipc", "uts": "uts"}

    def mutate(c):
        ns = [n for n in c["linux"]["namespaces"] if n["type"] not in share]
        for t in share:
            ns.append({"type": t, "path": paths.get(t, "/proc/%d/ns/%s" % (pa, names[t]))})
        c["linux"]["namespaces"] = ns
        c.pop("hostname", None)  # the pod's (its UTS namespace)
        if shared_dir:
            c["mounts"].append({"destination": "/shared", "type": "bind", "source": shared_dir,
                                "options": ["rbind", "rw"]})
    return mutate


def _pod(oci, name, args=("sleep", "600"), shared_dir=None):  # noqa: F811
    def mutate(c):
        if shared_dir:
            c["mounts"].append({"destination": "/shared", "type": "bind", "source": shared_dir,
                                "options": ["rbind", "rw"]})
    b = oci.bundle(list(args), mutate)
    pidfile = os.path.join(oci.base, "pid-" + name)
    rc, _, err = oci.create(name, b, "--pid-file", pidfile)
    assert rc == 0, err
    assert oci("start", name)[0] == 0
    return int(open(pidfile).read())


def _claims_of(base):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(CLAIMS, "*-%d*" % base)))


def test_two_members_of_a_pod_share_an_empty_dir_with_their_own_uids(oci):  # noqa: F811
    shared = os.path.join(oci.base, "emptydir")
    os.makedirs(shared)
    pa = _pod(oci, "pause", ("sleep", "600"), shared)
    base = host_maps(pa)[0][1]
    os.chown(shared, base, base)  # the kubelet makes an emptyDir the pod's
    rc, _, err = oci("exec", "pause", "sh", "-c", "echo from-a > /shared/a")
    assert rc == 0, err
    b = oci.bundle(["sh", "-c", "echo from-b > /shared/b && echo by-b >> /shared/a && cat /shared/a && "
                    "ls -n /shared && cat /proc/1/cmdline | tr '\\0' ' '; echo; id -u"],
                   _member(pa, shared_dir=shared))
    rc, out, err = oci("run", "--bundle", b, "member")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0:2] == ["from-a", "by-b"], out
    # both files the container's uid 0 (the pod's one range), never 65534 (another range's)
    owners = {l.split()[-1]: (l.split()[2], l.split()[3]) for l in lines if l.startswith("-")}
    assert owners == {"a": ("0", "0"), "b": ("0", "0")}, out
    # the pod's PID namespace: its PID 1 is the first container's init
    assert lines[-3].startswith("sleep 600"), out
    # and on the host both files are the pod's range's first id
    assert os.stat(os.path.join(shared, "b")).st_uid == base
    assert os.stat(os.path.join(shared, "a")).st_uid == base
    # the first container reads and writes the member's file
    rc, out, err = oci("exec", "pause", "sh", "-c", "echo by-a >> /shared/b && cat /shared/b")
    assert rc == 0 and out.split() == ["from-b", "by-a"], (out, err)


def test_a_member_in_the_pod_s_pid_namespace_sees_and_is_seen(oci):  # noqa: F811
    pa = _pod(oci, "pause")
    b = oci.bundle(["sleep", "600"], _member(pa))
    pidfile = os.path.join(oci.base, "pid-m")
    rc, _, err = oci.create("m", b, "--pid-file", pidfile)
    assert rc == 0, err
    assert oci("start", "m")[0] == 0
    pm = int(open(pidfile).read())
    assert host_maps(pm) == host_maps(pa)                          # one range
    assert os.stat("/proc/%d/ns/pid" % pm).st_ino == os.stat("/proc/%d/ns/pid" % pa).st_ino
    rc, out, err = oci("exec", "pause", "sh", "-c", "cat /proc/*/cmdline | tr '\\0' ' '")
    assert rc == 0 and out.count("sleep 600") == 2, (out, err)     # the pod's processes, its own and the member's
    # kill --all of the member signals its own processes only, never the pod's first container
    assert oci("kill", "--all", "m", "TERM")[0] == 0
    for _ in range(100):
        if dead(pm):
            break
        time.sleep(0.05)
    assert dead(pm) and not dead(pa)


def test_a_member_in_the_pod_s_pid_namespace_without_a_cgroup_is_refused(oci):  # noqa: F811
    """Review of issue 37: with --cgroup-manager disabled a member in its pod's PID namespace had
    nothing to reach its processes by once its init was gone: a daemon it left (setsid) outlived
    its delete, in the pod.  Joining a PID namespace then needs a cgroup; refused naming why, nothing
    left.  A member with a PID namespace of its own still runs (its init's end takes them all)."""
    pa = _pod(oci, "pause")

    def no_cgroup_mount(share):
        def mutate(c):
            _member(pa, share)(c)
            c["mounts"] = [m for m in c["mounts"] if m["type"] != "cgroup"]
        return mutate
    b = oci.bundle(["sh", "-c", "setsid sleep 777 >/dev/null 2>&1 < /dev/null & echo started"],
                   no_cgroup_mount(POD_NS))
    rc, out, err = oci("--cgroup-manager", "disabled", "run", "--bundle", b, "m2")
    assert rc != 0 and "joining a pid namespace by path needs a cgroup of the container's own" in err, out + err
    assert "m2" not in os.listdir(oci.root)
    assert subprocess.run(["pgrep", "-f", "sleep 777"], capture_output=True).returncode != 0
    b = oci.bundle(["sh", "-c", "echo own"], no_cgroup_mount(tuple(n for n in POD_NS if n != "pid")))
    rc, out, err = oci("--cgroup-manager", "disabled", "run", "--bundle", b, "m3")
    assert rc == 0 and out.strip() == "own", out + err


def test_the_range_stays_claimed_while_a_member_lives(oci):  # noqa: F811
    pa = _pod(oci, "pause")
    base = host_maps(pa)[0][1]
    b = oci.bundle(["sleep", "600"], _member(pa, share=("user", "network", "ipc", "uts")))
    rc, _, err = oci.create("m", b)
    assert rc == 0, err
    assert oci("start", "m")[0] == 0
    claims = _claims_of(base)
    assert "range-%d" % base in claims and any(c.startswith("member-%d-" % base) for c in claims), claims
    member_claim = json.load(open(os.path.join(CLAIMS, [c for c in claims if c.startswith("member-")][0])))
    assert member_claim["uid"] == 0 and member_claim["range"] == base  # the sweeper kills no process of the range
    assert oci("delete", "--force", "pause")[0] == 0
    # the first container gone: its claim released, the member's keeps the range
    claims = _claims_of(base)
    assert claims and all(c.startswith("member-%d-" % base) for c in claims), claims
    # a container of another pod never gets that range while the member lives
    rc, out, err = oci("run", "--bundle", oci.bundle(["cat", "/proc/self/uid_map"]), "other")
    assert rc == 0, err
    assert int(out.split()[1]) != base, out
    assert oci("delete", "--force", "m")[0] == 0
    assert _claims_of(base) == []


def test_a_member_s_claim_keeps_the_range_from_another_container(oci, monkeypatch):  # noqa: F811
    """A region of one slot (MXC_RANGE_BASE/MXC_RANGE_SLOTS, above the default region: no other test's
    ranges): the pod's first container deleted while its member lives, no other container gets the
    range; once the member is deleted, the range is free again."""
    base = 0xEE000000
    monkeypatch.setenv("MXC_RANGE_BASE", str(base))
    monkeypatch.setenv("MXC_RANGE_SLOTS", "1")
    pa = _pod(oci, "pause")
    assert host_maps(pa)[0][1] == base
    rc, _, err = oci.create("m", oci.bundle(["sleep", "600"], _member(pa)))
    assert rc == 0, err
    assert oci("delete", "--force", "pause")[0] == 0
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"]), "other")
    assert rc != 0 and "no free 65536-id range" in err, err
    assert oci("delete", "--force", "m")[0] == 0
    rc, out, err = oci("run", "--bundle", oci.bundle(["cat", "/proc/self/uid_map"]), "other2")
    assert rc == 0 and out.split()[1] == str(base), (out, err)
    assert _claims_of(base) == []


def test_joining_the_host_s_user_namespace_by_path_is_refused(oci):  # noqa: F811
    b = oci.bundle(["true"], _member(os.getpid(), share=("user",)))
    rc, _, err = oci("run", "--bundle", b, "host-user")
    assert rc != 0
    assert "linux.namespaces user path /proc/%d/ns/user" % os.getpid() in err and "refused" in err, err
    assert not os.path.exists(os.path.join(oci.root, "host-user"))


def test_joining_a_user_namespace_mxc_oci_did_not_make_is_refused(oci):  # noqa: F811
    """A process's own user namespace (maps of its maker's choosing), not a container's of this store."""
    p = subprocess.Popen(["unshare", "-U", "--map-root-user", "sleep", "60"])
    try:
        for _ in range(100):
            if os.stat("/proc/%d/ns/user" % p.pid).st_ino != os.stat("/proc/self/ns/user").st_ino:
                break
            time.sleep(0.02)
        b = oci.bundle(["true"], _member(p.pid, share=("user",)))
        rc, _, err = oci("run", "--bundle", b, "alien")
        assert rc != 0 and "linux.namespaces user path" in err and "refused" in err, err
    finally:
        p.kill()
        p.wait()


def test_a_pod_s_pid_namespace_with_no_user_namespace_listed_joins_the_pod_s(oci):  # noqa: F811
    """containerd 1.6's CRI for shareProcessNamespace: the sandbox's PID namespace by path, no user
    namespace listed: the one owning that PID namespace (the pod's) is joined, its range shared; one of
    the container's own with it is refused, and so is the host's PID namespace."""
    pa = _pod(oci, "pause")
    b = oci.bundle(["sh", "-c", "cat /proc/self/uid_map; cat /proc/1/cmdline"],
                   _member(pa, share=("pid", "network", "ipc", "uts")))
    rc, out, err = oci("run", "--bundle", b, "pid-only")
    assert rc == 0, err
    assert out.split()[:3] == [str(x) for x in host_maps(pa)[0]] and "sleep" in out, out

    def own_user(c):
        _member(pa, share=("pid", "network", "ipc", "uts"))(c)
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = c["linux"]["gidMappings"] = [
            {"containerID": 0, "hostID": 3000000000, "size": 65536}]
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], own_user), "pid-own-user")
    assert rc != 0 and "joining a pid namespace by path needs the pod's user namespace" in err, err
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], _member(
        pa, share=("pid", "network", "ipc", "uts"), pid="/proc/%d/ns/pid" % os.getpid())), "pid-host-alone")
    assert rc != 0 and "linux.namespaces pid path /proc/%d/ns/pid" % os.getpid() in err, err
    # the host's PID namespace, with the pod's user namespace: not the pod's
    b = oci.bundle(["true"], _member(pa, pid="/proc/%d/ns/pid" % os.getpid()))
    rc, _, err = oci("run", "--bundle", b, "pid-host")
    assert rc != 0 and "linux.namespaces pid path /proc/%d/ns/pid" % os.getpid() in err, err


def test_another_pod_s_pid_namespace_with_this_pod_s_user_namespace_is_refused(oci):  # noqa: F811
    pa = _pod(oci, "pod1")
    pb = _pod(oci, "pod2")
    b = oci.bundle(["true"], _member(pa, pid="/proc/%d/ns/pid" % pb))
    rc, _, err = oci("run", "--bundle", b, "cross")
    assert rc != 0 and "linux.namespaces pid path" in err and "another pod's" in err, err
    assert not os.path.exists(os.path.join(oci.root, "cross"))


def test_a_member_s_own_maps_must_be_the_pod_s(oci):  # noqa: F811
    pa = _pod(oci, "pause")
    base = host_maps(pa)[0][1]

    def maps(hid):
        def mutate(c):
            _member(pa)(c)
            c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": hid, "size": 65536}]
            c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": hid, "size": 65536}]
        return mutate
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], maps(base + 65536)), "wrong")
    assert rc != 0 and "linux.uidMappings" in err and "pod's range" in err, err
    rc, out, err = oci("run", "--bundle", oci.bundle(["cat", "/proc/self/uid_map"], maps(base)), "right")
    assert rc == 0 and out.split() == ["0", str(base), "65536"], (out, err)


def test_a_dead_container_s_namespace_path_is_refused(oci):  # noqa: F811
    """A pod's first container gone (its pid free for reuse): the path names no live sibling."""
    pa = _pod(oci, "pause")
    assert oci("delete", "--force", "pause")[0] == 0
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], _member(pa)), "late")
    assert rc != 0 and "refused" in err, err
    assert not os.path.exists(os.path.join(oci.root, "late"))


def test_a_pod_member_cannot_reach_another_pod_s_files_or_processes(oci):  # noqa: F811
    """Escape probes between pods: a directory both pods bind (a host path shared by mistake), the
    other pod's file 0600 there is another range's (65534, unreadable, unwritable); the other pod's
    processes are not in this pod's PID namespace; joining the other pod's user namespace with this
    pod's PID namespace is refused (above), and a member cannot signal the other pod's init."""
    shared = os.path.join(oci.base, "both")
    os.makedirs(shared)
    os.chmod(shared, 0o777)
    p1 = _pod(oci, "pod1", shared_dir=shared)
    p2 = _pod(oci, "pod2", ("sh", "-c", "echo secret > /shared/s2; chmod 600 /shared/s2; exec sleep 600"), shared)
    for _ in range(100):
        if os.path.exists(os.path.join(shared, "s2")) and os.stat(os.path.join(shared, "s2")).st_mode & 0o777 == 0o600:
            break
        time.sleep(0.05)
    b = oci.bundle(["sh", "-c", "ls -n /shared/s2; cat /shared/s2 2>&1; (echo x >> /shared/s2) 2>&1; "
                    "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; kill -0 %d 2>&1; echo end" % p2],
                   _member(p1, shared_dir=shared))
    rc, out, err = oci("run", "--bundle", b, "probe")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0].split()[2:4] == ["65534", "65534"], out           # another range's
    assert "Permission denied" in lines[1] and "Permission denied" in lines[2], out
    assert lines[3].startswith("sleep 600 ") and lines[3].count("sleep 600") == 1, out  # pod1's init, not pod2's
    assert "end" in out and open(os.path.join(shared, "s2")).read() == "secret\n"


def _own_maps(hid):
    def mutate(c):
        c["linux"]["namespaces"].append({"type": "user"})
        c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": hid, "size": 65536}]
        c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": hid, "size": 65536}]
    return mutate


def test_a_pod_with_the_cri_s_own_mappings_is_one_identity(oci):  # noqa: F811
    """A Kubernetes pod with user namespaces (hostUsers: false; containerd 1.7 and later pass the
    kubelet's range as the sandbox's linux.uidMappings/gidMappings: one 65536-aligned range of 65536
    for both): the sandbox's maps are claimed as mxc's ranges are, so a member joins its user namespace
    by path and shares them, and another pod given the same maps is refused naming the field; maps that
    would map host root are refused by name."""
    hid = 0xE0000000   # above mxc's region, no account or subordinate range
    b = oci.bundle(["sleep", "600"], _own_maps(hid))
    pidfile = os.path.join(oci.base, "pid-own")
    rc, _, err = oci.create("sandbox", b, "--pid-file", pidfile)
    assert rc == 0, err
    assert oci("start", "sandbox")[0] == 0
    pa = int(open(pidfile).read())
    assert host_maps(pa) == [(0, hid, 65536)]
    assert _claims_of(hid) == ["range-%d" % hid]
    rc, out, err = oci("run", "--bundle", oci.bundle(["cat", "/proc/self/uid_map"], _member(pa)), "member")
    assert rc == 0 and out.split() == ["0", str(hid), "65536"], (out, err)
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], _own_maps(hid)), "other-pod")
    assert rc != 0 and "linux.uidMappings[0]" in err and "another container's range claim range-%d" % hid in err, err
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], _own_maps(0)), "host-root")
    assert rc != 0 and "linux.uidMappings[0] maps container uid 0 onto host uid 0: refused" in err, err
    assert oci("delete", "--force", "sandbox")[0] == 0
    assert _claims_of(hid) == []


def _host_ns_holder(flag):
    """A host process in a namespace of its own (owned by the host's user namespace), as CNI's
    network namespaces are."""
    p = subprocess.Popen(["unshare", flag, "sleep", "60"])
    kind = {"--net": "net", "--ipc": "ipc", "--uts": "uts"}[flag]
    for _ in range(100):
        if os.stat("/proc/%d/ns/%s" % (p.pid, kind)).st_ino != os.stat("/proc/self/ns/%s" % kind).st_ino:
            break
        time.sleep(0.02)
    return p


@pytest.mark.parametrize("share", [("ipc",), ("uts",), ("network",), ("network", "ipc", "uts"), "cri"])
def test_a_member_joining_the_pod_s_ipc_uts_or_network_is_one_identity(oci, share):  # noqa: F811
    """containerd 1.6's CRI without shareProcessNamespace: the sandbox's IPC and UTS namespaces by
    path (the network namespace CNI's, the host's user namespace's), no user namespace listed: the
    user namespace owning them (the pod's) is joined, its range shared; an emptyDir's files are each
    container's own uid 0, never 65534; the member's PID namespace stays its own."""
    shared = os.path.join(oci.base, "emptydir")
    os.makedirs(shared)
    pa = _pod(oci, "pause", ("sleep", "600"), shared)
    base = host_maps(pa)[0][1]
    os.chown(shared, base, base)  # the kubelet makes an emptyDir the pod's
    assert oci("exec", "pause", "sh", "-c", "echo from-a > /shared/a")[0] == 0
    holder = _host_ns_holder("--net") if share == "cri" else None
    try:
        extra = {"network": "/proc/%d/ns/net" % holder.pid} if holder else {}
        b = oci.bundle(["sh", "-c", "cat /proc/self/uid_map; echo from-b > /shared/b; ls -n /shared; "
                        "cat /proc/1/cmdline | tr '\\0' ' '; echo; ls /proc | grep -c '^[0-9]'"],
                       _member(pa, share=("network", "ipc", "uts") if holder else share, shared_dir=shared,
                               **extra))
        rc, out, err = oci("run", "--bundle", b, "member")
    finally:
        if holder:
            holder.kill()
            holder.wait()
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0].split() == ["0", str(base), "65536"], out          # the pod's range
    owners = {l.split()[-1]: (l.split()[2], l.split()[3]) for l in lines if l.startswith("-")}
    assert owners == {"a": ("0", "0"), "b": ("0", "0")}, out          # never 65534
    assert lines[-3].startswith("sh -c cat /proc/self/uid_map"), out  # its own PID 1: not the pause's
    assert int(lines[-2]) < 5, out
    assert os.stat(os.path.join(shared, "b")).st_uid == base


def test_a_namespace_of_the_host_s_user_namespace_implies_no_pod(oci):  # noqa: F811
    """An IPC namespace a host process made (owned by the host's user namespace, not a pod
    container's): joined as before, the container a range of its own; nothing to join."""
    holder = _host_ns_holder("--ipc")
    try:
        b = oci.bundle(["cat", "/proc/self/uid_map"], _member(holder.pid, share=("ipc",)))
        rc, out, err = oci("run", "--bundle", b, "alone")
    finally:
        holder.kill()
        holder.wait()
    assert rc == 0, err
    assert out.split()[0] == "0" and out.split()[1] != "0" and out.split()[2] == "65536", out


def test_a_pod_s_ipc_namespace_across_identities_is_refused(oci):  # noqa: F811
    """A pod's IPC namespace (owned by a pod container's user namespace) is entered only from that
    user namespace: with a user namespace of the container's own (the CRI's own maps, another range),
    or with another pod's user namespace joined by path, it is refused naming the path, and the
    range the refused container claimed is released.  A pod's UTS namespace with a user namespace of
    the container's own is taken (its hostname only; that range cannot change it)."""
    pa = _pod(oci, "pod1")
    pb = _pod(oci, "pod2")
    hid = 0xE0010000

    def own(*share):
        def mutate(c):
            _member(pa, share=share)(c)
            _own_maps(hid)(c)
        return mutate
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], own("ipc")), "own-user")
    assert rc != 0 and "linux.namespaces ipc path /proc/%d/ns/ipc" % pa in err, err
    assert "a user namespace of the container's own" in err, err
    assert _claims_of(hid) == [] and not os.path.exists(os.path.join(oci.root, "own-user"))
    rc, _, err = oci("run", "--bundle", oci.bundle(["true"], _member(pa, ipc="/proc/%d/ns/ipc" % pb)), "cross")
    assert rc != 0 and "linux.namespaces ipc path /proc/%d/ns/ipc" % pb in err, err
    assert "another pod's user namespace" in err, err
    rc, out, err = oci("run", "--bundle", oci.bundle(["sh", "-c", "cat /proc/self/uid_map; hostname x 2>&1; "
                                                      "hostname"], own("uts")), "own-uts")
    assert rc == 0, err
    assert out.split()[:3] == ["0", str(hid), "65536"], out
    lines = out.strip().splitlines()
    assert "hostname x" not in out or lines[-1] != "x", out
    assert lines[-1] == oci("exec", "pod1", "hostname")[1].strip() and lines[-1] != "x", out  # the pod's, unchanged
    assert _claims_of(hid) == []


def test_gc_of_a_dead_pod_owner_keeps_a_live_member_s_processes(oci):  # noqa: F811
    """Review of issue 36 (L2): the pod's first container's init ends without delete; the sweeper
    (mxc-exec --gc) released its range claim and killed every process of the range's root — a live
    member's init among them.  With a member's claim beside it, the claim goes and nothing is killed
    (the member's claim keeps the range; it is released once the member is gone)."""
    from test_oci import REPO
    pa = _pod(oci, "pause")
    b = oci.bundle(["sleep", "600"], _member(pa, share=("user", "network", "ipc", "uts")))
    pidfile = os.path.join(oci.base, "pid-m")
    assert oci.create("m", b, "--pid-file", pidfile)[0] == 0
    assert oci("start", "m")[0] == 0
    pm = int(open(pidfile).read())
    os.kill(pa, 9)                      # the pod's first init ends; its container is not deleted
    for _ in range(200):
        if dead(pa):
            break
        time.sleep(0.05)
    env = dict(os.environ, MXC_SWEEP_MIN_AGE="0", MXC_STATE_DIR=os.path.join(oci.base, "mxc-state"))
    g = subprocess.run([os.path.join(REPO, "build", "mxc-exec"), "--gc"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert g.returncode == 0, g.stdout + g.stderr
    time.sleep(0.2)
    assert not dead(pm), "the sweeper killed the live member's init"
    assert oci("delete", "--force", "m")[0] == 0
