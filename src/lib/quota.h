/* quota.h — the per-sandbox workspace size limit (D7).
 * Owns: MXC_WORKSPACE_MAX (bytes, or with a K/M/G/T suffix, powers of
 * 1024; unset, empty or 0: no limit), whether the workspace root's
 * filesystem can enforce one (a project quota that the filesystem already
 * enforces: ext4 mounted with prjquota, XFS with pquota — mxc never changes
 * a host filesystem's settings), and applying it: the workspace gets the
 * sandbox's uid as its project id (inherited by everything made in it) and
 * that project a hard block limit.  Rootless there is none (setting a
 * project's limit needs CAP_SYS_ADMIN).  A limit asked for where it cannot
 * be enforced is refused (backend_unavailable), never ignored. */
#ifndef MXC_QUOTA_H
#define MXC_QUOTA_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* *bytes: the limit asked for (0: none); -1 when MXC_WORKSPACE_MAX is malformed. */
int mxc_quota_requested(unsigned long long *bytes, mxc_error *e);
/* Whether a limit can be enforced on the filesystem of dir (or of its
 * nearest existing ancestor); reason[] says why not, or how. */
bool mxc_quota_available(const char *dir, char *reason, size_t reasonsz);
/* backend_unavailable, with the reason, when it cannot. */
int mxc_quota_require(const char *dir, mxc_error *e);
int mxc_quota_apply(const char *workspace, unsigned project, unsigned long long bytes, mxc_error *e);
/* Lifts the project's limit (its workspace is about to go). */
void mxc_quota_clear(const char *workspace, unsigned project);

#endif
