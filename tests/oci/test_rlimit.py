"""mxc-oci: process.rlimits of RLIM_INFINITY (docs/oci.md "rlimits").  18446744073709551615 does
not fit jansson's integer; Podman sends it for an unlimited ulimit (`--ulimit core=-1`) and runc
takes it (Go's uint64).

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_rlimit.py
"""
import json
import os
import resource

import pytest

from test_oci import BUSYBOX, oci  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(BUSYBOX, os.X_OK) or
                                resource.getrlimit(resource.RLIMIT_CORE)[1] != resource.RLIM_INFINITY or
                                resource.getrlimit(resource.RLIMIT_FSIZE)[1] != resource.RLIM_INFINITY,
                                reason="needs root, busybox-static and unlimited hard core and fsize limits")

INF = 18446744073709551615


def limits(text):
    """{name: (soft, hard)} of a /proc/PID/limits text."""
    out = {}
    for line in text.split("\n")[1:]:
        if line.startswith("Max core file size"):
            out["core"] = tuple(line.split()[4:6])
        if line.startswith("Max file size"):
            out["fsize"] = tuple(line.split()[3:5])
    return out


def unlimited(c):
    c["process"]["rlimits"] = [{"type": "RLIMIT_CORE", "soft": INF, "hard": INF},
                               {"type": "RLIMIT_FSIZE", "soft": 1048576, "hard": INF},
                               {"type": "RLIMIT_NOFILE", "soft": 1024, "hard": 1024}]


def test_rlimit_infinity_is_read_and_applied(oci):  # noqa: F811
    b = oci.bundle(["cat", "/proc/self/limits"], mutate=unlimited)
    assert "18446744073709551615" in open(os.path.join(b, "config.json")).read()
    rc, out, err = oci("run", "--bundle", b, "r1")
    assert rc == 0, err
    assert limits(out) == {"core": ("unlimited", "unlimited"), "fsize": ("1048576", "unlimited")}, out


def test_rlimit_infinity_applies_to_exec_too(oci):  # noqa: F811
    """exec reads the process from the config saved at create (RLIM_INFINITY written back as a real)."""
    b = oci.bundle(["sleep", "1000"], mutate=unlimited)
    rc, _, err = oci.create("r2", b)
    assert rc == 0, err
    rc, _, err = oci("start", "r2")
    assert rc == 0, err
    rc, out, err = oci("exec", "r2", "cat", "/proc/self/limits")
    assert rc == 0, err
    assert limits(out) == {"core": ("unlimited", "unlimited"), "fsize": ("1048576", "unlimited")}, out


@pytest.mark.parametrize("soft,hard,why", [
    (INF, 1024, "a soft limit not above its hard limit"),
    (-1, INF, "unsigned soft and hard limits"),
    (18446744073709551614, INF, "too big integer"),
])
def test_rlimit_values_that_are_not_uint64_or_inverted_are_refused(oci, soft, hard, why):  # noqa: F811
    def m(c):
        c["process"]["rlimits"] = [{"type": "RLIMIT_CORE", "soft": soft, "hard": hard}]
    b = oci.bundle(["true"], mutate=m)
    rc, _, err = oci("run", "--bundle", b, "r3")
    assert rc != 0 and why in err, err


def test_rlimit_infinity_inside_a_string_is_left_alone(oci):  # noqa: F811
    """Only the number is read as RLIM_INFINITY: the same digits in a string stay a string."""
    b = oci.bundle(["sh", "-c", "echo $X"], mutate=lambda c: c["process"]["env"].append(
        "X=18446744073709551615"))
    rc, out, err = oci("run", "--bundle", b, "r4")
    assert rc == 0 and out.strip() == "18446744073709551615", err
    with open(os.path.join(b, "config.json")) as f:
        json.load(f)


def test_an_rlimit_above_the_hosts_hard_limit_names_the_resource(oci):  # noqa: F811
    """A hard limit above the host's (Podman's default nproc/nofile on a host with lower ones) fails
    naming the resource and the host's ceiling, as crun does (RLIMIT_NOFILE), not an index."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    def m(c):
        c["process"]["rlimits"] = [{"type": "RLIMIT_CORE", "soft": 0, "hard": 0},
                                   {"type": "RLIMIT_NOFILE", "soft": hard + 1, "hard": hard + 1}]
    b = oci.bundle(["true"], mutate=m)
    rc, _, err = oci("run", "--bundle", b, "r5")
    assert rc != 0, err
    assert "RLIMIT_NOFILE" in err and str(hard) in err and "rlimits[1]" not in err, err
