#!/usr/bin/env python3
"""Side-by-side benchmarks, one run: mxc against the tools a user would
otherwise pick. Prints a Markdown table with medians and ratios.

  one-shot `true`, full default policy   vs  bwrap --unshare-all (same binds)  vs  posix_spawn
  exec into a live session               vs  nsenter -t HOLDER -a /bin/true     vs  posix_spawn
  provision -> start -> exec -> stop -> deprovision (one full cycle)

Each pair is measured interleaved (A B A B ...), so drift of the machine
hits both sides alike, twice: back to back ("hot") and with 100 ms of idle
before every run ("idle gap"), which is how an agent platform calls us and
where per-call kernel costs that back-to-back runs amortise (RCU grace
periods behind cgroup migration, CPU wake-up) show.

The host context that decides the cgroup cost is printed too: the
controllers mxc uses and the measured cost of one cgroup migration.

Usage: sudo bench/run.py [N]   (needs build/mxc-exec, bwrap, nsenter)
"""
import json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.path.join(ROOT, "build", "mxc-exec")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
STATE = tempfile.mkdtemp(prefix="mxc-bench-")
ENV = dict(os.environ, MXC_STATE_DIR=STATE)
GAP = 0.1


def timed(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def pair(fa, fb, n=N, gap=0.0):
    """Medians of fa and fb, interleaved."""
    fa(), fb()  # warm
    xa, xb = [], []
    for _ in range(n):
        if gap:
            time.sleep(gap)
        xa.append(timed(fa))
        if gap:
            time.sleep(gap)
        xb.append(timed(fb))
    return statistics.median(xa), statistics.median(xb)


def mxc(req, experimental=False):
    args = [EXE] + (["--experimental"] if experimental else []) + ["--config", "-"]
    return subprocess.run(args, input=json.dumps(req).encode(), capture_output=True, env=ENV)


def run(argv):
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def migration_ms():
    """Median cost of moving one process into a fresh v1 pids cgroup (the
    step whose RCU grace period dominates on cgroup v1 hosts)."""
    base = "/sys/fs/cgroup/pids/mxc-bench-%d" % os.getpid()
    try:
        os.mkdir(base)
    except OSError:
        return None
    xs = []
    try:
        for _ in range(9):
            time.sleep(GAP)
            pid = os.fork()
            if pid == 0:
                time.sleep(5)
                os._exit(0)
            t = time.perf_counter()
            with open(base + "/cgroup.procs", "w") as f:
                f.write(str(pid))
            xs.append((time.perf_counter() - t) * 1000)
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    finally:
        os.rmdir(base)
    return statistics.median(xs)


probe = json.loads(subprocess.run([EXE, "--probe"], capture_output=True).stdout)["result"]
mig = migration_ms()
print("host: kernel %s, cgroups %s, one v1 cgroup migration after idle: %s" % (
    probe["kernel"], json.dumps(probe["cgroups"]), "%.2f ms" % mig if mig is not None else "n/a"))
print()

bwrap_argv = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
              "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
              "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
              "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--cap-drop", "ALL", "/bin/sh", "-c", "true"]
oneshot = lambda: mxc({"process": {"commandLine": "true"}})
bwrap = lambda: run(bwrap_argv)
spawn = lambda: run(["/bin/sh", "-c", "true"])

rows = []
for label, gap in (("hot", 0.0), ("idle gap", GAP)):
    a, b = pair(oneshot, bwrap, gap=gap)
    rows.append(("one-shot `true` (full default policy), %s" % label, a, "bwrap --unshare-all", b))
a, b = pair(oneshot, spawn)
rows.append(("one-shot `true` (full default policy), hot", a, "posix_spawn sh -c true", b))

sid = json.loads(mxc({"containment": "isolation_session", "phase": "provision"}, True).stdout)["result"]["sandboxId"]
mxc({"phase": "start", "sandboxId": sid}, True)
holder = int(subprocess.run(["pgrep", "-x", "mxc-holder", "-n"], capture_output=True, text=True).stdout.split()[0])
ex = lambda: mxc({"phase": "exec", "sandboxId": sid, "process": {"commandLine": "true"}}, True)
# -S/-G: the sandbox's uid and gid inside (0 is not mapped there)
ns = lambda: run(["nsenter", "-t", str(holder), "-a", "-S", "1000", "-G", "1000", "/bin/true"])
for label, gap in (("hot", 0.0), ("idle gap", GAP)):
    a, b = pair(ex, ns, gap=gap)
    rows.append(("exec `true` into a live session, %s" % label, a, "nsenter -t PID -a -S 1000 -G 1000 /bin/true", b))
a, b = pair(ex, lambda: run(["/bin/true"]))
rows.append(("exec `true` into a live session, hot", a, "posix_spawn /bin/true", b))
mxc({"phase": "deprovision", "sandboxId": sid}, True)


def cycle():
    s = json.loads(mxc({"containment": "isolation_session", "phase": "provision"}, True).stdout)["result"]["sandboxId"]
    mxc({"phase": "start", "sandboxId": s}, True)
    mxc({"phase": "exec", "sandboxId": s, "process": {"commandLine": "true"}}, True)
    for ph in ("stop", "deprovision"):
        mxc({"phase": ph, "sandboxId": s}, True)


a, b = pair(cycle, bwrap, max(5, N // 3))
rows.append(("provision→start→exec→stop→deprovision, hot", a, "bwrap one-shot (no persistence)", b))

print("| mxc | median ms | compared with | median ms | ratio |")
print("|---|---|---|---|---|")
for a, ta, b, tb in rows:
    print("| %s | %.2f | %s | %.2f | %.2fx |" % (a, ta, b, tb, ta / tb))
