"""Differential test: every request of corpus.py through upstream's lxc-exec (from
@microsoft/mxc-sdk@1.0.1, installed by tests/sdk/install.sh) and through ours; the outcomes
(ran with exit code N / refused with code C / timed out) must be identical, except for the cases
that name a difference Dn, which must differ — and each Dn must be listed, with its reason, in
docs/wire-contract.md.  A case that `varies` with the host (Dn of corpus.HOST_DEPENDENT) is
compared only where upstream's answer is the documented one.  The CLI's transport (no config, a
missing file, bad base64) is compared too.  Root: both sandboxes are real.
"""
import os
import shutil
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
    # outside /tmp: the corpus grants /tmp itself, and a grant that covers mxc's own state root is
    # refused (hostpath.h) — upstream has no state root to protect
    state = tempfile.mkdtemp(prefix="mxc-diff-", dir="/var/tmp")
    env = dict(os.environ, MXC_STATE_DIR=state)
    yield up, env
    shutil.rmtree(state, ignore_errors=True)


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
    used = {c["differs"] for c in CASES if c["differs"]} | {c["varies"] for c in CASES if c["varies"]}
    missing = used - set(listed)
    assert not missing, "differences used by the corpus but not listed in docs/wire-contract.md: %s" % missing
    for key, reason in listed.items():
        assert len(reason) > 20, key


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_same_outcome_as_upstream(executors, case):
    up, env = executors
    if case["varies"] and not corpus.HOST_DEPENDENT[case["varies"]]():
        pytest.skip("upstream's answer depends on this host's tools (%s)" % case["varies"])
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


TRANSPORT = [
    pytest.param([], id="no config"),
    pytest.param(["/nonexistent/mxc-diff.json"], id="missing file"),
    pytest.param(["--config", "/nonexistent/mxc-diff.json"], id="missing --config file"),
    pytest.param(["--config-base64", "%%%not-base64"], id="bad base64"),
    pytest.param(["--config-base64", "e30"], id="unpadded base64"),
]


@pytest.mark.parametrize("argv", TRANSPORT)
def test_cli_transport_same_as_upstream(executors, argv):
    """No request to read: the same exit code and the same stderr words as upstream's lxc-exec
    (ours also prints the legacy envelope on stdout: the dialect is unknown)."""
    up, env = executors
    u = subprocess.run([up] + argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    o = subprocess.run([OURS] + argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
                       env=env)
    detail = "upstream rc=%s err=%r\nours rc=%s out=%r err=%r" % (u.returncode, u.stderr, o.returncode,
                                                                  o.stdout, o.stderr)
    assert outcome.classify(u.returncode, u.stdout, u.stderr) == ("refused", "malformed_request"), detail
    assert o.returncode == u.returncode == 1, detail
    theirs = u.stderr.splitlines()
    assert theirs and o.stderr.splitlines()[:len(theirs)] == theirs, detail
    assert '"malformed_request"' in o.stdout, detail
