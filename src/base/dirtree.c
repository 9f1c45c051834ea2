/* dirtree.c — see dirtree.h. */
#include "dirtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 256

/* A directory MAX_DEPTH levels down, moved up into top (the tree's own top directory) under a
 * name of its own, for the next pass to empty: no tree is too deep to remove, and the chain of
 * descriptors held stays MAX_DEPTH long (a workload that nested its workspace 300 deep made the
 * removal fail, and deprovision left it on disk with no claim naming it).  0, or -errno. */
static int hoist(int dirfd, const char *name, int top)
{
    static unsigned n;
    for (int tries = 0; tries < 100; tries++) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, ".mxc-deep-%d-%u", (int)getpid(), n++);
        if (renameat2(dirfd, name, top, tmp, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* what is below dirfd (closed on return); *again once something was hoisted into top */
static int empty_tree(int dirfd, int top, int depth, bool *again)
{
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
        fchmod(sub, 0700); /* writable: emptied, or moved (its ".." rewritten) */
        if (depth + 1 >= MAX_DEPTH) {
            close(sub);
            int r = hoist(dirfd, de->d_name, top);
            if (r < 0)
                rc = r;
            else
                *again = true;
            continue;
        }
        int r = empty_tree(sub, top, depth + 1, again);
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
    int rc;
    bool again;
    unsigned passes = 0;
    do { /* each pass empties MAX_DEPTH levels; what lies deeper is hoisted for the next */
        again = false;
        int pass = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own position: read again */
        rc = pass < 0 ? -errno : ++passes > 65536 ? (close(pass), -ELOOP) : empty_tree(pass, fd, 0, &again);
    } while (rc == 0 && again);
    close(fd);
    if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
        rc = -errno;
    return rc;
}
