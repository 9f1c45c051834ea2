"""debian/mxc.postrm purge (issue 39 item 5): a sandbox of another state root (MXC_STATE_DIR) keeps
its claim and workspace under /var/lib/mxc; purge must not destroy them silently while it lives.

Each case runs the real script as root in a private mount namespace (`unshare -m`) whose /run,
/var/lib and /var/log are fresh tmpfs mounts holding a made-up tree: the host's mxc is never seen.
Before the fix, purge removed /var/lib/mxc whole, the live session's workspace with it."""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POSTRM = os.environ.get("MXC_POSTRM", os.path.join(REPO, "debian", "mxc.postrm"))

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a private mount namespace)")

SETUP = r"""
set -e
for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=755 none $d; done
mkdir -p /run/mxc/mxc-dflt /var/lib/mxc/claims /var/lib/mxc/workspaces/mxc-dflt /var/lib/mxc/gateway /var/log/mxc
echo '{"uid":1,"kind":"session","pid":1,"writable":[],"stateDir":"/run/mxc/mxc-dflt","start":1}' \
  > /var/lib/mxc/claims/1
echo '{"uid":2,"kind":"oneshot","pid":999999999,"writable":[],"start":5}' > /var/lib/mxc/claims/2
"""


def purge(extra):
    """Runs SETUP, extra (shell), postrm purge, then lists what is left; (rc, stderr, left)."""
    script = SETUP + extra + "\nsh %s purge 2>/run/err; rc=$?\n" % POSTRM + \
        "echo rc=$rc; cat /run/err >&2; find /run/mxc /var/lib/mxc /var/log/mxc 2>/dev/null | sort\n"
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    lines = p.stdout.splitlines()
    assert lines and lines[0].startswith("rc="), p.stdout + p.stderr
    return int(lines[0][3:]), p.stderr, lines[1:]


def test_purge_removes_everything_when_no_sandbox_of_another_root_lives():
    rc, err, left = purge("")
    assert rc == 0, err
    assert left == [], left
    assert "removes the 1 sandbox(es) left in the default state root /run/mxc" in err, err


def test_purge_keeps_the_claims_and_workspaces_of_a_session_of_another_state_root():
    rc, err, left = purge(r"""
mkdir -p /run/custom/mxc-othr /var/lib/mxc/workspaces/mxc-othr
echo '{"uid":3,"kind":"session","pid":1,"writable":[],"stateDir":"/run/custom/mxc-othr","start":1}' \
  > /var/lib/mxc/claims/3
""")
    assert rc == 0, err
    assert "/var/lib/mxc/workspaces/mxc-othr" in left and "/var/lib/mxc/claims/3" in left, left
    assert "/run/custom/mxc-othr" in err and "kept" in err, err
    assert not [p for p in left if p.startswith(("/run/mxc", "/var/log/mxc", "/var/lib/mxc/gateway"))], left


def test_purge_keeps_them_for_a_running_one_shot_and_forgets_a_dead_one():
    with open("/proc/self/stat") as f:
        start = f.read().rsplit(")", 1)[1].split()[19]
    pid = os.getpid()
    rc, err, left = purge("""
echo '{"uid":4,"kind":"oneshot","pid":%d,"writable":[],"start":%s}' > /var/lib/mxc/claims/4
""" % (pid, start))
    assert rc == 0, err
    assert "/var/lib/mxc/claims/4" in left and "pid %d" % pid in err, (left, err)
    # the same pid with another start time is a reused pid: not a sandbox
    rc, err, left = purge("""
echo '{"uid":4,"kind":"oneshot","pid":%d,"writable":[],"start":%d}' > /var/lib/mxc/claims/4
""" % (pid, int(start) + 1))
    assert rc == 0 and left == [], (left, err)
