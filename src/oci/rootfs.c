/* rootfs.c — see rootfs.h. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "front.h"
#include "rootless.h"
#include "setupops.h"

#define DEFAULT_ROOTS "/var/lib/containers/storage:/var/lib/docker"

/* rest resolved beneath dirfd: no "..", no symlink, no magic link; an O_PATH directory or -errno. */
static int beneath(int dirfd, const char *rest)
{
    return mxc_openat2(dirfd, rest[0] ? rest : ".", O_PATH | O_DIRECTORY,
                       RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static const char *why_of(int err);

/* rest beneath top one component at a time (each beneath(): no "..", no link), every directory on
 * the way (top included, the last not) writable by no one but its owner and group: a directory anyone
 * can write (/tmp's kind) holds what others made — root's services' private directories among them —
 * which is not an image's.  The last's descriptor, or -1 with *e set (what: where it began) and
 * *err the errno of a failed lookup (0 for a refusal). */
static int walk(int top, const char *rest, const char *what, mxc_error *e, int *err)
{
    *err = 0;
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", rest) >= (int)sizeof buf) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "%s: too long", what);
        return -1;
    }
    int fd = openat(top, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *save = NULL;
    for (char *c = strtok_r(buf, "/", &save); fd >= 0 && c; c = strtok_r(NULL, "/", &save)) {
        struct stat st;
        int next = -1;
        if (fstat(fd, &st) < 0 || (st.st_mode & S_IWOTH))
            mxc_err(e, MXC_E_POLICY_VALIDATION,
                    "%s: a directory on the way is writable by everyone (mode %o): what lies beneath it "
                    "is not provably an image's", what, (unsigned)(st.st_mode & 07777));
        else if ((next = beneath(fd, c)) < 0)
            mxc_err(e, MXC_E_POLICY_VALIDATION, "%s: %s", what, why_of(*err = -next));
        close(fd);
        fd = next < 0 ? -1 : next;
    }
    return fd;
}

static const char *why_of(int err)
{
    if (err == ELOOP)
        return "a symbolic link on the way (refused: a rootfs is reached with no link, which could name a host "
               "directory)";
    if (err == EXDEV)
        return "it leads out (\"..\" above it, or an absolute link)";
    return strerror(err);
}

/* The rest of path after dir and a slash ("" for dir itself), or NULL when path is not dir or below it. */
static const char *after(const char *path, const char *dir, size_t n)
{
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || strncmp(path, dir, n) != 0 || (path[n] && path[n] != '/' && !(n == 1 && dir[0] == '/')))
        return NULL;
    const char *r = path + n;
    while (*r == '/')
        r++;
    return r;
}

/* The uid an id the user namespace does not map shows as. */
static uid_t overflow_uid(void)
{
    FILE *f = fopen("/proc/sys/kernel/overflowuid", "re");
    unsigned v = 65534;
    if (f) {
        if (fscanf(f, "%u", &v) != 1)
            v = 65534;
        fclose(f);
    }
    return (uid_t)v;
}

/* Whether a directory may stand on the way to a storage root (last: it is the root itself): root's;
 * rootless (rootless.h) root's or the caller's — in a user namespace not the host's, host root's
 * directories show as the overflow uid, admitted only above the root and writable by their owner
 * alone. */
static bool roots_alone(int fd, bool last)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
           (st.st_uid == 0 || st.st_uid == geteuid() || (!last && oci_rootless_nested() && st.st_uid == overflow_uid())) &&
           (!(st.st_mode & 022) || (!last && (st.st_mode & S_ISVTX)));
}

/* The storage root dir (absolute), walked from "/" one component at a time with no link, each
 * directory root's alone: its O_PATH descriptor, or -1 with *e set. */
static int storage_root(const char *dir, size_t n, mxc_error *e)
{
    char buf[PATH_MAX];
    if (n >= sizeof buf) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "the storage root is too long");
        return -1;
    }
    memcpy(buf, dir, n);
    buf[n] = '\0';
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *save = NULL;
    for (char *c = strtok_r(buf, "/", &save); fd >= 0 && c; c = strtok_r(NULL, "/", &save)) {
        int next = -1;
        if (!roots_alone(fd, false))
            mxc_err(e, MXC_E_POLICY_VALIDATION,
                    "a directory above the storage root %.*s is not root's alone", (int)n, dir);
        else if (!strcmp(c, ".") || !strcmp(c, ".."))
            mxc_err(e, MXC_E_POLICY_VALIDATION, "the storage root %.*s has a \".\" or \"..\" component", (int)n, dir);
        else if ((next = beneath(fd, c)) < 0)
            mxc_err(e, MXC_E_POLICY_VALIDATION, "the storage root %.*s: %s", (int)n, dir, why_of(-next));
        close(fd);
        fd = next;
    }
    if (fd >= 0 && !roots_alone(fd, true)) {
        mxc_err(e, MXC_E_POLICY_VALIDATION,
                "the storage root %.*s is not a directory root's alone (owner 0, writable by no one "
                "else)", (int)n, dir);
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The operator's list; rootless by default the caller's own containers storage (rootless Podman's,
 * $HOME/.local/share/containers/storage). */
static const char *roots_list(void)
{
    static char own[PATH_MAX];
    const char *list = getenv("MXC_OCI_ROOTFS_ROOTS"), *home = getenv("HOME");
    if (list && list[0])
        return list;
    if (oci_rootless() && home && home[0] == '/' && !strchr(home, ':') &&
        (size_t)snprintf(own, sizeof own, "%s/.local/share/containers/storage", home) < sizeof own)
        return own;
    return DEFAULT_ROOTS;
}

/* root_path strictly beneath a storage root of the operator's list: its descriptor; -2 when it is
 * beneath none; -1 with *e set when it is refused. */
static int from_storage(const char *root_path, mxc_error *e)
{
    for (const char *p = roots_list(); *p;) {
        size_t n = strcspn(p, ":");
        const char *rest = n && p[0] == '/' ? after(root_path, p, n) : NULL;
        if (rest && rest[0]) {
            int top = storage_root(p, n, e);
            if (top < 0)
                return -1;
            char what[PATH_MAX + 32];
            snprintf(what, sizeof what, "beneath the storage root %.*s", (int)n, p);
            int err;
            int fd = walk(top, rest, what, e, &err);
            struct stat a, b;
            if (fd < 0)
                ;
            else if (fstat(fd, &a) < 0 || fstat(top, &b) < 0 || (a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
                mxc_err(e, MXC_E_POLICY_VALIDATION,
                        "the storage root %.*s itself, not an image's directory beneath it", (int)n, p);
                close(fd);
                fd = -1;
            }
            close(top);
            return fd < 0 ? -1 : fd;
        }
        p += n + (p[n] == ':');
    }
    return -2;
}

int oci_rootfs_open(int bundle_fd, const char *bundle, const char *root_path, mxc_error *e)
{
    char bpath[PATH_MAX];
    mxc_error w = {0}; /* why, before it is said of root.path */
    const char *rest = root_path[0] == '/' ? NULL : root_path;
    if (!rest) {
        mxc_fd_path(bundle_fd, bpath, sizeof bpath);
        rest = bpath[0] == '/' ? after(root_path, bpath, strlen(bpath)) : NULL;
        if (!rest && bundle && bundle[0] == '/')
            rest = after(root_path, bundle, strlen(bundle)); /* the rest is resolved beneath bundle_fd all the same */
    }
    int fd, err = 0;
    if (rest)
        fd = walk(bundle_fd, rest, "resolved beneath the bundle", &w, &err);
    else if ((fd = from_storage(root_path, &w)) == -2)
        mxc_err(&w, MXC_E_POLICY_VALIDATION, "an absolute path outside the bundle and outside the operator's storage "
                "roots (%.1024s): a host directory is never a rootfs", roots_list());
    if (fd < 0) {
        mxc_err(e, err == ENOENT || err == ENOTDIR ? MXC_E_MALFORMED_REQUEST : MXC_E_POLICY_VALIDATION,
                "config.json: root.path %s: %s", root_path, w.message);
        if (err != ENOENT && err != ENOTDIR)
            mxc_err_set_remediation(e, "give a rootfs inside the bundle (relative) with no symbolic link on the way, "
                                    "or list the engine's storage root in MXC_OCI_ROOTFS_ROOTS");
        return -1;
    }
    /* never mxc's own state, wherever it lies (the bundle itself may be chosen badly) */
    char canon[PATH_MAX];
    mxc_error g = {0};
    mxc_fd_path(fd, canon, sizeof canon);
    if (!canon[0] || mxc_hostpath_check_grant(canon, "root.path", &g) < 0) {
        close(fd);
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: root.path %s: %s", root_path,
                       canon[0] ? g.message : "its path cannot be read back");
    }
    return fd;
}
