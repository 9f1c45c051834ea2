"""Kills at every step (issue 34, finding 7; docs/oci.md "A killed command"): `mxc-oci create` killed by
SIGKILL at each of its state-changing system calls in turn (strace's fault injection), then
`delete --force`: no state directory, no range claim, no cgroup directory is left.

The calls are enumerated once from a traced create (its own process: the init it clones is the
create's to clean up when it dies, and dies with it); each (syscall, occurrence) is then a run of
its own, the create killed on entering that call.  Every state root is this test's own, and the
claims counted are only those naming it.  MXC_KILLS_STEP=N runs every N-th step only (default 1).

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_kills.py
"""
import glob
import os
import re
import shutil
import signal
import subprocess

import pytest

from test_oci import MXC_OCI, claims_of, oci  # noqa: F401  (the fixture)

STRACE = shutil.which("strace")
STEP = max(1, int(os.environ.get("MXC_KILLS_STEP", "1")))

# what changes state: the file system (the store, the claims, cgroupfs), processes, namespaces
CHANGING = ("mkdir", "mkdirat", "mknodat", "fchownat", "fchown", "fchmodat", "linkat", "link", "symlinkat",
            "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "write", "pwrite64", "clone",
            "clone3", "fork", "vfork", "setns", "mount", "move_mount", "ftruncate", "openat")
OPEN_WRITES = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
              pytest.mark.skipif(not STRACE, reason="needs strace (scripts/deps.sh)")]


def traced_steps(trace):
    """[(syscall, n)]: the n-th call of syscall (1-based, as strace's when= counts) that changes state."""
    seen, steps = {}, []
    for line in trace.splitlines():
        m = re.match(r"^(\w+)\((.*)", line)
        if not m or m.group(1) not in CHANGING:
            continue
        name = m.group(1)
        seen[name] = seen.get(name, 0) + 1
        if name == "openat" and not any(f in m.group(2) for f in OPEN_WRITES):
            continue  # a read: changes nothing
        steps.append((name, seen[name]))
    return steps


def leftovers(oci, cid):
    """What a container named cid left: its directory, claims naming it, its cgroup directories."""
    left = []
    state = os.path.join(os.path.realpath(oci.root), cid)
    if os.path.lexists(state):
        left.append("state " + " ".join(sorted(os.listdir(state))))
    left += ["claim " + n for n, _ in claims_of(state)]
    for pat in ("/sys/fs/cgroup/*/mxc.oci/*/" + cid, "/sys/fs/cgroup/mxc.oci/*/" + cid):
        left += ["cgroup " + d for d in glob.glob(pat) if os.path.isdir(d)]
    return left


def create_argv(oci, cid, bundle):
    return [MXC_OCI, "--root", oci.root, "create", "--bundle", bundle, cid]


def test_create_killed_at_each_state_changing_syscall_leaves_nothing_after_delete_force(oci):
    b = oci.bundle(["true"])
    # a first create fills the store's caches (the compiled seccomp filter): later creates run the same calls
    rc, _, err = oci.create("warm", b)
    assert rc == 0, err
    rc, _, err = oci("delete", "--force", "warm")
    assert rc == 0, err
    trace = os.path.join(oci.base, "trace")
    with open(os.path.join(b, "out"), "wb") as out:
        r = subprocess.run([STRACE, "-o", trace, "-e", "trace=" + ",".join(CHANGING)] +
                           create_argv(oci, "enum", b), stdin=subprocess.DEVNULL, stdout=out,
                           stderr=out, timeout=120)  # the init keeps its stdio: a file, never a pipe
    assert r.returncode == 0, open(os.path.join(b, "out")).read()
    with open(trace) as f:
        steps = traced_steps(f.read())
    rc, _, err = oci("delete", "--force", "enum")
    assert rc == 0, err
    kinds = sorted({s for s, _ in steps})
    assert {"mkdirat", "mkdir", "write", "clone", "renameat", "linkat"} <= set(kinds), kinds
    print("\ncreate: %d state-changing calls of %d kinds (%s); killed at every %d-th" %
          (len(steps), len(kinds), ", ".join(kinds), STEP))
    chosen = steps[::STEP]
    for kind in kinds:  # every kind at least once, whatever the step
        if not any(s == kind for s, _ in chosen):
            chosen.append(next(st for st in steps if st[0] == kind))
    failures, killed = [], 0
    for i, (name, n) in enumerate(chosen):
        cid = "k%d" % i
        with open(os.path.join(b, "out"), "wb") as out:
            r = subprocess.run([STRACE, "-o", "/dev/null", "-e", "trace=" + name,
                                "-e", "inject=%s:signal=SIGKILL:when=%d" % (name, n)] + create_argv(oci, cid, b),
                               stdin=subprocess.DEVNULL, stdout=out, stderr=out, timeout=120)
        killed += r.returncode in (128 + signal.SIGKILL, -signal.SIGKILL)
        rc, _, err = oci("delete", "--force", cid)
        left = leftovers(oci, cid)
        if rc != 0 or left:
            failures.append("%s#%d (create rc %d): delete --force rc %d %s; left %s" %
                            (name, n, r.returncode, rc, err.strip(), left))
    print("killed %d of %d runs; %d left something" % (killed, len(chosen), len(failures)))
    assert not failures, "\n".join(failures)
    assert killed >= len(chosen) - 2, "the injected kills did not land (%d of %d)" % (killed, len(chosen))
