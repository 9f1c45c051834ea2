/* hostpath.c — see hostpath.h. */
#include "hostpath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "registry.h"

static int dup_fd(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

int mxc_hostpath_resolve(const mxc_hostpath_rules *rv, const char *path, bool follow_final, char *out, size_t outsz,
                         int *fd, int *dir, char *why, size_t whysz)
{
    char rest[8192];
    int links = 0;
    snprintf(rest, sizeof rest, "%s", path);
    *fd = *dir = -1;
    int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return -errno;
    snprintf(out, outsz, "/");
    char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char comp[256];
        size_t len = strcspn(p, "/");
        if (len >= sizeof comp) {
            close(cur);
            snprintf(why, whysz, "a component of %.200s is too long", path);
            return -ENAMETOOLONG;
        }
        memcpy(comp, p, len);
        comp[len] = '\0';
        p += len;
        while (*p == '/')
            p++;
        bool final = !*p;
        if (!strcmp(comp, "."))
            continue;
        size_t olen = strlen(out);
        if (!strcmp(comp, "..")) { /* only ever from a symlink's target: policy paths are normalised */
            int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (up < 0) {
                int err = errno;
                close(cur);
                return -err;
            }
            close(cur);
            cur = up;
            char *slash = strrchr(out, '/');
            if (slash && slash != out)
                *slash = '\0';
            else
                snprintf(out, outsz, "/");
            continue;
        }
        int nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0) {
            int err = errno;
            snprintf(out + olen, outsz - olen, "%s%s%s%s", olen > 1 ? "/" : "", comp, *p ? "/" : "", p);
            if (err == ENOENT) {
                *dir = cur;
                return -ENOENT;
            }
            close(cur);
            snprintf(why, whysz, "cannot open %.200s", out);
            return -err;
        }
        struct stat st;
        struct statfs sf;
        if (fstat(nfd, &st) < 0 || fstatfs(nfd, &sf) < 0) {
            int err = errno;
            close(nfd), close(cur);
            return -err;
        }
        if (sf.f_type == PROC_SUPER_MAGIC) {
            close(nfd), close(cur);
            snprintf(why, whysz, "%.200s lies in /proc: the sandbox has its own /proc, which no grant reaches", path);
            return -EINVAL;
        }
        if (S_ISLNK(st.st_mode) && (!final || follow_final)) {
            char target[4096];
            ssize_t n = readlinkat(nfd, "", target, sizeof target - 1);
            int err = errno;
            close(nfd);
            if (n < 0 || ++links > 40 || n == 0) {
                close(cur);
                snprintf(why, whysz, "%.200s: too many symlinks, or one that cannot be read", path);
                return n < 0 ? -err : -ELOOP;
            }
            target[n] = '\0';
            if (mxc_registry_inside_writable(cur, rv->own, rv->nown, rv->claims)) {
                close(cur);
                snprintf(why, whysz, "%.200s goes through the symlink %.150s%s%.100s, which lies in a directory "
                         "that this or another live sandbox can write", path, out, olen > 1 ? "/" : "", comp);
                return -ELOOP;
            }
            if (rv->on_link) {
                char at[4200];
                snprintf(at, sizeof at, "%s%s%s", out, olen > 1 ? "/" : "", comp);
                rv->on_link(rv->ctx, at, target);
            }
            char next[8192];
            snprintf(next, sizeof next, "%s/%s", target, p);
            snprintf(rest, sizeof rest, "%s", next);
            p = rest;
            if (target[0] == '/') {
                close(cur);
                if ((cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                    return -errno;
                snprintf(out, outsz, "/");
            }
            continue;
        }
        if (!final && !S_ISDIR(st.st_mode)) {
            close(nfd), close(cur);
            snprintf(why, whysz, "%.200s: a component is not a directory", path);
            return -ENOTDIR;
        }
        snprintf(out + olen, outsz - olen, "%s%s", olen > 1 ? "/" : "", comp);
        if (final) {
            *fd = nfd;
            *dir = cur;
            return 0;
        }
        close(cur);
        cur = nfd;
    }
    /* the path was "/" (or resolved to it) */
    *fd = cur;
    *dir = dup_fd(cur);
    return 0;
}


/* The directory of path, resolved by the rules with every live sandbox's
 * writable area counting; name points into path. */
static int parent_of(const char *path, const char **name, char *why, size_t whysz)
{
    char abs[4200];
    if (path[0] == '/') {
        snprintf(abs, sizeof abs, "%s", path);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd))
            return -errno;
        snprintf(abs, sizeof abs, "%s/%s", cwd, path);
    }
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    if (!**name || !strcmp(*name, ".") || !strcmp(*name, ".."))
        return -EISDIR;
    char *aslash = strrchr(abs, '/');
    char parent[4200];
    snprintf(parent, sizeof parent, "%.*s", aslash == abs ? 1 : (int)(aslash - abs), abs);
    mxc_hostpath_rules rules = {.claims = true};
    char out[4200];
    int fd, dir;
    int rc = mxc_hostpath_resolve(&rules, parent, true, out, sizeof out, &fd, &dir, why, whysz);
    if (dir >= 0)
        close(dir);
    return rc < 0 ? rc : fd;
}

static int open_in(int dir, const char *name, int flags, const char *path, const char *what, mxc_error *e)
{
    int fd = openat(dir, name, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    int err = errno;
    close(dir);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "hostpath.open", err, NULL, "cannot open %s %.200s%s", what, path,
                          err == ELOOP ? " (it is a symlink)" : "");
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "hostpath.open", EINVAL, NULL, "%s %.200s is not a regular file",
                          what, path);
    }
    return fd;
}

int mxc_hostpath_open_log(const char *path, mxc_error *e)
{
    const char *name;
    char why[600] = "";
    int dir = path ? parent_of(path, &name, why, sizeof why) : -EINVAL;
    if (dir < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "log.open", -dir, NULL, "cannot use --log-file %.200s: %s",
                          path ? path : "", why[0] ? why : "its directory cannot be resolved");
    if (mxc_registry_inside_writable(dir, NULL, 0, true)) {
        close(dir);
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "log.open", EACCES, NULL,
                   "--log-file %.200s lies inside a directory that a live sandbox can write", path);
        mxc_err_set_remediation(e, "write the log outside every sandbox's workspace and read-write grants");
        return -1;
    }
    return open_in(dir, name, O_WRONLY | O_CREAT | O_APPEND, path, "--log-file", e);
}

int mxc_hostpath_open_read(const char *path, mxc_error *e)
{
    const char *name;
    char why[600] = "";
    int dir = parent_of(path, &name, why, sizeof why);
    if (dir < 0)
        return mxc_err_os(e, MXC_E_MALFORMED_REQUEST, "hostpath.open", -dir, NULL, "cannot read %.200s: %s", path,
                          why[0] ? why : "its directory cannot be resolved");
    return open_in(dir, name, O_RDONLY, path, "the request file", e);
}
