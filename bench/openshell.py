#!/usr/bin/python3
"""mxc-openshell-driver's Create->ready and Delete beside the same through mxc-gateway's own API
(issue 37). Prints the host context and a Markdown table for docs/benchmarks.md: medians and p90 of N
runs each, interleaved (driver, gateway, driver, gateway, ...), so drift of a busy machine hits both.

  driver:  CreateSandbox over gRPC (grpcio, the messages protoc compiles from proto/openshell) of a
           busybox image from a Podman store of this script's own (`podman import`, nothing pulled),
           until GetSandbox reports Ready True; then DeleteSandbox. The sandbox runs a stand-in
           supervisor (a shell script that execs `sleep 1000`), so "ready" is the container started.
           What it costs: podman image mount + inspect, an overlay, mxc-oci spec, create, start, state.
  gateway: `mxc-gateway sandbox create --name N --policy P -- sleep 1000` (its CLI client over its
           unix-socket API, backend isolation_session, the host's filesystem: no image) until
           `sandbox get` says running; then `sandbox delete`. Each client call is a process spawn.

The two are not like for like: the driver runs an image (overlay rootfs, idmapped layers, Podman),
the gateway a session over the host's filesystem. The table says what each path costs a caller.

Usage: sudo bench/openshell.py [N]   (needs build/mxc-openshell-driver, build/mxc-oci, build/mxc-gateway,
       build/mxc-exec, podman, protoc, python3-grpcio, /bin/busybox; builds nothing)
"""
import json, os, platform, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

from bundles import busybox_rootfs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
DRIVER, GATEWAY, MXC_EXEC = (os.path.join(BUILD, b) for b in ("mxc-openshell-driver", "mxc-gateway", "mxc-exec"))
PROTO = os.path.join(ROOT, "proto", "openshell")
SVC = "/openshell.compute.v1.ComputeDriver/"
IMAGE = "localhost/mxc-bench-osd:1"
N = int(sys.argv[1]) if len(sys.argv) > 1 else 20
BASE = tempfile.mkdtemp(prefix="mxc-bench-osd-", dir="/var/tmp")
os.chmod(BASE, 0o755)
PODMAN = ["podman", "--root", BASE + "/storage", "--runroot", BASE + "/prun", "--tmpdir", BASE + "/ptmp",
          "--storage-driver", "overlay"]
STAND_IN = "#!/bin/sh\nexec sleep 1000\n"


def setup_image():
    rootfs = busybox_rootfs(os.path.join(BASE, "rootfs"), "/bin/busybox", ("sh", "sleep"))
    subprocess.run(["tar", "-C", rootfs, "-cf", BASE + "/bb.tar", "."], check=True)
    subprocess.run(PODMAN + ["import", "-q", BASE + "/bb.tar", IMAGE], check=True, capture_output=True)
    with open(BASE + "/podman", "w") as f:
        f.write("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(PODMAN))
    os.chmod(BASE + "/podman", 0o755)


def pb2():
    out = os.path.join(BASE, "pb")
    os.mkdir(out)
    subprocess.run(["protoc", "-I", PROTO, "-I", "/usr/include", "--python_out=" + out,
                    os.path.join(PROTO, "compute_driver.proto"), os.path.join(PROTO, "options.proto")], check=True)
    sys.path.insert(0, out)
    import compute_driver_pb2
    return compute_driver_pb2


def start_driver():
    for d in ("run", "state"):
        os.mkdir(os.path.join(BASE, d), 0o700 if d == "state" else 0o755)
    with open(BASE + "/openshell-sandbox", "w") as f:
        f.write(STAND_IN)
    os.chmod(BASE + "/openshell-sandbox", 0o755)
    sock = BASE + "/run/driver.sock"
    proc = subprocess.Popen([DRIVER, "--socket", sock, "--state-dir", BASE + "/state", "--supervisor",
                             BASE + "/openshell-sandbox", "--podman", BASE + "/podman"])
    while not os.path.exists(sock):
        time.sleep(0.02)
    return proc, sock


def start_gateway():
    env = dict(os.environ, MXC_GATEWAY_STATE=BASE + "/gwstate", MXC_GATEWAY_SOCKET=BASE + "/gw.sock",
               MXC_STATE_DIR=BASE + "/mxc", MXC_WORKSPACE_ROOT=BASE + "/mxc.ws")
    with open(BASE + "/gateway.toml", "w") as f:
        f.write('[openshell.drivers.mxc]\nmxc_exec_path = "%s"\nbackend = "isolation_session"\n' % MXC_EXEC)
    with open(BASE + "/policy.yaml", "w") as f:
        f.write("version: 1\nfilesystem_policy:\n  read_only: [/usr]\n")
    proc = subprocess.Popen([GATEWAY, "serve", "--config", BASE + "/gateway.toml"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while subprocess.run([GATEWAY, "sandbox", "list"], env=env, capture_output=True).returncode != 0:
        time.sleep(0.05)
    return proc, env


def driver_round(pb, call, i):
    sb = pb.DriverSandbox(id="b%d" % i, name="b%d" % i)
    sb.spec.command.extend(["sleep", "1000"])
    sb.spec.template.image = IMAGE
    t0 = time.perf_counter()
    call("CreateSandbox", pb.CreateSandboxRequest(sandbox=sb), pb.CreateSandboxResponse)
    while True:
        got = call("GetSandbox", pb.GetSandboxRequest(sandbox_id=sb.id), pb.GetSandboxResponse).sandbox
        if any(c.type == "Ready" and c.status == "True" for c in got.status.conditions):
            break
    t1 = time.perf_counter()
    call("DeleteSandbox", pb.DeleteSandboxRequest(sandbox_id=sb.id), pb.DeleteSandboxResponse)
    return (t1 - t0) * 1000, (time.perf_counter() - t1) * 1000


def gateway_round(env, i):
    name = "g%d" % i
    run = lambda *a: subprocess.run([GATEWAY, *a], env=env, capture_output=True, text=True)
    t0 = time.perf_counter()
    r = run("sandbox", "create", "--name", name, "--policy", BASE + "/policy.yaml", "--no-tty", "--", "sleep", "1000")
    assert r.returncode == 0, r.stderr
    while json.loads(run("sandbox", "get", name).stdout or "{}").get("status") != "running":
        pass
    t1 = time.perf_counter()
    assert run("sandbox", "delete", name).returncode == 0
    return (t1 - t0) * 1000, (time.perf_counter() - t1) * 1000


def stats(xs):
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.9))]


def main():
    import grpc
    setup_image()
    pb = pb2()
    dproc, sock = start_driver()
    gproc, genv = start_gateway()
    ch = grpc.insecure_channel("unix:" + sock)

    def call(method, req, rep):
        return ch.unary_unary(SVC + method, request_serializer=lambda m: m.SerializeToString(),
                              response_deserializer=rep.FromString)(req, timeout=60)
    res = {"driver": ([], []), "gateway": ([], [])}
    try:
        driver_round(pb, call, -1), gateway_round(genv, -1)  # warm-up, not counted
        for i in range(N):
            for kind in (("driver", "gateway") if i % 2 == 0 else ("gateway", "driver")):
                c, d = driver_round(pb, call, i) if kind == "driver" else gateway_round(genv, i)
                res[kind][0].append(c)
                res[kind][1].append(d)
    finally:
        ch.close()
        for p in (dproc, gproc):
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
        subprocess.run(PODMAN + ["image", "unmount", "-a"], capture_output=True)
        subprocess.run(PODMAN + ["rmi", "-af"], capture_output=True)
        subprocess.run(["umount", "-R", BASE + "/storage/overlay"], capture_output=True)
        shutil.rmtree(BASE, ignore_errors=True)
    print("host: %s, %s, %d CPUs, N = %d, %s UTC" % (platform.node(), platform.release(), os.cpu_count(), N,
                                                    time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
    print()
    print("| path | Create->ready median (p90), ms | Delete median (p90), ms |")
    print("|---|---:|---:|")
    for kind, label in (("driver", "mxc-openshell-driver (gRPC; image via Podman + mxc-oci)"),
                        ("gateway", "mxc-gateway (its CLI client; isolation_session, no image)")):
        c, d = stats(res[kind][0]), stats(res[kind][1])
        print("| %s | %.1f (%.1f) | %.1f (%.1f) |" % (label, c[0], c[1], d[0], d[1]))


if __name__ == "__main__":
    main()
