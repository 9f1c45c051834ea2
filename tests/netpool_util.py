"""tests/netpool_util.py — what the tests (tests/integration: test_network_models.py,
test_proxy_bounds.py, test_proxy.py, test_zz_leftovers.py) and bench/net.py read of this host's
processes and of model 1's pool of namespaces made ahead (src/net/netpool.h): processes by name
and network namespace, whether one has exited, the pool's records, an entry discarded as `--gc`
would.  Plain Python, no pytest: the bench imports it too."""
import os
import shutil
import time

POOL = "/run/mxc-netpool"  # src/net/netpool.h
STACK_NAMES = ("pasta", "passt", "passt.avx2")  # the stack's process, as its comm says


def comm(pid):
    """the process's name (/proc/PID/comm), or "" when it is gone"""
    try:
        return open("/proc/%s/comm" % pid).read().strip()
    except OSError:
        return ""


def netns(pid="self"):
    """the inode of the process's network namespace, or None when it is gone"""
    try:
        return os.stat("/proc/%s/ns/net" % pid).st_ino
    except OSError:
        return None


def start_time(pid):
    """the process's start time (/proc/PID/stat field 22) as its text, the pool's records' unit, or
    None when it is gone"""
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def gone(pid):
    """whether the process has exited: gone, or a zombie (or dead) not yet reaped"""
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True


def procs_named(match, netns_ino=None):
    """pids of the processes whose name (comm) match() accepts, in the given network namespace
    (None: any)"""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if match(open("/proc/%s/comm" % pid).read().strip()) and \
                    (netns_ino is None or os.stat("/proc/%s/ns/net" % pid).st_ino == netns_ino):
                out.append(int(pid))
        except OSError:
            pass
    return out


def pool_records(netns_ino=None):
    """{entry name: its record (holder, holder's start, pasta, pasta's start), each the text the
    entry's `pids` file holds} of the pool's ready entries whose record reads, those made for the
    given namespace only (their name's key starts with its inode; None: every one)"""
    out, ready = {}, os.path.join(POOL, "ready")
    for e in os.listdir(ready) if os.path.isdir(ready) else []:
        if netns_ino is not None and not e.startswith("%d-" % netns_ino):
            continue
        try:
            f = open(os.path.join(ready, e, "pids")).read().split()
            out[e] = (int(f[0]), f[1], int(f[2]), f[3])
        except (OSError, ValueError, IndexError):
            pass
    return out


def pool_entries(netns_ino=None):
    """{entry name: (holder pid, pasta pid)} of the pool's ready entries (pool_records)"""
    return {e: (r[0], r[2]) for e, r in pool_records(netns_ino).items()}


def pooled_stacks(netns_ino=None):
    """pids of the pastas idle in the pool (made ahead, no sandbox's), those whose own network
    namespace is netns_ino only (None: every one)"""
    return {p for _, p in pool_entries().values() if netns_ino is None or netns(p) == netns_ino}


def sandbox_stacks(netns_ino):
    """pids of the pastas whose host side is the given network namespace and that are not the
    pool's idle ones (a sandbox's, or one a refiller is starting: wait for those first)"""
    stacks = procs_named(lambda c: c in STACK_NAMES, netns_ino)
    pooled = pooled_stacks()
    return [p for p in stacks if p not in pooled]


def entry_cgroup(entry):
    """the name of the entry's own cgroup (v1: `netpool-<holder>`, src/net/netpool.c), as the
    record at the path entry says it, or "" when it has none"""
    try:
        return open(os.path.join(entry, "cgroup")).read().strip()
    except OSError:
        return ""


def _rmdir_gone(path):
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:  # busy: what was killed in it is still exiting
        return False
    return True


def remove_entry_cgroup(entry, timeout=10.0):
    """v1: the entry's own cgroup removed once what was killed in it has exited: None, or the
    first of its directories still there after timeout seconds"""
    cg = entry_cgroup(entry)
    if not cg.startswith("netpool-") or "/" in cg:
        return None
    for path in ["/sys/fs/cgroup/%s/mxc/%s%s" % (h, cg, sub) for h in ("pids", "memory") for sub in ("/helpers", "")]:
        deadline = time.monotonic() + timeout
        while not _rmdir_gone(path):
            if time.monotonic() > deadline:
                return path
            time.sleep(0.01)
    return None


def discard_entry(entry, timeout=10.0):
    """The pool entry at the path entry discarded, as `--gc` would: its pasta and holder killed
    while they are still the record's (their start times), its own cgroup removed
    (remove_entry_cgroup), its record removed.  None, or the cgroup directory left."""
    try:
        h, hs, p, ps = open(os.path.join(entry, "pids")).read().split()
        pids = ((int(p), ps), (int(h), hs))
    except (OSError, ValueError):
        pids = ()
    for pid, start in pids:
        try:
            if start_time(pid) == start:
                os.kill(pid, 9)
        except OSError:
            pass
    left = remove_entry_cgroup(entry, timeout)
    shutil.rmtree(entry, ignore_errors=True)
    return left
