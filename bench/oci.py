#!/usr/bin/python3
"""mxc-oci against runc and crun, side by side in one run (issue 29). Prints the host context and a
Markdown table for docs/benchmarks.md: medians of N runs per runtime and mxc-oci's ratios, like with like.

mxc-oci runs twice, as two runtimes: with `--cgroup-manager disabled` (no cgroup: as crun here) and as
it runs by default (a cgroup per container: as runc). Each mode's ratio is to the runtime of the same
kind (no cgroup: crun; a cgroup: runc) and to the fastest of runc and crun.

  the runtime's own lifecycle: create -> start -> wait -> delete of `true`, on the same
      busybox-static bundle (one config.json, one read-only rootfs) for all three runtimes; then the
      same with the seccomp profile Podman sends (taken from the config.json Podman writes for a
      container it inits here: Podman and containerd send such a profile with every container)
  podman run --rm IMAGE true: Podman 4.3 with each runtime, the same image and the same settings
      where the runtime can take them (below)

The runtimes are measured interleaved (A B C, A B C, ... the order rotated every round), so drift of a
busy machine hits them alike, twice: back to back ("hot") and with 100 ms of idle before every run
("idle gap": how an engine calls a runtime). This process is a child subreaper during the lifecycle
rows, as containerd's shim is: `wait` is waitpid() of the container's init (the pid from --pid-file).

What differs between the runtimes, exactly:
  - mxc-oci adds what the config does not ask: a user namespace with a claimed 65536-id range and an
    idmapped rootfs, the baseline seccomp filter, Landlock (docs/oci.md). "mxc-oci nocg" runs with
    --cgroup-manager disabled and makes no cgroup; "mxc-oci cg" (its default) makes a cgroup per
    container, /mxc.oci/r<hash of --root>/<id> in every v1 hierarchy this host mounts (pids, memory,
    cpu, cpuacct, cpuset, freezer), as runc makes one.
  - runc (/usr/sbin/runc) makes a cgroup per container (cgroupfs; it has no way to make none); as the
    config has no user namespace, its container runs as host root.
  - crun (/usr/bin/crun) with --cgroup-manager=disabled (no cgroup, as mxc-oci). crun 1.8 refuses this
    host's hybrid cgroups before it looks at the manager (/sys/fs/cgroup/unified/cgroup.controllers is
    not empty: "cgroups in hybrid mode not supported"), so crun is started in a private mount namespace
    (held by a child of this script, entered by setns() between fork and exec) where that one file is
    /dev/null bind-mounted; nothing of the host changes. Its container runs as host root too.
  - Podman: vfs storage, --network none, a read-only tmpfs at /sys/fs/cgroup, no default sysctls,
    ulimits within this machine's hard limits, pids_limit = 0 for all; --cgroups=disabled for
    mxc-oci nocg and crun (Podman 4.3 grants it only to a runtime named crun: mxc-oci is declared under
    that name, as tests/oci/test_podman.py does), while runc, which Podman refuses --cgroups=disabled,
    and mxc-oci cg run with Podman's cgroupfs cgroups.

Usage: sudo bench/oci.py [N]   (needs build/mxc-oci or $MXC_OCI, /usr/sbin/runc, /usr/bin/crun, podman,
       /bin/busybox; builds nothing)
       sudo bench/oci.py [N] --ab OLD NEW   two mxc-oci binaries A/B (an optimisation's measurement): the
       lifecycle, interleaved, hot and with idle gaps, each phase's median too; both modes (cgroup and
       --cgroup-manager disabled)
       sudo bench/oci.py --ab OLD NEW --syscalls   no timing: the system calls of one create, start and
       delete of each (strace -f; create's count takes in its init up to the exec of `true`, which
       start lets go), per phase and mode, call by call where A and B differ; a count is the same on a
       loaded machine
"""
import ctypes, json, os, platform, re, shutil, signal, statistics, subprocess, sys, tempfile, time

from bundles import spec_bundle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MXC_OCI = os.path.realpath(os.environ.get("MXC_OCI", os.path.join(ROOT, "build", "mxc-oci")))
RUNC, CRUN, BUSYBOX = "/usr/sbin/runc", "/usr/bin/crun", "/bin/busybox"
args = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and not sys.argv[i - 1].startswith("--")
        and sys.argv[i - 2:i - 1] != ["--ab"]]  # --ab's two binaries are not N
N = int(args[0]) if args else 30
PODMAN_N = int(sys.argv[sys.argv.index("--podman-n") + 1]) if "--podman-n" in sys.argv else max(5, N // 2)
GAP = 0.1
BASE = tempfile.mkdtemp(prefix="mxc-bench-oci-", dir="/var/tmp")
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
UNIFIED = "/sys/fs/cgroup/unified/cgroup.controllers"


def make_bundle(path):
    """A busybox-static rootfs and a config.json every runtime takes (bundles.spec_bundle), its
    ociVersion 1.0.2: crun 1.8 takes 1.0.x only."""
    return spec_bundle(path, MXC_OCI, BUSYBOX, lambda c: c.update(ociVersion="1.0.2"))


class CrunNs:
    """A private mount namespace in which /sys/fs/cgroup/unified/cgroup.controllers reads empty (see
    the header), held by a child until close()."""

    def __init__(self):
        r, w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.close(r)
                if libc.unshare(CLONE_NEWNS) != 0:
                    os._exit(1)
                subprocess.run(["mount", "--make-rprivate", "/"], check=True)
                if os.path.exists(UNIFIED):
                    subprocess.run(["mount", "--bind", "/dev/null", UNIFIED], check=True)
                os.write(w, b"1")
                os.close(w)
                signal.pause()
            finally:
                os._exit(0)
        os.close(w)
        ok = os.read(r, 1)
        os.close(r)
        if ok != b"1":
            sys.exit("cannot make crun's private mount namespace")
        self.fd = os.open("/proc/%d/ns/mnt" % self.pid, os.O_RDONLY | os.O_CLOEXEC)
        self.host = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)

    def enter(self):
        if libc.setns(self.fd, CLONE_NEWNS) != 0:
            os._exit(126)

    def stay(self):
        """The same work for the other runtimes' children (a setns into the mount namespace they are
        already in), so every runtime is spawned alike."""
        if libc.setns(self.host, CLONE_NEWNS) != 0:
            os._exit(126)

    def close(self):
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


class Runtime:
    def __init__(self, name, argv, pre):
        self.name, self.argv, self.pre, self.n = name, argv, pre, 0

    def call(self, *a, check=True):
        # the container inherits create's stdio: a file, not a pipe whose EOF would wait for it
        with tempfile.TemporaryFile(dir=BASE) as err:
            p = subprocess.run(self.argv + list(a), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=err, preexec_fn=self.pre)
            if check and p.returncode != 0:
                err.seek(0)
                sys.exit("%s %s failed: %s" % (self.name, " ".join(a), err.read().decode(errors="replace")[-400:]))

    def cycle(self, bundle, phases=None):
        """create -> start -> wait -> delete, as a shim does; each phase's ms appended to phases."""
        self.n += 1
        cid = "bench-%d-%d" % (os.getpid(), self.n)
        pidf = os.path.join(BASE, "pid-" + cid)
        t = [time.perf_counter()]
        self.call("create", "--bundle", bundle, "--pid-file", pidf, cid)
        t.append(time.perf_counter())
        with open(pidf) as f:
            pid = int(f.read())
        self.call("start", cid)
        t.append(time.perf_counter())
        _, st = os.waitpid(pid, 0)
        if st != 0:
            sys.exit("%s: the container exited %d" % (self.name, st))
        t.append(time.perf_counter())
        self.call("delete", cid)
        t.append(time.perf_counter())
        os.unlink(pidf)
        if phases is not None:
            phases.append([(b - a) * 1000 for a, b in zip(t, t[1:])])


def timed(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def interleaved(fns, n, gap):
    """Medians of each fn, measured round-robin, the order rotated each round."""
    for f in fns:
        f()  # warm
    xs = [[] for _ in fns]
    k = len(fns)
    for r in range(n):
        for j in range(k):
            i = (r + j) % k
            if gap:
                time.sleep(gap)
            xs[i].append(timed(fns[i]))
    return [statistics.median(x) for x in xs]


def podman_setup(crun_ns):
    """One image store, one containers.conf per runtime; returns {name: fn} running `true`."""
    store = os.path.join(BASE, "podman")
    common = ["--root", os.path.join(store, "storage"), "--runroot", os.path.join(store, "run"),
              "--tmpdir", os.path.join(store, "tmp"), "--storage-driver", "vfs"]
    confs = {}
    for name, rt, path in (("mxc-oci", "crun", MXC_OCI), ("mxc-oci-cg", "crun", MXC_OCI), ("runc", "runc", RUNC),
                           ("crun", "crun", CRUN)):
        conf = os.path.join(BASE, "containers-%s.conf" % name)
        with open(conf, "w") as f:
            f.write('[containers]\ndefault_sysctls = []\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n'
                    'pids_limit = 0\n[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
                    # this store is one whose images mxc-oci may take as root.path (src/oci/rootfs.h);
                    # conmon hands the runtime only the environment named here
                    'conmon_env_vars = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", '
                    '"MXC_OCI_ROOTFS_ROOTS=%s"]\n'
                    'runtime = "%s"\n[engine.runtimes]\n%s = ["%s"]\n' % (os.path.join(store, "storage"), rt, rt, path))
        confs[name] = dict(os.environ, CONTAINERS_CONF=conf, MXC_OCI_ROOTFS_ROOTS=os.path.join(store, "storage"))
    rootfs = os.path.join(BASE, "image")
    os.makedirs(rootfs)
    make_bundle(rootfs)  # a bundle's rootfs is the image
    tar = os.path.join(BASE, "image.tar")
    subprocess.run(["tar", "-C", os.path.join(rootfs, "rootfs"), "-cf", tar, "."], check=True)
    subprocess.run(["podman"] + common + ["import", tar, "localhost/mxc-bench-bb:1"], check=True,
                   env=confs["mxc-oci"], capture_output=True)
    opts = ["--network", "none", "--tmpfs", "/sys/fs/cgroup:ro,notmpcopyup"]

    def runner(name, extra, pre):
        argv = ["podman"] + common + ["run", "--rm"] + opts + extra + ["localhost/mxc-bench-bb:1", "true"]

        def go():
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=confs[name], preexec_fn=pre)
            if p.returncode != 0:
                sys.exit("podman with %s failed: %s" % (name, (p.stdout + p.stderr).decode(errors="replace")[-600:]))
        return go

    def podman_profile():
        """The linux.seccomp Podman sends (its default profile), from the config.json it writes for a
        container it inits on mxc-oci."""
        env = confs["mxc-oci"]
        cid = subprocess.run(["podman"] + common + ["create", "--cgroups=disabled"] + opts + ["localhost/mxc-bench-bb:1",
                             "true"], check=True, env=env, capture_output=True, text=True).stdout.strip()
        try:
            subprocess.run(["podman"] + common + ["init", cid], check=True, env=env, capture_output=True)
            with open(os.path.join(store, "storage", "vfs-containers", cid, "userdata", "config.json")) as f:
                return json.load(f)["linux"]["seccomp"]
        finally:
            subprocess.run(["podman"] + common + ["rm", "-f", cid], env=env, capture_output=True)

    def clean():
        subprocess.run(["podman"] + common + ["rm", "-af", "-t", "0"], env=confs["mxc-oci"], capture_output=True)
        subprocess.run(["podman"] + common + ["rmi", "-af"], env=confs["mxc-oci"], capture_output=True)

    return {"mxc-oci": runner("mxc-oci", ["--cgroups=disabled"], crun_ns.stay),
            "mxc-oci-cg": runner("mxc-oci-cg", [], crun_ns.stay),
            "runc": runner("runc", [], crun_ns.stay),
            "crun": runner("crun", ["--cgroups=disabled"], crun_ns.enter)}, clean, podman_profile


def ab(old, new):
    """Two mxc-oci binaries, the same bundle, interleaved: hot and with idle gaps."""
    print("A/B, N = %d, interleaved: A %s, B %s; load %s" % (N, old, new, " ".join("%.2f" % x for x in os.getloadavg())))
    bundle = os.path.join(BASE, "bundle")
    make_bundle(bundle)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        for mode, extra in (("cg", []), ("nocg", ["--cgroup-manager", "disabled"])):
            rts = [Runtime(n, [exe, "--root", os.path.join(BASE, n + mode)] + extra, None)
                   for n, exe in (("A", old), ("B", new))]
            for kind, gap in (("%s hot" % mode, 0.0), ("%s idle" % mode, GAP)):
                ph = [[], []]
                m = interleaved([lambda i=i: rts[i].cycle(bundle, ph[i]) for i in range(2)], N, gap)
                pm = [[statistics.median(x[k] for x in p[1:]) for k in range(4)] for p in ph]  # [1:]: not the warm-up
                print("%-9s total A %.2f B %.2f ms (B/A %.2fx); create %.2f/%.2f start %.2f/%.2f wait %.2f/%.2f "
                      "delete %.2f/%.2f" % ((kind, m[0], m[1], m[1] / m[0]) + tuple(v for k in range(4) for v in
                                                                                    (pm[0][k], pm[1][k]))))
    finally:
        shutil.rmtree(BASE, ignore_errors=True)


def strace_counts(path):
    """Calls per name in an `strace -f -o` file (a call cut by another process's counted once)."""
    counts = {}
    with open(path) as f:
        for line in f:
            w = line.split(None, 1)
            rest = w[1] if len(w) > 1 else ""
            if rest.startswith(("<...", "+++", "---")) or "(" not in rest:
                continue
            name = rest.split("(", 1)[0]
            counts[name] = counts.get(name, 0) + 1
    return counts


def traced_cycle(rt, bundle, out):
    """One create -> start -> wait -> delete with each command under strace -f: {phase: counts}.  The
    traced create ends only with its init (strace follows it), so start is run once create's own
    process has exited (its "+++ exited" line), and create's trace read after the init's exit."""
    rt.n += 1
    cid = "trace-%s-%d-%d" % (rt.name, os.getpid(), rt.n)
    pidf = os.path.join(BASE, "pid-" + cid)
    st = ["strace", "-f", "-o"]
    out = tempfile.mkdtemp(dir=out)  # a trace file of its own for each call: its end is looked for in it
    files = {ph: os.path.join(out, ph + ".strace") for ph in ("create", "start", "delete")}
    err = open(os.path.join(out, "create.err"), "w+")  # not this script's stderr: strace holds it to the init's end
    p = subprocess.Popen(st + [files["create"]] + rt.argv + ["create", "--bundle", bundle, "--pid-file", pidf, cid],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            with open(files["create"]) as f:
                text = f.read()
        except FileNotFoundError:  # strace has not opened it yet
            text = ""
        first = text.split(None, 1)[0] if text else None  # create's pid (strace pads it with spaces)
        if first and re.search(r"^%s\s+\+\+\+ (exited|killed)" % first, text, re.M):
            break
        if p.poll() is not None:
            err.seek(0)
            sys.exit("%s: the traced create failed: %s" % (rt.name, err.read()[-400:]))
        time.sleep(0.05)
    else:
        p.kill()  # strace gone, its tracees let go: the container removed as a shim would
        rt.call("delete", "--force", cid, check=False)
        sys.exit("%s: the traced create did not finish" % rt.name)
    with open(pidf) as f:
        pid = int(f.read())
    subprocess.run(st + [files["start"]] + rt.argv + ["start", cid], check=True, stdin=subprocess.DEVNULL)
    os.waitpid(pid, 0)
    p.wait()
    err.close()
    subprocess.run(st + [files["delete"]] + rt.argv + ["delete", cid], check=True, stdin=subprocess.DEVNULL)
    os.unlink(pidf)
    return {ph: strace_counts(path) for ph, path in files.items()}


def ab_syscalls(old, new):
    print("A %s\nB %s\nsystem calls of one create, start and delete each (strace -f)\n" % (old, new))
    bundle = os.path.join(BASE, "bundle")
    make_bundle(bundle)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        for mode, extra in (("cg", []), ("nocg", ["--cgroup-manager", "disabled"])):
            rts = [Runtime(n, [exe, "--root", os.path.join(BASE, n + mode)] + extra, None)
                   for n, exe in (("A", old), ("B", new))]
            for r in rts:
                r.cycle(bundle)  # warm: the root, the bundle's pages, a seccomp cache entry
            a, b = (traced_cycle(r, bundle, BASE) for r in rts)
            for ph in ("create", "start", "delete"):
                x, y = a[ph], b[ph]
                print("%s %s: A %d, B %d" % (mode, ph, sum(x.values()), sum(y.values())))
                for k in sorted(set(x) | set(y), key=lambda k: (y.get(k, 0) - x.get(k, 0), k)):
                    if x.get(k, 0) != y.get(k, 0):
                        print("  %-18s %5d %5d %+d" % (k, x.get(k, 0), y.get(k, 0), y.get(k, 0) - x.get(k, 0)))
    finally:
        shutil.rmtree(BASE, ignore_errors=True)


def main():
    if "--ab" in sys.argv:
        i = sys.argv.index("--ab")
        run = ab_syscalls if "--syscalls" in sys.argv else ab
        return run(os.path.realpath(sys.argv[i + 1]), os.path.realpath(sys.argv[i + 2]))
    for exe in (MXC_OCI, RUNC, CRUN, BUSYBOX):
        if not os.access(exe, os.X_OK):
            sys.exit("missing %s" % exe)
    if os.geteuid() != 0:
        sys.exit("run as root")
    ver = lambda argv: subprocess.run(argv, capture_output=True, text=True).stdout.split("\n")[0]
    try:
        with open(UNIFIED) as f:
            unified = f.read().split()
    except OSError:
        unified = None  # not a hybrid host: crun needs no help
    print("host: kernel %s, %d cpus, load %s, cgroup v2 controllers in the hybrid unified tree: %s" % (
        platform.release(), os.cpu_count(), " ".join("%.2f" % x for x in os.getloadavg()), unified or "none"))
    built = os.path.realpath(os.path.join(ROOT, "build", "mxc-oci")) == MXC_OCI
    print("runtimes: %s (%s); %s; %s; %s" % (MXC_OCI, "worktree " + ver(["git", "-C", ROOT, "describe", "--always",
                                                                          "--dirty"]) if built else "not this worktree's build",
                                             ver([RUNC, "--version"]), ver([CRUN, "--version"]),
                                             ver(["podman", "--version"])))
    print("N = %d per runtime (podman: %d), interleaved, order rotated; idle gap %d ms\n" % (N, PODMAN_N, GAP * 1000))
    crun_ns = CrunNs()
    clean = None
    rows = []
    try:
        pods, clean, podman_profile = podman_setup(crun_ns)
        profile = podman_profile()
        bundle = os.path.join(BASE, "bundle")
        make_bundle(bundle)
        # the same bundle with the seccomp profile Podman sends (containerd sends one too)
        bundle_sc = os.path.join(BASE, "bundle-seccomp")
        make_bundle(bundle_sc)
        with open(os.path.join(bundle_sc, "config.json")) as f:
            c = json.load(f)
        c["linux"]["seccomp"] = profile
        with open(os.path.join(bundle_sc, "config.json"), "w") as f:
            json.dump(c, f, indent=1)
        rts = [Runtime("mxc-oci", [MXC_OCI, "--root", os.path.join(BASE, "mxc"), "--cgroup-manager", "disabled"],
                       crun_ns.stay),
               Runtime("mxc-oci-cg", [MXC_OCI, "--root", os.path.join(BASE, "mxc-cg")], crun_ns.stay),
               Runtime("runc", [RUNC, "--root", os.path.join(BASE, "runc")], crun_ns.stay),
               Runtime("crun", [CRUN, "--root", os.path.join(BASE, "crun"), "--cgroup-manager=disabled"],
                       crun_ns.enter)]
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            sys.exit("cannot be a subreaper")
        for label, b in (("", bundle), (", Podman's seccomp profile", bundle_sc)):
            fns = [lambda r=r, b=b: r.cycle(b) for r in rts]
            for kind, gap in (("hot", 0.0), ("idle gap", GAP)):
                rows.append(("create→start→wait→delete `true`%s, %s" % (label, kind), interleaved(fns, N, gap)))
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        fns = [pods["mxc-oci"], pods["mxc-oci-cg"], pods["runc"], pods["crun"]]
        for kind, gap in (("hot", 0.0), ("idle gap", GAP)):
            rows.append(("podman run --rm IMAGE `true`, " + kind, interleaved(fns, PODMAN_N, gap)))
    finally:
        if clean:
            clean()
        crun_ns.close()
        for r in (os.path.join(BASE, x) for x in ("mxc", "mxc-cg", "runc", "crun")):
            for cid in os.listdir(r) if os.path.isdir(r) else []:
                subprocess.run([MXC_OCI if "/mxc" in r else RUNC if r.endswith("runc") else CRUN,
                                "--root", r, "delete", "--force", cid], capture_output=True)
        shutil.rmtree(BASE, ignore_errors=True)
    print("| measurement | mxc-oci nocg ms | mxc-oci cg ms | runc ms | crun ms | nocg / crun | cg / runc "
          "| nocg, cg / fastest other |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (m, mc, r, c) in rows:
        print("| %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.2fx, %.2fx |" % (
            label, m, mc, r, c, m / c, mc / r, m / min(r, c), mc / min(r, c)))


if __name__ == "__main__":
    main()
