"""bench/bundles.py — the busybox-static rootfs and the mxc-oci `spec` bundle the benches share
(bench/oci.py, bench/net.py, bench/openshell.py)."""
import json, os, shutil, subprocess


def busybox_rootfs(rootfs, busybox, applets):
    """rootfs: busybox (copied from busybox) in bin with applets linked to it, and the mount points
    a runtime wants (proc, dev, sys, tmp, etc)."""
    os.makedirs(os.path.join(rootfs, "bin"))
    shutil.copy2(busybox, os.path.join(rootfs, "bin", "busybox"))
    for a in applets:
        os.symlink("busybox", os.path.join(rootfs, "bin", a))
    for d in ("proc", "dev", "sys", "tmp", "etc"):
        os.makedirs(os.path.join(rootfs, d))
    return rootfs


def spec_bundle(path, mxc_oci, busybox, edit=None):
    """A bundle at path: a busybox rootfs (sh, true) and mxc-oci's `spec` (runc's own shape) running
    `true`, no terminal, the root read-only, without the template's /sys/fs/cgroup mount (the
    no-cgroup runs, --cgroup-manager disabled, refuse it); edit(config) changes it before it is
    written.  Returns the rootfs."""
    rootfs = busybox_rootfs(os.path.join(path, "rootfs"), busybox, ("sh", "true"))
    subprocess.run([mxc_oci, "spec", "--bundle", path], check=True)
    with open(os.path.join(path, "config.json")) as f:
        c = json.load(f)
    c["process"]["args"], c["process"]["terminal"], c["root"]["readonly"] = ["true"], False, True
    c["mounts"] = [m for m in c["mounts"] if m.get("type") != "cgroup"]
    if edit:
        edit(c)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    return rootfs
