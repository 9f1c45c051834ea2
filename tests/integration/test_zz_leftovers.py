"""Zero leftovers over the whole run: every claim (a host uid handed to a
sandbox) made while the suite ran belongs to a sandbox that still exists.
conftest orders this test last; the state_dir fixture already fails the one
test that leaves a session of its own state root, this also covers the
tests that manage their own (in-process callers, faults, rootless)."""
import os

from conftest import SESSION_STARTED, leftover_claims


def test_no_claim_outlives_its_sandbox():
    if os.geteuid() != 0:
        return
    assert leftover_claims(SESSION_STARTED) == []
