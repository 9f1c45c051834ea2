#!/usr/bin/env python3
"""Side-by-side benchmarks, one run: mxc against the tools a user would
otherwise pick. Prints a Markdown table with medians and ratios.

  one-shot `true`, full default policy   vs  bwrap --unshare-all (same binds)  vs  posix_spawn
  exec into a live session               vs  nsenter -t HOLDER -a /bin/true
  provision -> start -> exec -> stop -> deprovision (one full cycle)

Usage: sudo bench/run.py [N]   (needs build/mxc-exec, bwrap, nsenter)
"""
import json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.path.join(ROOT, "build", "mxc-exec")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
STATE = tempfile.mkdtemp(prefix="mxc-bench-")
ENV = dict(os.environ, MXC_STATE_DIR=STATE)


def timeit(fn, n=N):
    fn()  # warm
    xs = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t)
    return statistics.median(xs) * 1000


def mxc(req, experimental=False):
    args = [EXE] + (["--experimental"] if experimental else []) + ["--config", "-"]
    p = subprocess.run(args, input=json.dumps(req).encode(), capture_output=True, env=ENV)
    return p


def run(argv):
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


rows = []
oneshot = timeit(lambda: mxc({"process": {"commandLine": "true"}}))
bwrap_argv = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
              "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
              "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
              "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--cap-drop", "ALL", "/bin/sh", "-c", "true"]
bwrap = timeit(lambda: run(bwrap_argv))
spawn = timeit(lambda: run(["/bin/sh", "-c", "true"]))
rows.append(("one-shot `true` (full default policy)", oneshot, "bwrap --unshare-all", bwrap))
rows.append(("one-shot `true` (full default policy)", oneshot, "posix_spawn sh -c true", spawn))

sid = json.loads(mxc({"containment": "isolation_session", "phase": "provision"}, True).stdout)["result"]["sandboxId"]
mxc({"phase": "start", "sandboxId": sid}, True)
holder = [int(x) for x in subprocess.run(["pgrep", "-x", "mxc-holder", "-n"], capture_output=True, text=True).stdout.split()][0]
ex = timeit(lambda: mxc({"phase": "exec", "sandboxId": sid, "process": {"commandLine": "true"}}, True))
ns = timeit(lambda: run(["nsenter", "-t", str(holder), "-a", "/bin/true"]))
rows.append(("exec `true` into a live session", ex, "nsenter -t PID -a /bin/true", ns))
mxc({"phase": "deprovision", "sandboxId": sid}, True)


def cycle():
    s = json.loads(mxc({"containment": "isolation_session", "phase": "provision"}, True).stdout)["result"]["sandboxId"]
    for ph in ("start",):
        mxc({"phase": ph, "sandboxId": s}, True)
    mxc({"phase": "exec", "sandboxId": s, "process": {"commandLine": "true"}}, True)
    for ph in ("stop", "deprovision"):
        mxc({"phase": ph, "sandboxId": s}, True)


cyc = timeit(cycle, max(5, N // 3))
rows.append(("provision→start→exec→stop→deprovision", cyc, "bwrap one-shot (no persistence)", bwrap))

print("| mxc | median ms | compared with | median ms | ratio |")
print("|---|---|---|---|---|")
for a, ta, b, tb in rows:
    print("| %s | %.2f | %s | %.2f | %.2fx |" % (a, ta, b, tb, ta / tb))
