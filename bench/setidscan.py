#!/usr/bin/env python3
"""The cost of the set-id walk (src/base/setidscan.h): a one-shot `true` with one read-write grant
of N files (100 per directory, a few set-id among them), A (a build without the walk) against B
(this tree's), interleaved, back to back ("hot"); medians in ms.

  sudo python3 bench/setidscan.py A_MXC_EXEC B_MXC_EXEC [RUNS] [N ...]

With --oci (A and B are then mxc-oci binaries): `mxc-oci run` (create, start, wait, delete) of
`true` on a read-write busybox rootfs with N more files (a Debian image is ~9k), --cgroup-manager
disabled.

The grants and bundles are made in /var/tmp/mxc-bench-setid-* and removed after.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def make_tree(n, d=None):
    if d:
        os.makedirs(d)
    d = d or tempfile.mkdtemp(prefix="mxc-bench-setid-", dir="/var/tmp")
    os.chmod(d, 0o755)
    for i in range(n):
        sub = os.path.join(d, "d%04d" % (i // 100))
        if i % 100 == 0:
            os.mkdir(sub)
        with open(os.path.join(sub, "f%d" % i), "wb") as f:
            f.write(b"x")
        if i % 5000 == 0:
            os.chmod(os.path.join(sub, "f%d" % i), 0o4755)
    return d


def one(exe, req, env):
    t = time.perf_counter()
    p = subprocess.run([exe, "--config", "-"], input=req, capture_output=True, env=env)
    dt = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit("%s failed: %s %s" % (exe, p.stdout, p.stderr))
    return dt


def oci_bundle(n, mxc_oci):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bundles
    d = tempfile.mkdtemp(prefix="mxc-bench-setid-", dir="/var/tmp")
    os.chmod(d, 0o755)

    def rw(c):
        c["root"]["readonly"] = False
    rootfs = bundles.spec_bundle(d, mxc_oci, "/bin/busybox", rw)
    make_tree(n, os.path.join(rootfs, "filler")) if n else None
    return d


def oci_main(a, b, runs, sizes):
    print("| files in the rootfs | A ms | B ms | B-A ms |")
    print("|---|---|---|---|")
    for n in sizes:
        d = oci_bundle(n, b)
        root = os.path.join(d, "state")
        try:
            def one_oci(exe, i):
                t = time.perf_counter()
                subprocess.run([exe, "--root", root, "--cgroup-manager", "disabled", "run", "--bundle", d, "c%d" % i],
                               check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                return (time.perf_counter() - t) * 1000
            for i in range(3):
                one_oci(a, i), one_oci(b, i)
            ta, tb = [], []
            for i in range(runs):
                ta.append(one_oci(a, i))
                tb.append(one_oci(b, i))
            ma, mb = statistics.median(ta), statistics.median(tb)
            print("| %d | %.2f | %.2f | %+.2f |" % (n, ma, mb, mb - ma), flush=True)
        finally:
            shutil.rmtree(d, ignore_errors=True)


def main():
    if "--oci" in sys.argv:
        sys.argv.remove("--oci")
        sizes = [int(x) for x in sys.argv[4:]] or [0, 9000]
        return oci_main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30, sizes)
    a, b = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    sizes = [int(x) for x in sys.argv[4:]] or [0, 10000, 100000]
    state = tempfile.mkdtemp(prefix="mxc-bench-setid-state-", dir="/var/tmp")
    env = dict(os.environ, MXC_STATE_DIR=state, MXC_WORKSPACE_ROOT=state + ".ws")
    print("| files in the grant | A ms | B ms | B-A ms |")
    print("|---|---|---|---|")
    try:
        for n in sizes:
            d = make_tree(n)
            try:
                req = json.dumps({"containment": "process", "process": {"commandLine": "true"},
                                  "filesystem": {"readwritePaths": [d]}}).encode()
                ta, tb = [], []
                for _ in range(3):
                    one(a, req, env), one(b, req, env)
                for _ in range(runs):
                    ta.append(one(a, req, env))
                    tb.append(one(b, req, env))
                ma, mb = statistics.median(ta), statistics.median(tb)
                print("| %d | %.2f | %.2f | %+.2f |" % (n, ma, mb, mb - ma), flush=True)
            finally:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(state + ".ws", ignore_errors=True)


if __name__ == "__main__":
    main()
