"""What bench/run.py and bench/density.py read of a session's processes and of the host: a call's
wall time, the processes of a session (its holder, the holder's monitor, everything below the
holder), their smaps_rollup, and the host's MemAvailable."""
import os
import time


def timed(fn):
    """fn's wall time, in ms."""
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def stat_ppid(p):
    return int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1])


def children_map():
    """{ppid: [pid, ...]} of every process now."""
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                kids.setdefault(stat_ppid(p), []).append(int(p))
            except (OSError, IndexError, ValueError):
                continue
    return kids


def session_pids(holder, kids=None):
    """The holder, its monitor (its parent), and everything below the holder (kids: children_map(),
    read once for many sessions)."""
    kids = children_map() if kids is None else kids
    out, todo = [stat_ppid(holder)], [holder]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def rollup(pid):
    """{"Pss": kB, "Rss": kB} of /proc/PID/smaps_rollup ({} when it is gone)."""
    vals = {}
    try:
        for line in open("/proc/%d/smaps_rollup" % pid):
            f = line.split()
            if len(f) >= 2 and f[0] in ("Pss:", "Rss:"):
                vals[f[0][:-1]] = int(f[1])
    except OSError:
        pass
    return vals


def mem_available_kb():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0
