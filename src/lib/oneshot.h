/* oneshot.h — the process backend's one-shot runs.
 * Owns: a one-shot's whole life — its uid claim, PID 1 (which forks the
 * workload itself, born in every namespace and the cgroup), the relay,
 * and a teardown that leaves nothing; the CLI's early return on PID 1's
 * status report with a detached cleaner; the in-process handle that the
 * libmxc_ffi spawn functions use; and the dispatch of a one-shot request
 * to this backend or to isolation_session's. */
#ifndef MXC_ONESHOT_H
#define MXC_ONESHOT_H

#include <jansson.h>
#include <stdbool.h>

#include "cgroup.h"
#include "exec.h"
#include "request.h"

/* One-shot (containment process or isolation_session): runs the workload
 * with the given relays and leaves nothing behind.  *exit_code, *timed_out. */
int mxc_oneshot_run(const mxc_request *r, bool caller_exits, int in, int out, int err, int *exit_code, bool *timed_out,
                    mxc_error *e);

/* A one-shot for a caller that waits for all of it (libmxc_ffi's
 * mxc_run_json): containment process through mxc_oneshot_start, whose
 * cgroup is named per call (in-process callers run one-shots side by side),
 * driven to the end and finished before returning; other containments
 * through mxc_oneshot_run.  0 with *exit_code and *timed_out, or -1. */
int mxc_oneshot_run_to_end(const mxc_request *r, int in, int out, int err, int *exit_code, bool *timed_out,
                           mxc_error *e);

/* An in-process one-shot (containment process) handed back running: the
 * workload's stdio, waiter and terminator are proc's (mxc_exec_run drives
 * the timeout ladder and reaps; mxc_exec_kill), like a session exec's.
 * pty: stdin, stdout and stderr are one terminal of rows x cols whose master
 * is proc.out_fd.  After the workload is done (or to abandon it),
 * mxc_oneshot_finish kills what is left, removes the cgroup and releases the
 * run's uid claim.  The thread
 * that starts it should outlive it: PID 1 dies with that thread
 * (PR_SET_PDEATHSIG). */
typedef struct mxc_oneshot {
    mxc_proc proc;
    pid_t pid1;                   /* host pid of the sandbox's PID 1; 0 = none */
    unsigned long long pid1_start;
    int pid1_ctl;                 /* PID 1's control socket (its early status report); -1 = none */
    mxc_cgroup cg;
    struct mxc_plan *plan;
    mxc_exec_spec spec;
    char claim[24];               /* the run's claim (registry.h); "" = none, or handed to a cleaner */
    bool direct;                  /* PID 1 is our own child (the direct clone) */
} mxc_oneshot;

int mxc_oneshot_start(const mxc_request *r, bool pty, unsigned short rows, unsigned short cols, mxc_oneshot *os,
                      mxc_error *e);
void mxc_oneshot_finish(mxc_oneshot *os);
/* The handle behind a pointer, as a front holds it (iface/front.h says each). */
mxc_oneshot *mxc_oneshot_new(void);
void mxc_oneshot_delete(mxc_oneshot *os);
mxc_proc *mxc_oneshot_proc(mxc_oneshot *os);
pid_t mxc_oneshot_pid1(const mxc_oneshot *os);
/* For a single-threaded caller that may die by a signal while the workload
 * runs (the CLI on a person's terminal, which restores the terminal and
 * re-raises): a detached cleaner takes over what outlives PID 1 (the
 * cgroup, credentials, the uid claim) and does it once PID 1 is gone,
 * however the caller ends; mxc_oneshot_finish still does the rest.
 * 0, or -1 (nothing handed over: finish does it all). */
int mxc_oneshot_detach_cleanup(mxc_oneshot *os);

/* For --dry-run: the plan as JSON. */
json_t *mxc_plan_describe(const mxc_request *r, mxc_error *e);

#endif
