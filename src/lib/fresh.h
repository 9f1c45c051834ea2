/* fresh.h — a lifecycle phase run by a fresh mxc-exec, for an in-process
 * caller.
 * Owns: spawning mxc-exec (beside the library, else installed) with one
 * wire request and turning its envelope back into a result or an error.
 * Why: what a session's start leaves running — its monitor and holder —
 * is made by cloning the process that runs the start.  Run in a caller
 * such as Node, the holder kept a copy-on-write image of that caller's
 * whole address space for the session's life: every exec forked it, every
 * page the caller wrote afterwards took a copy-on-write fault, and its
 * stop tore it down (docs/benchmarks.md: a 200 MB caller made start 2x,
 * exec 1.6x, stop 2x slower).  Made by a fresh mxc-exec, they are copies
 * of that small static process instead. */
#ifndef MXC_FRESH_H
#define MXC_FRESH_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "request.h"

/* Spawns exe with argv and envp (NULL: this process's environment), child
 * fd i = fds[i] (i < n <= 8; -1: /dev/null), no other descriptor of ours,
 * every signal at its default and none blocked (a caller's dispositions
 * are its own).  posix_spawn: the caller's memory is never copied.
 * Returns the pid, or -1 with e. */
pid_t mxc_spawn_fresh(const char *exe, char *const argv[], char *const envp[], const int *fds, int n, mxc_error *e);

/* mxc_session_phase for an in-process caller, run out of that process (the
 * name says where it runs, a fresh mxc-exec, not who calls it): a start (r, parsed from
 * request_json) through `mxc-exec [--experimental] --config -`, its
 * envelope's result or error returned as mxc_session_phase returns them;
 * every other phase, and a start where no mxc-exec is installed beside
 * the library, in this process. */
int mxc_session_phase_fresh(const mxc_request *r, const char *request_json, bool experimental, json_t **result,
                                 mxc_error *e);

/* libmxc_ffi's one-shot (mxc_run_json) for an in-process caller, run out of
 * that process: r (parsed
 * from request_json, already accepted) run by `mxc-exec --oneshot-reported`
 * with the workload's stdio on in/out/err, so that the sandbox's PID 1 is a
 * copy of that small process and not of the caller (docs/benchmarks.md: a
 * 512 MiB caller paid 13 ms per one-shot for its page tables).  Returns as
 * mxc_oneshot_run_to_end, which it runs in this process where no mxc-exec
 * is installed beside the library. */
int mxc_oneshot_fresh(const mxc_request *r, const char *request_json, bool experimental, int in, int out,
                           int err, int *exit_code, bool *timed_out, mxc_error *e);

#endif
