/* ffi_internal.h — what the libmxc_ffi modules share: the status and
 * error-detail conventions (conv.c), the request gate every entry point
 * passes (contract 1.0 only, UTF-8, one-shot or state-aware as the entry
 * point takes), captured output, and the running-workload handle
 * (sandbox.c, stream.c). */
#ifndef MXC_FFI_INTERNAL_H
#define MXC_FFI_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "mxc_ffi.h"
#include "front.h" /* after mxc_ffi.h: its function mxc_sandbox_id hides front.h's codec */

#define FFI_EXPORT __attribute__((visibility("default")))

/* ---- conv.c ---- */

/* 0 for no error, else the wire code's number (1..12). */
int32_t ffi_status_of(const mxc_error *e);
/* Fills *d from e (NULL fields for what e lacks); d may be NULL. */
void ffi_detail_fill(MxcErrorDetail *d, const mxc_error *e);
void ffi_detail_reset(MxcErrorDetail *d);
/* Sets e to code/message and returns the status (for argument errors). */
int32_t ffi_fail(mxc_error *e, mxc_code code, const char *message);
/* True if s[0..n) is well-formed UTF-8. */
bool ffi_utf8_valid(const char *s, size_t n);
/* s[0..n) as a NUL-terminated UTF-8 string: invalid sequences and NUL
 * bytes become U+FFFD.  malloc'd; NULL on allocation failure. */
char *ffi_utf8_lossy(const char *s, size_t n);
/* The contents of fd (from offset 0) as lossy UTF-8; "" when empty. */
char *ffi_read_all_lossy(int fd);

enum { FFI_ONESHOT = 1, FFI_STATE_AWARE = 2 };
/* The request gate: NULL (100) and UTF-8 (101) checks, the validation
 * layers (mxc_validate), contract 1.0 only, and the request kind the entry
 * point takes.  Returns a status; on 0, *r is the validated request (free it
 * with mxc_request_delete in every case: NULL when the request was never parsed). */
int32_t ffi_accept(const char *json, int32_t experimental, int kind, mxc_request **r, mxc_error *e);

/* ---- sandbox.c ---- */

typedef enum { H_STARTING, H_RUNNING, H_DONE } ffi_state;

struct MxcSandbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    ffi_state state;
    /* what to start (read by the supervisor thread) */
    mxc_request *req;
    bool session_exec; /* an exec in a live session (or an isolation_session one-shot's), else a one-shot */
    char *oneshot_session; /* an isolation_session one-shot: the sandboxId it provisioned, deprovisioned at the end */
    bool pty;
    unsigned short rows, cols;
    /* the start's outcome */
    int32_t start_status;
    mxc_error start_err;
    /* the workload (the supervisor thread's while it runs) */
    mxc_oneshot *os;      /* a one-shot's */
    mxc_proc *exec_proc;  /* a session exec's */
    mxc_proc *proc;       /* the one of the two that runs */
    /* fixed once running */
    uint32_t id;
    mxc_exec_killer killer; /* every process of the exec, from any thread */
    int pty_master;    /* a duplicate, for resizing */
    /* the caller's ends until taken: stdin write end, stdout and stderr read
     * ends (pty: pipes the supervisor relays to and from the terminal) */
    int in_fd, out_fd, err_fd;
    int relay_in, relay_out; /* pty: the supervisor's ends of those pipes */
    bool native_taken, stdin_taken, stdout_taken, stderr_taken;
    MxcStreamCloser *out_closer, *err_closer; /* stream.c; the handle's references */
    /* the outcome */
    bool killed, kill_timeout;
    int32_t exit_code;
    bool timed_out;
};

/* ---- stream.c ---- */
void ffi_closer_unref(MxcStreamCloser *c);

#endif
