/* session.h — the isolation_session backend.
 * Owns: provision (identity, workspace, fixed policy: staged, then
 * committed), start (holder, monitor, holder record), exec (into the live
 * holder, no lock on the way), stop, deprovision (a tombstone first, then
 * the teardown), the teardown of a damaged or interrupted sandbox, the
 * idempotence codes, and this backend's one-shot (the whole lifecycle in
 * one call).  Every phase but exec holds the sandbox's flock. */
#ifndef MXC_SESSION_H
#define MXC_SESSION_H

#include <jansson.h>

#include "exec.h"
#include "request.h"

/* Non-exec phases: *result receives the success object (new reference). */
int mxc_session_phase(const mxc_request *r, json_t **result, mxc_error *e);

/* exec: starts the workload in the live session. */
int mxc_session_exec_start(const mxc_request *r, bool pty, mxc_proc *proc, mxc_error *e);

/* containment isolation_session, one-shot: provision, start, exec, stop,
 * deprovision in one call, nothing left behind. */
int mxc_session_oneshot(const mxc_request *r, int in, int out, int err, int *code, bool *timed_out, mxc_error *e);

/* Finishes an entombed or interrupted sandbox at path (a tombstone or a
 * staging directory of root): its holder, cgroup, claim, workspace and
 * files.  Used by deprovision, by a later call that finds a dead one's
 * tombstone, and by the sweeper.  *report (may be NULL) gets what was done. */
void mxc_session_finish(const char *path, json_t *report);

#endif
