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


# --------------------------------------------------------------------------------------------
# docs/kubernetes.md's containerd blocks: the 1.x one loads in the installed containerd (1.6) as
# written; the 2.x one (containerd 2 is not installable on Debian 12) is TOML with the same entries

import re as _re          # noqa: E402
import shutil             # noqa: E402
import tempfile           # noqa: E402
import tomllib            # noqa: E402

import pytest             # noqa: E402

K8S = os.path.join(ROOT, "docs", "kubernetes.md")


def _containerd_blocks():
    blocks = _re.findall(r"```toml\n(.*?)```", open(K8S).read(), _re.S)
    one = [b for b in blocks if b.startswith("# /etc/containerd/config.toml — containerd 1.x\n")]
    two = [b for b in blocks if b.startswith("# /etc/containerd/config.toml — containerd 2.x\n")]
    assert len(one) == 1 and len(two) == 1, "docs/kubernetes.md: one 1.x and one 2.x containerd block"
    # tests/oci/test_cri.py and test_containerd.py take the page's first TOML block: the 1.x one
    assert blocks[0] == one[0]
    return one[0], two[0]


def test_the_containerd_blocks_carry_the_same_entries_with_cgroupfs_everywhere():
    one, two = (tomllib.loads(b) for b in _containerd_blocks())
    assert one["version"] == 2 and two["version"] == 3
    cri1 = one["plugins"]["io.containerd.grpc.v1.cri"]
    cri2 = two["plugins"]["io.containerd.cri.v1.runtime"]
    assert cri1["containerd"] == cri2["containerd"]
    assert cri1["restrict_oom_score_adj"] is cri2["restrict_oom_score_adj"] is True
    runtimes = cri1["containerd"]["runtimes"]
    assert runtimes["mxc"]["options"]["BinaryName"] == "/usr/bin/mxc-oci"
    assert runtimes["mxc"]["pod_annotations"] == ["io.mxc.*"]
    # mxc-oci refuses --systemd-cgroup, and the kubelet's driver is one per node: no entry keeps true
    assert {n: r["options"]["SystemdCgroup"] for n, r in runtimes.items()} == {"runc": False, "mxc": False}
    assert "disable_apparmor" not in cri1 and "disable_apparmor" not in cri2   # applied as runc does


@pytest.mark.skipif(not shutil.which("containerd"), reason="needs containerd (scripts/deps.sh)")
def test_the_containerd_1x_block_loads_in_containerd_as_written():
    """`containerd config dump` of the block, its version line included, with a root, state and
    socket of the test's own (nothing is started)."""
    one, _ = _containerd_blocks()
    base = tempfile.mkdtemp(prefix="mxc-docs-ctd-", dir="/var/tmp")
    try:
        conf = os.path.join(base, "config.toml")
        with open(conf, "w") as f:
            f.write('root = "%s/root"\nstate = "%s/state"\n' % (base, base) + one +
                    '\n[grpc]\n  address = "%s/c.sock"\n' % base)
        r = subprocess.run(["containerd", "--config", conf, "config", "dump"], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        dump = r.stdout
        assert "version = 2" in dump and "restrict_oom_score_adj = true" in dump

        def table(name):
            head = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.%s]' % name
            assert head in dump, dump
            return dump[dump.index(head):].split("\n\n")[0]
        assert 'pod_annotations = ["io.mxc.*"]' in table("mxc")
        assert 'BinaryName = "/usr/bin/mxc-oci"' in table("mxc.options")
        assert "SystemdCgroup = false" in table("mxc.options") and "SystemdCgroup = false" in table("runc.options")
        assert not os.path.exists(os.path.join(base, "c.sock"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
