/* mounttree.c — see mounttree.h. */
#include "mounttree.h"

#include <errno.h>
#include <fcntl.h>
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
