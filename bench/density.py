#!/usr/bin/env python3
"""Density (issue 38): N idle sessions on one host, and what each costs.

  provision+start N idle sessions (default 1000), the rate at 0-10 %, 40-50 % and 90-100 % of N
  PSS of every process of every session (holder, its monitor, everything below the holder: smaps_rollup)
  kernel objects per session: namespaces not the host's, mounts (the holder's mountinfo), cgroup dirs
  host MemAvailable drop per session
  exec `true` into one session beside N idle sessions against beside none (hot, and with a 100 ms idle
  gap before every run; median of --samples, 50 by default)
  `mxc ls` and `mxc-exec --gc` wall time at N
  a one-shot whose grant's path meets a symlink (the "can a live sandbox write it?" check) at 1 and at N
  syscalls of one exec (the client's side) and one provision at 0 and at N (strace -c -f), with --strace
  then every session deprovisioned, and a check that none of them left anything (state, claims,
  processes, cgroups); everything is torn down even on failure.

The sessions live in a state root of the bench's own (MXC_STATE_DIR), so nothing of another caller's is
touched.  The claim directory is host-wide: only the bench's own claims are counted and checked.

Usage: sudo bench/density.py [N] [--samples K] [--strace]   (needs build/mxc-exec and build/mxc)
"""
import base64, json, os, shutil, statistics, subprocess, sys, tempfile, time

from sessions import children_map, mem_available_kb, rollup, session_pids, timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.path.join(ROOT, "build", "mxc-exec")
MXC = os.path.join(ROOT, "build", "mxc")
args = [a for a in sys.argv[1:] if not a.startswith("--")]
N = int(args[0]) if args else 1000
SAMPLES = int(sys.argv[sys.argv.index("--samples") + 1]) if "--samples" in sys.argv else 50
STRACE = "--strace" in sys.argv
STATE = tempfile.mkdtemp(prefix="mxc-density-")
ENV = dict(os.environ, MXC_STATE_DIR=STATE, MXC_WORKSPACE_ROOT=STATE + ".ws")
CLAIMS = "/var/lib/mxc/claims"
GAP = 0.1


def mxc(req, check=True):
    p = subprocess.run([EXE, "--experimental", "--config", "-"], input=json.dumps(req).encode(),
                       capture_output=True, env=ENV)
    if check and p.returncode != 0:
        raise RuntimeError("mxc-exec failed on %s: %s %s" % (req, p.stdout[-400:], p.stderr[-400:]))
    return p


def provision():
    return json.loads(mxc({"containment": "isolation_session", "phase": "provision"}).stdout)["result"]


HOLDERS = []


def start(res):
    mxc({"phase": "start", "sandboxId": res["sandboxId"]})
    HOLDERS.append(int(open(os.path.join(STATE, res["metadata"]["agentUserName"], "holder")).read().split()[0]))
    return HOLDERS[-1]


def exec_true(sid):
    mxc({"phase": "exec", "sandboxId": sid, "process": {"commandLine": "true"}})


LINKS = tempfile.mkdtemp(prefix="mxc-density-links-")
os.chmod(LINKS, 0o755)
os.mkdir(os.path.join(LINKS, "real"))
os.symlink("real", os.path.join(LINKS, "lnk"))


def oneshot_ro(name):
    return {"containment": "process", "process": {"commandLine": "true"},
            "filesystem": {"readonlyPaths": [os.path.join(LINKS, name)]}}


def link_cost():
    """A one-shot whose read-only grant's path meets a symlink (each symlink met asks whether a live
    sandbox can write the directory holding it: mxc_registry_inside_writable), interleaved with the
    same grant by the link's target: medians (ms), and the first one's syscalls (strace -f -c)."""
    via, direct = [], []
    for _ in range(SAMPLES):
        via.append(timed(lambda: mxc(oneshot_ro("lnk"))))
        direct.append(timed(lambda: mxc(oneshot_ro("real"))))
    return statistics.median(via), statistics.median(direct), strace_counts(oneshot_ro("lnk"))[0]


def median_ms(fn, n, gap=0.0):
    fn()  # warm
    xs = []
    for _ in range(n):
        if gap:
            time.sleep(gap)
        xs.append(timed(fn))
    return statistics.median(xs)


def own_ns(pid):
    """The namespaces of pid that are not the bench's own (the host's)."""
    n = 0
    for t in os.listdir("/proc/self/ns"):
        if t.endswith("_for_children"):
            continue
        try:
            if os.readlink("/proc/%d/ns/%s" % (pid, t)) != os.readlink("/proc/self/ns/" + t):
                n += 1
        except OSError:
            pass
    return n


def cgroup_dirs(pid):
    """Directories of the cgroup hierarchies under the session's cgroups (v1: one per controller)."""
    n = 0
    for line in open("/proc/%d/cgroup" % pid):
        hier, ctrl, path = line.rstrip("\n").split(":", 2)
        if path in ("", "/"):
            continue
        mnt = "/sys/fs/cgroup" + ("/" + ctrl.split(",")[0].replace("name=", "") if ctrl else "") + path
        if not os.path.isdir(mnt):
            mnt = "/sys/fs/cgroup" + path
        for _d, dirs, _f in os.walk(mnt):
            n += 1
    return n


def wall_ms(argv, n=5):
    xs = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        xs.append((time.perf_counter() - t) * 1000)
    return statistics.median(xs)


def strace_counts(req):
    """Syscalls of one mxc-exec call, all its processes (strace -f -c): total and the top ones."""
    out = tempfile.mktemp(prefix="mxc-density-strace-")
    try:
        # (not a start: its holder lives on under strace -f, which then never ends)
        subprocess.run(["strace", "-f", "-c", "-o", out, EXE, "--experimental", "--config", "-"],
                       input=json.dumps(req).encode(), capture_output=True, env=ENV, check=True)
        rows, total = [], 0
        for line in open(out):
            f = line.split()
            if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
                calls = int(f[3])
                rows.append((calls, f[-1]))
            elif f and f[-1] == "total":
                total = int(f[3 if len(f) >= 5 else 2])
        rows.sort(reverse=True)
        return total, rows[:8]
    finally:
        if os.path.exists(out):
            os.unlink(out)


def strace_report(label, sid):
    t, top = strace_counts({"phase": "exec", "sandboxId": sid, "process": {"commandLine": "true"}})
    print("  %s: exec `true` %d syscalls (%s)" % (label, t, ", ".join("%s %d" % (n, c) for c, n in top)))
    t, top = strace_counts({"containment": "isolation_session", "phase": "provision"})
    print("  %s: provision %d syscalls (%s)" % (label, t, ", ".join("%s %d" % (n, c) for c, n in top)))
    for name in os.listdir(STATE):  # the session that provision made
        if os.path.isdir(os.path.join(STATE, name)) and name not in {r["metadata"]["agentUserName"] for r in MADE}:
            mxc({"phase": "deprovision", "sandboxId": sid_of(name)})


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def main(made):
    print("density: N=%d idle sessions, state root %s; load average before %s" % (N, STATE, " ".join(loadavg())))
    probe = provision()
    made.append(probe)
    start(probe)
    sid = probe["sandboxId"]
    for _ in range(20):  # warm
        exec_true(sid)
    none_hot = median_ms(lambda: exec_true(sid), SAMPLES)
    none_gap = median_ms(lambda: exec_true(sid), SAMPLES, GAP)
    if STRACE:
        print("syscalls (strace -f -c), one call each:")
        strace_report("beside 0", sid)
    ls0, gc0 = wall_ms([MXC, "ls"]), wall_ms([EXE, "--gc"])
    link0 = link_cost()

    before = mem_available_kb()
    stamps, holders = [], []
    t0 = time.perf_counter()
    for i in range(N):
        res = provision()
        made.append(res)
        holders.append(start(res))
        stamps.append(time.perf_counter() - t0)
        if (i + 1) % 100 == 0:
            print("  %d started, %.1f s, load %s" % (i + 1, stamps[-1], " ".join(loadavg())), flush=True)
    time.sleep(2)
    after = mem_available_kb()
    load_during = loadavg()

    def rate(lo, hi):
        a, b = int(N * lo), int(N * hi) - 1
        t_a = stamps[a - 1] if a > 0 else 0.0
        return (b - a + 1) / (stamps[b] - t_a)

    kids = children_map()
    pss = rss = procs = 0
    for h in holders:
        for p in session_pids(h, kids):
            v = rollup(p)
            pss += v.get("Pss", 0)
            rss += v.get("Rss", 0)
            procs += 1
    mid = holders[N // 2]
    mounts = sum(1 for _ in open("/proc/%d/mountinfo" % mid))
    host_mounts = sum(1 for _ in open("/proc/self/mountinfo"))
    nss, cgs = own_ns(mid), cgroup_dirs(mid)

    n_hot = median_ms(lambda: exec_true(sid), SAMPLES)
    n_gap = median_ms(lambda: exec_true(sid), SAMPLES, GAP)
    if STRACE:
        strace_report("beside %d" % N, sid)
    lsn, gcn = wall_ms([MXC, "ls"]), wall_ms([EXE, "--gc"])
    linkn = link_cost()
    t = time.perf_counter()
    for res in made[1:]:
        mxc({"phase": "deprovision", "sandboxId": res["sandboxId"]})
    deprov = N / (time.perf_counter() - t)
    del made[1:]
    # beside none again, after: the machine's drift over the run hits both sides
    none_hot = statistics.median([none_hot, median_ms(lambda: exec_true(sid), SAMPLES)])
    none_gap = statistics.median([none_gap, median_ms(lambda: exec_true(sid), SAMPLES, GAP)])

    print()
    print("| density, N = %d idle sessions | figure |" % N)
    print("|---|---|")
    print("| provision+start rate, 0-10 %% · 40-50 %% · 90-100 %% of N | %.1f · %.1f · %.1f /s |"
          % (rate(0, 0.1), rate(0.4, 0.5), rate(0.9, 1.0)))
    print("| processes per idle session | %.2f |" % (procs / N))
    print("| PSS per idle session (all its processes) | %.1f KiB (RSS %.1f KiB) |" % (pss / N, rss / N))
    print("| PSS, all N sessions | %.1f MiB |" % (pss / 1024))
    print("| host MemAvailable drop per session | %.1f KiB (total %.1f MiB) |"
          % ((before - after) / N, (before - after) / 1024))
    print("| kernel objects per session: namespaces of its own · mounts in its view · cgroup dirs | %d · %d · %d |"
          % (nss, mounts, cgs))
    print("| host mount table (the bench's mountinfo) at N | %d lines |" % host_mounts)
    print("| exec `true` beside none, hot · idle gap (median of %d, the mean of the medians before and after) | "
          "%.2f · %.2f ms |" % (SAMPLES, none_hot, none_gap))
    print("| exec `true` beside N, hot · idle gap | %.2f · %.2f ms |" % (n_hot, n_gap))
    print("| exec beside N / beside none, hot · idle gap | %.2fx · %.2fx |" % (n_hot / none_hot, n_gap / none_gap))
    print("| `mxc ls` at 1 · at N | %.1f · %.1f ms |" % (ls0, lsn))
    print("| `mxc-exec --gc` at 1 · at N | %.1f · %.1f ms |" % (gc0, gcn))
    print("| one-shot `true` whose grant's path meets a symlink, beside 1 · beside N (median of %d; the same grant "
          "by the link's target, interleaved) | %.2f · %.2f ms (%.2f · %.2f ms) |" % (SAMPLES, link0[0], linkn[0],
                                                                                   link0[1], linkn[1]))
    print("| its syscalls (strace -f -c), beside 1 · beside N | %d · %d |" % (link0[2], linkn[2]))
    print("| deprovision rate at N..0 | %.1f /s |" % deprov)
    print("| load average during the run (1, 5, 15 min) | %s |" % " ".join(load_during))


def sid_of(name):
    body = json.dumps({"version": 1, "agentUserName": name}, separators=(",", ":")).encode()
    return "iso:" + base64.urlsafe_b64encode(body).decode().rstrip("=")


def teardown(made):
    """Every session the bench made (and whatever else is in its own state root) deprovisioned; then a
    check that nothing of them is left: state, claims, processes."""
    names = {r["metadata"]["agentUserName"] for r in made}
    names |= {n for n in os.listdir(STATE) if n.startswith("mxc-") and os.path.isdir(os.path.join(STATE, n))} \
        if os.path.isdir(STATE) else set()
    t = time.perf_counter()
    failed = 0
    for name in sorted(names):
        if mxc({"phase": "deprovision", "sandboxId": sid_of(name)}, check=False).returncode != 0:
            failed += 1
    took = time.perf_counter() - t
    left = [n for n in os.listdir(STATE) if not n.startswith(".")] if os.path.isdir(STATE) else []
    claims = 0
    for c in os.listdir(CLAIMS) if os.path.isdir(CLAIMS) else []:
        try:
            if STATE in open(os.path.join(CLAIMS, c)).read():
                claims += 1
        except OSError:
            pass
    procs = sum(1 for h in HOLDERS if os.path.exists("/proc/%d" % h))  # a holder still there
    print("deprovisioned %d sessions in %.1f s (%d failed); left: %d state entries, %d claims, %d processes"
          % (len(names), took, failed, len(left), claims, procs))
    shutil.rmtree(STATE, ignore_errors=True)
    shutil.rmtree(STATE + ".ws", ignore_errors=True)
    shutil.rmtree(LINKS, ignore_errors=True)
    return not (failed or left or claims or procs)


made = MADE = []
ok = False
try:
    main(made)
    ok = True
finally:
    clean = teardown(made)
sys.exit(0 if ok and clean else 1)
