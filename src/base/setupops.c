/* setupops.c — see setupops.h. */
#include "setupops.h"
#include "mounttree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char *const mxc_proc_readonly[MXC_PROC_NREADONLY] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
                                                           "/proc/bus", "/proc/fs"};

/* World-readable leaks of kernel addresses, timers and keys, and the root-only memory listings
 * (which permissions already refuse to a sandbox's uid: masked all the same, in case a host
 * loosens them). */
const char *const mxc_proc_masked[MXC_PROC_NMASKED] = {
    "/proc/kcore",     "/proc/keys",    "/proc/key-users", "/proc/timer_list",  "/proc/sched_debug",
    "/proc/kallsyms",  "/proc/kmsg",    "/proc/acpi",      "/proc/scsi",        "/proc/slabinfo",
    "/proc/vmallocinfo", "/proc/pagetypeinfo"};

const char *const mxc_dev_nodes[MXC_DEV_NNODES] = {"null", "zero", "full", "random", "urandom", "tty"};

int mxc_view_attach(int tree, int target)
{
    return move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ? -errno : 0;
}

int mxc_view_readonly_at(int target, unsigned long long attrs)
{
    int tree = mxc_tree_clone(target, "", &(mxc_tree_attr){.set = MOUNT_ATTR_RDONLY | attrs, .recursive = true});
    if (tree < 0)
        return tree;
    int rc = mxc_view_attach(tree, target);
    close(tree);
    return rc;
}

int mxc_view_enter(int root)
{
    if (fchdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
        return -errno;
    if (umount2(".", MNT_DETACH) < 0) /* the old root, stacked under the new one */
        return -errno;
    return chdir("/") < 0 ? -errno : 0;
}

/* ---- lookups inside a root ---- */

int mxc_openat2(int dirfd, const char *path, int flags, unsigned long long resolve)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = resolve};
    int fd;
    /* EAGAIN: a rename or mount anywhere on the host raced a ".." walk and the kernel could not
     * prove it stayed inside; it is safe to ask again */
    for (int tries = 0; (fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how)) < 0 && errno == EAGAIN &&
                        tries < 10000;
         tries++)
        ;
    return fd < 0 ? -errno : fd;
}

int mxc_open_in_root(int root_fd, const char *path, int flags)
{
    return mxc_openat2(root_fd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

int mxc_resolve_in_root(int root_fd, const char *path, bool create, bool dir)
{
    return mxc_make_in_root_as(root_fd, path, create, dir, (uid_t)-1, (gid_t)-1);
}

/* One missing component, comp, below cur (a descriptor already inside the root: it cannot leave
 * it; a dangling symlink there makes this fail, EEXIST); made for another user namespace's root
 * (uid != -1): chown'd by descriptor (the file just made; the directory only while it is an empty
 * one of root's).  0 or -errno. */
static int make_component(int cur, const char *comp, bool as_dir, uid_t uid, gid_t gid)
{
    int rc, f = -1;
    if (as_dir) {
        rc = mkdirat(cur, comp, 0755) < 0 ? -errno : 0;
        if (rc == 0 && uid != (uid_t)-1 && (f = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
            rc = -errno;
    } else {
        f = openat(cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        rc = f < 0 ? -errno : 0;
    }
    struct stat fst;
    if (rc == 0 && uid != (uid_t)-1 &&
        (fstat(f, &fst) < 0 || fst.st_uid != 0 || (S_ISDIR(fst.st_mode) && fst.st_nlink != 2) ||
         fchown(f, uid, gid) < 0))
        rc = -EPERM;
    if (f >= 0)
        close(f);
    return rc;
}

int mxc_make_in_root_as(int root_fd, const char *path, bool create, bool dir, uid_t uid, gid_t gid)
{
    int fd = mxc_open_in_root(root_fd, path, O_PATH);
    if (fd >= 0 || fd != -ENOENT || !create)
        return fd;
    char prefix[PATH_MAX] = "", copy[PATH_MAX];
    if (snprintf(copy, sizeof copy, "%s", path) >= (int)sizeof copy)
        return -ENAMETOOLONG;
    int cur = mxc_open_in_root(root_fd, "/", O_PATH | O_DIRECTORY);
    char *save, *comp = strtok_r(copy, "/", &save);
    while (cur >= 0 && comp) {
        char *next = strtok_r(NULL, "/", &save);
        size_t len = strlen(prefix);
        snprintf(prefix + len, sizeof prefix - len, "/%s", comp);
        int nfd = mxc_open_in_root(root_fd, prefix, O_PATH);
        if (nfd == -ENOENT) {
            int rc = make_component(cur, comp, next || dir, uid, gid);
            nfd = rc < 0 && rc != -EEXIST ? rc : mxc_open_in_root(root_fd, prefix, O_PATH);
        }
        close(cur);
        cur = nfd;
        comp = next;
    }
    return cur;
}

/* ---- the executor ---- */

mxc_setup_op mxc_setup_op_at(mxc_setup_kind kind, const char *target, unsigned flags)
{
    return (mxc_setup_op){.kind = kind, .target = target, .flags = flags, .src = -1};
}

size_t mxc_setup_proc_rules(mxc_setup_op *out, const char *mask_label, const char *ro_label)
{
    size_t n = 0;
    for (size_t i = 0; i < MXC_PROC_NMASKED; i++, n++) {
        out[n] = mxc_setup_op_at(MXC_OP_MASK, mxc_proc_masked[i], MXC_OPF_OPTIONAL);
        snprintf(out[n].label, sizeof out[n].label, "%s", mask_label);
    }
    for (size_t i = 0; i < MXC_PROC_NREADONLY; i++, n++) {
        out[n] = mxc_setup_op_at(MXC_OP_READONLY, mxc_proc_readonly[i], MXC_OPF_OPTIONAL);
        out[n].attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        snprintf(out[n].label, sizeof out[n].label, "%s", ro_label);
    }
    return n;
}

int mxc_dev_node_trees(int *trees, uint64_t attrs, uint64_t propagation, size_t *failed)
{
    struct mount_attr attr = {.attr_set = attrs, .propagation = propagation};
    for (size_t n = 0; n < MXC_DEV_NNODES; n++) {
        char host[32];
        snprintf(host, sizeof host, "/dev/%s", mxc_dev_nodes[n]);
        trees[n] = open_tree(AT_FDCWD, host, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (trees[n] < 0 || mount_setattr(trees[n], "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
            int err = errno;
            for (size_t k = 0; k <= n; k++)
                if (trees[k] >= 0)
                    close(trees[k]);
            *failed = n;
            return -err;
        }
    }
    return 0;
}

size_t mxc_setup_dev_nodes(mxc_setup_op *out, const int *trees)
{
    static const char *const paths[MXC_DEV_NNODES] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                                      "/dev/urandom", "/dev/tty"};
    for (size_t i = 0; i < MXC_DEV_NNODES; i++) {
        out[i] = mxc_setup_op_at(MXC_OP_DEVICE, paths[i], 0);
        out[i].src = trees[i];
    }
    return MXC_DEV_NNODES;
}

size_t mxc_setup_dev_links(mxc_setup_op *out)
{
    static const char *const links[MXC_DEV_NLINKS][2] = {{"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
                                                         {"/proc/self/fd/1", "/dev/stdout"},
                                                         {"/proc/self/fd/2", "/dev/stderr"}, {"pts/ptmx", "/dev/ptmx"}};
    for (size_t i = 0; i < MXC_DEV_NLINKS; i++) {
        out[i] = mxc_setup_op_at(MXC_OP_SYMLINK, links[i][1], MXC_OPF_OPTIONAL);
        out[i].text = links[i][0];
    }
    return MXC_DEV_NLINKS;
}

#define op_err(e, ...) mxc_err((e), MXC_E_BACKEND_ERROR, __VA_ARGS__)
#define op_err_os(e, err, ...) mxc_err_os((e), MXC_E_BACKEND_ERROR, "setup", (err), NULL, __VA_ARGS__)

static int resolve(const mxc_setup_env *env, const mxc_setup_op *op, const char *path, bool create, bool dir)
{
    return env->resolve ? env->resolve(env->ctx, op, path, create, dir)
                        : mxc_resolve_in_root(env->root, path, create, dir);
}

/* What a run of operations shares (mxc_setup_run): the directory a run of DEVICE and SYMLINK
 * operations are made in, resolved once for all of them (/dev's six nodes and five links: one
 * lookup, not eleven), and the default mask's checked /dev/null, once for a run of MASKs.  Each
 * is resolved exactly as the first operation would have (env's resolution), and dropped at the
 * first operation of another kind: a mount anywhere could cover what it holds. */
typedef struct {
    char parent[PATH_MAX]; /* the directory's path in the view; "" none */
    int parent_fd;
    int null_fd;           /* the root's /dev/null, checked to be the null device; -1 none */
} run_cache;

static void cache_drop(run_cache *c, bool parent, bool null)
{
    if (parent && c->parent_fd >= 0)
        close(c->parent_fd);
    if (parent) {
        c->parent_fd = -1;
        c->parent[0] = '\0';
    }
    if (null && c->null_fd >= 0)
        close(c->null_fd);
    if (null)
        c->null_fd = -1;
}

/* The directory target is in (its path up to the last slash; "/" for a name in the root), from
 * the cache when the run's last DEVICE or SYMLINK was made there; the cache's (not the caller's to
 * close), or -errno. */
static int parent_of(const mxc_setup_env *env, const mxc_setup_op *op, run_cache *c, bool create)
{
    const char *slash = strrchr(op->target, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash && slash > op->target ? (int)(slash - op->target) : 0, op->target);
    if (!dir[0])
        snprintf(dir, sizeof dir, "/");
    if (c->parent_fd >= 0 && !strcmp(c->parent, dir))
        return c->parent_fd;
    cache_drop(c, true, false);
    int d = resolve(env, op, dir, create, true);
    if (d >= 0) {
        c->parent_fd = d;
        snprintf(c->parent, sizeof c->parent, "%s", dir);
    }
    return d;
}

/* The label and a space, or nothing ("linux.devices /dev/fuse", "/dev/null"). */
#define LABEL_SP(op) (op)->label, (op)->label[0] ? " " : ""

static int attach(int tree, int target, const mxc_setup_op *op, mxc_error *e)
{
    int rc = mxc_view_attach(tree, target);
    close(tree);
    if (rc < 0 && op->label[0])
        return op_err_os(e, -rc, "%s (%s): move_mount", op->label, op->target);
    return rc < 0 ? op_err_os(e, -rc, "%s: move_mount", op->target) : 0;
}

int mxc_fresh_fs(const char *type, const char *const *opts, unsigned attrs)
{
    int fs = fsopen(type, FSOPEN_CLOEXEC);
    if (fs < 0)
        return -errno;
    int rc = 0;
    for (size_t i = 0; opts && opts[i] && rc == 0; i += 2)
        if (fsconfig(fs, opts[i + 1] ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, opts[i], opts[i + 1], 0) < 0)
            rc = -errno;
    if (rc == 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        rc = -errno;
    int m = rc == 0 ? fsmount(fs, FSMOUNT_CLOEXEC, attrs) : -1;
    if (rc == 0 && m < 0)
        rc = -errno;
    close(fs);
    return rc < 0 ? rc : m;
}

/* A fresh filesystem (fsopen/fsconfig/fsmount) with its attributes (fill: without read-only). */
static int make_fs(const mxc_setup_op *op, mxc_error *e)
{
    int fs = fsopen(op->fstype, FSOPEN_CLOEXEC);
    if (fs < 0)
        return op_err_os(e, errno, "%s (%s at %s): fsopen", op->label, op->fstype, op->target);
    int rc = 0;
    /* the source names the mount in /proc/mounts, as mount(2)'s would (tools match "tmpfs /mnt") */
    if (op->source && op->source[0] && fsconfig(fs, FSCONFIG_SET_STRING, "source", op->source, 0) < 0)
        rc = op_err_os(e, errno, "%s (%s at %s): source", op->label, op->fstype, op->target);
    for (size_t i = 0; rc == 0 && i < op->nfsopt; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s", op->fsopt[i]);
        char *eq = strchr(key, '=');
        if (eq)
            *eq = '\0';
        if ((eq ? fsconfig(fs, FSCONFIG_SET_STRING, key, eq + 1, 0) : fsconfig(fs, FSCONFIG_SET_FLAG, key, NULL, 0)) < 0)
            rc = op_err_os(e, errno, "%s (%s at %s): option '%s'", op->label, op->fstype, op->target, op->fsopt[i]);
    }
    if (rc == 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        rc = op_err_os(e, errno, "%s (%s at %s): cannot create it", op->label, op->fstype, op->target);
    int mnt = rc < 0 ? -1 : fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)(op->fill ? op->attrs & ~(uint64_t)MOUNT_ATTR_RDONLY
                                                                              : op->attrs));
    if (rc == 0 && mnt < 0)
        rc = op_err_os(e, errno, "%s (%s at %s): fsmount", op->label, op->fstype, op->target);
    close(fs);
    return rc < 0 ? -1 : mnt;
}

/* fill, then the read-only the filesystem was made without. */
static int fill_fs(const mxc_setup_op *op, int target, int tree, mxc_error *e)
{
    if (op->fill(op, target, tree, e) < 0)
        return -1;
    int rc = op->attrs & MOUNT_ATTR_RDONLY ? mxc_tree_setattr(tree, &(mxc_tree_attr){.set = MOUNT_ATTR_RDONLY}) : 0;
    return rc < 0 ? op_err_os(e, -rc, "%s (%s at %s): read-only", op->label, op->fstype, op->target) : 0;
}

/* ATTACH and FRESHFS: the target made, the tree (src, or a fresh filesystem) attached on it. */
static int run_mount(const mxc_setup_env *env, const mxc_setup_op *op, mxc_error *e)
{
    struct stat st;
    bool dir = op->kind == MXC_OP_FRESHFS || (fstat(op->src, &st) == 0 && S_ISDIR(st.st_mode));
    if (op->flags & MXC_OPF_NOLINK) {
        int fd = mxc_openat2(env->root, op->target, O_PATH, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
        if (fd >= 0)
            close(fd);
        if (fd == -ELOOP && op->src >= 0)
            close(op->src);
        if (fd == -ELOOP)
            return op_err(e,
                          "%s: %s must be mounted on ordinary directory (runc's wording): it is a symbolic link in "
                          "the rootfs, or goes through one, refused for %s (its masks and read-only paths are "
                          "applied by path: CVE-2019-19921)", op->label, op->target, op->fstype ? op->fstype : "it");
    }
    int t = resolve(env, op, op->target, true, dir);
    if (t < 0 && op->src >= 0)
        close(op->src);
    if (t < 0)
        return op_err_os(e, -t, "%s: destination %s", op->label, op->target);
    int tree = op->kind == MXC_OP_ATTACH ? op->src : make_fs(op, e);
    int rc = tree < 0 ? -1 : op->fill ? fill_fs(op, t, tree, e) : 0;
    if (tree >= 0)
        rc = rc == 0 ? attach(tree, t, op, e) : (close(tree), -1);
    close(t);
    return rc;
}

/* A device's node, name below its directory d: made (an empty file, exclusively, never through a
 * symlink) and that file's descriptor, or the one there, never through a symlink (-ELOOP).  A
 * descriptor to mount on, or -errno. */
static int device_node(int d, const char *name)
{
    int t = openat(d, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (t >= 0 || errno != EEXIST)
        return t >= 0 ? t : -errno;
    return mxc_openat2(d, name, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static int run_device(const mxc_setup_env *env, const mxc_setup_op *op, run_cache *c, mxc_error *e)
{
    const char *p = op->target, *slash = strrchr(p, '/');
    int d = parent_of(env, op, c, true);
    int t = d < 0 ? d : device_node(d, slash ? slash + 1 : p);
    if (t < 0)
        close(op->src);
    if (t == -ELOOP && d >= 0)
        return op_err(e, "%s%s%s in the rootfs is a symbolic link: refused (a device is mounted on the node itself)",
                      LABEL_SP(op), p);
    if (t < 0)
        return op_err_os(e, -t, "%s%s%s", LABEL_SP(op), p);
    int rc = attach(op->src, t, op, e);
    close(t);
    return rc;
}

static int run_symlink(const mxc_setup_env *env, const mxc_setup_op *op, run_cache *c, mxc_error *e)
{
    const char *slash = strrchr(op->target, '/');
    int d = parent_of(env, op, c, false);
    if (d < 0)
        return (op->flags & MXC_OPF_OPTIONAL) ? 0 : op_err_os(e, -d, "%s", op->target);
    return symlinkat(op->text, d, slash ? slash + 1 : op->target) < 0 && errno != EEXIST
               ? op_err_os(e, errno, "%s", op->target) : 0;
}

static int run_sysctl(const mxc_setup_env *env, const mxc_setup_op *op, mxc_error *e)
{
    char path[256];
    snprintf(path, sizeof path, "/proc/sys/%s", op->target);
    for (char *q = path + 10; *q; q++)
        if (*q == '.')
            *q = '/';
    bool noproc = op->flags & MXC_OPF_NOPROC;
    int f = noproc ? -ENOENT : mxc_open_in_root(env->root, path, O_WRONLY | O_TRUNC);
    if (f < 0)
        return noproc ? op_err(e, "%s %s: needs proc mounted at /proc", op->label, op->target)
                      : op_err_os(e, -f, "%s %s", op->label, op->target);
    size_t len = strlen(op->text);
    int rc = write(f, op->text, len) != (ssize_t)len ? op_err_os(e, errno, "%s %s = %s", op->label, op->target,
                                                                 op->text)
                                                     : 0;
    close(f);
    return rc;
}

/* The default mask: an empty read-only tmpfs for a directory, a clone of the root's /dev/null
 * (checked to be the null device; once for a run of masks) for anything else. */
static int default_mask(const mxc_setup_env *env, const mxc_setup_op *op, bool is_dir, run_cache *c, mxc_error *e)
{
    if (is_dir) {
        static const char *const empty[] = {"size", "0", NULL};
        int tree = mxc_fresh_fs("tmpfs", empty, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        return tree < 0 ? op_err_os(e, -tree, "%s %s: tmpfs", op->label, op->target) : tree;
    }
    if (c->null_fd < 0) {
        int null = resolve(env, op, "/dev/null", false, false);
        if (null < 0)
            return op_err_os(e, -null, "%s %s", op->label, op->target);
        struct stat nst;
        if (fstat(null, &nst) < 0 || !S_ISCHR(nst.st_mode) || nst.st_rdev != makedev(1, 3)) {
            close(null);
            return op_err(e, "%s %s: /dev/null is not the null device", op->label, op->target);
        }
        c->null_fd = null;
    }
    int tree = mxc_tree_open(c->null_fd, "", false, false);
    return tree < 0 ? op_err_os(e, -tree, "%s %s", op->label, op->target) : tree;
}

/* MASK and READONLY. */
static int run_path(const mxc_setup_env *env, const mxc_setup_op *op, run_cache *c, mxc_error *e)
{
    int t = resolve(env, op, op->target, false, false);
    if (t == -ENOENT && (op->flags & MXC_OPF_OPTIONAL))
        return 0;
    if (t < 0)
        return op_err_os(e, -t, "%s %s", op->label, op->target);
    int rc;
    if (op->kind == MXC_OP_MASK) {
        struct stat st;
        int tree = fstat(t, &st) < 0 ? -errno : env->mask_tree ? env->mask_tree(env->ctx, op, &st) : INT_MAX;
        if (tree == INT_MAX) /* -1 with e */
            tree = default_mask(env, op, S_ISDIR(st.st_mode), c, e);
        else if (tree < 0) /* -errno */
            tree = op_err_os(e, -tree, "%s %s", op->label, op->target);
        rc = tree < 0 ? -1 : attach(tree, t, op, e);
    } else {
        rc = mxc_view_readonly_at(t, op->attrs);
        if (rc < 0)
            op_err_os(e, -rc, "%s %s", op->label, op->target);
    }
    close(t);
    return rc < 0 ? -1 : 0;
}

static int run_rdonly(const mxc_setup_env *env, const mxc_setup_op *op, mxc_error *e)
{
    int t = resolve(env, op, op->target, false, true);
    if (t < 0)
        return op_err_os(e, -t, "%s (%s): read-only", op->label, op->target);
    int rc = mxc_tree_setattr(t, &(mxc_tree_attr){.set = MOUNT_ATTR_RDONLY});
    if (rc < 0)
        rc = op_err_os(e, -rc, "%s (%s): read-only", op->label, op->target);
    close(t);
    return rc;
}

int mxc_setup_run(const mxc_setup_env *env, const mxc_setup_op *ops, size_t n, mxc_error *e)
{
    int rc = 0;
    run_cache c = {.parent_fd = -1, .null_fd = -1};
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const mxc_setup_op *op = &ops[i];
        cache_drop(&c, op->kind != MXC_OP_DEVICE && op->kind != MXC_OP_SYMLINK, op->kind != MXC_OP_MASK);
        switch (op->kind) {
        case MXC_OP_ATTACH:
        case MXC_OP_FRESHFS: rc = run_mount(env, op, e); break;
        case MXC_OP_MASK:
        case MXC_OP_READONLY: rc = run_path(env, op, &c, e); break;
        case MXC_OP_RDONLY: rc = run_rdonly(env, op, e); break;
        case MXC_OP_DEVICE: rc = run_device(env, op, &c, e); break;
        case MXC_OP_SYMLINK: rc = run_symlink(env, op, &c, e); break;
        case MXC_OP_SYSCTL: rc = run_sysctl(env, op, e); break;
        case MXC_OP_CUSTOM: rc = op->run(op, env->root, e); break;
        }
        for (size_t j = i + 1; rc < 0 && j < n; j++)
            if ((ops[j].kind == MXC_OP_ATTACH || ops[j].kind == MXC_OP_DEVICE) && ops[j].src >= 0)
                close(ops[j].src); /* consumed: never run */
    }
    cache_drop(&c, true, true);
    return rc;
}
