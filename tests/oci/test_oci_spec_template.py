"""runc's own `spec` template, unchanged, runs on mxc-oci (issue 36, must-show 2), and so does
`mxc-oci spec`'s, which has runc's shape: the `/sys/fs/cgroup` mount read-only inside, the
container's own cgroup and nothing of the host's above it. Ambient capabilities are honoured within
the kernel's rule (ambient within permitted, inheritable and bounding, each within mxc's set): one
outside it is not raised and said so on stderr (the runtime spec: "MUST be logged as a warning",
"SHOULD NOT fail"; runc and crun drop it alike), which is what runc's template asks (three ambient
capabilities, no inheritable one).

The configs are used as `runc spec` / `mxc-oci spec` write them, but for process.args and
process.terminal (and root.path where the rootfs is elsewhere) — what runc's own bats tests change
in the template too (helpers.bash's update_config on `runc spec`'s output).

Run as root:  MXC_OCI=build/mxc-oci /usr/bin/python3 -m pytest -q -p no:cacheprovider
              tests/oci/test_oci_spec_template.py
"""
import json
import os
import shutil
import subprocess

import pytest

from test_oci import make_rootfs, oci  # noqa: F401  (the fixture)

RUNC = shutil.which("runc") or "/usr/sbin/runc"
TEMPLATE_CAPS = 1 << 5 | 1 << 10 | 1 << 29  # CAP_KILL, CAP_NET_BIND_SERVICE, CAP_AUDIT_WRITE
CAP_NAMES = ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
STATUS = "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status"
# the cgroup mount inside: its mounts, a write into it, and what the pids hierarchy lists
CGROUP_PROBE = ("grep ' /sys/fs/cgroup' /proc/self/mountinfo; echo cg-own $(grep ':pids:' /proc/self/cgroup); "
                "(echo x > /sys/fs/cgroup/x) 2>&1; (echo 1 > /sys/fs/cgroup/pids/cgroup.procs) 2>&1; "
                "(mkdir /sys/fs/cgroup/pids/sub) 2>&1; for f in /sys/fs/cgroup/pids/*; do "
                "[ -d \"$f\" ] && echo cg-dir $f; done; echo end")

needs_runc = pytest.mark.skipif(not os.access(RUNC, os.X_OK), reason="runc is not installed")


def caps_of(out):
    """{'CapAmb': int, ...} of the /proc/self/status lines in out."""
    return {l.split(":")[0]: int(l.split()[1], 16) for l in out.splitlines() if l.startswith("Cap")}


def template(oci, tool, *flags):
    """A bundle (rootfs at its default root.path, "rootfs") and the config `tool spec` wrote there."""
    oci.n += 1
    b = os.path.join(oci.base, "tmpl%d" % oci.n)
    os.makedirs(b)
    make_rootfs(os.path.join(b, "rootfs"))
    cmd = [RUNC, "spec", *flags] if tool == "runc" else [oci_binary(), "spec", *flags]
    r = subprocess.run(cmd, cwd=b, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return b, None, r
    with open(os.path.join(b, "config.json")) as f:
        return b, json.load(f), r


def oci_binary():
    from test_oci import MXC_OCI
    return MXC_OCI


def with_process(b, c, args, **process):
    """Only what runc's bats change too: process.args and terminal (a test has no terminal)."""
    c["process"]["args"] = args
    c["process"]["terminal"] = False
    c["process"].update(process)
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f)


def check_cgroup_mount(out, cid):
    """The template's /sys/fs/cgroup: read-only, each hierarchy the container's own directory."""
    lines = out.splitlines()
    mounts = [l.split() for l in lines if " /sys/fs/cgroup" in l and l[0].isdigit()]
    assert mounts, out
    own = [l for l in lines if l.startswith("cg-own ")][0].split(":", 2)[2]
    assert own.endswith("/" + cid), out
    for m in mounts:
        root, target, opts = m[3], m[4], m[5].split(",")
        assert "ro" in opts and "nosuid" in opts and "nodev" in opts and "noexec" in opts, m
        if target != "/sys/fs/cgroup":  # a hierarchy: its root is the container's own cgroup, never above it
            assert root == own, (m, own)
    assert lines.count("sh: can't create /sys/fs/cgroup/x: Read-only file system") == 1, out
    assert "sh: can't create /sys/fs/cgroup/pids/cgroup.procs: Read-only file system" in lines, out
    assert "mkdir: can't create directory '/sys/fs/cgroup/pids/sub': Read-only file system" in lines, out
    assert not [l for l in lines if l.startswith("cg-dir ")], out  # no cgroup below or beside its own
    assert lines[-1] == "end", out


@needs_runc
def test_runc_s_spec_template_runs_unchanged(oci):
    b, c, r = template(oci, "runc")
    assert r.returncode == 0, r.stderr
    assert c["process"]["capabilities"]["ambient"] == CAP_NAMES and "inheritable" not in c["process"]["capabilities"]
    with_process(b, c, ["sh", "-c", STATUS + "; " + CGROUP_PROBE])
    rc, out, err = oci("run", "--bundle", b, "runc-tmpl")
    assert rc == 0, err
    caps = caps_of(out)
    assert caps["CapPrm"] == caps["CapEff"] == caps["CapBnd"] == TEMPLATE_CAPS, out
    assert caps["CapInh"] == 0 and caps["CapAmb"] == 0, out  # as runc: not inheritable, so never ambient
    assert ("warning: process.capabilities.ambient: CAP_KILL, CAP_NET_BIND_SERVICE, CAP_AUDIT_WRITE not raised"
            in err), err
    check_cgroup_mount(out, "runc-tmpl")


def test_mxc_oci_spec_template_runs_with_its_cgroup_mount_read_only(oci):
    b, c, r = template(oci, "mxc-oci")
    assert r.returncode == 0, r.stderr
    assert {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
            "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]} in c["mounts"]
    with_process(b, c, ["sh", "-c", STATUS + "; " + CGROUP_PROBE])
    rc, out, err = oci("run", "--bundle", b, "mxc-tmpl")
    assert rc == 0, err
    assert "warning" not in err, err
    caps = caps_of(out)
    assert caps["CapPrm"] == caps["CapEff"] == caps["CapBnd"] == TEMPLATE_CAPS and caps["CapAmb"] == 0, out
    check_cgroup_mount(out, "mxc-tmpl")


@needs_runc
def test_mxc_oci_spec_is_runc_s_field_by_field(oci):
    """The differences, each on purpose: the spec version mxc-oci implements, its hostname, and no
    ambient capabilities (runc's ask for three with no inheritable one, which are never raised; runc
    took them out of its template after 1.1, opencontainers/runc#4367)."""
    _, ours, r1 = template(oci, "mxc-oci")
    _, runc, r2 = template(oci, "runc")
    assert r1.returncode == 0 and r2.returncode == 0, (r1.stderr, r2.stderr)
    assert runc["hostname"] == "runc" and ours["hostname"] == "mxc"
    assert runc["process"]["capabilities"].pop("ambient") == CAP_NAMES
    for cfg in (ours, runc):
        cfg.pop("ociVersion")
        cfg.pop("hostname")
    assert ours == runc


def ambient_bundle(oci, tool, uid):
    b, c, r = template(oci, tool)
    assert r.returncode == 0, r.stderr
    c["process"]["capabilities"]["inheritable"] = CAP_NAMES
    c["process"]["capabilities"]["ambient"] = CAP_NAMES
    # a port below 1024 in the container's own network namespace: what CAP_NET_BIND_SERVICE is for
    script = STATUS + "; httpd -f -p 80 & p=$!; sleep 0.5; kill -0 $p 2>/dev/null && echo bound; kill $p 2>/dev/null; true"
    with_process(b, c, ["sh", "-c", script], user={"uid": uid, "gid": uid})
    return b


@pytest.mark.parametrize("uid", [0, 1000])
def test_ambient_capabilities_within_inheritable_are_raised(oci, uid):
    b = ambient_bundle(oci, "mxc-oci", uid)
    rc, out, err = oci("run", "--bundle", b, "amb%d" % uid)
    assert rc == 0, err
    assert "warning" not in err, err
    caps = caps_of(out)
    assert caps["CapAmb"] == caps["CapInh"] == TEMPLATE_CAPS, out
    assert caps["CapPrm"] == caps["CapEff"] == TEMPLATE_CAPS, out  # uid 1000's too: from the ambient set
    assert "bound" in out.splitlines(), out


def test_a_non_root_process_without_ambient_capabilities_has_none(oci):
    """The control of the test above: uid 1000 from the template as written holds nothing."""
    b, c, r = template(oci, "mxc-oci")
    script = STATUS + "; httpd -f -p 80 & p=$!; sleep 0.5; kill -0 $p 2>/dev/null && echo bound; kill $p 2>/dev/null; true"
    with_process(b, c, ["sh", "-c", script], user={"uid": 1000, "gid": 1000})
    rc, out, err = oci("run", "--bundle", b, "noamb")
    assert rc == 0, err
    caps = caps_of(out)
    assert caps["CapAmb"] == caps["CapPrm"] == caps["CapEff"] == 0, out
    assert "bound" not in out.splitlines() and "httpd: bind: Permission denied" in err, (out, err)


def test_an_ambient_capability_outside_mxc_s_set_is_refused_by_name(oci):
    b, c, r = template(oci, "mxc-oci")
    c["process"]["capabilities"]["ambient"] = ["CAP_KILL", "CAP_SYS_ADMIN"]
    with_process(b, c, ["true"])
    rc, _, err = oci("run", "--bundle", b, "sysadmin")
    assert rc != 0 and "process.capabilities.ambient: CAP_SYS_ADMIN is refused" in err, err


def test_exec_process_s_ambient_capabilities_and_exec_cap(oci):
    b, c, r = template(oci, "mxc-oci")
    with_process(b, c, ["sleep", "1000"])
    with open(os.path.join(b, "out"), "wb") as out:
        rc, _, err = oci("run", "--detach", "--bundle", b, "ex", out=out)
    assert rc == 0, err
    proc = dict(c["process"], args=["sh", "-c", STATUS], user={"uid": 1000, "gid": 1000})
    proc["capabilities"] = dict(proc["capabilities"], inheritable=["CAP_KILL"], ambient=["CAP_KILL"])
    pf = os.path.join(oci.base, "process.json")
    with open(pf, "w") as f:
        json.dump(proc, f)
    rc, out, err = oci("exec", "--process", pf, "ex")
    assert rc == 0 and "warning" not in err, err
    caps = caps_of(out)
    assert caps["CapAmb"] == caps["CapPrm"] == caps["CapEff"] == 1 << 5, out
    # --cap adds no inheritable capability (runc's rule), so no ambient one and nothing to warn of
    rc, out, err = oci("exec", "--cap", "CAP_CHOWN", "ex", "sh", "-c", STATUS)
    assert rc == 0 and "warning" not in err, err
    caps = caps_of(out)
    assert caps["CapEff"] == TEMPLATE_CAPS | 1 and caps["CapAmb"] == 0, out
    # ... but where the process has it inheritable, --cap makes it ambient too
    rc, out, err = oci("exec", "--process", pf, "--cap", "CAP_KILL", "ex")
    assert rc == 0 and "warning" not in err, err
    assert caps_of(out)["CapAmb"] == 1 << 5, out


@needs_runc
def test_runc_s_rootless_template_is_refused_for_mapping_host_root(oci):
    """`runc spec --rootless` run as root maps container 0 onto the caller's uid, host root here:
    the guarantee refuses it (docs/oci.md "What is refused").  mxc-oci's own `spec --rootless` is
    the template without the cgroup mount and limits (a rootless container has no cgroup here; its
    maps are the caller's own ids: tests/oci/test_oci_rootless.py)."""
    b, c, r = template(oci, "runc", "--rootless")
    assert r.returncode == 0, r.stderr
    assert c["linux"]["uidMappings"] == [{"containerID": 0, "hostID": 0, "size": 1}]
    with_process(b, c, ["true"])
    rc, _, err = oci("run", "--bundle", b, "rootless")
    assert rc != 0 and "uidMappings" in err and "host" in err, err
    _, c, r = template(oci, "mxc-oci", "--rootless")
    assert r.returncode == 0, r.stderr
    assert "resources" not in c["linux"] and not [m for m in c["mounts"] if m["type"] == "cgroup"], c
