/* tmpcopy.c — see tmpcopy.h. */
#include "tmpcopy.h"
#include "fdio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 64

static int copy_file(int src, int dst)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(src, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -1 : 0;
        if (!mxc_write_all(dst, buf, (size_t)n))
            return -1;
    }
}

/* owner (an id the container does not map shows as the overflow id and is kept as that) and times */
static void meta(int dir, const char *name, const struct stat *st)
{
    (void)!fchownat(dir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW); /* best effort: see above */
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    (void)utimensat(dir, name, ts, AT_SYMLINK_NOFOLLOW);
}

static int copy_dir(int src, int dst, int depth, mxc_error *e)
{
    if (depth > MAX_DEPTH) {
        return mxc_err(e, MXC_E_BACKEND_ERROR, "more than %d levels of directories", MAX_DEPTH);
    }
    int fd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "reading a directory: %s", strerror(errno));
    }
    int rc = 0;
    for (struct dirent *de; rc == 0 && (de = readdir(d));) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        struct stat st;
        if (fstatat(src, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* gone meanwhile */
        mode_t mode = st.st_mode & 01777; /* never set-uid or set-gid */
        if (S_ISDIR(st.st_mode)) {
            int s = -1, t = -1;
            if (mkdirat(dst, n, 0700) < 0 ||
                (s = openat(src, n, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
                (t = openat(dst, n, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                rc = mxc_err(e, MXC_E_BACKEND_ERROR, "%s: %s", n, strerror(errno));
            } else
                rc = copy_dir(s, t, depth + 1, e);
            if (s >= 0)
                close(s);
            if (t >= 0)
                close(t);
            if (rc == 0 && fchmodat(dst, n, mode, 0) < 0)
                rc = mxc_err(e, MXC_E_BACKEND_ERROR, "%s: %s", n, strerror(errno));
        } else if (S_ISREG(st.st_mode)) {
            int s = openat(src, n, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
            int t = s < 0 ? -1 : openat(dst, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (s < 0 || t < 0 || copy_file(s, t) < 0 || fchmod(t, mode) < 0) {
                rc = mxc_err(e, MXC_E_BACKEND_ERROR, "%s: %s", n, strerror(errno));
            }
            if (s >= 0)
                close(s);
            if (t >= 0)
                close(t);
        } else if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t len = readlinkat(src, n, target, sizeof target - 1);
            if (len < 0 || (target[len] = '\0', symlinkat(target, dst, n)) < 0) {
                rc = mxc_err(e, MXC_E_BACKEND_ERROR, "%s: %s", n, strerror(errno));
            }
        } else if (S_ISFIFO(st.st_mode)) {
            if (mkfifoat(dst, n, mode & 0777) < 0) {
                rc = mxc_err(e, MXC_E_BACKEND_ERROR, "%s: %s", n, strerror(errno));
            }
        } else
            continue; /* a device node or a socket: not made in a user namespace */
        if (rc == 0)
            meta(dst, n, &st);
    }
    closedir(d);
    return rc;
}

int oci_tmpcopyup(int target, int tree, mxc_error *e)
{
    struct stat st;
    if (fstat(target, &st) < 0 || !S_ISDIR(st.st_mode))
        return 0; /* nothing there to copy (a file target is made empty) */
    int rc = copy_dir(target, tree, 0, e);
    int root = rc == 0 ? openat(tree, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (root >= 0) {
        (void)!fchown(root, st.st_uid, st.st_gid);
        (void)fchmod(root, st.st_mode & 01777);
        close(root);
    }
    return rc;
}
