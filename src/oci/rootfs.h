/* rootfs.h — which root.path is a container's own.
 * Owns: resolving root.path to a descriptor by the rule below, and the
 * operator's list of storage roots (MXC_OCI_ROOTFS_ROOTS).
 * The rootfs is attached idmapped with the disk's 0 under the container's
 * root, so a host directory as root.path would be host root's files in the
 * container's hands.  A root.path is admitted only where it is provably an
 * image's:
 *  - relative, or absolute inside the bundle directory: resolved beneath
 *    the bundle (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
 *    RESOLVE_NO_MAGICLINKS) one component at a time: no "..", no symlink
 *    on the way (a "rootfs" link to a host directory is refused), no
 *    directory on the way, the bundle included, writable by everyone (what
 *    others made in a /tmp-like directory is not an image);
 *  - any other absolute path: strictly beneath one of the operator's
 *    storage roots (default /var/lib/containers/storage, Podman's and
 *    CRI-O's, and /var/lib/docker; MXC_OCI_ROOTFS_ROOTS=DIR:DIR in mxc-oci's environment
 *    replaces the list), every directory from "/" down to the storage root
 *    root's and writable by no one else (sticky excepted above it), reached
 *    with no symlink, the rest beneath it likewise.
 * Never mxc's own state (state root, claims, workspaces; hostpath.h's
 * grant rule), wherever it lies. */
#ifndef MXC_OCI_ROOTFS_H
#define MXC_OCI_ROOTFS_H

#include "error.h"

/* An O_PATH|O_DIRECTORY descriptor of root.path by the rule above, bundle
 * the --bundle argument as given (NULL: the current directory) and
 * bundle_fd its descriptor; -1 with *e set naming root.path and why. */
int oci_rootfs_open(int bundle_fd, const char *bundle, const char *root_path, mxc_error *e);

#endif
