/* rootops.c — see rootops.h. */
#include "rootops.h"
#include "cgroup.h"
#include "tmpcopy.h"
#include "viewops.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char *const oci_default_devices[OCI_NDEVICES] = {"null", "zero", "full", "random", "urandom", "tty"};

int oci_openat2(int dirfd, const char *path, int flags, unsigned long long resolve)
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

int oci_open_in_root(int root_fd, const char *path, int flags)
{
    return oci_openat2(root_fd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/* Whether path, inside the rootfs, is or goes through a symbolic link (RESOLVE_NO_SYMLINKS). */
static bool through_a_link(int root_fd, const char *path)
{
    int fd = oci_openat2(root_fd, path, O_PATH, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
    bool link = fd == -ELOOP;
    if (fd >= 0)
        close(fd);
    return link;
}

int oci_resolve_target(int root_fd, const char *path, bool create, bool dir)
{
    return oci_make_target_as(root_fd, path, create, dir, (uid_t)-1, (gid_t)-1);
}

/* One missing component, comp, below cur (a descriptor already inside the rootfs: it cannot leave
 * it; a dangling symlink there makes this fail, EEXIST); made by host root for the container
 * (uid != -1): its root's, as the init would have made it, chown'd by descriptor (the file just
 * made; the directory only while it is an empty one of root's).  0 or -errno. */
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

int oci_make_target_as(int root_fd, const char *path, bool create, bool dir, uid_t uid, gid_t gid)
{
    int fd = oci_open_in_root(root_fd, path, O_PATH);
    if (fd >= 0 || fd != -ENOENT || !create)
        return fd;
    char prefix[PATH_MAX] = "", copy[PATH_MAX];
    if (snprintf(copy, sizeof copy, "%s", path) >= (int)sizeof copy)
        return -ENAMETOOLONG;
    int cur = oci_open_in_root(root_fd, "/", O_PATH | O_DIRECTORY);
    char *save, *comp = strtok_r(copy, "/", &save);
    while (cur >= 0 && comp) {
        char *next = strtok_r(NULL, "/", &save);
        size_t len = strlen(prefix);
        snprintf(prefix + len, sizeof prefix - len, "/%s", comp);
        int nfd = oci_open_in_root(root_fd, prefix, O_PATH);
        if (nfd == -ENOENT) {
            int rc = make_component(cur, comp, next || dir, uid, gid);
            nfd = rc < 0 && rc != -EEXIST ? rc : oci_open_in_root(root_fd, prefix, O_PATH);
        }
        close(cur);
        cur = nfd;
        comp = next;
    }
    return cur;
}

/* ---- lowering ---- */

static oci_setup_op *add(oci_setup_ops *o, oci_op_kind kind, const char *target)
{
    oci_setup_op *op = &o->op[o->n++];
    *op = (oci_setup_op){.kind = kind, .target = target, .src = -1};
    return op;
}

static bool is_fs(const oci_mount *m, const char *type)
{
    return m->kind == OCI_MNT_FS && !strcmp(m->type, type);
}

/* The config's mounts in order; a read-only tmpfs (a "ro" /dev) is made read-write, and read-only
 * at the end: the mounts and devices beneath it need their targets made first (runc does the same). */
static void lower_mounts(const oci_config *c, const int *binds, oci_setup_ops *o, oci_setup_ops *later)
{
    for (size_t i = 0; i < c->nmounts; i++) {
        const oci_mount *m = &c->mounts[i];
        if (is_fs(m, "cgroup") || is_fs(m, "cgroup2")) {
            oci_setup_op *cg = add(o, OCI_OP_CGROUP, m->dest);
            cg->m = m, cg->idx = i;
            continue;
        }
        oci_setup_op *op = add(o, OCI_OP_MOUNT, m->dest);
        op->m = m, op->idx = i, op->attr_set = m->attr_set;
        op->src = m->kind == OCI_MNT_BIND || m->by_parent ? binds[i] : -1;
        if (is_fs(m, "tmpfs") && (m->attr_set & MOUNT_ATTR_RDONLY)) {
            op->attr_set &= ~(uint64_t)MOUNT_ATTR_RDONLY;
            oci_setup_op *ro = add(later, OCI_OP_RDONLY, m->dest);
            ro->m = m, ro->idx = i;
        }
        o->have_proc |= is_fs(m, "proc"); /* only at /proc (config.c) */
    }
}

/* The default devices (the host's nodes: a user namespace cannot mknod), linux.devices beyond them
 * (checked by the parent, devices.h), /dev's links. */
static void lower_devices(const oci_config *c, const int *devs, const int *xdevs, oci_setup_ops *o)
{
    static const char *const dev_paths[OCI_NDEVICES] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                                        "/dev/urandom", "/dev/tty"};
    for (size_t i = 0; i < OCI_NDEVICES; i++)
        add(o, OCI_OP_DEVICE, dev_paths[i])->src = devs[i];
    for (size_t i = 0; i < c->nxdev; i++) {
        oci_setup_op *op = add(o, OCI_OP_DEVICE, c->xdev[i].path);
        op->src = xdevs[i], op->flags = OCI_OPF_XDEV;
    }
    static const char *const links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
                                           {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
                                           {"pts/ptmx", "ptmx"}};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        add(o, OCI_OP_LINK, links[i][1])->arg = links[i][0];
}

/* sysctls (namespaced only, checked by config.c) before /proc is made read-only; the masks and
 * read-only paths: the engine's /proc rules (viewops.h), then the config's. */
static void lower_paths(const oci_config *c, oci_setup_ops *o)
{
    for (size_t i = 0; i < c->nsysctl; i++) {
        if (!(c->ns_flags & oci_sysctl_ns(c->sysctl[i][0])))
            continue; /* a pod's namespace, joined by path: mxc-oci wrote it there (lifecycle.c) */
        oci_setup_op *op = add(o, OCI_OP_SYSCTL, c->sysctl[i][0]);
        op->arg = c->sysctl[i][1], op->idx = i, op->flags = o->have_proc ? 0 : OCI_OPF_NOPROC;
    }
    for (size_t i = 0; o->have_proc && i < MXC_PROC_NMASKED; i++)
        add(o, OCI_OP_MASK, mxc_proc_masked[i])->flags = OCI_OPF_OPTIONAL;
    for (size_t i = 0; o->have_proc && i < MXC_PROC_NREADONLY; i++)
        add(o, OCI_OP_READONLY, mxc_proc_readonly[i])->flags = OCI_OPF_OPTIONAL;
    for (size_t i = 0; i < c->nmasked; i++)
        add(o, OCI_OP_MASK, c->masked[i])->flags = OCI_OPF_OPTIONAL;
    for (size_t i = 0; i < c->nreadonly; i++)
        add(o, OCI_OP_READONLY, c->readonly[i])->flags = OCI_OPF_OPTIONAL;
}

int oci_setup_lower(const oci_config *c, const int *binds, const int *devs, const int *xdevs, oci_setup_ops *out,
                    mxc_error *e)
{
    size_t cap = c->nmounts + OCI_NDEVICES + c->nxdev + 5 + c->nsysctl + MXC_PROC_NMASKED + MXC_PROC_NREADONLY +
                 c->nmasked + c->nreadonly;
    oci_setup_ops later = {.op = calloc(c->nmounts + 1, sizeof *later.op)};
    *out = (oci_setup_ops){.op = calloc(cap + c->nmounts + 1, sizeof *out->op)};
    if (!out->op || !later.op) {
        free(later.op);
        oci_setup_free(out);
        return oci_init_err(e, "out of memory");
    }
    lower_mounts(c, binds, out, &later);
    lower_devices(c, devs, xdevs, out);
    lower_paths(c, out);
    memcpy(out->op + out->n, later.op, later.n * sizeof *later.op);
    out->n += later.n;
    free(later.op);
    return 0;
}

void oci_setup_free(oci_setup_ops *ops)
{
    free(ops->op);
    *ops = (oci_setup_ops){0};
}

/* ---- the executor ---- */

static int attach(int tree, int target, const char *what, mxc_error *e)
{
    int rc = mxc_view_attach(tree, target);
    close(tree);
    return rc < 0 ? oci_init_err_os(e, -rc, "%s: move_mount", what) : 0;
}

/* A fresh filesystem of the config's mount (fsopen/fsconfig/fsmount) with attrs. */
static int make_fs(const oci_mount *m, uint64_t attrs, size_t idx, mxc_error *e)
{
    int fs = fsopen(m->type, FSOPEN_CLOEXEC);
    if (fs < 0)
        return oci_init_err_os(e, errno, "mounts[%zu] (%s at %s): fsopen", idx, m->type, m->dest);
    /* the source names the mount in /proc/mounts, as mount(2)'s would (tools match "tmpfs /mnt") */
    if (m->source && m->source[0] && fsconfig(fs, FSCONFIG_SET_STRING, "source", m->source, 0) < 0)
        return oci_init_err_os(e, errno, "mounts[%zu] (%s at %s): source", idx, m->type, m->dest);
    for (size_t i = 0; i < m->nfsopt; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s", m->fsopt[i]);
        char *eq = strchr(key, '=');
        int rc = eq ? (*eq = '\0', fsconfig(fs, FSCONFIG_SET_STRING, key, eq + 1, 0))
                    : fsconfig(fs, FSCONFIG_SET_FLAG, key, NULL, 0);
        if (rc < 0)
            return oci_init_err_os(e, errno, "mounts[%zu] (%s at %s): option '%s'", idx, m->type, m->dest,
                                   m->fsopt[i]);
    }
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return oci_init_err_os(e, errno, "mounts[%zu] (%s at %s): cannot create it", idx, m->type, m->dest);
    /* tmpcopyup: read-only only once filled (tmpcopy.h) */
    int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)(m->tmpcopyup ? attrs & ~(uint64_t)MOUNT_ATTR_RDONLY : attrs));
    if (mnt < 0)
        return oci_init_err_os(e, errno, "mounts[%zu] (%s at %s): fsmount", idx, m->type, m->dest);
    close(fs);
    return mnt;
}

/* tmpcopyup: what the rootfs has at the destination, into the tmpfs, then its flags. */
static int copy_up(int target, int tree, const oci_mount *m, uint64_t attrs, size_t idx, mxc_error *e)
{
    char why[PATH_MAX + 128] = "";
    if (oci_tmpcopyup(target, tree, why, sizeof why) < 0)
        return oci_init_err(e, "mounts[%zu] (tmpfs at %s): tmpcopyup: %s", idx, m->dest, why);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if ((attrs & MOUNT_ATTR_RDONLY) && mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        return oci_init_err_os(e, errno, "mounts[%zu] (tmpfs at %s): read-only", idx, m->dest);
    return 0;
}

static int run_cgroup(const oci_config *c, const oci_setup_op *op, int root_fd, mxc_error *e)
{
    mxc_error why = {0};
    if (oci_cgroup_mount(root_fd, op->m->dest, c->ns_flags & CLONE_NEWCGROUP, oci_resolve_target, &why) < 0) {
        /* the container's own view, read-only */
        oci_init_err(e, "mounts[%zu] (%s at %s): %s", op->idx, op->m->type, op->m->dest, why.message);
        mxc_error_clear(&why);
        return -1;
    }
    return 0;
}

static int run_mount(const oci_setup_op *op, int root_fd, mxc_error *e)
{
    const oci_mount *m = op->m;
    size_t i = op->idx;
    bool dir = true;
    if (op->src >= 0) {
        struct stat st;
        dir = m->kind != OCI_MNT_BIND || (fstat(op->src, &st) == 0 && S_ISDIR(st.st_mode));
    }
    if ((is_fs(m, "proc") || is_fs(m, "sysfs")) && through_a_link(root_fd, m->dest))
        return oci_init_err(e,
                            "mounts[%zu]: %s must be mounted on ordinary directory (runc's wording): it is a symbolic "
                            "link in the rootfs, or goes through one, refused for %s (its masks and read-only paths "
                            "are applied by path: CVE-2019-19921)", i, m->dest, m->type);
    int t = oci_resolve_target(root_fd, m->dest, true, dir);
    if (t < 0)
        return oci_init_err_os(e, -t, "mounts[%zu]: destination %s", i, m->dest);
    char what[PATH_MAX + 64];
    snprintf(what, sizeof what, "mounts[%zu] (%s)", i, m->dest);
    int tree = op->src >= 0 ? op->src : make_fs(m, op->attr_set, i, e);
    int rc = tree < 0 ? -1 : m->tmpcopyup ? copy_up(t, tree, m, op->attr_set, i, e) : 0;
    if (rc == 0)
        rc = attach(tree, t, what, e);
    close(t);
    return rc;
}

/* A node on its own name in the rootfs, never followed (CVE-2025-31133: an image's /dev/null linked
 * into /proc). */
static int run_device(const oci_setup_op *op, int root_fd, mxc_error *e)
{
    bool x = op->flags & OCI_OPF_XDEV;
    const char *p = op->target, *slash = strrchr(p, '/');
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - p), p);
    int d = oci_resolve_target(root_fd, dir, true, true);
    if (d < 0)
        return x ? oci_init_err_os(e, -d, "linux.devices %s", p) : oci_init_err_os(e, -d, "%s", dir);
    struct stat lst;
    bool link = fstatat(d, slash + 1, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
    int t = link ? -ELOOP : oci_resolve_target(d, slash + 1, true, false);
    close(d);
    if (link && x)
        return oci_init_err(e, "linux.devices %s in the rootfs is a symbolic link: refused (a device is mounted on "
                               "the node itself)", p);
    if (link)
        return oci_init_err(e, "%s in the rootfs is a symbolic link: refused (the default devices are mounted on "
                               "the node itself)", p);
    if (t < 0)
        return x ? oci_init_err_os(e, -t, "linux.devices %s", p) : oci_init_err_os(e, -t, "%s", p);
    int rc = attach(op->src, t, p, e);
    close(t);
    return rc;
}

static int run_link(const oci_setup_op *op, int root_fd, mxc_error *e)
{
    int dev = oci_resolve_target(root_fd, "/dev", false, true);
    if (dev < 0)
        return 0;
    int rc = symlinkat(op->arg, dev, op->target) < 0 && errno != EEXIST
                 ? oci_init_err_os(e, errno, "/dev/%s", op->target) : 0;
    close(dev);
    return rc;
}

static int run_sysctl(const oci_setup_op *op, int root_fd, mxc_error *e)
{
    char path[256];
    snprintf(path, sizeof path, "/proc/sys/%s", op->target);
    for (char *q = path + 10; *q; q++)
        if (*q == '.')
            *q = '/';
    bool noproc = op->flags & OCI_OPF_NOPROC;
    int f = noproc ? -ENOENT : oci_open_in_root(root_fd, path, O_WRONLY | O_TRUNC);
    if (f < 0)
        return noproc ? oci_init_err(e, "linux.sysctl %s: needs proc mounted at /proc", op->target)
                      : oci_init_err_os(e, -f, "linux.sysctl %s", op->target);
    size_t len = strlen(op->arg);
    int rc = write(f, op->arg, len) != (ssize_t)len ? oci_init_err_os(e, errno, "linux.sysctl %s = %s", op->target,
                                                                      op->arg)
                                                    : 0;
    close(f);
    return rc;
}

/* The tree a mask is made of: an empty read-only tmpfs for a directory, a clone of the container's
 * /dev/null (checked to be the null device) for anything else. */
static int mask_source(int root_fd, const char *path, bool is_dir, mxc_error *e)
{
    if (is_dir) {
        int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "size", "0", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
            return oci_init_err_os(e, errno, "maskedPaths %s: tmpfs", path);
        int tree = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        int err = errno;
        close(fs);
        return tree < 0 ? oci_init_err_os(e, err, "maskedPaths %s", path) : tree;
    }
    int null = oci_resolve_target(root_fd, "/dev/null", false, false);
    if (null < 0)
        return oci_init_err_os(e, -null, "maskedPaths %s", path);
    struct stat nst;
    if (fstat(null, &nst) < 0 || !S_ISCHR(nst.st_mode) || nst.st_rdev != makedev(1, 3)) {
        close(null);
        return oci_init_err(e, "maskedPaths %s: /dev/null is not the null device", path);
    }
    int tree = open_tree(null, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
    int err = errno;
    close(null);
    return tree < 0 ? oci_init_err_os(e, err, "maskedPaths %s", path) : tree;
}

/* A masked or read-only path; absent: nothing to do. */
static int run_path(const oci_setup_op *op, int root_fd, mxc_error *e)
{
    bool masking = op->kind == OCI_OP_MASK;
    const char *list = masking ? "maskedPaths" : "readonlyPaths";
    int t = oci_resolve_target(root_fd, op->target, false, false);
    if (t == -ENOENT && (op->flags & OCI_OPF_OPTIONAL))
        return 0;
    if (t < 0)
        return oci_init_err_os(e, -t, "%s %s", list, op->target);
    int rc;
    if (masking) {
        struct stat st;
        int tree = fstat(t, &st) < 0 ? oci_init_err_os(e, errno, "%s %s", list, op->target)
                                     : mask_source(root_fd, op->target, S_ISDIR(st.st_mode), e);
        rc = tree < 0 ? -1 : attach(tree, t, op->target, e);
    } else {
        rc = mxc_view_readonly_at(t, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (rc < 0)
            oci_init_err_os(e, -rc, "%s %s", list, op->target);
    }
    close(t);
    return rc < 0 ? -1 : 0;
}

static int run_rdonly(const oci_setup_op *op, int root_fd, mxc_error *e)
{
    int t = oci_resolve_target(root_fd, op->target, false, true);
    if (t < 0)
        return oci_init_err_os(e, -t, "mounts[%zu] (%s): read-only", op->idx, op->target);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    int rc = mount_setattr(t, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0
                 ? oci_init_err_os(e, errno, "mounts[%zu] (%s): read-only", op->idx, op->target) : 0;
    close(t);
    return rc;
}

int oci_setup_run(const oci_config *c, const oci_setup_ops *ops, int root_fd, mxc_error *e)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ops->n; i++) {
        const oci_setup_op *op = &ops->op[i];
        switch (op->kind) {
        case OCI_OP_MOUNT: rc = run_mount(op, root_fd, e); break;
        case OCI_OP_CGROUP: rc = run_cgroup(c, op, root_fd, e); break;
        case OCI_OP_DEVICE: rc = run_device(op, root_fd, e); break;
        case OCI_OP_LINK: rc = run_link(op, root_fd, e); break;
        case OCI_OP_SYSCTL: rc = run_sysctl(op, root_fd, e); break;
        case OCI_OP_MASK:
        case OCI_OP_READONLY: rc = run_path(op, root_fd, e); break;
        case OCI_OP_RDONLY: rc = run_rdonly(op, root_fd, e); break;
        }
    }
    return rc;
}
