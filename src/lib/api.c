/* api.c — the public entry points (include/mxc.h).
 * Owns: the validation layers in their documented order (parse -> mode ->
 * containment -> id -> honor matrix -> state -> OS work; first failure
 * wins), the --experimental gate, dispatch to the backends, and turning
 * every outcome into the one envelope the caller reads; and a person's
 * terminal: when the workload gets one of its own, attached and restored. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fdio.h"
#include "fresh.h"
#include "mxc.h"
#include "policy.h"
#include "probe.h"
#include "sandbox_id.h"
#include "run_v1.h"
#include "oneshot.h"
#include "session.h"
#include "sweep.h"
#include "ttyattach.h"
#include "validate.h"

void mxc_free(void *p)
{
    free(p);
}

static int run_on_terminal(mxc_request *r, unsigned flags, int in, int out, int *code, bool *timed_out, mxc_error *e);

/* A person at a terminal: the CLI (it exits next) with every one of its
 * streams on a terminal.  The workload's terminal carries its stdin, stdout
 * and stderr alike (exec.h: one pty for all three), so it is given only
 * then: a stream the caller redirected (2>file, a pipe in or out) stays its
 * own pipe or file and is never merged into the terminal. */
static bool on_terminal(const mxc_request *r, unsigned flags, int in, int out, int err)
{
    if (!(flags & MXC_RUN_EXITING) || !isatty(in) || !isatty(out) || !isatty(err))
        return false;
    /* a session's one-shot runs on pipes: its exec is not a handle we drive */
    return r->phase == MXC_PHASE_EXEC || r->containment == MXC_CONT_PROCESS;
}

/* A one-shot's workload, legacy or contract 1.0: on the caller's terminal
 * (a pty of the sandbox's own) or on pipes. */
static int run_oneshot(mxc_request *r, unsigned flags, int in, int out, int err, int *code, bool *timed_out,
                       mxc_error *e)
{
    if (on_terminal(r, flags, in, out, err))
        return run_on_terminal(r, flags, in, out, code, timed_out, e);
    return mxc_oneshot_run(r, flags & MXC_RUN_EXITING, in, out, err, code, timed_out, e);
}

static int validate(const char *buf, size_t len, bool experimental, mxc_request *r, mxc_error *e)
{
    return mxc_validate(buf, len, experimental ? MXC_VALIDATE_EXPERIMENTAL : 0, r, e);
}

/* Reals (the plan's cpuMax) at 10 significant digits: 0.2, not 0.20000000000000001. */
static bool print_json_line(int fd, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(10));
    bool ok = text && mxc_write_all(fd, text, strlen(text)) && mxc_write_all(fd, "\n", 1);
    free(text);
    return ok;
}

static void print_error(int fd, const mxc_error *e)
{
    json_t *env = mxc_error_envelope(e);
    print_json_line(fd, env);
    json_decref(env);
}

static bool print_result(int fd, json_t *result)
{
    json_t *env = json_pack("{s:O}", "result", result);
    bool ok = print_json_line(fd, env);
    json_decref(env);
    return ok;
}

static void report(int fd, const mxc_error *e, char **capture);

static void print_timeout(int fd, uint32_t ms, char **capture)
{
    mxc_error e = {0};
    mxc_err(&e, MXC_E_BACKEND_ERROR, "timed out after %u ms", ms);
    e.details = json_pack("{s:b, s:I}", "timedOut", 1, "timeoutMs", (json_int_t)ms);
    report(fd, &e, capture);
    mxc_error_clear(&e);
}

/* An error envelope printed on fd, or (capture) handed to the caller. */
static void report(int fd, const mxc_error *e, char **capture)
{
    if (capture) {
        json_t *env = mxc_error_envelope(e);
        *capture = json_dumps(env, JSON_COMPACT);
        json_decref(env);
    } else {
        print_error(fd, e);
    }
}

int mxc_run_request(const char *request, size_t len, unsigned flags, int in, int out, int err)
{
    return mxc_run_request_report(request, len, flags, in, out, err, NULL);
}

int mxc_run_request_report(const char *request, size_t len, unsigned flags, int in, int out, int err,
                           char **error_json)
{
    if (error_json)
        *error_json = NULL;

    mxc_request r;
    mxc_error e = {0};
    int status = 1;
    int valid = validate(request, len, flags & MXC_RUN_EXPERIMENTAL, &r, &e);
    if (r.dialect == MXC_DIALECT_V1 && r.phase == MXC_PHASE_NONE) { /* upstream's lxc-exec surface */
        status = valid < 0 ? mxc_v1_report_refusal(&r, &e, flags, out, err)
                           : mxc_v1_run_oneshot(&r, flags, in, out, err, run_oneshot);
        goto done;
    }
    if (valid < 0) {
        report(out, &e, error_json);
        goto done;
    }
    if (flags & MXC_RUN_DRY_RUN) {
        json_t *plan = r.phase == MXC_PHASE_NONE || r.phase == MXC_PHASE_PROVISION ? mxc_plan_describe(&r, &e)
                                                                                    : json_object();
        if (!plan) {
            report(out, &e, error_json);
            goto done;
        }
        json_t *res = json_pack("{s:b, s:s, s:o}", "dryRun", 1, "phase", mxc_phase_name(r.phase), "plan", plan);
        print_result(out, res);
        json_decref(res);
        status = 0;
        goto done;
    }
    if (r.phase == MXC_PHASE_NONE || r.phase == MXC_PHASE_EXEC) {
        int code = 255;
        bool timed_out = false;
        int rc;
        if (r.phase == MXC_PHASE_NONE) {
            rc = run_oneshot(&r, flags, in, out, err, &code, &timed_out, &e);
        } else if (on_terminal(&r, flags, in, out, err)) {
            /* a person at a terminal: the workload gets one of its own */
            rc = run_on_terminal(&r, flags, in, out, &code, &timed_out, &e);
        } else {
            mxc_proc proc;
            rc = mxc_session_exec_start(&r, false, &proc, &e);
            if (rc == 0) {
                mxc_exec_run(&proc, in, out, err, &e);
                code = proc.exit_code;
                timed_out = proc.timed_out;
                mxc_exec_close(&proc);
            }
        }
        if (rc < 0) {
            report(out, &e, error_json);
            goto done;
        }
        if (timed_out) {
            print_timeout(err, r.timeout_ms, error_json); /* stdout belongs to the workload */
            code = 255;
        }
        status = code;
        goto done;
    }
    json_t *result = NULL;
    /* a provision's sandbox counts as known only once its answer is out
     * (session.h): the sweeper finishes it if we die before */
    if (mxc_session_phase_deliver(&r, (flags & MXC_RUN_EXITING) != 0, &result, &e) < 0) {
        report(out, &e, error_json);
        goto done;
    }
    if (print_result(out, result))
        mxc_session_answered(result);
    json_decref(result);
    status = 0;
done:
    mxc_request_free(&r);
    mxc_error_clear(&e);
    return status;
}

int mxc_run_oneshot_reported(const char *request, size_t len, unsigned flags, int in, int out, int err,
                             int report_fd)
{
    mxc_request r;
    mxc_error e = {0};
    int code = 255;
    bool timed_out = false;
    int rc = validate(request, len, flags & MXC_RUN_EXPERIMENTAL, &r, &e);
    if (rc == 0 && r.phase != MXC_PHASE_NONE)
        rc = mxc_err(&e, MXC_E_UNSUPPORTED_PHASE, "this entry point takes one-shot requests only");
    if (rc == 0)
        rc = mxc_oneshot_run_to_end(&r, in, out, err, &code, &timed_out, &e);
    json_t *rep = rc == 0 ? json_pack("{s:i, s:b}", "exitCode", code, "timedOut", timed_out) : mxc_error_envelope(&e);
    bool ok = print_json_line(report_fd, rep);
    json_decref(rep);
    mxc_request_free(&r);
    mxc_error_clear(&e);
    return ok ? 0 : 1;
}

int mxc_state_aware(const char *request_json, char **response_json)
{
    mxc_request r;
    mxc_error e = {0};
    int rc = -1;
    *response_json = NULL;
    if (!request_json) {
        mxc_err(&e, MXC_E_MALFORMED_REQUEST, "request is NULL");
    } else if (validate(request_json, strlen(request_json), true, &r, &e) == 0) {
        if (r.phase == MXC_PHASE_NONE) {
            mxc_err(&e, MXC_E_UNSUPPORTED_CONTAINMENT, "the one-shot surface is not reachable in-process");
        } else if (r.phase == MXC_PHASE_EXEC) {
            mxc_err(&e, MXC_E_UNSUPPORTED_PHASE, "exec is served by mxc_state_aware_exec or mxc_state_aware_exec_attached");
        } else {
            json_t *result = NULL;
            /* a start by a fresh mxc-exec: the holder is no copy of this process (fresh.h) */
            if (mxc_session_phase_fresh(&r, request_json, true, &result, &e) == 0) {
                json_t *env = json_pack("{s:o}", "result", result);
                *response_json = json_dumps(env, JSON_COMPACT);
                json_decref(env);
                rc = 0;
            }
        }
    }
    if (rc < 0)
        *response_json = mxc_error_envelope_text(&e);
    if (request_json)
        mxc_request_free(&r);
    mxc_error_clear(&e);
    return rc;
}

struct mxc_exec_handle {
    mxc_proc proc;
};

static int exec_prepare(const char *request_json, bool pty, mxc_proc *proc, mxc_error *e)
{
    mxc_request r;
    if (!request_json)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "request is NULL");
    int rc = validate(request_json, strlen(request_json), true, &r, e);
    if (rc == 0 && r.phase != MXC_PHASE_EXEC)
        rc = mxc_err(e, MXC_E_UNSUPPORTED_PHASE, "this entry point takes exec requests only");
    if (rc == 0)
        rc = mxc_session_exec_start(&r, pty, proc, e);
    mxc_request_free(&r);
    return rc;
}

int mxc_state_aware_exec(const char *request_json, mxc_exec_handle **handle, char **error_json)
{
    mxc_error e = {0};
    *handle = NULL;
    if (error_json)
        *error_json = NULL;
    mxc_exec_handle *h = calloc(1, sizeof *h);
    if (!h || exec_prepare(request_json, false, &h->proc, &e) < 0) {
        if (!h)
            mxc_err(&e, MXC_E_BACKEND_ERROR, "out of memory");
        if (error_json)
            *error_json = mxc_error_envelope_text(&e);
        free(h);
        mxc_error_clear(&e);
        return -1;
    }
    *handle = h;
    return 0;
}

int mxc_exec_stdin_fd(const mxc_exec_handle *h) { return h->proc.in_fd; }
int mxc_exec_stdout_fd(const mxc_exec_handle *h) { return h->proc.out_fd; }
int mxc_exec_stderr_fd(const mxc_exec_handle *h) { return h->proc.err_fd; }

void mxc_exec_close_stdin(mxc_exec_handle *h)
{
    if (h->proc.in_fd >= 0)
        close(h->proc.in_fd);
    h->proc.in_fd = -1;
}

int mxc_exec_wait(mxc_exec_handle *h, mxc_exec_outcome *outcome)
{
    if (!h->proc.finished) {
        mxc_error e = {0};
        mxc_exec_run(&h->proc, -1, -1, -1, &e);
        mxc_error_clear(&e);
    }
    outcome->kind = h->proc.timed_out ? MXC_EXEC_TIMED_OUT : MXC_EXEC_EXITED;
    outcome->exit_code = h->proc.exit_code;
    return 0;
}

int mxc_exec_terminate(mxc_exec_handle *h)
{
    return mxc_exec_kill(&h->proc);
}

void mxc_exec_handle_free(mxc_exec_handle *h)
{
    if (!h)
        return;
    if (!h->proc.finished)
        mxc_exec_kill(&h->proc);
    mxc_exec_close(&h->proc);
    free(h);
}

static atomic_bool attached_busy;

/* ---- a person's terminal ----------------------------------------------- */

/* Takes the caller's terminal fd for proc (a pty exec): raw mode, put back on
 * return and on every signal that would end the caller (ttyattach.h, the relay
 * mxc-oci's shares), SIGWINCH onto the workload's terminal, the output filter.
 * One per process (attached_busy). */
static void attach_begin(mxc_proc *proc, int fd, mxc_termfilter *filter)
{
    proc->resize_fd = mxc_ttyattach_begin(fd, MXC_TTY_RESTORE_UNLESS_IGNORED);
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0)
        ioctl(proc->out_fd, TIOCSWINSZ, &ws);
    proc->filter = filter;
    if (filter)
        mxc_termfilter_init(filter);
}

static void attach_end(mxc_proc *proc)
{
    mxc_ttyattach_end();
    proc->resize_fd = -1;
    proc->filter = NULL;
}

/* The caller's terminal size, for a workload's terminal made before it starts. */
static void term_size(int fd, unsigned short *rows, unsigned short *cols)
{
    struct winsize ws;
    *rows = *cols = 0;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0)
        *rows = ws.ws_row, *cols = ws.ws_col;
}

/* An exec or one-shot on the caller's terminal (the CLI under a terminal).
 * Returns 0 with code and timed_out set, or -1 with e. */
static int run_on_terminal(mxc_request *r, unsigned flags, int in, int out, int *code, bool *timed_out, mxc_error *e)
{
    bool expected = false;
    if (!atomic_compare_exchange_strong(&attached_busy, &expected, true))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "another attached exec is running in this process");
    static mxc_termfilter filter;
    unsigned short rows, cols;
    term_size(in, &rows, &cols);
    mxc_proc *proc;
    mxc_proc sproc;
    mxc_oneshot os;
    int rc;
    if (r->phase == MXC_PHASE_NONE) {
        rc = mxc_oneshot_start(r, true, rows, cols, &os, e);
        /* a signal that ends us (ttyattach.c re-raises it) leaves no claim */
        if (rc == 0)
            mxc_oneshot_detach_cleanup(&os);
        proc = &os.proc;
    } else {
        r->pty_rows = rows, r->pty_cols = cols;
        rc = mxc_session_exec_start(r, true, &sproc, e);
        proc = &sproc;
    }
    if (rc == 0) {
        attach_begin(proc, in, flags & MXC_RUN_RAW_TERMINAL ? NULL : &filter);
        mxc_exec_run(proc, in, out, -1, e);
        attach_end(proc);
        *code = proc->exit_code;
        *timed_out = proc->timed_out;
        if (r->phase == MXC_PHASE_NONE)
            mxc_oneshot_finish(&os);
        else
            mxc_exec_close(proc);
    }
    atomic_store(&attached_busy, false);
    return rc;
}

int mxc_state_aware_exec_attached(const char *request_json, char **error_json)
{
    mxc_error e = {0};
    if (error_json)
        *error_json = NULL;
    int status = -1;
    bool expected = false;
    if (!isatty(0) || !isatty(1)) {
        mxc_err(&e, MXC_E_BACKEND_ERROR, "attached exec needs terminals on stdin and stdout; use mxc_state_aware_exec");
    } else if (!atomic_compare_exchange_strong(&attached_busy, &expected, true)) {
        mxc_err(&e, MXC_E_BACKEND_ERROR, "another attached exec is running in this process");
    } else {
        mxc_proc proc;
        static mxc_termfilter filter;
        if (exec_prepare(request_json, true, &proc, &e) == 0) {
            attach_begin(&proc, 0, &filter);
            mxc_exec_run(&proc, 0, 1, -1, &e);
            attach_end(&proc);
            status = proc.timed_out ? 255 : proc.exit_code;
            mxc_exec_close(&proc);
        }
        atomic_store(&attached_busy, false);
    }
    if (status < 0 && error_json)
        *error_json = mxc_error_envelope_text(&e);
    mxc_error_clear(&e);
    return status;
}

char *mxc_probe_json(void)
{
    json_t *p = mxc_probe();
    char *s = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    return s;
}

char *mxc_available_backends_text(void)
{
    json_t *b = mxc_backends_json();
    char *s = json_dumps(b, JSON_INDENT(2));
    json_decref(b);
    char *line = s ? malloc(strlen(s) + 2) : NULL;
    if (line)
        sprintf(line, "%s\n", s);
    free(s);
    return line;
}

char *mxc_gc_json(void)
{
    mxc_error e = {0};
    json_t *swept = mxc_sweep(true, &e);
    char *out;
    if (!swept) {
        out = mxc_error_envelope_text(&e);
    } else {
        json_t *env = json_pack("{s:{s:o}}", "result", "swept", swept);
        out = json_dumps(env, JSON_COMPACT);
        json_decref(env);
    }
    mxc_error_clear(&e);
    return out;
}

char *mxc_honor_matrix_markdown(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    mxc_policy_print_matrix_markdown(f);
    fclose(f);
    return buf;
}
