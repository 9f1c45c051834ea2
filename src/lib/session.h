/* session.h — the isolation_session backend's phases and the one-shot
 * backends.
 * Owns: provision (identity, workspace, fixed policy), start (holder),
 * exec (into the live holder), stop, deprovision, the idempotence codes,
 * and the one-shot lifecycles of both backends.  Every phase on a sandbox
 * holds its flock; exec releases it once the workload runs, so execs in one
 * session run side by side. */
#ifndef MXC_SESSION_H
#define MXC_SESSION_H

#include <jansson.h>

#include "exec.h"
#include "request.h"

/* Non-exec phases: *result receives the success object (new reference). */
int mxc_session_phase(const mxc_request *r, json_t **result, mxc_error *e);

/* exec: starts the workload in the live session (lock released on return). */
int mxc_session_exec_start(const mxc_request *r, bool pty, mxc_proc *proc, mxc_error *e);

/* One-shot (containment process or isolation_session): runs the workload
 * with the given relays and leaves nothing behind.  *exit_code, *timed_out. */
int mxc_oneshot_run(const mxc_request *r, bool caller_exits, int in, int out, int err, int *exit_code, bool *timed_out,
                    mxc_error *e);

/* For --dry-run: the plan as JSON. */
json_t *mxc_plan_describe(const mxc_request *r, mxc_error *e);

#endif
