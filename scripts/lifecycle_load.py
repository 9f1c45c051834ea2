#!/usr/bin/env python3
"""Background load for CI: N concurrent session lifecycles (provision, start, exec, stop,
deprovision) in a loop, in their own state and workspace roots, until SIGTERM or SIGINT.

    lifecycle_load.py MXC_EXEC [N]

On exit it prints one line — lifecycles done, failures, leftovers in its roots — and exits
non-zero if any lifecycle failed or anything was left. A suite run beside it checks that our
phases hold while the machine is busy; the load checks that they hold for the load too.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

MXC = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8
root = tempfile.mkdtemp(prefix="mxc-load-")
env = dict(os.environ, MXC_STATE_DIR=root, MXC_WORKSPACE_ROOT=root + ".ws")
stop = threading.Event()
lock = threading.Lock()
done = 0
failures = []


def call(req):
    p = subprocess.run([MXC, "--experimental", "--config", "-"], input=json.dumps(req).encode(), capture_output=True, env=env,
                       timeout=300)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def evidence(name):
    """What the sandbox directory says (holder record, its death), for a failure's report."""
    seen = {}
    d = os.path.join(root, name)
    try:
        seen["files"] = sorted(os.listdir(d))
    except OSError as e:
        seen["files"] = str(e)
    for f in ("holder", "holder.exit"):
        try:
            seen[f] = open(os.path.join(d, f)).read().strip()
        except OSError:
            pass
    if "holder" in seen:
        seen["holderAlive"] = os.path.exists("/proc/%s" % seen["holder"].split()[0])
    return seen


def loop(i):
    global done
    while not stop.is_set():
        rc, out, err = call({"containment": "isolation_session", "phase": "provision"})
        if rc != 0:
            with lock:
                failures.append(("provision", out, err))
            stop.wait(0.5)
            continue
        res = json.loads(out)["result"]
        sid, name = res["sandboxId"], res["metadata"]["agentUserName"]
        steps = [({"phase": "start", "sandboxId": sid}, None),
                 ({"phase": "exec", "sandboxId": sid, "process": {"commandLine": "echo load-%d" % i}},
                  "load-%d\n" % i),
                 ({"phase": "stop", "sandboxId": sid}, None),
                 ({"phase": "deprovision", "sandboxId": sid}, None)]
        for req, want in steps:
            rc, out, err = call(req)
            if rc != 0 or (want is not None and out != want):
                with lock:
                    failures.append((req["phase"], out, err, evidence(name)))
                if req["phase"] != "deprovision":
                    call({"phase": "deprovision", "sandboxId": sid})
                break
        else:
            with lock:
                done += 1


def main():
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.set())
    threads = [threading.Thread(target=loop, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(0.5)
    left = os.listdir(root) + (os.listdir(root + ".ws") if os.path.isdir(root + ".ws") else [])
    print("lifecycle load: %d lifecycles in %d loops, %d failed, %d left over" % (done, N, len(failures), len(left)))
    for f in failures[:5]:
        print("  failed:", f)
    if left:
        print("  left over:", left)
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(root + ".ws", ignore_errors=True)
    sys.exit(1 if failures or left else 0)


main()
