"""A provider's secret in mxc-oci create's environment (the OpenShell driver's MXC_OSD_SECRET_i,
any io.mxc.network credential's secretEnv) is mxc-oci's to hand to the container's proxy alone.
The init is a clone of mxc-oci: it carried mxc-oci's environment, the secret in it, in its memory
and /proc/PID/environ from create until start's execve (review of issue 38's session; host root
alone could read it: the init is not dumpable).  The init now wipes those values first thing.

NETWORK SAFETY: test_oci_network.py's world (namespaces the test made; nothing sent elsewhere).

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_secret_environ.py
"""
import os
import re
import subprocess
import sys

from test_oci import MXC_OCI, oci  # noqa: F401 (fixture)
from test_oci_network import NET, SECRET, annotate, bundle, origin, world  # noqa: F401 (fixtures)


def sanitized(pid):
    """Whether pid runs an ASan build (run-tests.sh's mxc-oci stage): the sanitizer's runtime reads
    /proc/self/environ into a buffer of its own at startup (its options come from the environment)
    and keeps it, so a copy of every variable stays in its memory whatever the program wipes — a
    property of that build, not of mxc-oci (the plain build's run checks the memory)."""
    return any("libasan" in line for line in open("/proc/%d/maps" % pid))


def memory_holds(pid, needle, most=256 << 20, chunk=1 << 20):
    """Whether a readable mapping of pid holds needle (read through /proc/PID/mem, as root), in
    chunks; a mapping over `most` bytes is passed over (a sanitizer's shadow: terabytes reserved;
    the environment is on the stack, the heap far smaller)."""
    with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
            if not m or "[vvar]" in line or "[vsyscall]" in line:
                continue
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            if hi - lo > most:
                continue
            tail = b""
            for at in range(lo, hi, chunk):
                try:
                    mem.seek(at)
                    data = tail + mem.read(min(chunk, hi - at))
                except OSError:
                    tail = b""
                    continue
                if needle in data:
                    return True
                tail = data[-(len(needle) - 1):]
    return False


def test_a_created_init_holds_no_provider_secret(oci, world, origin):  # noqa: F811
    b = bundle(oci, ["sleep", "600"], annotate(NET))
    rc, _, err = oci.create("e1", b)
    assert rc == 0, err
    init = oci.state("e1")["pid"]
    env = open("/proc/%d/environ" % init, "rb").read()
    assert b"MXC_TEST_GH_SECRET=" in env  # mxc-oci's environment, as the init was cloned with it
    assert SECRET.encode() not in env
    assert memory_holds(init, b"MXC_TEST_GH_SECRET=")  # (the look finds what is there)
    assert sanitized(init) or not memory_holds(init, SECRET.encode())
    rc, _, err = oci("start", "e1")
    assert rc == 0, err


# mxc-oci started with the secret's variable twice in its environment (an execve's envp may hold a
# name more than once; getenv, the proxy's look-up, sees the first): every copy is wiped, not only
# the one getenv finds (review of this session's changes)
DUPLICATED = r'''
import ctypes, os, sys
env = ["%s=%s" % kv for kv in os.environ.items()]
env.append("MXC_TEST_GH_SECRET=" + os.environ["MXC_TEST_GH_SECRET"][::-1])
argv = sys.argv[1:]
A, E = ctypes.c_char_p * (len(argv) + 1), ctypes.c_char_p * (len(env) + 1)
ctypes.CDLL(None).execve(argv[0].encode(), A(*[a.encode() for a in argv], None), E(*[e.encode() for e in env], None))
sys.exit(127)
'''


def test_every_copy_of_a_duplicated_secret_variable_is_wiped(oci, world, origin):  # noqa: F811
    b = bundle(oci, ["sleep", "600"], annotate(NET))
    with open(os.path.join(b, "out"), "wb") as out:  # the container keeps it: no pipe to wait on
        r = subprocess.run([sys.executable, "-c", DUPLICATED, MXC_OCI, "--root", oci.root, "create", "--bundle", b,
                            "e2"], stdin=subprocess.DEVNULL, stdout=out, stderr=out, timeout=60)
    assert r.returncode == 0, open(os.path.join(b, "out")).read()
    init = oci.state("e2")["pid"]
    env = open("/proc/%d/environ" % init, "rb").read()
    assert env.count(b"MXC_TEST_GH_SECRET=") == 2  # both copies were there, as the init was cloned
    for s in (SECRET, SECRET[::-1]):
        assert s.encode() not in env
        assert sanitized(init) or not memory_holds(init, s.encode())
