/* mountmap.h — idmapped bind mounts (a mount's uidMappings/gidMappings,
 * the spec's idmap and ridmap options).
 * Owns: the rule for them and the detached idmapped tree.  A mapping
 * (containerID = the id on disk, hostID = the id it shows as, size) says
 * what the container writes through the mount: a process whose host id is
 * hostID+k writes the disk's containerID+k.  So both sides must be ids the
 * container owns (the host side of its own user namespace's maps: mxc's
 * range, or the config's checked maps): a disk side outside them would let
 * the container write as someone else — host root's 0 above all ("wrong
 * idmaps") — and a host side outside them is ids it does not have.  Given
 * no mappings (idmap alone), the container's own maps are the mount's:
 * refused by the same rule (they put the disk's 0 under the container's
 * root).  The mount's user namespace is made for it (a child in a new user
 * namespace, its maps written by host root, its ns file kept). */
#ifndef MXC_OCI_MOUNTMAP_H
#define MXC_OCI_MOUNTMAP_H

#include <sys/types.h>

#include "config.h"
#include "error.h"

/* With the container's maps known (c->uidmap, c->gidmap): every idmapped
 * mount's mappings checked; -1 with *e set naming the first refused. */
int oci_mountmap_check(const oci_config *c, mxc_error *e);

/* Mount idx's detached tree from its source src (O_PATH): cloned (rbind:
 * recursive), its flags set, then idmapped (ridmap on an rbind: every
 * submount too).  The tree's fd, or -1 with *e set. */
int oci_mountmap_tree(int src, const oci_config *c, size_t idx, mxc_error *e);

/* Writes a user namespace's map file ("uid_map" or "gid_map") of pid:
 * "cid hid n" lines, in one write(2) as the kernel wants.  0 or -errno. */
int oci_write_idmap(pid_t pid, const char *file, const oci_idmap *m, size_t n);

#endif
