/* dirtree.c — see dirtree.h. */
#include "dirtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* what is below dirfd (closed on return) */
static int empty_tree(int dirfd, int depth)
{
    if (depth > 256) {
        close(dirfd);
        return -ELOOP;
    }
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return -errno;
    }
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (unlinkat(dirfd, de->d_name, 0) == 0)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            rc = -errno;
            continue;
        }
        int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
            rc = -errno;
            continue;
        }
        fchmod(sub, 0700);
        int r = empty_tree(sub, depth + 1);
        if (r < 0)
            rc = r;
        if (unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0)
            rc = -errno;
    }
    closedir(d);
    return rc;
}

int mxc_remove_tree_at(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    int rc = empty_tree(fd, 0);
    if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
        rc = -errno;
    return rc;
}
