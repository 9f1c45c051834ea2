/* dirtree.h — a directory tree removed by descriptor.
 * Owns: rm -rf of a name under a directory descriptor, O_NOFOLLOW at every
 * level (a link planted in the tree is removed, never followed), each
 * directory made 0700 before it is emptied; one 256 levels down is moved
 * up to the top and emptied by another pass (any depth).  The one
 * removal the engine's state directories and workspaces (state.c) and
 * mxc-oci's container directories and overlay layers use.  Base: no engine
 * header. */
#ifndef MXC_DIRTREE_H
#define MXC_DIRTREE_H

/* name under dirfd (AT_FDCWD and a path: that path) and all in it: 0 (also
 * when name is absent), or the -errno of a failure, what could be removed
 * removed and name left. */
int mxc_remove_tree_at(int dirfd, const char *name);

#endif
