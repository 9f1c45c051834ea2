/* exec.h — running one workload inside a live sandbox.
 * Owns: joining the holder's namespaces with setns(pidfd), the per-process
 * hardening (harden.c), the workload's stdio (pipes, or a pty in attached
 * mode — never the caller's terminal), the live relay, the 3-tier timeout
 * ladder (close stdin -> SIGTERM -> SIGKILL) with its sticky TimedOut, the
 * terminator, and the exit status (signal N -> 128+N). */
#ifndef MXC_EXEC_H
#define MXC_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cgroup.h"
#include "error.h"
#include "plan.h"

#define MXC_LADDER_TERM_AFTER_MS 1000 /* close stdin, then this long before SIGTERM */
#define MXC_LADDER_KILL_AFTER_MS 2000 /* SIGTERM, then this long before SIGKILL */

typedef struct mxc_proc {
    pid_t joiner;     /* our child whose exit status is the workload's: the setns joiner,
                         or (one-shot) the holder's first child */
    int joiner_pidfd;
    int ctl_fd;       /* our end of the control socket while starting; -1 after */
    int killall_pidfd; /* one-shot: PID 1 of the sandbox, the last tier's kill-all; -1 */
    int status_fd;    /* one-shot: where PID 1 reports the workload's status first; -1 */
    bool reported;    /* ... and it did */
    bool detach_teardown; /* the caller exits next: do not wait for PID 1's teardown */
    bool workload_is_child; /* session exec: the workload is our own child (the joiner's sibling) */
    pid_t workload;   /* host pid; also its process group */
    int in_fd, out_fd, err_fd; /* our ends; -1 when closed. With a pty out_fd is the master and in_fd == -1 */
    bool pty;
    uint32_t timeout_ms;
    struct timespec started;
    int ladder;       /* 0 none, 1 stdin closed, 2 SIGTERM sent, 3 SIGKILL sent */
    bool finished, timed_out;
    int exit_code;
    bool has_cgroup;  /* this exec's own cgroup: the kill-all of its last tier */
    mxc_cgroup cgroup;
} mxc_proc;

/* The workload's ends of its stdio and of the control socket, handed to
 * whichever process forks it. */
typedef struct {
    int in, out, err, ctl;
} mxc_exec_child;

/* Creates the stdio (pipes, or a pty) and the control socket. */
int mxc_exec_prepare(bool pty, uint32_t timeout_ms, mxc_proc *proc, mxc_exec_child *c, mxc_error *e);
void mxc_exec_child_close(mxc_exec_child *c);
/* In a process inside every namespace of the sandbox and its cgroup, as
 * uid 0 of the sandbox: setsid, stdio, cwd, hardening, execve. */
_Noreturn void mxc_exec_workload(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c);
/* Starts mxc_exec_workload in a child (vfork-like, falling back to fork
 * semantics); sibling: a child of our parent instead (CLONE_PARENT).
 * Returns its pid or -1. */
pid_t mxc_exec_spawn(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c, bool sibling);
/* A wait status as the workload's exit code: its code, or 128+N for signal N. */
int mxc_exit_code(int status);

/* PID 1 of a one-shot: the workload's status, before PID 1 exits. */
void mxc_exec_report_exit(int fd, int code);

/* Tells the caller the workload's pid, once mxc_exec_spawn returned (with
 * vfork semantics the workload has exec'd or failed by then, so the
 * caller's one wake-up finds everything queued).  translate: we live in
 * the sandbox's PID namespace and the kernel must translate. */
void mxc_exec_announce(int ctl, pid_t w, bool translate);
/* In the caller, once the process that forks the workload runs: closes
 * the child ends and waits until the workload exec'd (0) or failed (-1).
 * supervisor is our child whose exit status is the workload's; killall_pid
 * (> 0) is SIGKILLed by the last tier. */
int mxc_exec_adopt(mxc_proc *proc, mxc_exec_child *c, pid_t supervisor, int killall_pid, mxc_error *e);

/* Session exec: a joiner enters the holder with setns(pidfd) and forks
 * the workload.  cg: the sandbox cgroup the workload is born in (NULL: none). */
int mxc_exec_start(pid_t holder, const mxc_plan *p, const mxc_exec_spec *s, const mxc_cgroup *cg, bool pty,
                   mxc_proc *proc, mxc_error *e);

/* Runs until the workload is done: relays (when the fds are >= 0) caller
 * stdin -> workload, workload stdout/stderr -> out/err, and drives the
 * ladder.  Sets proc->finished, timed_out, exit_code. */
int mxc_exec_run(mxc_proc *proc, int relay_in, int relay_out, int relay_err, mxc_error *e);

/* SIGKILL to the workload's process group.  0 = accepted (or already
 * exited), -1 = refused. */
int mxc_exec_kill(mxc_proc *proc);
void mxc_exec_close(mxc_proc *proc);

#endif
