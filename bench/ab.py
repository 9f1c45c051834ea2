#!/usr/bin/env python3
"""Two builds of mxc side by side (a change's before and after): one-shot, exec into a live
session and the full lifecycle through mxc-exec, interleaved (A B A B ..., the order alternated),
hot and with 100 ms of idle before each run; medians and B / A.  Each build gets a state root of
its own.  (bench/oci.py compares mxc-oci with runc and crun; give it MXC_OCI=BUILD/mxc-oci for
each build in turn.)

With --syscalls, no timing: the system calls of one of each (strace -f -c over every process
it makes), A against B, call by call where they differ; a count is the same on a loaded machine.

usage: sudo bench/ab.py [--syscalls] BUILD_A BUILD_B [N]   (BUILD_*: build directories with mxc-exec)"""
import json, os, shlex, statistics, subprocess, sys, tempfile, time
SYSCALLS = "--syscalls" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--syscalls"]
A, B = ARGS[0], ARGS[1]
N = int(ARGS[2]) if len(ARGS) > 2 else 40
def env_for(tag):
    st = tempfile.mkdtemp(prefix=f"mxc-ab-{tag}-")
    return dict(os.environ, MXC_STATE_DIR=st, MXC_WORKSPACE_ROOT=st + ".ws")
ENV = {A: env_for("a"), B: env_for("b")}
def mxc(build, req):
    r = subprocess.run([os.path.join(build, "mxc-exec"), "--experimental", "--config", "-"], input=json.dumps(req),
                       capture_output=True, text=True, env=ENV[build])
    return json.loads(r.stdout.splitlines()[-1]) if r.stdout.strip() else {}
def oneshot(build):
    subprocess.run([os.path.join(build, "mxc-exec"), "--config", "-"], input='{"process":{"commandLine":"true"}}',
                   capture_output=True, text=True, env=ENV[build], check=True)
SID = {}
def session(build):
    r = mxc(build, {"containment": "isolation_session", "phase": "provision"})
    sid = r["result"]["sandboxId"]
    mxc(build, {"phase": "start", "sandboxId": sid})
    return sid
def exec_(build):
    subprocess.run([os.path.join(build, "mxc-exec"), "--experimental", "--config", "-"],
                   input=json.dumps({"phase": "exec", "sandboxId": SID[build], "process": {"commandLine": "true"}}),
                   capture_output=True, text=True, env=ENV[build], check=True)
def cycle(build):
    sid = session(build)
    mxc(build, {"phase": "exec", "sandboxId": sid, "process": {"commandLine": "true"}})
    mxc(build, {"phase": "stop", "sandboxId": sid})
    mxc(build, {"phase": "deprovision", "sandboxId": sid})
def timed(f, b):
    t = time.perf_counter(); f(b); return (time.perf_counter() - t) * 1000
def pair(f, gap):
    ra, rb = [], []
    for i in range(N):
        for b, r in ((A, ra), (B, rb)) if i % 2 == 0 else ((B, rb), (A, ra)):
            if gap: time.sleep(gap)
            r.append(timed(f, b))
    return statistics.median(ra), statistics.median(rb)
def strace_counts(build, script):
    """{syscall: calls} of `bash -c script` (MXC=the build's mxc-exec) and all it starts."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".strace") as out:
        subprocess.run(["strace", "-f", "-c", "-o", out.name, "bash", "-c", script], check=True,
                       env=dict(ENV[build], MXC=os.path.join(build, "mxc-exec")),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        counts = {}
        for line in out.read().splitlines():
            f = line.split()
            if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
                counts[f[-1]] = int(f[3])
        return counts
def syscalls():
    """One of each per build under strace; the start's holder lives until the stop, so the session
    is one script from provision to deprovision (bash's own calls are the same for both builds)."""
    sid = "sed -n 's/.*\"sandboxId\":\"\\([^\"]*\\)\".*/\\1/p' | tail -1"
    run = '"$MXC" --experimental --config -'
    cycle = (f"s=$(echo '{{\"containment\":\"isolation_session\",\"phase\":\"provision\"}}' | {run} | {sid}); "
             + "; ".join(f"echo '{{\"phase\":\"{ph}\",\"sandboxId\":\"'$s'\"{extra}}}' | {run} >/dev/null"
                         for ph, extra in (("start", ""), ("exec", ',\"process\":{\"commandLine\":\"true\"}'),
                                           ("stop", ""), ("deprovision", ""))))
    cases = (("one-shot `true`", "echo " + shlex.quote('{"process":{"commandLine":"true"}}') +
              ' | "$MXC" --config - >/dev/null'),
             ("provision→start→exec→stop→deprovision", cycle))
    print(f"A = {A}\nB = {B}\nsystem calls of one run each (strace -f -c)\n")
    for name, script in cases:
        a, b = strace_counts(A, script), strace_counts(B, script)
        print(f"{name}: A {sum(a.values())}, B {sum(b.values())}")
        for k in sorted(set(a) | set(b), key=lambda k: (b.get(k, 0) - a.get(k, 0), k)):
            if a.get(k, 0) != b.get(k, 0):
                print(f"  {k:20} {a.get(k, 0):6} {b.get(k, 0):6} {b.get(k, 0) - a.get(k, 0):+d}")
if SYSCALLS:
    syscalls()
    sys.exit(0)
SID[A], SID[B] = session(A), session(B)
print(f"A = {A}\nB = {B}\nN = {N} per side, interleaved, order alternated\n")
print("| measurement | A ms | B ms | B / A |\n|---|---|---|---|")
for name, f in (("one-shot `true`", oneshot), ("exec `true` into a live session", exec_),
                ("provision→start→exec→stop→deprovision", cycle)):
    for label, gap in (("hot", 0), ("idle gap", 0.1)):
        a, b = pair(f, gap)
        print(f"| {name}, {label} | {a:.2f} | {b:.2f} | {b / a:.2f}x |", flush=True)
for b in (A, B):
    mxc(b, {"phase": "stop", "sandboxId": SID[b]}); mxc(b, {"phase": "deprovision", "sandboxId": SID[b]})
