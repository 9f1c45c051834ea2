/* mounttree.c — see mounttree.h. */
#include "mounttree.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/mount.h>
#include <unistd.h>

int mxc_tree_open(int dirfd, const char *path, bool recursive, bool nofollow)
{
    unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (path[0] ? 0 : AT_EMPTY_PATH) |
                     (recursive ? AT_RECURSIVE : 0) | (nofollow ? AT_SYMLINK_NOFOLLOW : 0);
    int tree = open_tree(dirfd, path, flags);
    return tree < 0 ? -errno : tree;
}

int mxc_tree_setattr(int tree, const mxc_tree_attr *a)
{
    struct mount_attr attr = {.attr_set = a->set, .attr_clr = a->clr, .propagation = a->propagation};
    if (a->idmap) {
        attr.attr_set |= MOUNT_ATTR_IDMAP;
        attr.userns_fd = (uint64_t)a->userns_fd;
    }
    unsigned flags = AT_EMPTY_PATH | (a->recursive ? AT_RECURSIVE : 0);
    return mount_setattr(tree, "", flags, &attr, sizeof attr) < 0 ? -errno : 0;
}

int mxc_tree_clone(int dirfd, const char *path, const mxc_tree_attr *a)
{
    int tree = mxc_tree_open(dirfd, path, a->recursive, false);
    if (tree < 0)
        return tree;
    int rc = mxc_tree_setattr(tree, a);
    if (rc < 0) {
        close(tree);
        return rc;
    }
    return tree;
}

int mxc_tree_fresh(const char *type, const char *const *opts, unsigned attrs)
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
