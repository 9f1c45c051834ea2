/* setupops.h — a filesystem view as a typed list of setup operations, and
 * the one executor that applies them; what every view of mxc shares, the
 * engine's sandbox view (fsview.c) and mxc-oci's container root (the
 * bundle's config lowered to this list: src/oci/rootops.c).
 * Owns: the /proc rules (the kernel-wide knobs made read-only, the kernel
 * memory, key, timer and allocator listings masked: one list, applied by
 * both), the default device nodes and /dev's links (likewise), entering a
 * view's root (pivot_root), the operation kinds (a detached tree attached at a target, a fresh
 * filesystem with its options and attributes, a mask, a read-only copy of a
 * tree, a mount made read-only, a device node on its own name, a symlink, a
 * sysctl written through the view's /proc), their executor, and the lookups
 * by descriptor inside a root (openat2 RESOLVE_IN_ROOT, missing components
 * made by mkdirat on their parent's descriptor).  A view gives the executor
 * its own target resolution and mask source where they differ (the engine
 * walks RESOLVE_BENEATH|NO_SYMLINKS in a tmpfs of its own and masks with
 * mode-000 clones); by default a target is resolved inside the root and a
 * mask is the root's own /dev/null (checked to be the null device) or an
 * empty read-only tmpfs.  Base layer: no engine header. */
#ifndef MXC_SETUPOPS_H
#define MXC_SETUPOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"

#define MXC_PROC_NREADONLY 5
#define MXC_PROC_NMASKED 12
/* Absolute paths; one absent on this kernel is skipped by every user. */
extern const char *const mxc_proc_readonly[MXC_PROC_NREADONLY];
extern const char *const mxc_proc_masked[MXC_PROC_NMASKED];

/* The host's device nodes every view gives (names in /dev): harmless ones, each a tree of the
 * host's node bound on a node of its own name (a user namespace cannot mknod). */
#define MXC_DEV_NNODES 6
extern const char *const mxc_dev_nodes[MXC_DEV_NNODES];
#define MXC_DEV_NLINKS 5

/* The host's node of each mxc_dev_nodes[i] into trees[i] (MXC_DEV_NNODES): a detached clone, attrs
 * (MOUNT_ATTR_*) set on it and propagation (MS_*; 0: as cloned).  0, or -errno with none open and
 * *failed the node's index. */
int mxc_dev_node_trees(int *trees, uint64_t attrs, uint64_t propagation, size_t *failed);

/* move_mount of the detached tree onto target (both descriptors, neither
 * closed).  0 or -errno. */
int mxc_view_attach(int tree, int target);

/* The mount tree at target, cloned (recursively), made read-only with
 * attrs besides (MOUNT_ATTR_*; recursively), and attached over target: the
 * object stays readable at its path and every mount below it stays put.
 * 0 or -errno. */
int mxc_view_readonly_at(int target, unsigned long long attrs);

/* A fresh filesystem of type, detached: opts key, value pairs (a NULL value: a flag; NULL-terminated;
 * NULL: none), then attrs (MOUNT_ATTR_*) at fsmount.  A mount descriptor, or -errno. */
int mxc_fresh_fs(const char *type, const char *const *opts, unsigned attrs);

/* Into the root at root (a directory descriptor, the root of a mount):
 * pivot_root, the old root detached from under it, the cwd "/".  0 or
 * -errno. */
int mxc_view_enter(int root);

/* ---- lookups inside a root, by descriptor ---- */

/* openat2 of path below dirfd with flags | O_CLOEXEC and resolve (RESOLVE_*), asked again on EAGAIN.
 * A descriptor, or -errno. */
int mxc_openat2(int dirfd, const char *path, int flags, unsigned long long resolve);
/* The same inside the root at root_fd (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS). */
int mxc_open_in_root(int root_fd, const char *path, int flags);
/* path inside the root at root_fd: resolved with RESOLVE_IN_ROOT (a
 * symlink, absolute or not, never leaves the root), missing components made
 * by mkdirat on their parent's descriptor when create (the last one a file
 * when !dir).  An O_PATH descriptor, or -errno. */
int mxc_resolve_in_root(int root_fd, const char *path, bool create, bool dir);
/* The same, what it makes owned by uid:gid ((uid_t)-1: left as made; else only what it made, by
 * descriptor, while still root's and empty): a caller making the targets another user namespace
 * will mount on, in a root whose owner that namespace does not map. */
int mxc_make_in_root_as(int root_fd, const char *path, bool create, bool dir, uid_t uid, gid_t gid);

/* ---- the operations ---- */

typedef enum {
    MXC_OP_ATTACH,   /* src (a detached tree, consumed) attached at target, made as a directory or a file
                      * after src */
    MXC_OP_FRESHFS,  /* a fresh filesystem (fstype, source, fsopt) with attrs, attached at target (a
                      * directory); fill, if any, runs on it before it is made read-only */
    MXC_OP_MASK,     /* the object at target masked (the view's mask source) */
    MXC_OP_READONLY, /* a read-only copy (attrs besides) of the tree at target over it */
    MXC_OP_RDONLY,   /* the mount at target (a directory) made read-only */
    MXC_OP_DEVICE,   /* src (a device node's tree, consumed) on the node's own name at target, never
                      * through a symlink there (CVE-2025-31133: an image's /dev/null linked into /proc) */
    MXC_OP_SYMLINK,  /* a symlink at target, its text; one already there stays */
    MXC_OP_SYSCTL,   /* text written to /proc/sys/<target, dots as slashes> through the view's /proc */
    MXC_OP_CUSTOM,   /* run(op, root): a kind one view alone has (its header says which and why) */
} mxc_setup_kind;

enum {
    MXC_OPF_OPTIONAL = 1, /* target absent (MASK, READONLY; SYMLINK: its directory): nothing to do */
    MXC_OPF_NOLINK = 2,   /* ATTACH, FRESHFS: refused when the target is or goes through a symlink (its
                           * masks and read-only paths are applied by path: CVE-2019-19921) */
    MXC_OPF_NOPROC = 4,   /* SYSCTL: the view mounts no proc at /proc: refused */
    MXC_OPF_LINK = 8,     /* MASK: a final symlink is itself the target (a view that resolves without
                           * following links masks the link) */
    MXC_OPF_HOLDS = 16,   /* MASK: targets of the view's lie below this one (its mask source keeps them
                           * reachable) */
};

typedef struct mxc_setup_op mxc_setup_op;
struct mxc_setup_op {
    mxc_setup_kind kind;
    unsigned flags;          /* MXC_OPF_* */
    char label[48];          /* who asked, in messages: "mounts[3]", "maskedPaths", "linux.devices" */
    const char *target;      /* an absolute path in the view (SYSCTL: the key) */
    int src;                 /* ATTACH, DEVICE: a detached tree, consumed; else -1 */
    const char *fstype;      /* FRESHFS */
    const char *source;      /* FRESHFS: the name /proc/mounts shows; NULL or "": none */
    const char *const *fsopt; /* FRESHFS: "key=value" or "flag", nfsopt of them */
    size_t nfsopt;
    uint64_t attrs;          /* FRESHFS: MOUNT_ATTR_*; READONLY: besides MOUNT_ATTR_RDONLY */
    const char *text;        /* SYMLINK: its text; SYSCTL: the value */
    /* FRESHFS: the new filesystem filled (tree) from what the view has at target, before its
     * MOUNT_ATTR_RDONLY; CUSTOM: the operation.  0, or -1 with e. */
    int (*fill)(const mxc_setup_op *op, int target, int tree, mxc_error *e);
    int (*run)(const mxc_setup_op *op, int root_fd, mxc_error *e);
    const void *ctx;         /* fill's or run's */
};

typedef struct {
    int root;  /* the view's root directory */
    /* A target of op's in the view: an O_PATH descriptor, or -errno.  NULL: mxc_resolve_in_root. */
    int (*resolve)(void *ctx, const mxc_setup_op *op, const char *path, bool create, bool dir);
    /* A detached tree to mask op's target, the object st describes, with.  NULL: the root's own
     * /dev/null (checked to be the null device) over a non-directory, an empty read-only tmpfs over a
     * directory.  -errno. */
    int (*mask_tree)(void *ctx, const mxc_setup_op *op, const struct stat *st);
    void *ctx;
} mxc_setup_env;

/* An operation of kind at target, the rest empty (src -1). */
mxc_setup_op mxc_setup_op_at(mxc_setup_kind kind, const char *target, unsigned flags);

/* The /proc rules as operations, into out (MXC_PROC_NRULES of them): each masked path masked, then
 * each read-only path a read-only (nosuid, nodev, noexec) copy of itself; one absent is skipped.
 * mask_label and ro_label name them in messages.  The count written. */
#define MXC_PROC_NRULES (MXC_PROC_NMASKED + MXC_PROC_NREADONLY)
size_t mxc_setup_proc_rules(mxc_setup_op *out, const char *mask_label, const char *ro_label);
/* The device nodes as DEVICE operations at /dev/<name>, trees[i] mxc_dev_nodes[i]'s (MXC_DEV_NNODES). */
size_t mxc_setup_dev_nodes(mxc_setup_op *out, const int *trees);
/* /dev's links (fd, stdin, stdout, stderr into /proc/self/fd; ptmx to pts/ptmx) as SYMLINK operations
 * (MXC_DEV_NLINKS; none without a /dev). */
size_t mxc_setup_dev_links(mxc_setup_op *out);

/* The one executor: ops[0..n) in order.  0, or -1 with e saying which operation (its label and
 * target) and why, e->native the errno where there is one.  Every src is consumed, run or not. */
int mxc_setup_run(const mxc_setup_env *env, const mxc_setup_op *ops, size_t n, mxc_error *e);

#endif
