"""The MXC network policy a container was given, recorded at create (docs/kubernetes.md "Which
policy is in force", docs/oci.md "Annotations"): state.json's io.mxc.applied.* annotations (the
applied io.mxc.network as canonical JSON, the version, where it came from) and one
info line in the --log — for a policy applied by the container, for a pod member joining the
namespace by path (with the pod's annotation or none: the pod's policy is the one in force), for a
CNI pod's sandbox and app containers, for a container with none, and a config that tries to forge the record refused.

NETWORK SAFETY: the world of tests/integration/test_proxy.py, as test_oci_network.py: the
containers have network namespaces of their own (loopback only), join one of the test's containers,
or join the "pod" namespace of test_oci_cni_net.py (the test's, veth to the test's node namespace).
The policies are model 3 or governed egress to names nothing serves; no container sends anything.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_applied.py
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from test_oci import Oci, oci  # noqa: F401 (fixture)
from test_oci_network import annotate, bundle
from test_oci_cni_net import APP, in_pod, pod, sandbox  # noqa: F401 (fixture)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from test_proxy import world  # noqa: E402,F401 (fixture)

NET = {"defaultPolicy": "block", "allowedHosts": []}
A = "io.mxc.applied."


def canonical(network):
    return json.dumps(network, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def applied(oci, cid):
    a = oci.state(cid)["annotations"]
    return {k[len(A):]: v for k, v in a.items() if k.startswith(A)}


def log_lines(path):
    return [json.loads(line) for line in open(path).read().splitlines()]


def joining(pid):
    def join(c):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/proc/%d/ns/net" % pid
        c["mounts"] = [m for m in c["mounts"] if m["type"] != "sysfs"]
    return join


def test_the_applied_policy_is_in_the_state_and_the_log(oci, world):  # noqa: F811
    # keys out of order and spaced as a tenant may write them: the record is canonical
    text = '{ "allowedHosts": [], "defaultPolicy": "block" }'
    b = bundle(oci, ["sleep", "600"], annotate(text))
    log = os.path.join(oci.base, "log.json")
    with open(os.path.join(b, "out"), "wb") as out:
        rc, _, err = oci("--log", log, "--log-format", "json", "create", "--bundle", b, "pod", out=out)
    assert rc == 0, err
    got = applied(oci, "pod")
    assert got["network"] == canonical(NET) and got["version"] == "1" and got["source"] == "self", got
    assert oci.state("pod")["annotations"]["io.mxc.network"] == text  # what was asked, beside it
    info = [e for e in log_lines(log) if e["level"] == "info"]
    assert len(info) == 1, info
    assert "container pod" in info[0]["msg"] and "source self" in info[0]["msg"], info
    assert info[0]["msg"].endswith("network " + canonical(NET)), info
    # the operator's comparison (docs/kubernetes.md): the annotation as the pod carries it now, made
    # canonical by jq, is the recorded text
    if shutil.which("jq"):
        r = subprocess.run(["sh", "-c", 'printf %s "$1" | jq -cS . | tr -d "\\n"', "sh", text],
                           capture_output=True, text=True, check=True)
        assert r.stdout == got["network"], r


def test_a_pod_member_records_the_pod_s_policy(oci, world):  # noqa: F811
    b = bundle(oci, ["sleep", "600"], annotate(NET))
    rc, _, err = oci.create("pod", b)
    assert rc == 0, err
    pod = applied(oci, "pod")
    join = joining(oci.state("pod")["pid"])
    # the same annotation (as the CRI passes a pod's to every container): the pod's, not applied again
    m = bundle(oci, ["sleep", "600"], annotate(NET), mutate=join)
    rc, _, err = oci.create("member", m)
    assert rc == 0, err
    got = applied(oci, "member")
    assert got["source"] == "pod:pod" and got["network"] == pod["network"], got
    # no annotation at all: still the pod's policy that is in force in the namespace it joins
    bare = bundle(oci, ["sleep", "600"], {}, mutate=join)
    rc, _, err = oci.create("bare", bare)
    assert rc == 0, err
    got = applied(oci, "bare")
    assert got["source"] == "pod:pod" and got["network"] == pod["network"] and got["version"] == "1", got


def test_no_annotation_records_what_the_container_got(oci, world):  # noqa: F811
    rc, _, err = oci.create("own", oci.bundle(["sleep", "600"]))
    assert rc == 0, err
    got = applied(oci, "own")
    assert got == {"network": "none", "version": "none", "source": "none:own-netns"}, got
    # joining a namespace nobody applied a policy to
    j = oci.bundle(["sleep", "600"], mutate=joining(oci.state("own")["pid"]))
    rc, _, err = oci.create("joined", j)
    assert rc == 0, err
    assert applied(oci, "joined")["source"] == "none:joined-netns"


def test_a_config_cannot_forge_the_record(oci):
    forged = annotate(NET, **{A + "network": "none", A + "source": "self"})
    b = bundle(oci, ["true"], forged)
    rc, _, err = oci("create", "--bundle", b, "forged")
    assert rc != 0 and A in err and "record" in err, err
    assert not os.path.exists(os.path.join(oci.root, "forged"))
    b = bundle(oci, ["true"], {A + "version": "1"})  # no io.mxc.version either: still refused
    rc, _, err = oci("create", "--bundle", b, "forged2")
    assert rc != 0 and A + "version" in err, err


def test_a_cni_pod_s_sandbox_and_app_record_the_pod_s_policy(oci, world, pod):  # noqa: F811
    net = {"defaultPolicy": "block"}
    sandbox(oci, pod, net)  # the CRI's sandbox container, joining the CNI-made namespace by path
    sb = applied(oci, "sb")
    assert sb["source"] == "cni" and sb["network"] == canonical(net), sb
    rc, _, err = oci.create("app", bundle(oci, ["sleep", "600"], annotate(net, **APP), mutate=in_pod(pod)))
    assert rc == 0, err
    app = applied(oci, "app")
    assert app["source"] == "pod:sb" and app["network"] == sb["network"], app


@pytest.mark.parametrize("flag", ["--cgroup", "--process-label"])
def test_exec_cgroup_is_refused_not_ignored(oci, flag):
    """docs/oci.md: exec --cgroup (and --process-label) is not built: refused whatever it names,
    never run in the container's own cgroup instead (the command does not run)."""
    b = oci.bundle(["sleep", "600"], readonly=False)
    rc, _, err = oci.create("c", b)
    assert rc == 0, err
    rc, _, err = oci("exec", flag, "sub", "c", "touch", "/ran")
    assert rc != 0 and "exec --process-label/--cgroup are not supported by mxc-oci yet" in err, (rc, err)
    assert not os.path.exists(os.path.join(b, "rootfs", "ran"))


# The agent-sandbox objects of docs/kubernetes.md, checked against the v1beta1 types read for it
# (kubernetes-sigs/agent-sandbox 2fd412d5: api/v1beta1, extensions/api/v1beta1): each kind's group
# and version, the json field names used, the policy in the template and never in a claim.
K8S_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "kubernetes.md")
GROUP = {"Sandbox": "agents.x-k8s.io/v1beta1", "SandboxTemplate": "extensions.agents.x-k8s.io/v1beta1",
         "SandboxWarmPool": "extensions.agents.x-k8s.io/v1beta1",
         "SandboxClaim": "extensions.agents.x-k8s.io/v1beta1"}
FIELDS = {"SandboxTemplate": {"podTemplate", "volumeClaimTemplates", "service", "networkPolicy",
                              "networkPolicyManagement", "envVarsInjectionPolicy", "volumeClaimTemplatesPolicy"},
          "SandboxWarmPool": {"replicas", "sandboxTemplateRef", "updateStrategy"},
          "SandboxClaim": {"warmPoolRef", "lifecycle", "additionalPodMetadata", "env", "volumeClaimTemplates"}}


def test_the_agent_sandbox_examples_are_v1beta1_with_the_policy_in_the_template():
    yaml = pytest.importorskip("yaml")
    text = open(K8S_DOC).read()
    assert "v1alpha1" not in text.replace("`v1alpha1` is still served", "")
    docs = [d for b in re.findall(r"```yaml\n(.*?)```", text, re.S) for d in yaml.safe_load_all(b)
            if d and d.get("kind") in GROUP]
    kinds = {d["kind"]: d for d in docs}
    assert set(kinds) == {"SandboxTemplate", "SandboxWarmPool", "SandboxClaim"}, kinds
    for d in docs:
        assert d["apiVersion"] == GROUP[d["kind"]], d
        assert set(d["spec"]) <= FIELDS[d["kind"]], d
    pod = kinds["SandboxTemplate"]["spec"]["podTemplate"]
    ann = pod["metadata"]["annotations"]
    assert pod["spec"]["runtimeClassName"] == "mxc" and ann["io.mxc.version"] == "1"
    assert json.loads(ann["io.mxc.network"])["defaultPolicy"] == "block"
    pool = kinds["SandboxWarmPool"]
    assert pool["spec"]["sandboxTemplateRef"]["name"] == kinds["SandboxTemplate"]["metadata"]["name"]
    assert kinds["SandboxClaim"]["spec"]["warmPoolRef"]["name"] == pool["metadata"]["name"]
    extra = kinds["SandboxClaim"]["spec"].get("additionalPodMetadata", {})
    assert not any(k.startswith("io.mxc.") for k in extra.get("annotations", {})), extra
