/* harden.h — per-process hardening of a workload, in the canonical order.
 * Owns: capability and securebit dropping, no_new_privs, rlimits, closing
 * inherited fds, Landlock (landlock.c) and the seccomp filter
 * (seccomp_filter.c).  Runs in the forked workload child only; must never be
 * called in a process that goes on to run libmxc code. */
#ifndef MXC_HARDEN_H
#define MXC_HARDEN_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "plan.h"

#define MXC_LANDLOCK_ABI_NEEDED 3 /* REFER (2) and TRUNCATE (3) are part of what we promise */

/* Returns the kernel's Landlock ABI (0 = unavailable). */
int mxc_landlock_abi(void);
/* backend_unavailable (with the remediation) when the kernel's Landlock
 * is older than what mxc promises; checked before anything is made. */
int mxc_landlock_require(mxc_error *e);
/* The host network shares the host's abstract unix sockets; only
 * Landlock's scope (ABI 6) keeps a sandbox from connecting to them:
 * backend_unavailable below that. */
#define MXC_LANDLOCK_ABI_SCOPE 6
int mxc_landlock_require_scope(mxc_error *e);
/* Restricts the calling thread to the plan's view.  Returns 0 or -errno;
 * *stage names the failing step. */
int mxc_landlock_apply(const mxc_plan *p, const char **stage);
/* Loads the seccomp filter (no_memfd: the variant that also refuses
 * memfd_create).  Returns 0 or -errno. */
int mxc_seccomp_apply(bool no_memfd);

/* Closes every fd above 2 but the given ones (keep is sorted in place). */
void mxc_close_all_but(int *keep, size_t n);
/* A fresh process's signal state before an exec: every disposition
 * default, nothing blocked (callers ignore SIGPIPE, holders block what
 * their signalfd reads). */
void mxc_reset_signals(void);

/* The whole checklist, after the namespaces and the root are in place:
 * drop caps -> no_new_privs -> Landlock -> seccomp (last: it would block the
 * earlier steps).  keep_fd stays open (CLOEXEC) for error reporting.
 * Returns 0 or -errno with *stage set. */
int mxc_harden_self(const mxc_plan *p, int keep_fd, const char **stage);

#endif
