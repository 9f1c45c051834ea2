/* sandbox.c — a running workload behind an MxcSandbox handle: one-shot
 * spawns (piped or on a terminal) and execs in a live session.
 * Owns: the supervisor thread each handle gets (it starts the workload, so
 * the workload's PR_SET_PDEATHSIG names a thread that lives exactly as long
 * as the workload; it drives the engine's timeout ladder, relays a
 * terminal to the caller's pipes, reaps, tears down), the handle's state
 * under its mutex, native stdio hand-over, the waiters and terminators.
 * Handle functions may be called from any thread (koffi's workers and the
 * JS thread alike). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "ffi_internal.h"

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* One phase, from a request this module composed. */
static int session_phase(json_t *req, json_t **result, mxc_error *e)
{
    char *text = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    mxc_request *r = text ? mxc_request_new() : NULL;
    int rc = r ? mxc_request_parse(text, strlen(text), r, e) : mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    free(text);
    if (rc == 0)
        rc = mxc_session_phase(r, result, e);
    mxc_request_delete(r);
    return rc;
}

/* An isolation_session one-shot as a handle: provision (its policy as
 * validated) and start a session, then its exec is the workload;
 * deprovisioned when it is done. */
static int oneshot_session_start(MxcSandbox *h, mxc_error *e)
{
    json_t *prov = mxc_request_policy_json(h->req);
    json_object_set_new(prov, "containment", json_string("isolation_session"));
    json_object_set_new(prov, "phase", json_string("provision"));
    json_t *res = NULL;
    if (session_phase(prov, &res, e) < 0)
        return -1;
    h->oneshot_session = strdup(json_string_value(json_object_get(res, "sandboxId")));
    json_decref(res);
    if (!h->oneshot_session)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    int rc = session_phase(json_pack("{s:s, s:s}", "phase", "start", "sandboxId", h->oneshot_session), &res, e);
    json_decref(res);
    json_t *exec = json_pack("{s:s, s:s, s:s, s:O}", "version", mxc_request_contract(h->req), "phase", "exec",
                             "sandboxId", h->oneshot_session, "process",
                             json_object_get(mxc_request_json(h->req), "process"));
    char *text = rc == 0 ? json_dumps(exec, JSON_COMPACT) : NULL;
    json_decref(exec);
    mxc_request *er = text ? mxc_request_new() : NULL;
    if (rc == 0)
        rc = er ? mxc_request_parse(text, strlen(text), er, e) : mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    free(text);
    if (rc == 0) {
        mxc_request_delete(h->req); /* the exec is what runs now */
        h->req = er;
    } else {
        mxc_request_delete(er);
    }
    return rc;
}

static void oneshot_session_end(MxcSandbox *h)
{
    if (!h->oneshot_session)
        return;
    mxc_error ignored = {0};
    json_t *res = NULL;
    session_phase(json_pack("{s:s, s:s}", "phase", "deprovision", "sandboxId", h->oneshot_session), &res, &ignored);
    json_decref(res);
    mxc_error_clear(&ignored);
    free(h->oneshot_session);
    h->oneshot_session = NULL;
}

/* Starts the workload (on the supervisor thread). */
static int start_workload(MxcSandbox *h, mxc_error *e)
{
    if (!h->session_exec && mxc_request_in_session(h->req)) {
        h->session_exec = true;
        if (oneshot_session_start(h, e) < 0) {
            oneshot_session_end(h);
            return -1;
        }
    }
    if (h->session_exec) {
        mxc_request_set_pty_size(h->req, h->rows, h->cols); /* set before the workload starts */
        h->exec_proc = mxc_proc_new();
        if (!h->exec_proc)
            mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        if (!h->exec_proc || mxc_session_exec_start(h->req, h->pty, h->exec_proc, e) < 0) {
            oneshot_session_end(h);
            return -1;
        }
        h->proc = h->exec_proc;
        h->id = (uint32_t)mxc_proc_workload(h->proc);
        mxc_exec_killer_take(h->proc, &h->killer);
        return 0;
    }
    h->os = mxc_oneshot_new();
    if (!h->os)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    if (mxc_oneshot_start(h->req, h->pty, h->rows, h->cols, h->os, e) < 0)
        return -1;
    h->proc = mxc_oneshot_proc(h->os);
    h->id = (uint32_t)mxc_oneshot_pid1(h->os);
    mxc_exec_killer_take(h->proc, &h->killer);
    h->killer.group = 0; /* PID 1 ends it all */
    return 0;
}

/* The caller's stdio: piped, the workload's own pipe ends; on a terminal,
 * two pipes the supervisor relays (a Node socket cannot adopt a terminal). */
static int hand_over_stdio(MxcSandbox *h, mxc_error *e)
{
    if (!h->pty) {
        /* the workload's pipe ends: the ladder's "close stdin" is the caller's now */
        mxc_proc_take_stdio(h->proc, &h->in_fd, &h->out_fd, &h->err_fd);
        fcntl(h->out_fd, F_SETFL, fcntl(h->out_fd, F_GETFL) | O_NONBLOCK);
        fcntl(h->err_fd, F_SETFL, fcntl(h->err_fd, F_GETFL) | O_NONBLOCK);
        return 0;
    }
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "ffi.pty_pipes", errno, NULL, "cannot create the terminal's pipes");
    if (pipe2(out, O_CLOEXEC) < 0) {
        int err = errno;
        close(in[0]), close(in[1]);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "ffi.pty_pipes", err, NULL, "cannot create the terminal's pipes");
    }
    h->in_fd = in[1], h->relay_in = in[0];
    h->out_fd = out[0], h->relay_out = out[1];
    fcntl(h->out_fd, F_SETFL, fcntl(h->out_fd, F_GETFL) | O_NONBLOCK);
    h->pty_master = fcntl(mxc_proc_terminal(h->proc), F_DUPFD_CLOEXEC, 3);
    return 0;
}

/* The terminal's last output: the engine's relay stops once the workload
 * is reaped, and what it wrote just before may still be in the master. */
static void drain_terminal(int master, int to)
{
    char buf[16384];
    struct pollfd p = {.fd = master, .events = POLLIN};
    while (master >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
        ssize_t n = read(master, buf, sizeof buf);
        if (n <= 0)
            return;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return; /* the reader is gone */
            off += w;
        }
    }
}

static void *supervise(void *arg)
{
    MxcSandbox *h = arg;
    /* The workload inherits this thread's signal mask: none blocked. */
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    mxc_error e = {0};
    int rc = start_workload(h, &e);
    if (rc == 0 && hand_over_stdio(h, &e) < 0) {
        rc = -1;
        mxc_exec_kill(h->proc);
    }
    pthread_mutex_lock(&h->mu);
    if (rc < 0) {
        h->start_status = ffi_status_of(&e);
        h->start_err = e;
        e.details = NULL;
        if (h->proc) { /* started, then failed: wait it out below */
            pthread_mutex_unlock(&h->mu);
            mxc_exec_run(h->proc, -1, -1, -1, &e);
            if (h->session_exec)
                mxc_exec_close(h->proc);
            else
                mxc_oneshot_finish(h->os);
            oneshot_session_end(h);
            pthread_mutex_lock(&h->mu);
        }
        h->state = H_DONE;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        return NULL;
    }
    h->state = H_RUNNING;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);

    /* Now, and only now (the workload is forked), a reader that went away
     * must not kill the caller: writes to the relay pipe get EPIPE. */
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, NULL);
    mxc_exec_run(h->proc, h->pty ? h->relay_in : -1, h->pty ? h->relay_out : -1, -1, &e);
    mxc_error_clear(&e);
    if (h->pty)
        drain_terminal(mxc_proc_terminal(h->proc), h->relay_out);
    int code = mxc_proc_exit_code(h->proc);
    bool timed_out = mxc_proc_timed_out(h->proc);
    if (h->session_exec)
        mxc_exec_close(h->proc);
    else
        mxc_oneshot_finish(h->os);
    oneshot_session_end(h); /* nothing of an isolation_session one-shot outlives it */
    close_fd(&h->relay_in);
    close_fd(&h->relay_out); /* the caller's terminal output ends here */

    pthread_mutex_lock(&h->mu);
    if (h->kill_timeout || timed_out) {
        h->timed_out = true;
        h->exit_code = -1;
    } else if (h->killed) {
        h->exit_code = -1;
    } else {
        h->exit_code = code;
    }
    h->state = H_DONE;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

static MxcSandbox *handle_new(void)
{
    MxcSandbox *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->in_fd = h->out_fd = h->err_fd = h->relay_in = h->relay_out = h->pty_master = -1;
    h->killer = (mxc_exec_killer){.conn = -1, .pidfd = -1};
    return h;
}

static void handle_destroy(MxcSandbox *h)
{
    close_fd(&h->in_fd);
    close_fd(&h->out_fd);
    close_fd(&h->err_fd);
    close_fd(&h->relay_in);
    close_fd(&h->relay_out);
    mxc_exec_killer_drop(&h->killer);
    close_fd(&h->pty_master);
    ffi_closer_unref(h->out_closer);
    ffi_closer_unref(h->err_closer);
    mxc_request_delete(h->req);
    mxc_oneshot_delete(h->os);
    mxc_proc_delete(h->exec_proc);
    mxc_error_clear(&h->start_err);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

/* Validates, starts the supervisor, waits until the workload runs. */
static int32_t spawn(const char *json, int32_t experimental, bool session_exec, bool pty, uint16_t rows, uint16_t cols,
                     MxcSandbox **out_handle, MxcErrorDetail *out_error)
{
    if (out_handle)
        *out_handle = NULL;
    ffi_detail_reset(out_error);
    if (!out_handle)
        return MXC_STATUS_NULL_ARGUMENT;
    mxc_error e = {0};
    if (pty && (rows < 1 || rows > 32767 || cols < 1 || cols > 32767)) {
        int32_t st = ffi_fail(&e, MXC_E_MALFORMED_REQUEST, "PTY rows and columns must be between 1 and 32767");
        ffi_detail_fill(out_error, &e);
        return st;
    }
    MxcSandbox *h = handle_new();
    if (!h)
        return MXC_STATUS_INTERNAL;
    int32_t st = ffi_accept(json, experimental, session_exec ? FFI_STATE_AWARE : FFI_ONESHOT, &h->req, &e);
    if (st == 0 && session_exec && !mxc_request_is_exec(h->req))
        st = ffi_fail(&e, MXC_E_MALFORMED_REQUEST, "this entry point takes exec requests only");
    h->session_exec = session_exec;
    h->pty = pty;
    h->rows = rows, h->cols = cols;
    if (st == 0 && pthread_create(&h->thread, NULL, supervise, h) != 0)
        st = ffi_fail(&e, MXC_E_BACKEND_ERROR, "cannot start the supervisor thread");
    else if (st == 0) {
        pthread_mutex_lock(&h->mu);
        while (h->state == H_STARTING)
            pthread_cond_wait(&h->cv, &h->mu);
        bool failed = h->start_status != 0;
        pthread_mutex_unlock(&h->mu);
        if (failed) {
            pthread_join(h->thread, NULL);
            st = h->start_status;
            e = h->start_err;
            memset(&h->start_err, 0, sizeof h->start_err);
        }
    }
    if (st != 0) {
        ffi_detail_fill(out_error, &e);
        mxc_error_clear(&e);
        handle_destroy(h);
        return st;
    }
    *out_handle = h;
    return 0;
}

FFI_EXPORT int32_t mxc_spawn_json(const char *request_json_utf8, int32_t experimental, MxcSandbox **out_handle,
                                  MxcErrorDetail *out_error)
{
    return spawn(request_json_utf8, experimental, false, false, 0, 0, out_handle, out_error);
}

FFI_EXPORT int32_t mxc_spawn_pty_json(const char *request_json_utf8, int32_t experimental, uint16_t rows, uint16_t cols,
                                      MxcSandbox **out_handle, MxcErrorDetail *out_error)
{
    return spawn(request_json_utf8, experimental, false, true, rows, cols, out_handle, out_error);
}

FFI_EXPORT int32_t mxc_exec_state_aware_json(const char *request_json_utf8, int32_t experimental,
                                             MxcSandbox **out_handle, MxcErrorDetail *out_error)
{
    return spawn(request_json_utf8, experimental, true, false, 0, 0, out_handle, out_error);
}

FFI_EXPORT int32_t mxc_state_aware_exec_pty(const char *request_json_utf8, int32_t experimental, uint16_t rows,
                                            uint16_t cols, MxcSandbox **out_handle, MxcErrorDetail *out_error)
{
    return spawn(request_json_utf8, experimental, true, true, rows, cols, out_handle, out_error);
}

FFI_EXPORT uint32_t mxc_sandbox_id(MxcSandbox *h)
{
    return h ? h->id : 0;
}

FFI_EXPORT int32_t mxc_sandbox_take_native_stdio(MxcSandbox *h, MxcNativeStdio *out)
{
    if (out)
        out->stdin_handle = out->stdout_handle = out->stderr_handle = -1;
    if (!h || !out)
        return MXC_STATUS_NULL_ARGUMENT;
    pthread_mutex_lock(&h->mu);
    int32_t st = 0;
    if (h->native_taken) {
        st = MXC_E_BACKEND_UNAVAILABLE;
        fprintf(stderr, "mxc_sandbox_take_native_stdio failed: native stdio was already taken\n");
    } else if (h->stdin_taken || h->stdout_taken || h->stderr_taken) {
        st = MXC_E_BACKEND_ERROR;
        fprintf(stderr, "mxc_sandbox_take_native_stdio failed: native stdio must be taken before taking individual "
                        "streams\n");
    } else {
        h->native_taken = true;
        out->stdin_handle = h->in_fd, out->stdout_handle = h->out_fd, out->stderr_handle = h->err_fd;
        h->in_fd = h->out_fd = h->err_fd = -1; /* the caller's now */
    }
    pthread_mutex_unlock(&h->mu);
    return st;
}

FFI_EXPORT void mxc_native_pipe_close(intptr_t fd)
{
    if (fd >= 0)
        close((int)fd);
}

FFI_EXPORT int32_t mxc_sandbox_try_wait(MxcSandbox *h, int32_t *out_exit, int32_t *out_running, int32_t *out_timed_out)
{
    if (!h || !out_exit || !out_running || !out_timed_out)
        return MXC_STATUS_NULL_ARGUMENT;
    pthread_mutex_lock(&h->mu);
    bool done = h->state == H_DONE;
    *out_running = !done;
    *out_exit = done ? h->exit_code : 0;
    *out_timed_out = done && h->timed_out;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

/* Reads and discards whatever is ready on fd; false at EOF or error. */
static bool discard(int fd)
{
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

FFI_EXPORT int32_t mxc_sandbox_wait(MxcSandbox *h, int32_t *out_exit, int32_t *out_timed_out)
{
    if (!h || !out_exit || !out_timed_out)
        return MXC_STATUS_NULL_ARGUMENT;
    pthread_mutex_lock(&h->mu);
    /* Untaken pipes: stdin gets EOF, output is drained so the workload never
     * blocks on a full pipe nobody reads. */
    close_fd(&h->in_fd);
    int out = h->out_fd, err = h->err_fd;
    while (h->state != H_DONE) {
        if (out < 0 && err < 0) {
            pthread_cond_wait(&h->cv, &h->mu);
            continue;
        }
        pthread_mutex_unlock(&h->mu);
        struct pollfd pf[2] = {{.fd = out, .events = POLLIN}, {.fd = err, .events = POLLIN}};
        poll(pf, 2, 100);
        if (out >= 0 && pf[0].revents && !discard(out))
            out = -1;
        if (err >= 0 && pf[1].revents && !discard(err))
            err = -1;
        pthread_mutex_lock(&h->mu);
    }
    *out_exit = h->exit_code;
    *out_timed_out = h->timed_out;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

/* Called with h->mu held. */
static void kill_locked(MxcSandbox *h, bool for_timeout)
{
    if (h->state != H_RUNNING)
        return; /* a confirmed exit keeps its outcome */
    h->killed = true;
    h->kill_timeout |= for_timeout;
    /* a session exec: its workload's process group (its leader is not
     * reaped while we are RUNNING, so the number is still its) and the
     * exec init, which kills the rest; a one-shot: PID 1 */
    mxc_exec_killer_fire(&h->killer);
}

FFI_EXPORT int32_t mxc_sandbox_kill(MxcSandbox *h)
{
    if (!h)
        return MXC_STATUS_NULL_ARGUMENT;
    pthread_mutex_lock(&h->mu);
    kill_locked(h, false);
    pthread_mutex_unlock(&h->mu);
    return 0;
}

FFI_EXPORT int32_t mxc_sandbox_kill_for_timeout(MxcSandbox *h)
{
    if (!h)
        return MXC_STATUS_NULL_ARGUMENT;
    pthread_mutex_lock(&h->mu);
    kill_locked(h, true);
    pthread_mutex_unlock(&h->mu);
    return 0;
}

/* No warnings and no output metadata on Linux: status 0 with a NULL string
 * (which SDK 1.0.1 needs here: a non-NULL one crashes its koffi path). */
FFI_EXPORT int32_t mxc_sandbox_warnings_json(MxcSandbox *h, char **out_json_utf8)
{
    if (out_json_utf8)
        *out_json_utf8 = NULL;
    return h && out_json_utf8 ? 0 : MXC_STATUS_NULL_ARGUMENT;
}

FFI_EXPORT int32_t mxc_sandbox_output_metadata_json(MxcSandbox *h, char **out_json_utf8)
{
    if (out_json_utf8)
        *out_json_utf8 = NULL;
    return h && out_json_utf8 ? 0 : MXC_STATUS_NULL_ARGUMENT;
}

FFI_EXPORT int32_t mxc_sandbox_pty_resize(MxcSandbox *h, uint16_t rows, uint16_t cols)
{
    if (!h)
        return MXC_STATUS_NULL_ARGUMENT;
    if (!h->pty || h->pty_master < 0)
        return MXC_E_BACKEND_ERROR;
    if (rows < 1 || rows > 32767 || cols < 1 || cols > 32767)
        return MXC_E_MALFORMED_REQUEST;
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    return ioctl(h->pty_master, TIOCSWINSZ, &ws) == 0 ? 0 : MXC_E_BACKEND_ERROR;
}

FFI_EXPORT void mxc_sandbox_free(MxcSandbox *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    kill_locked(h, false);
    close_fd(&h->in_fd);
    close_fd(&h->out_fd); /* a relay writing to them gets EPIPE and drains on */
    close_fd(&h->err_fd);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    handle_destroy(h);
}
