/* hostpath.h — host paths that the caller's side opens, resolved safely.
 * Owns: walking a path as the caller sees it, one component at a time from
 * "/" (O_PATH|O_NOFOLLOW, never into /proc), following a symlink only when
 * the directory that holds it is not writable by a sandbox (registry.h);
 * and opening the files the executor writes on its caller's behalf (the
 * log file) by descriptor, refused inside anything a live sandbox can
 * write, with no symlink in its path, never as a controlling terminal.  Used for
 * policy paths (fsview.c) and by the CLIs. */
#ifndef MXC_HOSTPATH_H
#define MXC_HOSTPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef struct {
    const char *const *own;  /* host paths the sandbox being made can write */
    size_t nown;
    bool claims;             /* live sandboxes' writable areas count too */
    void (*on_link)(void *ctx, const char *at, const char *target); /* each symlink followed */
    void *ctx;
} mxc_hostpath_rules;

/* Resolves path.  A symlink is followed (up to 40) only when the directory
 * holding it is not writable by the sandbox being made or (claims) a live
 * one; follow_final says whether a trailing symlink is followed at all.
 * 0: *fd is an O_PATH fd of the object, *dir of the directory holding it,
 * out its canonical path.  -ENOENT: *dir is the deepest directory that
 * exists, out the path as far as it resolved plus the rest.  Other
 * -errno: why[] says what. */
int mxc_hostpath_resolve(const mxc_hostpath_rules *rules, const char *path, bool follow_final, char *out,
                         size_t outsz, int *fd, int *dir, char *why, size_t whysz);

/* Opens a file the executor writes for its caller (--log-file) for
 * appending, creating it 0600: its directory walked from "/" with no
 * symlink in any component (a link planted by a sandbox that has ended, or
 * whose grants are claimed only later, is invisible to the live claims),
 * refused when it lies inside what a live sandbox can write; the file
 * itself opened O_NOFOLLOW|O_NOCTTY|O_APPEND, regular, with one link.
 * Returns the fd, or -1 with *e set (operation "log.open"). */
int mxc_hostpath_open_log(const char *path, mxc_error *e);

/* Opens a file the executor reads for its caller (--config FILE): its
 * directory resolved as above (no link a sandbox could have planted), the
 * file O_NOFOLLOW|O_NOCTTY and regular; it may lie inside a sandbox's
 * workspace (a caller stages requests there).  Relative paths are taken
 * from the current directory as they are.  Returns the fd or -1, *e set. */
int mxc_hostpath_open_read(const char *path, mxc_error *e);

/* Refuses (policy_validation, *e set, -1) a read-write or read-only grant
 * (what: "read-write", "read-only") whose directory is, or contains, mxc's
 * state root, claims directory (/var/lib/mxc/claims; rootless
 * <private dir>/mxc-claims, state.h) or workspace root, or lies inside the state
 * root or claims directory.  Compared by device and inode from descriptors
 * (the grant as the kernel resolves it), walking up with "..".  0 if fine
 * or if the path does not exist. */
int mxc_hostpath_check_grant(const char *path, const char *what, mxc_error *e);

/* The same rule over another owner's places (mxc-gateway's state, audit
 * directory, socket): a grant that is or covers any of own, or (inside_too)
 * lies inside one, is refused with remedy as the remediation.  A place
 * that is a file (a socket, a key) is covered by itself and by every
 * directory above it. */
typedef struct {
    const char *path, *name;
    bool inside_too;
} mxc_hostpath_owned;
int mxc_hostpath_check_grant_against(const char *path, const char *what, const mxc_hostpath_owned *own, size_t nown,
                                     const char *remedy, mxc_error *e);

#endif
