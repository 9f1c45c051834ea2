"""Gaps runc's own bats suite (tests/oci/bats/run.sh) found in mxc-oci, one test each.

The suite drives mxc-oci exactly as it drives runc; each test here reproduces what a
bats test does that mxc-oci answered differently, without bats."""
import os
import stat

from test_oci import Oci, oci  # noqa: F401  (the fixture)


def test_existing_root_readable_by_others_is_accepted_but_not_a_writable_one(oci):
    # helpers.bash makes --root with `mkdir -p` (0755) and every bats test uses it; runc accepts
    # an existing root.  Only write access for others matters (they could plant a container
    # directory); each container's own directory stays 0700.
    os.makedirs(oci.root, mode=0o755)
    os.chmod(oci.root, 0o755)
    b = oci.bundle(["true"])
    rc, _, err = oci("run", "--bundle", b, "c1")
    assert rc == 0, err
    rc, out, err = oci("list", "-q")
    assert rc == 0, err
    for mode in (0o775, 0o757, 0o777):
        os.chmod(oci.root, mode)
        rc, _, err = oci("list")
        assert rc != 0 and "--root" in err, (oct(mode), err)
    os.chmod(oci.root, 0o755)
    rc, _, err = oci.create("c2", b)
    assert rc == 0, err
    assert stat.S_IMODE(os.stat(os.path.join(oci.root, "c2")).st_mode) == 0o700
