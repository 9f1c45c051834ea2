/* container.h — the session holder: the process that owns a sandbox's
 * namespaces and root.
 * Owns: creating user (MXC_INNER_UID inside = the plan's host uid; the
 * namespace owned by that uid, never by host root), mount, PID, IPC,
 * UTS, cgroup and (unless host network) network namespaces; the uid/gid
 * maps written by the privileged parent; the filesystem view; loopback;
 * the readiness handshake; reaping as PID 1; killing it.  The holder runs
 * no workload code itself. */
#ifndef MXC_CONTAINER_H
#define MXC_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"
#include "error.h"
#include "exec.h"
#include "plan.h"
#include "procs.h"

typedef struct {
    pid_t pid;                     /* host pid of PID 1 of the sandbox */
    pid_t first_child;             /* attached: our child, PID 1's parent; its exit status is PID 1's */
    unsigned long long start_time; /* /proc/PID/stat field 22: defeats pid reuse */
    int ctl_fd;                    /* handshake socket; -1 once released */
} mxc_holder;

/* One-shot: the workload PID 1 forks as soon as the view is ready (so it
 * is born inside every namespace and the cgroup, with no setns and no
 * second cgroup migration); PID 1 then exits with the workload's status. */
typedef struct {
    const mxc_exec_spec *spec;
    const mxc_exec_child *child;
} mxc_first_exec;

/* What a session's holder gets beyond a one-shot's: the socket it serves
 * exec requests on (mxc_exec_serve), and the sandbox's directory, where its
 * monitor writes how it died. */
typedef struct {
    int listen_fd;
    int dirfd;
    bool caller_exits; /* the caller exits once it answers (the CLI): its child may be the monitor */
    /* called once the holder exists, while it builds its view (on the other
     * core): the caller records what it can already (a failure fails the
     * spawn; the holder is killed).  May be NULL. */
    int (*record)(void *ctx, pid_t holder, unsigned long long start_time, mxc_error *e);
    void *record_ctx;
} mxc_holder_session;

/* Resolves the plan's view (mxc_fsview_open_sources rewrites p->grants
 * with the resolved paths), spawns the holder and waits until its view is
 * ready.  A session's holder (session != NULL) is detached: it outlives
 * the caller once mxc_holder_release is called, and a monitor — its reaper
 * outside the sandbox, in the caller's PID namespace — records how it
 * died; a one-shot's dies with its caller.  fx (one-shot only, may be
 * NULL): the workload PID 1 runs.  The sandbox's cgroup (cgroup_name, with
 * the plan's limits) is created and the holder born or moved into it; *cg
 * names it even on failure, for the caller to remove. */
int mxc_holder_spawn(mxc_plan *p, const char *cgroup_name, const mxc_holder_session *session, const mxc_first_exec *fx,
                     mxc_holder *h, mxc_cgroup *cg, mxc_error *e);
/* Tells a detached holder that its state is recorded and waits until it
 * has taken it (it is named mxc-holder from then on: a session); from here
 * on it lives until killed.  A holder whose caller dies before this exits,
 * and its monitor records MXC_HOLDER_NEVER_RELEASED as how it ended: no
 * crash, a start that never completed. */
#define MXC_HOLDER_NEVER_RELEASED "never released"

int mxc_holder_release(mxc_holder *h, mxc_error *e);
/* SIGKILLs the holder (the kernel then kills every process of its PID
 * namespace) and waits until it is gone. */
int mxc_holder_kill(pid_t pid, unsigned long long start_time, mxc_error *e);

#endif
