"""The subordinate ranges (/etc/subuid and /etc/subgid) that tests/oci's rootless suites give a
throwaway account of theirs, and take back: each file rewritten whole beside itself and renamed
over it (mode 0644), so that a reader (newuidmap, useradd) never sees half of it."""
import os

FILES = ("/etc/subuid", "/etc/subgid")


def edit_subid(path, add=None, remove=None):
    with open(path) as f:
        lines = [l for l in f.read().splitlines() if l and l != remove]
    if add:
        lines.append(add)
    tmp = path + ".mxc-test"
    with open(tmp, "w") as f:
        f.write("".join(l + "\n" for l in lines))
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def add_subids(line):
    """line ("name:first:count") added to both files."""
    for path in FILES:
        edit_subid(path, add=line)


def remove_subids(line):
    """line removed from both files (nothing else touched)."""
    for path in FILES:
        edit_subid(path, remove=line)
