/* rootops.h — the container's root lowered to the engine's setup operations.
 * Owns: lowering a checked config into one ordered list of setupops.h's
 * operations (its mounts, the default devices and linux.devices, /dev's
 * links, sysctls, the engine's /proc rules, maskedPaths and readonlyPaths,
 * a read-only tmpfs turned read-only last), each labelled as the config
 * names it, for the engine's executor to apply in the init's mount
 * namespace before pivot_root, every target resolved inside the rootfs by
 * descriptor.  OCI-only, and why: a cgroup mount (MXC_OP_CUSTOM: the
 * container's own cgroup view, cgroup.h; the engine's view has none) and
 * tmpcopyup (a FRESHFS fill: the image's files at the destination copied
 * into the tmpfs, tmpcopy.h; the engine's view is built from the host's
 * trees, never from an image's).  docs/oci.md says the rest. */
#ifndef MXC_OCI_ROOTOPS_H
#define MXC_OCI_ROOTOPS_H

#include <stddef.h>

#include "config.h"
#include "error.h"
#include "setupops.h"

/* The init's failures are backend errors (the parent reports them as such), with the errno when
 * there is one (its text appended to the message, as mxc_err_os does). */
#define oci_init_err(e, ...) mxc_err((e), MXC_E_BACKEND_ERROR, __VA_ARGS__)
#define oci_init_err_os(e, err, ...) mxc_err_os((e), MXC_E_BACKEND_ERROR, "oci.init", (err), NULL, __VA_ARGS__)

typedef struct {
    mxc_setup_op *op;
    size_t n;
    bool have_proc; /* the config mounts proc at /proc: the engine's /proc rules apply */
} oci_setup_ops;

/* The config lowered: binds[i] the tree the parent made for mounts[i] (bind or by_parent; else -1),
 * devs the default devices' trees (mxc_dev_nodes order, setupops.h), xdevs linux.devices' (config order).
 * The descriptors are the list's from here (each consumed when its operation runs).  0, or -1 with
 * e (out of memory). */
int oci_setup_lower(const oci_config *c, const int *binds, const int *devs, const int *xdevs, oci_setup_ops *out,
                    mxc_error *e);
void oci_setup_free(oci_setup_ops *ops);

#endif
