"""`mxc-oci events` (src/oci/events.c): the container's cgroup statistics and OOM kills as runc's
JSON lines (events.bats); only reads."""
import json
import subprocess
import time

from test_oci import MXC_OCI, oci  # noqa: F401  (the fixture)


def started(oci, cid, bundle):
    rc, _, err = oci.create(cid, bundle)
    assert rc == 0, err
    rc, _, err = oci("start", cid)
    assert rc == 0, err


def test_events_stats_once(oci):
    b = oci.bundle(["sleep", "1000"])
    started(oci, "e1", b)
    rc, out, err = oci("events", "--stats", "e1")
    assert rc == 0, err
    lines = out.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith('{"type":"stats","id":"e1",'), out
    ev = json.loads(lines[0])
    assert ev["data"]["pids"]["current"] >= 1 and ev["data"]["memory"]["usage"]["usage"] > 0, ev
    rc, _, err = oci("events", "--interval", "nonsense", "e1")
    assert rc != 0 and "--interval" in err, err


def test_events_stream_ends_when_the_container_is_deleted_and_reports_an_oom(oci):
    def mutate(c):
        c["linux"]["resources"] = {"memory": {"limit": 33554432, "swap": 33554432}}
    b = oci.bundle(["sleep", "1000"], mutate=mutate)
    started(oci, "e2", b)
    p = subprocess.Popen([MXC_OCI, "--root", oci.root, "events", "--interval", "100ms", "e2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    assert first.startswith('{"type":"stats","id":"e2",') and '"data"' in first, first
    rc, _, err = oci("exec", "e2", "sh", "-c", "x=$(dd if=/dev/zero bs=1M count=64 | tr '\\0' a); echo ${#x}")
    assert rc != 0  # killed by the OOM killer
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        seen.append(line)
        if line.strip() == '{"type":"oom","id":"e2"}':
            break
    assert '{"type":"oom","id":"e2"}\n' in seen, seen[-3:]
    rc, _, err = oci("delete", "--force", "e2")
    assert rc == 0, err
    assert p.wait(timeout=30) == 0, p.stderr.read()


def test_events_of_a_stopped_or_unknown_container_fail(oci):
    b = oci.bundle(["true"])
    started(oci, "e3", b)
    rc, _, _ = oci("events", "--stats", "nope")
    assert rc != 0
