/* fsview.h — the sandbox's filesystem view.
 * Owns: the new root on tmpfs (system directories read-only, curated /etc
 * with a generated passwd/group, fresh /proc with its dangerous files
 * masked, minimal /dev with a private devpts, private /tmp, the workspace
 * and the grants bound at their own paths, denied paths masked), then
 * pivot_root.  Sources are opened by the privileged parent without
 * following symlinks (mxc_fsview_open_sources) and bound through their fds,
 * so nothing the workload can plant redirects a mount. */
#ifndef MXC_FSVIEW_H
#define MXC_FSVIEW_H

#include <stdbool.h>

#include "error.h"
#include "plan.h"

typedef struct {
    int grant_fd[MXC_MAX_GRANTS]; /* -1: host path absent (a warning, not an error) */
    int workspace_fd;             /* -1: none */
    bool cloned;                  /* detached trees (root); else O_PATH fds, cloned by the holder */
} mxc_fsview_sources;

/* In the parent: O_PATH fds of every grant, resolved with
 * RESOLVE_NO_SYMLINKS (a symlink anywhere in a granted path is refused).
 * As root they become detached mount trees at once; rootless, the parent
 * may not clone mounts of the host's namespace, so the holder re-resolves
 * each path in its own (copied) mount namespace, checks it is the same
 * inode the parent saw, and clones it there. */
int mxc_fsview_open_sources(const mxc_plan *p, mxc_fsview_sources *s, mxc_error *e);
void mxc_fsview_close_sources(mxc_fsview_sources *s);

/* In the holder (uid 0 of its user namespace, new mount namespace, PID 1
 * of its PID namespace).  Returns 0 or -errno with *stage set. */
int mxc_fsview_build(const mxc_plan *p, mxc_fsview_sources *s, const char **stage);

#endif
