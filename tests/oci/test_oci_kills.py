"""Kills at every step (issue 34, finding 7; docs/oci.md "A killed command"): `mxc-oci create` killed by
SIGKILL at each of its state-changing system calls in turn (strace's fault injection), then
`delete --force`: no state directory, no range claim (nor a claim's file being written), no cgroup
directory is left.  `start`, `exec` and `delete --force` likewise, each killed at each of its own.

The calls are enumerated once from a traced create (its own process: the init it clones is the
create's to clean up when it dies, and dies with it); each (syscall, occurrence) is then a run of
its own, the create killed on entering that call.  Every state root is this test's own, and what is
counted is only what names it: the claims and claim files (.new-*) that name its state directories,
the cgroups below its root's own level (mxc.oci/r<hash>/<id>).  The claim directory and the cgroup
hierarchies are host-wide: other tests' containers (c1 everywhere) and other sandboxes' claims come
and go in them while this runs, and are not this test's to count.  MXC_KILLS_STEP=N runs every N-th
step only (default 1).

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_kills.py
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess

import pytest

from conftest import MXC_EXEC
from test_oci import CLAIMS, MXC_OCI, claims_of, oci  # noqa: F401  (the fixture)

STRACE = shutil.which("strace")
STEP = max(1, int(os.environ.get("MXC_KILLS_STEP", "1")))

# what changes state: the file system (the store, the claims, cgroupfs), processes, namespaces
CHANGING = ("mkdir", "mkdirat", "mknodat", "fchownat", "fchown", "fchmodat", "linkat", "link", "symlinkat",
            "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "write", "pwrite64", "clone",
            "clone3", "fork", "vfork", "setns", "mount", "move_mount", "ftruncate", "openat")
OPEN_WRITES = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
              pytest.mark.skipif(not STRACE, reason="needs strace (scripts/deps.sh)")]


def traced_steps(trace, pick=lambda name, args: True):
    """[(syscall, n)]: the n-th call of syscall (1-based, as strace's when= counts) that changes state
    (and that pick(name, its arguments' text) keeps)."""
    seen, steps = {}, []
    for line in trace.splitlines():
        m = re.match(r"^(\w+)\((.*)", line)
        if not m or m.group(1) not in CHANGING:
            continue
        name = m.group(1)
        seen[name] = seen.get(name, 0) + 1
        if name == "openat" and not any(f in m.group(2) for f in OPEN_WRITES):
            continue  # a read: changes nothing
        if not pick(name, m.group(2)):
            continue
        steps.append((name, seen[name]))
    return steps


def dead_writer(name):
    """A claim file being written (.new-<pid>-<start>-<tag>) whose writer is gone (or is a zombie)."""
    m = re.match(r"^\.new-(\d+)-(\d+)-[0-9a-f]+$", name)
    assert m, "a claim file named without its writer's start time: %s" % name
    try:
        with open("/proc/%s/stat" % m.group(1)) as f:
            stat = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return True
    return stat[0] in "ZX" or stat[19] != m.group(2)


def names_state(name, state):
    """The claim file name (read now: a complete file, O_TMPFILE linked in once whole) names state."""
    try:
        with open(os.path.join(CLAIMS, name)) as f:
            return json.load(f).get("stateDir") == state
    except (OSError, ValueError):
        return False  # gone (renamed in, or removed), or not an oci claim


def dead_temps(state):
    """The claim files being written that name state and whose writer is dead: read again once the
    writer is seen dead, for a file still there then is left, and a live writer's file that it renames
    in before it exits is not (a file seen, then its writer seen gone, was counted though it was gone
    too)."""
    names = os.listdir(CLAIMS) if os.path.isdir(CLAIMS) else []
    return [n for n in names if n.startswith(".new-") and names_state(n, state) and dead_writer(n)
            and names_state(n, state)]


def cgroup_level(root):
    """The cgroup level of a --root's containers by default (src/oci/cgroup.c root_tag): r + the FNV-1a
    of the root's path; a container's cgroup is mxc.oci/<level>/<id> in each hierarchy."""
    h = 2166136261
    for b in os.path.realpath(root).encode():
        h = ((h ^ b) * 16777619) & 0xffffffff
    return "r%08x" % h


def cgroups_of(oci, cid):
    level = cgroup_level(oci.root)
    return [d for pat in ("/sys/fs/cgroup/*/mxc.oci/%s/%s" % (level, cid), "/sys/fs/cgroup/mxc.oci/%s/%s" % (level, cid))
            for d in glob.glob(pat) if os.path.isdir(d)]


def leftovers(oci, cid):
    """What a container named cid left: its directory, claims naming it, claim files naming it whose
    writer is dead, its cgroup directories."""
    left = []
    state = os.path.join(os.path.realpath(oci.root), cid)
    if os.path.lexists(state):
        left.append("state " + " ".join(sorted(os.listdir(state))))
    left += ["claim " + n for n, _ in claims_of(state)]
    left += ["claim file " + n for n in dead_temps(state)]
    left += ["cgroup " + d for d in cgroups_of(oci, cid)]
    return left


def run_traced(argv, out_path, *strace_args):
    # LeakSanitizer cannot run under ptrace (an ASan build then fails at exit): leaks off here only
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(o for o in (env.get("ASAN_OPTIONS", ""), "detect_leaks=0") if o)
    with open(out_path, "wb") as out:  # the init keeps its stdio: a file, never a pipe
        return subprocess.run([STRACE] + list(strace_args) + argv, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=out, timeout=120, env=env)


def enumerate_steps(oci, argv, out_path, pick=lambda name, args: True):
    trace = os.path.join(oci.base, "trace")
    r = run_traced(argv, out_path, "-o", trace, "-e", "trace=" + ",".join(CHANGING))
    assert r.returncode == 0, open(out_path).read()
    with open(trace) as f:
        return traced_steps(f.read(), pick)


def chosen_steps(what, steps):
    kinds = sorted({s for s, _ in steps})
    chosen = steps[::STEP]
    for kind in kinds:  # every kind at least once, whatever the step
        if not any(s == kind for s, _ in chosen):
            chosen.append(next(st for st in steps if st[0] == kind))
    print("\n%s: %d state-changing calls of %d kinds (%s); killed at %d of them" %
          (what, len(steps), len(kinds), ", ".join(kinds), len(chosen)))
    return chosen


def kill_each(oci, what, steps, prepare, argv_of, out_path):
    """For each step: prepare(cid), the command argv_of(cid) killed on entering that call, then
    `delete --force cid`: nothing may be left."""
    failures, killed = [], 0
    for i, (name, n) in enumerate(chosen_steps(what, steps)):
        cid = "%s%d" % (what[0], i)
        prepare(cid)
        r = run_traced(argv_of(cid), out_path, "-o", "/dev/null", "-e", "trace=" + name,
                       "-e", "inject=%s:signal=SIGKILL:when=%d" % (name, n))
        killed += r.returncode in (128 + signal.SIGKILL, -signal.SIGKILL)
        rc, _, err = oci("delete", "--force", cid)
        left = leftovers(oci, cid)
        if rc != 0 or left:
            failures.append("%s %s#%d (rc %d): delete --force rc %d %s; left %s" %
                            (what, name, n, r.returncode, rc, err.strip(), left))
    print("%s: killed %d runs; %d left something" % (what, killed, len(failures)))
    assert not failures, "\n".join(failures)
    return killed


def cmd(oci, *args):
    return [MXC_OCI, "--root", oci.root] + list(args)


@pytest.fixture
def warm(oci):
    """A bundle, and a first create that fills the store's caches (the compiled seccomp filter):
    later creates run the same calls.  Its cgroups are where leftovers() looks (else it looks in vain)."""
    b = oci.bundle(["sleep", "1000"])
    rc, _, err = oci.create("warm", b)
    assert rc == 0, err
    assert cgroups_of(oci, "warm") or not glob.glob("/sys/fs/cgroup/*/mxc.oci") + glob.glob("/sys/fs/cgroup/mxc.oci")
    rc, _, err = oci("delete", "--force", "warm")
    assert rc == 0, err
    return b


def test_create_killed_at_each_state_changing_syscall_leaves_nothing_after_delete_force(oci, warm):
    out = os.path.join(warm, "out")
    steps = enumerate_steps(oci, cmd(oci, "create", "--bundle", warm, "enum"), out)
    rc, _, err = oci("delete", "--force", "enum")
    assert rc == 0, err
    assert {"mkdirat", "mkdir", "write", "clone", "renameat", "linkat"} <= {s for s, _ in steps}, steps
    killed = kill_each(oci, "create", steps, lambda cid: None,
                       lambda cid: cmd(oci, "create", "--bundle", warm, cid), out)
    assert killed >= len(steps[::STEP]) - 2, "the injected kills did not land"


def test_start_exec_and_delete_killed_at_each_state_changing_syscall_leave_nothing_after_delete_force(oci, warm):
    out = os.path.join(warm, "out")

    def created(cid):
        rc, _, err = oci.create(cid, warm)
        assert rc == 0, err

    def started(cid):
        created(cid)
        rc, _, err = oci("start", cid)
        assert rc == 0, err

    for what, prepare, args in (("start", created, lambda cid: ["start", cid]),
                                ("exec", started, lambda cid: ["exec", cid, "true"]),
                                ("delete", started, lambda cid: ["delete", "--force", cid])):
        prepare("enum")
        steps = enumerate_steps(oci, cmd(oci, *args("enum")), out)
        oci("delete", "--force", "enum")
        assert steps, what
        kill_each(oci, what, steps, prepare, lambda cid: cmd(oci, *args(cid)), out)


def test_a_full_disk_under_cgroup_json_says_why_and_leaves_nothing(oci, warm):
    """cgroup.json's write refused with ENOSPC (strace, on that file only): the create says why."""
    state = os.path.join(os.path.realpath(oci.root), "full")
    r = run_traced(cmd(oci, "create", "--bundle", warm, "full"), os.path.join(warm, "out"), "-o", "/dev/null",
                   "-P", os.path.join(state, "cgroup.json.new"), "-P", os.path.join(state, "cgroup.json"),
                   "-e", "trace=write",
                   "-e", "inject=write:error=ENOSPC")
    with open(os.path.join(warm, "out")) as f:
        err = f.read()
    assert r.returncode != 0
    assert "cgroup.json" in err and "No space left on device" in err, err
    assert not leftovers(oci, "full")


def test_gc_removes_the_claim_and_cgroup_of_a_killed_create_nobody_deletes(oci, warm):
    """A create killed at each of its mkdirs (the cgroup's among them), and at each rename of a
    rewritten claim into its place (the claim naming the cgroups, then the init), and never deleted
    (containerd's unique ids): the engine's sweeper releases the claim, which named the cgroup before
    it was made, removes the cgroup's directories, and the rewritten claim file (.new-*) the killed
    create left, named by its writer's pid and start time (dead_writer checks the name)."""
    out = os.path.join(warm, "out")
    steps = enumerate_steps(oci, cmd(oci, "create", "--bundle", warm, "enum"), out,
                            lambda name, args: name == "mkdir" or name == "renameat" and '".new-' in args)
    rc, _, err = oci("delete", "--force", "enum")
    assert rc == 0, err
    assert sum(s == "mkdir" for s, _ in steps) >= 2 and sum(s == "renameat" for s, _ in steps) >= 2, steps
    cids = []
    for i, (name, n) in enumerate(steps):
        cids.append("g%d" % i)
        r = run_traced(cmd(oci, "create", "--bundle", warm, cids[-1]), out, "-o", "/dev/null", "-e", "trace=" + name,
                       "-e", "inject=%s:signal=SIGKILL:when=%d" % (name, n))
        assert r.returncode in (128 + signal.SIGKILL, -signal.SIGKILL)
    # the container's own stay in their state directories: the sweeper knows them by their claims
    states = [os.path.join(os.path.realpath(oci.root), c) for c in cids]
    assert any(claims_of(st) for st in states)
    assert any(dead_temps(st) for st in states), "no claim file left by a create killed at its rename"
    env = dict(os.environ, MXC_SWEEP_MIN_AGE="0", MXC_STATE_DIR=os.path.join(oci.base, "mxc-state"))
    g = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, text=True, env=env, timeout=120)
    assert g.returncode == 0, g.stdout + g.stderr
    left = {c: [x for x in leftovers(oci, c) if not x.startswith("state ")] for c in cids}
    assert not any(left.values()), left
