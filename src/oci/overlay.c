/* overlay.c — see overlay.h.
 *
 * The layers come from the options of the mount at root.path, as the
 * kernel shows them (/proc/self/mountinfo, that mount found by its id):
 * the strings the engine (Podman, containerd) gave when it mounted them.
 * Each is resolved again on the host as a bind source is (hostpath.h: a
 * symlink followed only where no sandbox can write it, never into mxc's
 * own state) and the re-made overlay's root must be the same inode as the
 * original's, so a layer path that now names something else is caught.
 * Refused: relative layer paths (they were resolved in the mounter's
 * working directory), layers the mounter gave by descriptor or appended
 * ("lowerdir+", "datadir+": the kernel shows them relative to a mount we
 * cannot see), data-only layers, escaped characters in a layer path, an
 * upper and work directory that are not siblings, options not known to
 * be safe to repeat, and root.path below the overlay's root. */
#include "overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dirtree.h"
#include "fdio.h"
#include "config.h" /* OCI_FIND */
#include "front.h"
#include "mounttree.h"

#define MAX_LAYERS 128

/* Options the kernel shows that may be given again as they are (the
 * layers' on-disk format depends on them); anything else is refused. */
static const char *const PASS[] = {"redirect_dir", "index", "uuid", "nfs_export", "xino", "metacopy", "verity",
                                   "volatile", "fsync"};

static int refuse(mxc_error *e, const char *root_path, const char *why, const char *what)
{
    return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT,
                   "root.path %s is an overlay mount that mxc-oci cannot re-make with idmapped layers: %s%s%s", root_path,
                   why, what ? ": " : "", what ? what : "");
}

/* mountinfo's octal escapes (\ooo) undone in place; false on a lone backslash. */
static bool unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (*r == '\\') {
            if (r[1] < '0' || r[1] > '3' || r[2] < '0' || r[2] > '7' || r[3] < '0' || r[3] > '7')
                return false;
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else
            *w++ = *r++;
    }
    *w = '\0';
    return true;
}

/* The super options of mount id `id` (a copy), or NULL; *at_root whether
 * the mount shows its filesystem's root. */
static char *mount_options(unsigned long long id, bool *at_root, char **fstype)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return NULL;
    char *line = NULL, *out = NULL;
    size_t cap = 0;
    while (!out && getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char *save, *tok = strtok_r(line, " ", &save);
        if (!tok || strtoull(tok, NULL, 10) != id)
            continue;
        strtok_r(NULL, " ", &save);               /* parent */
        strtok_r(NULL, " ", &save);               /* major:minor */
        char *root = strtok_r(NULL, " ", &save);  /* root of the mount within its filesystem */
        while ((tok = strtok_r(NULL, " ", &save)) && strcmp(tok, "-"))
            ;                                     /* mount point, options, optional fields */
        char *type = tok ? strtok_r(NULL, " ", &save) : NULL;
        char *source = type ? strtok_r(NULL, " ", &save) : NULL;
        char *super = source ? strtok_r(NULL, " ", &save) : NULL;
        if (!root || !super)
            break;
        *at_root = !strcmp(root, "/");
        *fstype = strdup(type);
        out = strdup(super);
    }
    free(line);
    fclose(f);
    return out;
}

/* A layer path resolved as a bind source is; its O_PATH fd and the
 * directory holding it.  -1 with *e set. */
static int resolve_layer(const char *root_path, const char *key, const char *path, const char *what, int *dir,
                         mxc_error *e)
{
    char canon[PATH_MAX], msg[PATH_MAX + 600];
    mxc_error why = {0};
    if (path[0] != '/') {
        snprintf(msg, sizeof msg, "%s=%s", key, path);
        return refuse(e, root_path, "a relative layer path (resolved in the mounter's working directory)", msg);
    }
    mxc_hostpath_rules rules = {.claims = true};
    int fd = -1, d = -1;
    int r = mxc_hostpath_resolve(&rules, path, true, canon, sizeof canon, &fd, &d, &why);
    struct stat st;
    if (r < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
        if (r == 0) {
            close(fd);
            close(d);
        } else if (d >= 0)
            close(d);
        snprintf(msg, sizeof msg, "%s=%s: %s", key, path,
                 why.message[0] ? why.message : r < 0 ? strerror(-r) : "not a directory");
        return refuse(e, root_path, "a layer", msg);
    }
    if (mxc_hostpath_check_grant(canon, what, e) < 0) {
        close(fd);
        close(d);
        return -1;
    }
    if (dir)
        *dir = d;
    else
        close(d);
    return fd;
}

/* A detached, idmapped clone of the directory at fd (not recursive: the
 * overlay uses the layer's own mount only). */
static int idmapped(int fd, int userns)
{
    mxc_tree_attr a = {.set = MOUNT_ATTR_NODEV, .propagation = MS_PRIVATE, .idmap = true, .userns_fd = userns};
    return mxc_tree_clone(fd, "", &a);
}

static bool same(int a, int b)
{
    struct stat x, y;
    return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The overlay made with the credentials it keeps for its own work on the
 * layers (copy-up, the work directory, whiteouts): host root's
 * capabilities (trusted.overlay xattrs, whiteout devices) with the file
 * system ids of the container's root, which the layers' idmap maps (the
 * disk's 0); host uid 0 is not in it (EOVERFLOW, a read-only overlay).
 * The fs ids change only for this call, and changing them clears the
 * effective file capabilities: they are raised again from the permitted
 * set for the call and restored after. */
static int create_as(int fs, unsigned uid, unsigned gid)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct saved[2], raised[2];
    if (syscall(SYS_capget, &h, saved) < 0)
        return -1;
    memcpy(raised, saved, sizeof raised);
    for (int i = 0; i < 2; i++)
        raised[i].effective = raised[i].permitted;
    unsigned ofg = (unsigned)setfsgid(gid), ofu = (unsigned)setfsuid(uid);
    int rc = -1, err = EPERM;
    if ((unsigned)setfsuid((uid_t)-1) == uid && (unsigned)setfsgid((gid_t)-1) == gid &&
        syscall(SYS_capset, &h, raised) == 0) {
        rc = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
        err = errno;
    }
    setfsuid(ofu);
    setfsgid(ofg);
    if (syscall(SYS_capset, &h, saved) < 0 || (unsigned)setfsuid((uid_t)-1) != ofu ||
        (unsigned)setfsgid((gid_t)-1) != ofg)
        abort(); /* never go on with other credentials than the ones we had */
    errno = err;
    return rc;
}

static int set_fd(int fs, const char *key, int fd, const char *root_path, mxc_error *e)
{
    if (fsconfig(fs, FSCONFIG_SET_FD, key, NULL, fd) == 0)
        return 0;
    int err = errno;
    return mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", err,
                      "Linux 6.15 or later takes overlay layers as descriptors of detached mounts",
                      "root.path %s: an idmapped overlay layer (%s) by descriptor", root_path, key);
}

/* The overlay being re-made: what its options named, and the descriptors held until it is mounted. */
typedef struct {
    const char *root_path;
    int fs, lower[MAX_LAYERS], nlower, upper, work, updir, wdir, clone, ufd, wfd;
    char *lowerdirs, *upperdir, *workdir; /* in the options' copy */
    const char *pass_key[16], *pass_val[16];
    size_t npass;
} overlay;

/* One option of the original mount (key "=" val, or a flag): a layer, or one repeated as it is. */
static int take_option(overlay *ov, char *o, mxc_error *e)
{
    char *eq = strchr(o, '=');
    if (eq)
        *eq = '\0';
    char *val = eq ? eq + 1 : NULL;
    if (val && !unescape(val))
        return refuse(e, ov->root_path, "an option the kernel showed escaped in a way not understood", o);
    if (!strcmp(o, "rw") || !strcmp(o, "ro"))
        return 0;
    if (!strcmp(o, "lowerdir") && val)
        ov->lowerdirs = val;
    else if (!strcmp(o, "upperdir") && val)
        ov->upperdir = val;
    else if (!strcmp(o, "workdir") && val)
        ov->workdir = val;
    else {
        if (OCI_FIND(PASS, o) == OCI_COUNT(PASS) || ov->npass == 16)
            return refuse(e, ov->root_path,
                          !strcmp(o, "lowerdir+") || !strcmp(o, "datadir+")
                              ? "layers given by descriptor or appended (the kernel shows them relative to a mount "
                                "mxc-oci cannot see)"
                              : "an overlay option not known to be safe to repeat",
                          o);
        ov->pass_key[ov->npass] = o;
        ov->pass_val[ov->npass++] = val;
    }
    return 0;
}

/* The options: layers, and those repeated as they are; the layer paths checked for what cannot be
 * given again. */
static int take_options(overlay *ov, char *opts, mxc_error *e)
{
    char *save;
    for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
        if (take_option(ov, o, e) < 0)
            return -1;
    if (!ov->lowerdirs || !ov->upperdir != !ov->workdir)
        return refuse(e, ov->root_path, "its options name no lower layer, or an upper layer without a work directory",
                      NULL);
    if (strchr(ov->lowerdirs, '\\'))
        return refuse(e, ov->root_path, "a layer path with an escaped character", ov->lowerdirs);
    if (ov->upperdir && (strchr(ov->upperdir, '\\') || strchr(ov->workdir, '\\')))
        return refuse(e, ov->root_path, "a layer path with an escaped character", ov->upperdir);
    return 0;
}

/* Lower layers, top first, each an idmapped clone given by descriptor. */
static int add_lowers(overlay *ov, int userns, mxc_error *e)
{
    for (char *l = ov->lowerdirs, *next; l; l = next) {
        next = strchr(l, ':');
        if (next)
            *next++ = '\0';
        if (!*l)
            return refuse(e, ov->root_path, "data-only lower layers (\"::\")", NULL);
        if (ov->nlower == MAX_LAYERS)
            return refuse(e, ov->root_path, "more than 128 lower layers", NULL);
        int fd = resolve_layer(ov->root_path, "lowerdir", l, "read-only", NULL, e);
        if (fd < 0)
            return -1;
        int t = idmapped(fd, userns);
        close(fd);
        if (t < 0)
            return mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", -t, NULL,
                              "root.path %s: lower layer %s cannot be mounted idmapped", ov->root_path, l);
        ov->lower[ov->nlower++] = t;
        if (set_fd(ov->fs, "lowerdir+", t, ov->root_path, e) < 0)
            return -1;
    }
    return 0;
}

/* The last name of what fd names as resolved (a followed link's target: the fd's own, read back by
 * /proc) into buf; else given's last name. */
static const char *resolved_name(int fd, const char *given, char *buf, size_t bufsz)
{
    char target[PATH_MAX];
    if (!mxc_fd_path(fd, target, sizeof target))
        return strrchr(given, '/') + 1;
    snprintf(buf, bufsz, "%s", strrchr(target, '/') + 1);
    return buf;
}

/* A work directory of the container's own, inside the engine's (ework): the engine's overlay is still
 * mounted and a second mount would empty its work/work under it (and a volatile one's
 * incompat/volatile marker refuses any second mount); removed with the engine's storage, and a
 * leftover of this id's is removed first. */
static int own_workdir(overlay *ov, int ework, const char *id, mxc_error *e)
{
    char own[NAME_MAX + 1];
    snprintf(own, sizeof own, "mxc-oci-%.200s", id);
    (void)mxc_remove_tree_at(ov->wfd, own);
    if (mkdirat(ov->wfd, own, 0700) < 0 ||
        (ov->work = openat(ework, own, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.overlay", errno, NULL, "root.path %s: a work directory %s/%s",
                          ov->root_path, ov->workdir, own);
    return 0;
}

/* Upper and work: one idmapped clone of the directory holding both (overlay wants them on one mount). */
static int add_upper(overlay *ov, int userns, const char *id, mxc_error *e)
{
    const char *root_path = ov->root_path;
    if ((ov->ufd = resolve_layer(root_path, "upperdir", ov->upperdir, "read-write", &ov->updir, e)) < 0 ||
        (ov->wfd = resolve_layer(root_path, "workdir", ov->workdir, "read-write", &ov->wdir, e)) < 0)
        return -1;
    if (!same(ov->updir, ov->wdir))
        return refuse(e, root_path, "the upper and work directories are not in one directory", ov->upperdir);
    if ((ov->clone = idmapped(ov->updir, userns)) < 0)
        return mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", -ov->clone, NULL,
                          "root.path %s: the upper layer's directory cannot be mounted idmapped", root_path);
    char unb[NAME_MAX + 1], wnb[NAME_MAX + 1];
    const char *un = resolved_name(ov->ufd, ov->upperdir, unb, sizeof unb),
               *wn = resolved_name(ov->wfd, ov->workdir, wnb, sizeof wnb);
    ov->upper = openat(ov->clone, un, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int ework = openat(ov->clone, wn, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc;
    if (ov->upper < 0 || ework < 0 || !same(ov->upper, ov->ufd) || !same(ework, ov->wfd))
        rc = refuse(e, root_path, "the upper or work directory is not on the mount of the directory holding it",
                    ov->upperdir);
    else
        rc = own_workdir(ov, ework, id, e);
    if (ework >= 0)
        close(ework);
    if (rc < 0)
        return -1;
    if (set_fd(ov->fs, "upperdir", ov->upper, root_path, e) < 0 || set_fd(ov->fs, "workdir", ov->work, root_path, e) < 0)
        return -1;
    return 0;
}

/* The options repeated as they are, the overlay created with its own credentials (create_as) and
 * mounted, and checked to be the same: its root's inode is the upper's (or the top lower's). */
static int make_overlay(overlay *ov, int rootfs, unsigned uid, unsigned gid, int *tree, mxc_error *e)
{
    const char *root_path = ov->root_path;
    for (size_t i = 0; i < ov->npass; i++)
        if ((ov->pass_val[i] ? fsconfig(ov->fs, FSCONFIG_SET_STRING, ov->pass_key[i], ov->pass_val[i], 0)
                             : fsconfig(ov->fs, FSCONFIG_SET_FLAG, ov->pass_key[i], NULL, 0)) < 0)
            return mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", errno, NULL, "root.path %s: option %s",
                              root_path, ov->pass_key[i]);
    if (create_as(ov->fs, uid, gid) < 0) {
        int err = errno;
        char why[256] = "";
        ssize_t n = read(ov->fs, why, sizeof why - 1); /* the kernel's own message, "e overlayfs: ..." */
        why[n > 0 ? n : 0] = '\0';
        why[strcspn(why, "\n")] = '\0';
        return mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", err, NULL,
                          "root.path %s: the kernel refused the overlay of idmapped layers%s%s (its log says why)",
                          root_path, why[0] ? ": " : "", why);
    }
    int mnt = fsmount(ov->fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV);
    if (mnt < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.overlay", errno, NULL, "root.path %s: fsmount", root_path);
    struct stat a, b;
    if (fstat(mnt, &a) < 0 || fstat(rootfs, &b) < 0 || a.st_ino != b.st_ino) {
        close(mnt);
        return refuse(e, root_path, "the layers its options name now make another overlay (a layer path was changed)",
                      NULL);
    }
    *tree = mnt;
    return 0;
}

/* The mount at root.path: an overlay's root (1, its mount id in *mnt_id), not an overlay (0), or
 * refused (-1). */
static int overlay_mount_id(int rootfs, const char *root_path, unsigned long long *mnt_id, mxc_error *e)
{
    struct statfs sfs;
    if (fstatfs(rootfs, &sfs) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootfs", errno, NULL, "root.path %s", root_path);
    if (sfs.f_type != OVERLAYFS_SUPER_MAGIC)
        return 0;
    struct statx sx;
    if (statx(rootfs, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootfs", errno, NULL, "root.path %s: its mount id", root_path);
    if ((sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
        return refuse(e, root_path, "it is a directory inside the overlay, not the root of its mount", NULL);
    *mnt_id = sx.stx_mnt_id;
    return 1;
}

int oci_overlay_rootfs(int rootfs, const char *root_path, const char *id, int userns, unsigned uid, unsigned gid,
                       int *tree, mxc_error *e)
{
    *tree = -1;
    unsigned long long mnt_id = 0;
    int is = overlay_mount_id(rootfs, root_path, &mnt_id, e);
    if (is <= 0)
        return is;
    bool at_root = false;
    char *type = NULL, *opts = mount_options(mnt_id, &at_root, &type);
    overlay ov = {.root_path = root_path, .fs = -1, .upper = -1, .work = -1, .updir = -1, .wdir = -1, .clone = -1,
                  .ufd = -1, .wfd = -1};
    int rc = -1;
    if (!opts || !type || strcmp(type, "overlay"))
        mxc_err(e, MXC_E_BACKEND_ERROR, "root.path %s: its mount (id %llu) is not in /proc/self/mountinfo as an "
                "overlay", root_path, mnt_id);
    else if (!at_root)
        refuse(e, root_path, "the mount is a bind of a directory inside an overlay", NULL);
    else if (take_options(&ov, opts, e) == 0) {
        if ((ov.fs = fsopen("overlay", FSOPEN_CLOEXEC)) < 0)
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.overlay", errno, NULL, "root.path %s: fsopen(overlay)", root_path);
        else if (add_lowers(&ov, userns, e) == 0 && (!ov.upperdir || add_upper(&ov, userns, id, e) == 0))
            rc = make_overlay(&ov, rootfs, uid, gid, tree, e);
    }
    for (int i = 0; i < ov.nlower; i++)
        close(ov.lower[i]);
    int fds[] = {ov.fs, ov.upper, ov.work, ov.updir, ov.wdir, ov.clone, ov.ufd, ov.wfd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(opts);
    free(type);
    return rc;
}
