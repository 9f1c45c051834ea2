/* exec.h — running one workload inside a sandbox.
 * Owns: the workload's own setup (stdio, cwd, signals, hardening, execve),
 * its vfork-style spawn, a session exec (the holder forks an exec init on
 * request over its socket: no setns and no cgroup migration on the call
 * path; the init is a subreaper that reports the exit, kills the exec's
 * whole tree on request or when its caller goes away, and outlives the
 * workload only for what the workload left running), the workload's stdio
 * (pipes, or a pty of a devpts instance of the exec's own — never the
 * caller's terminal), the live relay with its bounded drain, the 3-tier
 * timeout ladder (close stdin -> SIGTERM -> SIGKILL of every process of the
 * exec) with its sticky TimedOut, the terminator, and the exit status
 * (signal N -> 128+N). */
#ifndef MXC_EXEC_H
#define MXC_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cgroup.h"
#include "error.h"
#include "iface/front.h" /* mxc_exec_killer */
#include "plan.h"
#include "termfilter.h"

#define MXC_LADDER_TERM_AFTER_MS 1000 /* close stdin, then this long before SIGTERM */
#define MXC_LADDER_KILL_AFTER_MS 2000 /* SIGTERM, then this long before SIGKILL */
/* Once the workload has exited, output still written by what it left
 * running is relayed until EOF, as long as it keeps coming (no gap longer
 * than MXC_DRAIN_IDLE_MS) and for at most MXC_DRAIN_MAX_MS. */
#define MXC_DRAIN_IDLE_MS 250
#define MXC_DRAIN_MAX_MS 10000

/* A one-shot's workload is forked by its sandbox's PID 1, whose own exit
 * status is the workload's. */
typedef struct {
    pid_t child;         /* our child whose exit status is the workload's (PID 1, or the C1 above it) */
    int child_pidfd;
    int pid1_pidfd;      /* PID 1: SIGKILL to it ends the whole sandbox (the last tier) */
    int report_fd;       /* where PID 1 reports the workload's status first; not ours to close */
    bool detach;         /* the caller exits next: do not wait for PID 1's teardown */
} mxc_oneshot_link;

/* A session exec talks to its exec init over one connection, which says
 * everything: the workload's pid, its exit status, a kill request. */
typedef struct {
    int conn;
} mxc_session_link;

typedef enum { MXC_PROC_ONESHOT = 0, MXC_PROC_SESSION } mxc_proc_role;

typedef struct mxc_proc {
    pid_t workload;      /* host pid; also its process group */
    int in_fd, out_fd, err_fd; /* our ends; -1 when closed. With a pty out_fd is the master and in_fd == -1 */
    bool pty;
    uint32_t timeout_ms;
    struct timespec started;
    int ladder;          /* 0 none, 1 stdin closed, 2 SIGTERM sent, 3 SIGKILL sent */
    bool finished, timed_out, reported;
    int exit_code;
    int ctl_fd;          /* while starting: the channel the start reports on; -1 after */
    /* attached to a person's terminal (pty): */
    int resize_fd;       /* readable when the caller's terminal changed size (SIGWINCH, ttyattach.h); -1 none */
    struct mxc_termfilter *filter; /* applied to the workload's terminal output; NULL: raw */
    mxc_proc_role role;
    union {
        mxc_oneshot_link oneshot;
        mxc_session_link session;
    };
} mxc_proc;

/* The workload's ends of its stdio and of the channel it reports a failed
 * start on, handed to whichever process forks it. */
typedef struct {
    int in, out, err, ctl;
} mxc_exec_child;

/* Creates the stdio (pipes; with a pty the exec init makes it) and the
 * start channel of a one-shot. */
int mxc_exec_prepare(bool pty, uint32_t timeout_ms, mxc_proc *proc, mxc_exec_child *c, mxc_error *e);
void mxc_exec_child_close(mxc_exec_child *c);
/* In a process inside every namespace of the sandbox and its cgroup, as
 * the sandbox's uid: setsid, signals reset, stdio, cwd, hardening, execve. */
_Noreturn void mxc_exec_workload(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c);
/* Starts mxc_exec_workload in a child (vfork-like, falling back to fork
 * semantics).  Returns its pid or -1. */
pid_t mxc_exec_spawn(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c);
/* A wait status as the workload's exit code: its code, or 128+N for signal N. */
int mxc_exit_code(int status);

/* PID 1 of a one-shot: the workload's status, before PID 1 exits. */
void mxc_exec_report_exit(int fd, int code);
/* Tells the caller the workload's pid, once mxc_exec_spawn returned (with
 * vfork semantics the workload has exec'd or failed by then), as
 * SCM_CREDENTIALS: the kernel translates it into the caller's PID
 * namespace. */
void mxc_exec_announce(int ctl, pid_t w);
/* One-shot, in the caller, once PID 1 runs: closes the child ends and
 * waits until the workload exec'd (0) or failed (-1).  child: our child
 * whose exit status is the workload's; pid1: SIGKILLed by the last tier. */
int mxc_exec_adopt(mxc_proc *proc, mxc_exec_child *c, pid_t child, pid_t pid1, mxc_error *e);

/* Makes a pty from the devpts at /dev/pts of the current mount namespace
 * (the sandbox's, or an exec's own), sets s's size, sends the master on
 * ctl (the caller adopts it as proc->out_fd) and gives the slave to c's
 * stdio.  0, or -1 with errno. */
int mxc_exec_make_pty(int ctl, const mxc_exec_spec *s, mxc_exec_child *c);

/* Session exec, in the caller: asks the holder listening on sock (a path,
 * at most 107 bytes) to run s, and waits until the workload runs. */
int mxc_exec_start(const char *sock, const mxc_exec_spec *s, bool pty, mxc_proc *proc, mxc_error *e);
/* In the holder: serves one exec request arriving on conn (verifies the
 * view's masks, forks the exec init, closes conn).  listen_fd and ctl are
 * the holder's own, which the exec init must not keep. */
void mxc_exec_serve(const mxc_plan *p, int conn, int listen_fd, int ctl);

/* Runs until the workload is done: relays (when the fds are >= 0) caller
 * stdin -> workload, workload stdout/stderr -> out/err, drives the ladder,
 * and drains what is left as MXC_DRAIN_* say.  Sets finished, timed_out,
 * exit_code. */
int mxc_exec_run(mxc_proc *proc, int relay_in, int relay_out, int relay_err, mxc_error *e);

/* The relay above for a terminal another front made (mxc-oci's `run`/`exec -t` without
 * --console-socket): in -> master and master -> out until the process behind pidfd exits and
 * the output drained (as a one-shot's), the caller's terminal in attached (ttyattach.h: raw,
 * restored on a signal that would end the caller — one it handles stays its own — SIGWINCH's
 * size onto master).  master and pidfd stay the caller's.  0, or -1 when nothing could run. */
int mxc_exec_relay_terminal(int master, int pidfd, int in, int out);

/* SIGKILL to every process of the exec.  0 = accepted (or already
 * exited), -1 = refused. */
int mxc_exec_kill(mxc_proc *proc);
void mxc_exec_close(mxc_proc *proc);

/* A started workload behind a pointer, as a front holds it (iface/front.h
 * says each). */
mxc_proc *mxc_proc_new(void);
void mxc_proc_delete(mxc_proc *p);
pid_t mxc_proc_workload(const mxc_proc *p);
void mxc_proc_take_stdio(mxc_proc *p, int *in, int *out, int *err);
int mxc_proc_terminal(const mxc_proc *p);
int mxc_proc_exit_code(const mxc_proc *p);
bool mxc_proc_timed_out(const mxc_proc *p);

/* What it takes to kill a started exec from another thread while one
 * drives mxc_exec_run: taken once, fired any number of times, dropped
 * (mxc_exec_killer: iface/front.h, the FFI holds one). */
void mxc_exec_killer_take(const mxc_proc *proc, mxc_exec_killer *k);
void mxc_exec_killer_fire(const mxc_exec_killer *k);
void mxc_exec_killer_drop(mxc_exec_killer *k);

/* Diagnostics of the engine (mxc-exec --debug, --log-file): to
 * mxc_debug_fd (2 unless a log file was given) when on.  They never share
 * a descriptor with a workload's stderr on purpose: a log file is opened
 * apart and stays apart. */
extern bool mxc_debug;
extern int mxc_debug_fd;
void mxc_debugf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
