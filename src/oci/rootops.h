/* rootops.h — the container's root as a typed list of setup operations.
 * Owns: lowering a checked config into one ordered list of operations (its
 * mounts, the default devices and linux.devices, /dev's links, sysctls, the
 * engine's /proc rules, maskedPaths and readonlyPaths, a read-only tmpfs
 * turned read-only last), each a kind, a source (a detached tree the parent
 * made, or a fresh filesystem of the config's), a target inside the rootfs
 * and its flags; and the one executor that applies them in the init's mount
 * namespace, before pivot_root, every target resolved inside the rootfs by
 * descriptor (RESOLVE_IN_ROOT; missing components made by mkdirat on their
 * parent's descriptor).  The /proc rules and the read-only copy of a tree
 * are the engine's (viewops.h); what stays OCI-only and why: docs/oci.md. */
#ifndef MXC_OCI_ROOTOPS_H
#define MXC_OCI_ROOTOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

/* The init's failures are backend errors (the parent reports them as such), with the errno when
 * there is one (its text appended to the message, as mxc_err_os does). */
#define oci_init_err(e, ...) mxc_err((e), MXC_E_BACKEND_ERROR, __VA_ARGS__)
#define oci_init_err_os(e, err, ...) mxc_err_os((e), MXC_E_BACKEND_ERROR, "oci.init", (err), NULL, __VA_ARGS__)

#define OCI_NDEVICES 6
extern const char *const oci_default_devices[OCI_NDEVICES];

typedef enum {
    OCI_OP_MOUNT,    /* mounts[idx]: src (a tree of the parent's: bind, idmapped, by_parent) or, src -1, a
                      * fresh filesystem (fsopen) with attr_set; tmpcopyup fills it first */
    OCI_OP_CGROUP,   /* mounts[idx] of type cgroup/cgroup2: the container's own view, read-only (cgroup.h) */
    OCI_OP_DEVICE,   /* src, a host's node, on the node's own name at target (never followed) */
    OCI_OP_LINK,     /* a symlink named target in /dev, its text arg (one already there stays) */
    OCI_OP_SYSCTL,   /* linux.sysctl[idx]: arg written to /proc/sys/<target>, through the container's /proc */
    OCI_OP_MASK,     /* an empty read-only tmpfs over a directory, the container's /dev/null over anything else */
    OCI_OP_READONLY, /* a read-only (nosuid, nodev, noexec) copy of the tree at target over it (viewops.h) */
    OCI_OP_RDONLY,   /* the mount at target (mounts[idx], a tmpfs filled read-write) made read-only */
} oci_op_kind;

enum {
    OCI_OPF_XDEV = 1,    /* OCI_OP_DEVICE: of linux.devices (its wording), not a default device */
    OCI_OPF_NOPROC = 2,  /* OCI_OP_SYSCTL: the config mounts no proc at /proc */
    OCI_OPF_OPTIONAL = 4 /* MASK/READONLY: absent is nothing to do (every one today) */
};

typedef struct {
    oci_op_kind kind;
    unsigned flags;        /* OCI_OPF_* */
    const char *target;    /* inside the rootfs (LINK: a name in /dev; SYSCTL: the key) */
    int src;               /* MOUNT/DEVICE: a detached tree, consumed; else -1 */
    const oci_mount *m;    /* MOUNT/CGROUP/RDONLY: the config's mount */
    uint64_t attr_set;     /* MOUNT: the attributes a fresh filesystem gets (MOUNT_ATTR_*) */
    size_t idx;            /* mounts[idx], linux.sysctl[idx]: for the messages */
    const char *arg;       /* LINK: its text; SYSCTL: the value */
} oci_setup_op;

typedef struct {
    oci_setup_op *op;
    size_t n;
    bool have_proc; /* the config mounts proc at /proc: the engine's /proc rules apply */
} oci_setup_ops;

/* The config lowered: binds[i] the tree the parent made for mounts[i] (bind or by_parent; else -1),
 * devs the default devices' trees (oci_default_devices order), xdevs linux.devices' (config order).
 * The descriptors are the list's from here.  0, or -1 with e (out of memory). */
int oci_setup_lower(const oci_config *c, const int *binds, const int *devs, const int *xdevs, oci_setup_ops *out,
                    mxc_error *e);
/* The one executor: every operation in order on the rootfs at root_fd.  0, or -1 with e saying which
 * operation and why. */
int oci_setup_run(const oci_config *c, const oci_setup_ops *ops, int root_fd, mxc_error *e);
void oci_setup_free(oci_setup_ops *ops);

/* The target of a mount inside the rootfs at root_fd: resolved with
 * RESOLVE_IN_ROOT (a symlink, absolute or not, never leaves the rootfs),
 * missing components made by mkdirat on their parent's descriptor (the
 * last one a file when !dir).  An O_PATH descriptor, or -errno. */
int oci_resolve_target(int root_fd, const char *path, bool create, bool dir);
/* The same, what it makes owned by uid:gid ((uid_t)-1: left as made): host root making, before the
 * clone, the targets a config's own user namespace cannot make in a rootfs whose owner it does not
 * map (lifecycle.c). */
int oci_make_target_as(int root_fd, const char *path, bool create, bool dir, uid_t uid, gid_t gid);
/* openat2 of path below dirfd with flags | O_CLOEXEC and resolve (RESOLVE_*), asked again on EAGAIN.
 * A descriptor, or -errno. */
int oci_openat2(int dirfd, const char *path, int flags, unsigned long long resolve);
/* The same inside the rootfs at root_fd (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS). */
int oci_open_in_root(int root_fd, const char *path, int flags);

#endif
