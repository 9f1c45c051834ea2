/* src/oci/devices.h — linux.devices beyond the six defaults (issue 29).
 *
 * Owns: the allowlist of character devices a container may be given (the
 * ones that hand it nothing of the host's: fuse, net/tun, kvm, GPU render
 * nodes, and the mem-class defaults), the check of a linux.devices entry
 * against it, the check of linux.resources.devices rules against the
 * granted devices, and the host node's tree: opened without following a
 * link, checked by fstat on that very descriptor (type, major, minor,
 * owner, mode — never by its path's string), bind-mounted (a user
 * namespace cannot mknod).  A host node is never chowned or chmodded.
 */
#ifndef MXC_OCI_DEVICES_H
#define MXC_OCI_DEVICES_H

#include <jansson.h>

#include "config.h"
#include "error.h"

/* A linux.devices entry (field names it in errors): 0 a default node
 * (always given), 1 an allowlisted device recorded in c->xdev, -1 refused. */
int oci_device_parse(json_t *d, const char *field, oci_config *c, mxc_error *e);

/* linux.resources.devices (may be NULL) against c->xdev: a granted device
 * that the rules deny read or write is refused (no devices cgroup is made:
 * the device would be usable).  0 or -1. */
int oci_device_rules(json_t *rules, const oci_config *c, mxc_error *e);

/* The host node of c->xdev[i] as a detached bind tree (nosuid, noexec),
 * checked on the descriptor itself; -1 with e set. */
int oci_device_tree(const oci_config *c, size_t i, mxc_error *e);

/* Rootless (rootless.h): no tree can be made in the host's mount namespace; the host's node of
 * linux.devices[i] opened O_PATH (never through a link at its name) and checked as above, for the
 * init to find again in its own namespace by path and bind as the same inode.  The descriptor, or
 * -1 with *e set. */
int oci_device_src(const oci_config *c, size_t i, mxc_error *e);

#endif
