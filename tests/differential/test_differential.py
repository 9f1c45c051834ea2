"""Differential test: every request of corpus.py through upstream's lxc-exec (from
@microsoft/mxc-sdk@1.0.1, installed by tests/sdk/install.sh) and through ours; the outcomes
(ran with exit code N / refused with code C / timed out) must be identical, except for the cases
that name a difference Dn, which must differ — and each Dn must be listed, with its reason, in
docs/wire-contract.md.  Root: both sandboxes are real.
"""
import os
import re
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import corpus  # noqa: E402
import outcome  # noqa: E402

OURS = os.path.realpath(os.environ.get("MXC_EXEC", os.path.join(REPO, "build", "mxc-exec")))
CASES = corpus.cases()


def upstream_executor():
    exe = os.environ.get("MXC_UPSTREAM_LXC_EXEC")
    if exe:
        return exe
    pkg = subprocess.run(["bash", os.path.join(REPO, "tests", "sdk", "install.sh")], check=True,
                         capture_output=True, text=True).stdout.strip()
    return os.path.join(pkg, "bin", "x64", "lxc-exec")


@pytest.fixture(scope="module")
def executors():
    up = upstream_executor()
    assert os.access(up, os.X_OK), up
    state = tempfile.mkdtemp(prefix="mxc-diff-")
    env = dict(os.environ, MXC_STATE_DIR=state)
    yield up, env


def listed_differences():
    text = open(os.path.join(REPO, "docs", "wire-contract.md")).read()
    return dict(re.findall(r"^\| (D\d+) \| (.+?) \|", text, re.M))


def test_corpus_is_large_and_names_unique():
    names = [c["name"] for c in CASES]
    assert len(CASES) >= 150, len(CASES)
    assert len(set(names)) == len(names)
    valid = sum(1 for c in CASES if c["differs"] is None)
    assert valid >= 100


def test_every_difference_is_listed_with_a_reason():
    listed = listed_differences()
    used = {c["differs"] for c in CASES if c["differs"]}
    missing = used - set(listed)
    assert not missing, "differences used by the corpus but not listed in docs/wire-contract.md: %s" % missing
    for key, reason in listed.items():
        assert len(reason) > 20, key


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_same_outcome_as_upstream(executors, case):
    up, env = executors
    theirs, urc, uout, uerr = outcome.outcome(up, case["request"])
    ours, orc, oout, oerr = outcome.outcome(OURS, case["request"], env=env)
    detail = "upstream %s rc=%s err=%r\nours %s rc=%s out=%r err=%r" % (
        theirs, urc, uerr[-300:], ours, orc, oout[-300:], oerr[-300:])
    if case["differs"]:
        assert theirs != ours, "listed as difference %s, but both gave %s\n%s" % (case["differs"], ours, detail)
    else:
        assert theirs == ours, detail
        if theirs[0] == "ran":  # the workload's output too
            assert oout == uout, detail
