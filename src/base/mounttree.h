/* mounttree.h — detached copies of mount trees, by descriptor.
 * Owns: cloning a mount (or the whole tree beneath it) into a detached
 * tree (open_tree OPEN_TREE_CLONE) and setting its attributes — flags,
 * propagation, an idmapping onto a user namespace (mount_setattr) —
 * before it is attached anywhere, so that nobody ever sees it unflagged. */
#ifndef MXC_MOUNTTREE_H
#define MXC_MOUNTTREE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint64_t set, clr;    /* MOUNT_ATTR_* */
    uint64_t propagation; /* MS_PRIVATE, MS_SLAVE, ...; 0: left as it is */
    bool idmap;           /* idmapped onto userns_fd's user namespace (MOUNT_ATTR_IDMAP) */
    int userns_fd;
    bool recursive;       /* every mount of the tree, not only its top */
} mxc_tree_attr;

/* A detached copy (close-on-exec) of the mount at path beneath dirfd (""
 * : dirfd's own), the whole tree beneath it when recursive; a final
 * symlink is never followed when nofollow.  The descriptor, or -errno. */
int mxc_tree_open(int dirfd, const char *path, bool recursive, bool nofollow);
/* a's attributes set on the tree: 0, or -errno. */
int mxc_tree_setattr(int tree, const mxc_tree_attr *a);
/* Both: a copy of the tree at path beneath dirfd (recursive as a says)
 * with a's attributes set: the descriptor, or -errno (nothing left open). */
int mxc_tree_clone(int dirfd, const char *path, const mxc_tree_attr *a);

#endif
