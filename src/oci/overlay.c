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

#include <dirent.h>
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

#include "hostpath.h"
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
    char canon[PATH_MAX], why[512] = "", msg[PATH_MAX + 600];
    if (path[0] != '/') {
        snprintf(msg, sizeof msg, "%s=%s", key, path);
        return refuse(e, root_path, "a relative layer path (resolved in the mounter's working directory)", msg);
    }
    mxc_hostpath_rules rules = {.claims = true};
    int fd = -1, d = -1;
    int r = mxc_hostpath_resolve(&rules, path, true, canon, sizeof canon, &fd, &d, why, sizeof why);
    struct stat st;
    if (r < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
        if (r == 0) {
            close(fd);
            close(d);
        } else if (d >= 0)
            close(d);
        snprintf(msg, sizeof msg, "%s=%s: %s", key, path, why[0] ? why : r < 0 ? strerror(-r) : "not a directory");
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

/* name under dir and everything in it, by descriptor, never following a link. */
static void remove_tree(int dir, const char *name, int depth)
{
    int fd = depth < 32 ? openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    for (struct dirent *de; d && (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && unlinkat(fd, de->d_name, 0) < 0 &&
            errno == EISDIR)
            remove_tree(fd, de->d_name, depth + 1);
    if (d)
        closedir(d);
    unlinkat(dir, name, AT_REMOVEDIR);
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

int oci_overlay_rootfs(int rootfs, const char *root_path, const char *id, int userns, unsigned uid, unsigned gid,
                       int *tree, mxc_error *e)
{
    *tree = -1;
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
    bool at_root = false;
    char *type = NULL, *opts = mount_options(sx.stx_mnt_id, &at_root, &type);
    int rc = -1, fs = -1, lower[MAX_LAYERS], nlower = 0, upper = -1, work = -1, updir = -1, wdir = -1, clone = -1;
    int ufd = -1, wfd = -1;
    char *lowerdirs = NULL, *upperdir = NULL, *workdir = NULL;
    const char *pass_key[16], *pass_val[16];
    size_t npass = 0;
    if (!opts || !type || strcmp(type, "overlay")) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "root.path %s: its mount (id %llu) is not in /proc/self/mountinfo as an "
                "overlay", root_path, (unsigned long long)sx.stx_mnt_id);
        goto out;
    }
    if (!at_root) {
        refuse(e, root_path, "the mount is a bind of a directory inside an overlay", NULL);
        goto out;
    }
    /* the options: layers, and those repeated as they are */
    char *save;
    for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(o, '=');
        if (eq)
            *eq = '\0';
        char *val = eq ? eq + 1 : NULL;
        if (val && !unescape(val)) {
            refuse(e, root_path, "an option the kernel showed escaped in a way not understood", o);
            goto out;
        }
        if (!strcmp(o, "rw") || !strcmp(o, "ro"))
            continue;
        if (!strcmp(o, "lowerdir") && val)
            lowerdirs = val;
        else if (!strcmp(o, "upperdir") && val)
            upperdir = val;
        else if (!strcmp(o, "workdir") && val)
            workdir = val;
        else {
            bool ok = false;
            for (size_t i = 0; i < sizeof PASS / sizeof PASS[0]; i++)
                ok |= !strcmp(o, PASS[i]);
            if (!ok || npass == 16) {
                refuse(e, root_path,
                       !strcmp(o, "lowerdir+") || !strcmp(o, "datadir+")
                           ? "layers given by descriptor or appended (the kernel shows them relative to a mount "
                             "mxc-oci cannot see)"
                           : "an overlay option not known to be safe to repeat",
                       o);
                goto out;
            }
            pass_key[npass] = o;
            pass_val[npass++] = val;
        }
    }
    if (!lowerdirs || !upperdir != !workdir) {
        refuse(e, root_path, "its options name no lower layer, or an upper layer without a work directory", NULL);
        goto out;
    }
    for (const char *s = lowerdirs; *s; s++)
        if (*s == '\\') {
            refuse(e, root_path, "a layer path with an escaped character", lowerdirs);
            goto out;
        }
    if (upperdir && (strchr(upperdir, '\\') || strchr(workdir, '\\'))) {
        refuse(e, root_path, "a layer path with an escaped character", upperdir);
        goto out;
    }
    fs = fsopen("overlay", FSOPEN_CLOEXEC);
    if (fs < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.overlay", errno, NULL, "root.path %s: fsopen(overlay)", root_path);
        goto out;
    }
    /* lower layers, top first, each an idmapped clone given by descriptor */
    for (char *l = lowerdirs, *next; l; l = next) {
        next = strchr(l, ':');
        if (next)
            *next++ = '\0';
        if (!*l) {
            refuse(e, root_path, "data-only lower layers (\"::\")", NULL);
            goto out;
        }
        if (nlower == MAX_LAYERS) {
            refuse(e, root_path, "more than 128 lower layers", NULL);
            goto out;
        }
        int fd = resolve_layer(root_path, "lowerdir", l, "read-only", NULL, e);
        if (fd < 0)
            goto out;
        lower[nlower] = idmapped(fd, userns);
        close(fd);
        if (lower[nlower] < 0) {
            mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", -lower[nlower], NULL,
                       "root.path %s: lower layer %s cannot be mounted idmapped", root_path, l);
            goto out;
        }
        if (set_fd(fs, "lowerdir+", lower[nlower++], root_path, e) < 0)
            goto out;
    }
    /* upper and work: one idmapped clone of the directory holding both (overlay wants them on one mount) */
    if (upperdir) {
        if ((ufd = resolve_layer(root_path, "upperdir", upperdir, "read-write", &updir, e)) < 0 ||
            (wfd = resolve_layer(root_path, "workdir", workdir, "read-write", &wdir, e)) < 0)
            goto out;
        if (!same(updir, wdir)) {
            refuse(e, root_path, "the upper and work directories are not in one directory", upperdir);
            goto out;
        }
        if ((clone = idmapped(updir, userns)) < 0) {
            mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", -clone, NULL,
                       "root.path %s: the upper layer's directory cannot be mounted idmapped", root_path);
            goto out;
        }
        const char *un = strrchr(upperdir, '/') + 1, *wn = strrchr(workdir, '/') + 1;
        char unb[NAME_MAX + 1], wnb[NAME_MAX + 1];
        /* the names as resolved (a followed link's target): the fds' own, read back by /proc */
        char link[64], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", ufd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            snprintf(unb, sizeof unb, "%s", strrchr(target, '/') + 1);
            un = unb;
        }
        snprintf(link, sizeof link, "/proc/self/fd/%d", wfd);
        n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            snprintf(wnb, sizeof wnb, "%s", strrchr(target, '/') + 1);
            wn = wnb;
        }
        upper = openat(clone, un, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int ework = openat(clone, wn, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        bool ok = upper >= 0 && ework >= 0 && same(upper, ufd) && same(ework, wfd);
        if (!ok) {
            if (ework >= 0)
                close(ework);
            refuse(e, root_path, "the upper or work directory is not on the mount of the directory holding it",
                   upperdir);
            goto out;
        }
        /* a work directory of the container's own, inside the engine's: the engine's overlay is still
         * mounted and a second mount would empty its work/work under it (and a volatile one's
         * incompat/volatile marker refuses any second mount); removed with the engine's storage, and
         * a leftover of this id's is removed first */
        char own[NAME_MAX + 1];
        snprintf(own, sizeof own, "mxc-oci-%.200s", id);
        remove_tree(wfd, own, 0);
        if (mkdirat(wfd, own, 0700) < 0 ||
            (work = openat(ework, own, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.overlay", errno, NULL, "root.path %s: a work directory %s/%s",
                       root_path, workdir, own);
            close(ework);
            goto out;
        }
        close(ework);
        if (set_fd(fs, "upperdir", upper, root_path, e) < 0 || set_fd(fs, "workdir", work, root_path, e) < 0)
            goto out;
    }
    for (size_t i = 0; i < npass; i++)
        if ((pass_val[i] ? fsconfig(fs, FSCONFIG_SET_STRING, pass_key[i], pass_val[i], 0)
                         : fsconfig(fs, FSCONFIG_SET_FLAG, pass_key[i], NULL, 0)) < 0) {
            mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", errno, NULL, "root.path %s: option %s",
                       root_path, pass_key[i]);
            goto out;
        }
    if (create_as(fs, uid, gid) < 0) {
        int err = errno;
        char why[256] = "";
        ssize_t n = read(fs, why, sizeof why - 1); /* the kernel's own message, "e overlayfs: ..." */
        why[n > 0 ? n : 0] = '\0';
        why[strcspn(why, "\n")] = '\0';
        mxc_err_os(e, MXC_E_UNSUPPORTED_CONTAINMENT, "oci.overlay", err, NULL,
                   "root.path %s: the kernel refused the overlay of idmapped layers%s%s (its log says why)", root_path,
                   why[0] ? ": " : "", why);
        goto out;
    }
    int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV);
    if (mnt < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.overlay", errno, NULL, "root.path %s: fsmount", root_path);
        goto out;
    }
    /* the same layers give the same root: its inode is the upper's (or the top lower's) */
    struct stat a, b;
    if (fstat(mnt, &a) < 0 || fstat(rootfs, &b) < 0 || a.st_ino != b.st_ino) {
        close(mnt);
        refuse(e, root_path, "the layers its options name now make another overlay (a layer path was changed)",
               NULL);
        goto out;
    }
    *tree = mnt;
    rc = 0;
out:
    for (int i = 0; i < nlower; i++)
        close(lower[i]);
    int fds[] = {fs, upper, work, updir, wdir, clone, ufd, wfd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(opts);
    free(type);
    return rc;
}
