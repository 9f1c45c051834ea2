"""Zero leftovers over the whole run: every claim (a host uid handed to a
sandbox) made while the suite ran belongs to a sandbox that still exists.
conftest orders this test last; the state_dir fixture already fails the one
test that leaves a session of its own state root, this also covers the
tests that manage their own (in-process callers, faults, rootless)."""
import os

import pytest

from conftest import SESSION_STARTED, leftover_claims, wait_until


def test_no_claim_outlives_its_sandbox():
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("CI runs the suite as root: the claims registry is host-wide and needs root to read")
        pytest.skip("the claims registry is host-wide: root only")
    # Another caller of mxc on this host (a load, a one-shot's cleaner finishing) may hold a claim
    # for a moment while its sandbox is being made or unmade: those go; a leftover stays.
    wait_until(lambda: not leftover_claims(SESSION_STARTED), 30)
    assert leftover_claims(SESSION_STARTED) == []
