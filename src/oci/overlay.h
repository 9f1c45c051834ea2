/* overlay.h — an overlay rootfs, re-made for the container.
 * Owns: recognising that root.path is an overlay mount (by descriptor:
 * fstatfs, its mount id, that mount's options), and making the
 * container's own overlay from the same layers, each layer an idmapped
 * clone onto the container's user namespace (an overlay mount cannot
 * itself be idmapped; its layers can), the layers handed to the kernel by
 * descriptor (fsconfig FSCONFIG_SET_FD of O_PATH descriptors of detached
 * mounts: Linux 6.15+).  The mounter has
 * host root's capabilities, as for runc (copy-up and whiteouts use the
 * trusted.overlay xattrs the image's storage already has) with the fs ids
 * of the container's root (the only ones the layers' idmap maps onto the
 * disk's 0); what the container writes lands in the upper layer as the
 * image's own ids (the idmap's inverse).
 * What cannot be re-made exactly is refused naming why. */
#ifndef MXC_OCI_OVERLAY_H
#define MXC_OCI_OVERLAY_H

#include "error.h"

/* rootfs: O_PATH of root.path; userns: the container's user namespace,
 * uid/gid: the host ids of its root (the overlay's own credentials), id
 * the container's (its work directory, "mxc-oci-ID" in the engine's).
 * 0 with *tree -1: not an overlay (the caller idmaps it as any rootfs);
 * 0 with *tree a detached overlay mount (nodev) of idmapped layers;
 * -1 with *e set: an overlay that cannot be re-made (refused). */
int oci_overlay_rootfs(int rootfs, const char *root_path, const char *id, int userns, unsigned uid, unsigned gid,
                       int *tree, mxc_error *e);

#endif
