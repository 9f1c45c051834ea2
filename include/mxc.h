/* mxc.h — the public, stable C ABI of libmxc.
 *
 * Every entry point takes the same JSON request the CLI (mxc-exec) reads and
 * answers with the same JSON envelope the CLI prints: {"result":{...}} or
 * {"error":{...}}.  Strings returned by the library are freed with mxc_free. */
#ifndef MXC_H
#define MXC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MXC_VERSION "0.1.0"

/* Non-exec state-aware phases (provision, start, stop, deprovision).
 * Returns 0 on success, -1 on error; *response_json always receives one
 * envelope (free with mxc_free).  exec requests are refused here: use
 * mxc_state_aware_exec or mxc_state_aware_exec_attached. */
int mxc_state_aware(const char *request_json, char **response_json);

void mxc_free(void *p);

/* ---- in-process exec (spec 000, "In-process callers") ---------------- */

typedef struct mxc_exec_handle mxc_exec_handle;

typedef enum { MXC_EXEC_EXITED = 0, MXC_EXEC_TIMED_OUT = 1 } mxc_exec_outcome_kind;

typedef struct {
    mxc_exec_outcome_kind kind;
    int exit_code; /* valid when kind == MXC_EXEC_EXITED; signal N -> 128+N */
} mxc_exec_outcome;

/* Starts an exec phase request inside a live session and returns at once.
 * On failure returns -1 and *error_json receives an {"error":...} envelope. */
int mxc_state_aware_exec(const char *request_json, mxc_exec_handle **handle, char **error_json);

/* The workload's stdio.  The handle owns these fds; they stay valid until
 * mxc_exec_handle_free.  A caller may close stdin early with
 * mxc_exec_close_stdin to send EOF. */
int mxc_exec_stdin_fd(const mxc_exec_handle *h);
int mxc_exec_stdout_fd(const mxc_exec_handle *h);
int mxc_exec_stderr_fd(const mxc_exec_handle *h);
void mxc_exec_close_stdin(mxc_exec_handle *h);

/* Waiter: blocks until the workload has exited (or the process.timeout
 * ladder has ended it).  A spent deadline is sticky: TimedOut is reported
 * even if an exit is observed after the deadline.  Idempotent. */
int mxc_exec_wait(mxc_exec_handle *h, mxc_exec_outcome *outcome);

/* Terminator: SIGKILLs every process of this exec.  Returns 0 when the kill
 * was accepted (or, after a confirmed exit, without acting), -1 when the
 * kernel refused it (errno set). */
int mxc_exec_terminate(mxc_exec_handle *h);

void mxc_exec_handle_free(mxc_exec_handle *h);

/* Attached exec: stdin and stdout must be terminals; the workload runs on a
 * pty inside the sandbox, this process's terminal is put in raw mode and
 * restored on return.  A second concurrent call in the same process is
 * refused.  Returns the workload's exit status (128+N for signal N, 255 on
 * timeout) or -1 with *error_json set. */
int mxc_state_aware_exec_attached(const char *request_json, char **error_json);

/* ---- the executor, as mxc-exec runs it ----------------------------- */

#define MXC_RUN_EXPERIMENTAL 1u /* state-aware phases allowed (--experimental) */
#define MXC_RUN_DRY_RUN 2u      /* validate and print the plan; run nothing */
#define MXC_RUN_RAW_TERMINAL 8u /* on a terminal: relay the workload's output unfiltered (--raw-terminal) */
#define MXC_RUN_EXITING 4u      /* the caller exits on return: a one-shot returns once the workload's
                                   status is known, a detached cleaner waits out the kernel's
                                   teardown and removes the cgroup */

/* Runs one request as the CLI does: one envelope on out for non-exec
 * phases, dispatch errors and dry runs; the workload's stdio relayed
 * through in/out/err for exec and one-shot.  When in and out are
 * terminals (and the caller exits next), the workload gets a terminal of
 * its own from the sandbox's devpts: the caller's is put in raw mode
 * (restored on return and on SIGTERM, SIGINT, SIGHUP, SIGQUIT), its size
 * and SIGWINCH passed on, and the workload's output filtered of what would
 * act on the person's machine (termfilter.h) unless MXC_RUN_RAW_TERMINAL.
 * Returns the process exit status. */
int mxc_run_request(const char *request, size_t len, unsigned flags, int in, int out, int err);

/* As mxc_run_request, but a refusal or a timeout is not printed: its error
 * envelope goes to *error_json (malloc'd; NULL when there is none), for a
 * caller that tells people in words (the mxc command).  The contract 1.0
 * one-shot surface keeps upstream's own reporting. */
int mxc_run_request_report(const char *request, size_t len, unsigned flags, int in, int out, int err,
                           char **error_json);

/* A one-shot for libmxc_ffi's mxc_run_json, run by a fresh mxc-exec
 * (src/lib/fresh.h): validated as the library validates it, the workload's
 * stdio on in/out/err, driven to its end and torn down before returning.
 * The outcome goes to report_fd as one JSON line, never to out (out is the
 * workload's): {"exitCode":N,"timedOut":B}, or an error envelope.
 * Returns 0 once the report is written. */
int mxc_run_oneshot_reported(const char *request, size_t len, unsigned flags, int in, int out, int err,
                             int report_fd);

/* The capability report printed by mxc-exec --probe (malloc'd JSON); its
 * "leftovers" say what a sweep would reclaim. */
char *mxc_probe_json(void);

/* The sweeper (mxc-exec --gc): removes what crashes left — tombstones and
 * half-made sandboxes of the state root, claims whose sandbox is gone,
 * cgroups without a live owner, orphaned holders — and returns
 * {"result":{"swept":{...counts...}}} or an error envelope (malloc'd). */
char *mxc_gc_json(void);

/* The backends this host offers, as upstream's `lxc-exec --available-backends`
 * prints them: a pretty JSON array with a trailing newline (malloc'd). */
char *mxc_available_backends_text(void);

/* The honor matrix as a Markdown table (malloc'd), for the docs. */
char *mxc_honor_matrix_markdown(void);

/* ---- for people: the mxc command ----------------------------------- */

/* The commandLine that runs exactly argv[0..argc) (the wire runs commandLine
 * with sh -c): "exec" and every word single-quoted, ' as '\'' — no word is
 * split, globbed or expanded, and no shell stays between the command and
 * its signals.  malloc'd (free with mxc_free); NULL when out of memory. */
char *mxc_command_line(const char *const *argv, size_t argc);

/* Every session of the caller's state root (the wire contract has no list),
 * oldest first, then the one-shots running now (host-wide as root):
 * {"result":{"stateRoot":..., "sandboxes":[{"kind":"session","agentName",
 * "sandboxId","name"?,"state" (provisioned|starting|running|stopped|
 * damaged),"created" (epoch s),"uid","workspace","rootless","holderPid"?,
 * "limits"?,"damage"?} ..., {"kind":"one-shot","state":"running","pid",
 * "uid"?,"created","claim"} ...]}} (malloc'd). */
char *mxc_list_json(void);

/* One sandbox: its listing entry plus "policy", "view" and the proxy
 * endpoint (credential masked), or an error envelope (malloc'd). */
char *mxc_inspect_json(const char *sandbox_id);

/* People's names for sandbox ids, kept in the state root.  bind: records
 * name -> sandbox_id, refused while the name names another live sandbox;
 * with sandbox_id NULL only checks that the name is free.  lookup: the id
 * (malloc'd) or NULL.  unbind: forgets name if it names sandbox_id (any id
 * when NULL). */
int mxc_name_bind(const char *name, const char *sandbox_id, char **error_json);
char *mxc_name_lookup(const char *name);
void mxc_name_unbind(const char *name, const char *sandbox_id);

#ifdef __cplusplus
}
#endif
#endif
