/* tmpcopy.h — a tmpfs mount's `tmpcopyup` (Podman asks it for --tmpfs).
 * Owns: copying what the rootfs holds at the mount's destination into the
 * new tmpfs before it is attached there, inside the container's init (as
 * its root, in its own user namespace: nothing of the host's is read).
 * By descriptor, never following a link: directories, regular files,
 * symlinks (as links) and fifos, with owners, modes and times; set-uid and
 * set-gid bits dropped; device nodes and sockets skipped (a user
 * namespace cannot make them); at most 64 levels deep. */
#ifndef MXC_OCI_TMPCOPY_H
#define MXC_OCI_TMPCOPY_H

#include <stddef.h>

#include "error.h"

/* target: O_PATH of the destination in the rootfs; tree: the detached
 * tmpfs (not yet read-only).  0, or -1 with e saying which entry and why. */
int oci_tmpcopyup(int target, int tree, mxc_error *e);

#endif
