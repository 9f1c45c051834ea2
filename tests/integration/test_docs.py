"""The honor matrix in docs/wire-contract.md is the code's table."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXE = os.environ.get("MXC_EXEC", os.path.join(ROOT, "build", "mxc-exec"))


def test_docs_matrix_is_generated_from_the_code():
    generated = subprocess.run([EXE, "--honor-matrix"], capture_output=True, text=True, check=True).stdout
    doc = open(os.path.join(ROOT, "docs", "wire-contract.md")).read()
    m = re.search(r"<!-- matrix:begin -->\n(.*)<!-- matrix:end -->", doc, re.S)
    assert m, "docs/wire-contract.md lacks the matrix markers"
    assert m.group(1) == generated


def test_matrix_has_every_surface_and_rejects_ui_grants_everywhere():
    generated = subprocess.run([EXE, "--honor-matrix"], capture_output=True, text=True, check=True).stdout
    header = generated.splitlines()[0]
    for col in ("one-shot", "provision", "start", "exec", "stop", "deprovision"):
        assert col in header
    ui = [l for l in generated.splitlines() if l.startswith("| ui granting")]
    assert ui and ui[0].count("rejected") == 6
