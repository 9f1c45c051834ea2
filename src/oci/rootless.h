/* rootless.h — mxc-oci run by a non-root caller (issue 36, first stage).
 * Owns: what makes a container rootless: the caller's ids (its own uid and
 * gid, and its subordinate ranges from /etc/subuid and /etc/subgid, read by
 * descriptor, root's files only), the container's maps (0 -> the caller,
 * 1.. -> the first subordinate range, as rootless Podman and runc make them;
 * or the config's, each range the caller's own id or inside its subordinate
 * ranges, else refused naming the field), written by the set-uid
 * newuidmap/newgidmap (absolute paths, root's files checked by descriptor
 * before they are run), the default state root (mxc-oci in the caller's
 * private directory, the engine's: $XDG_RUNTIME_DIR first), and the refusals of what needs host root or what
 * this stage does not deliver (each by name, with what to do instead).
 * No range claim is made: the ids are the caller's own (its subordinate
 * ranges are its by /etc/subuid, which root wrote), and a claim lives in
 * root's /var/lib/mxc. */
#ifndef MXC_OCI_ROOTLESS_H
#define MXC_OCI_ROOTLESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

/* Run by a non-root caller, or by root of a user namespace that is not the
 * host's (rootless Podman runs its runtime there: "nested"; its ids are the
 * ones that namespace maps, all the caller's, and the maps are written
 * directly, no set-uid helper). */
bool oci_rootless(void);
bool oci_rootless_nested(void);

/* The state's "owner" (runc's): the name of the runtime's user (root as root), else its uid. */
const char *oci_rootless_owner(void);

/* The default --root of a non-root caller: mxc-oci in the engine's private
 * directory of the caller (mxc_private_dir: $XDG_RUNTIME_DIR, else
 * /run/user/UID, /tmp/mxc-UID, ~/.local/state/mxc/run-HOST; the caller's
 * own, no group or other permission) in buf; -1 with *e set. */
int oci_rootless_root(char *buf, size_t sz, mxc_error *e);

/* What a rootless container cannot have refused by name: idmapped binds,
 * namespaces joined by path, linux.resources limits (no delegated cgroup),
 * the io.mxc.* network annotations. */
int oci_rootless_check(const oci_config *c, mxc_error *e);

/* The container's maps: the config's checked against the caller's ids, or
 * the default ones set (c->uidmap, c->gidmap). */
int oci_rootless_maps(oci_config *c, mxc_error *e);

/* c's maps written for the process pid by newuidmap and newgidmap. */
int oci_rootless_write_maps(pid_t pid, const oci_config *c, mxc_error *e);

#endif
