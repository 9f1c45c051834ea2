/* fsview.h — the sandbox's filesystem view.
 * Owns: resolving every policy path on the host (as the caller sees it, by
 * descriptor; a symlink is followed only where no sandbox can write it),
 * the detached (and, as root, idmapped) mount trees of the grants, and in
 * the holder the new root on tmpfs — system directories read-only, curated
 * /etc with a generated passwd/group, fresh /proc (hidepid, dangerous files
 * masked), minimal read-only /dev with a private devpts, private /tmp, the
 * workspace and the grants at their paths, denied paths masked — built from
 * descriptors only (openat2 RESOLVE_BENEATH|NO_SYMLINKS, mkdirat), with every
 * directory between a writable mount and a mask pinned (a mount point
 * cannot be renamed), then pivot_root; what is the same operation as
 * mxc-oci's (attaching a tree, a fresh filesystem, a mask, the /proc rules,
 * the devices and /dev's links) is applied by setupops.h's executor, with
 * this view's own walk and mask source.  Also the re-verification of those
 * masks inside a live session (a host edit that replaced a masked file). */
#ifndef MXC_FSVIEW_H
#define MXC_FSVIEW_H

#include <stdbool.h>

#include "error.h"
#include "plan.h"

typedef struct {
    char *at, *target; /* a symlink the caller's path went through, recreated in the view's own tmpfs */
} mxc_view_link;

#define MXC_MAX_VIEW_LINKS 64

typedef struct {
    int grant_fd[MXC_MAX_GRANTS]; /* per plan grant: a detached tree (root), an O_PATH fd (rootless,
                                     and denied entries), or -1 (absent on the host) */
    int workspace_fd;             /* -1: none */
    int etc_fd;                   /* the curated /etc, made by the caller (mxc_fsview_prepare_etc) while
                                     the holder is cloned and handed to it; -1: the holder makes it */
    bool cloned;                  /* detached trees (root); else O_PATH fds, cloned by the holder */
    mxc_view_link links[MXC_MAX_VIEW_LINKS];
    size_t nlinks;
} mxc_fsview_sources;

/* In the caller, before the holder exists: resolves every grant of the
 * plan and rewrites p->grants with the result (resolved paths, the
 * present/is_dir/on_link/covers flags, merged and re-sorted), opening the
 * sources.  A symlink in a path is followed only when the directory that
 * holds it is not writable by this sandbox or any live one (registry.h);
 * else the request is refused.  A denied symlink masks its target and the
 * link itself.  A denied or read-only path that is absent on the host
 * while a writable grant of this sandbox lies above it is refused (the
 * sandbox could create it: no mask can hold a name that does not exist).
 * As root each grant is idmapped from its owner to the plan's uid. */
int mxc_fsview_open_sources(mxc_plan *p, mxc_fsview_sources *s, mxc_error *e);
void mxc_fsview_close_sources(mxc_fsview_sources *s);

/* In the caller, root only, while the holder is being cloned (the caller
 * waits for it anyway): the sandbox's /etc as a detached read-only tmpfs
 * of the host's user namespace (host root's files, nobody's inside),
 * for the holder to attach (etc_fd).  -1 when the holder is to make it
 * itself: rootless, a grant, mask or symlink of the plan in /etc (mount
 * targets would have to be made in it), or any step failed. */
int mxc_fsview_prepare_etc(const mxc_plan *p, const mxc_fsview_sources *s);

/* In the holder (full capabilities in its user namespace, new mount
 * namespace, PID 1 of its PID namespace).  Returns 0 or -errno with *stage
 * set. */
int mxc_fsview_build(const mxc_plan *p, mxc_fsview_sources *s, const char **stage);

/* In a process inside a live sandbox's mount namespace with its
 * capabilities (before an exec): checks that every mask and read-only
 * grant still holds — the host may have replaced a masked file (sed -i,
 * git checkout: the kernel then drops the mount) or moved a directory —
 * and puts back what it can.  Returns 0, or -errno with e saying what
 * cannot be restored (the exec is then refused). */
int mxc_fsview_verify(const mxc_plan *p, mxc_error *e);

#endif
