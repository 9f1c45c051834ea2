"""Zero leftovers over the whole run: every claim (a host uid handed to a
sandbox) made while the suite ran belongs to a sandbox that still exists.
conftest orders this test last; the state_dir fixture already fails the one
test that leaves a session of its own state root, this also covers the
tests that manage their own (in-process callers, faults, rootless)."""
import os
import subprocess

import pytest

from conftest import MXC_EXEC, SESSION_STARTED, leftover_claims, wait_until
from netpool_util import POOL, gone, pool_entries


def test_no_claim_outlives_its_sandbox():
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("CI runs the suite as root: the claims registry is host-wide and needs root to read")
        pytest.skip("the claims registry is host-wide: root only")
    # Another caller of mxc on this host (a load, a one-shot's cleaner finishing) may hold a claim
    # for a moment while its sandbox is being made or unmade: those go; a leftover stays.
    wait_until(lambda: not leftover_claims(SESSION_STARTED), 30)
    assert leftover_claims(SESSION_STARTED) == []


def test_model1_pool_entries_are_swept_at_the_end():
    """Model 1's pool (src/net/netpool.h, on in run-tests.sh's integration stage) keeps entries for
    the suite's test-made namespaces after they are gone; `--gc` with the pool off removes every
    one, so nothing of the suite's pool outlives it: no record, no holder, no pasta."""
    if os.geteuid() != 0:
        pytest.skip("the pool is root's")
    ready = os.path.join(POOL, "ready")
    pids = [pid for entry in pool_entries().values() for pid in entry]
    p = subprocess.run([MXC_EXEC, "--gc"], capture_output=True, timeout=120,
                       env=dict(os.environ, MXC_NETPOOL_SIZE="0"))
    assert p.returncode == 0, p
    assert not (os.path.isdir(ready) and os.listdir(ready)), os.listdir(ready)
    assert wait_until(lambda: all(gone(q) for q in pids), 10), pids
