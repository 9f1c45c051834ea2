/* run.c — the entry points that run to completion on the calling thread:
 * a one-shot with captured output (mxc_run_json), the state-aware phases
 * (mxc_run_state_aware_json, with dry runs), a captured exec, an attached
 * exec, and their result free functions (which free by the field values:
 * the SDK hands them a copy of the struct). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ffi_internal.h"
#include "front.h"
#include "mxc.h"

static void result_reset(MxcRunResult *out)
{
    memset(out, 0, sizeof *out);
}

static int32_t result_error(MxcRunResult *out, int32_t status, const mxc_error *e)
{
    out->status = status;
    out->exit_code = -1;
    ffi_detail_fill(&out->error, e);
    return status;
}

/* Output is captured in memory files: the engine's relay writes them
 * without ever blocking, and they are read back once the workload is done. */
typedef struct {
    int in, out, err;
} capture;

static int capture_open(capture *c, mxc_error *e)
{
    c->in = open("/dev/null", O_RDONLY | O_CLOEXEC); /* the workload's stdin: EOF at once */
    c->out = memfd_create("mxc-stdout", MFD_CLOEXEC);
    c->err = memfd_create("mxc-stderr", MFD_CLOEXEC);
    if (c->in < 0 || c->out < 0 || c->err < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "ffi.capture", errno, NULL, "cannot create the output buffers");
    return 0;
}

static void capture_close(capture *c)
{
    int *fds[] = {&c->in, &c->out, &c->err};
    for (int i = 0; i < 3; i++)
        if (*fds[i] >= 0)
            close(*fds[i]), *fds[i] = -1;
}

static int32_t captured(MxcRunResult *out, capture *c, int code, bool timed_out, mxc_error *e)
{
    out->stdout_utf8 = ffi_read_all_lossy(c->out);
    out->stderr_utf8 = ffi_read_all_lossy(c->err);
    if (!out->stdout_utf8 || !out->stderr_utf8) {
        free(out->stdout_utf8), free(out->stderr_utf8);
        out->stdout_utf8 = out->stderr_utf8 = NULL;
        mxc_err(e, MXC_E_BACKEND_ERROR, "cannot read the captured output");
        return result_error(out, MXC_E_BACKEND_ERROR, e);
    }
    out->status = 0;
    out->timed_out = timed_out;
    out->exit_code = timed_out ? -1 : code;
    return 0;
}

FFI_EXPORT int32_t mxc_run_json(const char *request_json_utf8, int32_t experimental, MxcRunResult *out)
{
    if (!out)
        return MXC_STATUS_NULL_ARGUMENT;
    result_reset(out);
    mxc_request *r;
    mxc_error e = {0};
    int32_t st = ffi_accept(request_json_utf8, experimental, FFI_ONESHOT, &r, &e);
    capture c = {-1, -1, -1};
    if (st == 0 && capture_open(&c, &e) < 0)
        st = ffi_status_of(&e);
    if (st == 0) {
        int code = 255;
        bool timed_out = false;
        /* by a fresh mxc-exec: the sandbox's PID 1 is no copy of this process (fresh.h) */
        if (mxc_oneshot_fresh(r, request_json_utf8, experimental, c.in, c.out, c.err, &code, &timed_out, &e) <
            0)
            st = ffi_status_of(&e);
        if (st == 0)
            st = captured(out, &c, code, timed_out, &e);
    }
    if (st != 0 && !out->error.message_utf8)
        result_error(out, st, &e);
    capture_close(&c);
    mxc_request_delete(r);
    mxc_error_clear(&e);
    return st;
}

FFI_EXPORT void mxc_run_result_free(MxcRunResult *r)
{
    if (!r)
        return;
    free(r->stdout_utf8);
    free(r->stderr_utf8);
    free(r->output_metadata_json_utf8);
    free(r->warnings_json_utf8);
    mxc_error_detail_free(&r->error);
    r->stdout_utf8 = r->stderr_utf8 = r->output_metadata_json_utf8 = r->warnings_json_utf8 = NULL;
}

FFI_EXPORT int32_t mxc_run_state_aware_json(const char *request_json_utf8, int32_t dry_run, int32_t experimental,
                                            MxcStateAwareResult *out)
{
    if (!out)
        return MXC_STATUS_NULL_ARGUMENT;
    memset(out, 0, sizeof *out);
    mxc_request *r;
    mxc_error e = {0};
    int32_t st = ffi_accept(request_json_utf8, experimental, FFI_STATE_AWARE, &r, &e);
    json_t *result = NULL;
    if (st == 0 && dry_run) {
        result = json_object(); /* validated, nothing done */
    } else if (st == 0 && mxc_request_is_exec(r)) {
        st = ffi_fail(&e, MXC_E_MALFORMED_REQUEST,
                      "the exec phase does not return an envelope; run it through one of the exec entry points "
                      "instead (mxc_exec_state_aware_json, mxc_state_aware_exec_pty, mxc_run_state_aware_exec_json)");
    } else if (st == 0 && mxc_session_phase_fresh(r, request_json_utf8, experimental != 0, &result, &e) < 0) {
        /* (a start ran in a fresh mxc-exec: its holder is no copy of this process, fresh.h) */
        st = ffi_status_of(&e);
    }
    if (st == 0) {
        json_t *env = json_pack("{s:o}", "result", result);
        out->response_json_utf8 = json_dumps(env, JSON_COMPACT);
        json_decref(env);
        if (!out->response_json_utf8)
            st = ffi_fail(&e, MXC_E_BACKEND_ERROR, "cannot serialise the response");
    }
    out->status = st;
    if (st != 0)
        ffi_detail_fill(&out->error, &e);
    mxc_request_delete(r);
    mxc_error_clear(&e);
    return st;
}

FFI_EXPORT void mxc_state_aware_result_free(MxcStateAwareResult *r)
{
    if (!r)
        return;
    free(r->response_json_utf8);
    r->response_json_utf8 = NULL;
    mxc_error_detail_free(&r->error);
}

FFI_EXPORT int32_t mxc_run_state_aware_exec_json(const char *request_json_utf8, int32_t experimental, MxcRunResult *out)
{
    if (!out)
        return MXC_STATUS_NULL_ARGUMENT;
    result_reset(out);
    mxc_request *r;
    mxc_error e = {0};
    int32_t st = ffi_accept(request_json_utf8, experimental, FFI_STATE_AWARE, &r, &e);
    if (st == 0 && !mxc_request_is_exec(r))
        st = ffi_fail(&e, MXC_E_MALFORMED_REQUEST, "this entry point takes exec requests only");
    capture c = {-1, -1, -1};
    if (st == 0 && capture_open(&c, &e) < 0)
        st = ffi_status_of(&e);
    mxc_proc *proc = st == 0 ? mxc_proc_new() : NULL;
    if (st == 0 && !proc)
        st = ffi_fail(&e, MXC_E_BACKEND_ERROR, "out of memory");
    if (st == 0 && mxc_session_exec_start(r, false, proc, &e) < 0)
        st = ffi_status_of(&e);
    if (st == 0) {
        mxc_exec_run(proc, c.in, c.out, c.err, &e);
        int code = mxc_proc_exit_code(proc);
        bool timed_out = mxc_proc_timed_out(proc);
        mxc_exec_close(proc);
        mxc_error_clear(&e);
        st = captured(out, &c, code, timed_out, &e);
    }
    if (st != 0 && !out->error.message_utf8)
        result_error(out, st, &e);
    mxc_proc_delete(proc);
    capture_close(&c);
    mxc_request_delete(r);
    mxc_error_clear(&e);
    return st;
}

FFI_EXPORT int32_t mxc_exec_state_aware_attached_json(const char *request_json_utf8, int32_t experimental,
                                                      MxcExecOutcome *out_outcome, MxcErrorDetail *out_error)
{
    ffi_detail_reset(out_error);
    if (!out_outcome)
        return MXC_STATUS_NULL_ARGUMENT;
    memset(out_outcome, 0, sizeof *out_outcome);
    mxc_request *r;
    mxc_error e = {0};
    int32_t st = ffi_accept(request_json_utf8, experimental, FFI_STATE_AWARE, &r, &e);
    bool exec = mxc_request_is_exec(r);
    mxc_request_delete(r);
    if (st == 0 && !exec)
        st = ffi_fail(&e, MXC_E_MALFORMED_REQUEST, "this entry point takes exec requests only");
    if (st == 0 && (!isatty(0) || !isatty(1)))
        st = ffi_fail(&e, MXC_E_MALFORMED_REQUEST,
                      "an attached exec requires this process's stdout and stdin to both be terminals; use "
                      "mxc_exec_state_aware_json for piped stdio. Nothing has been run.");
    if (st == 0) {
        char *err_json = NULL;
        int code = mxc_state_aware_exec_attached(request_json_utf8, &err_json);
        if (code < 0) {
            json_t *env = err_json ? json_loads(err_json, 0, NULL) : NULL;
            json_t *ej = json_object_get(env, "error");
            const char *name = json_string_value(json_object_get(ej, "code"));
            mxc_code c = MXC_E_BACKEND_ERROR;
            for (int i = 1; name && i < MXC_E__COUNT; i++)
                if (strcmp(mxc_code_name((mxc_code)i), name) == 0)
                    c = (mxc_code)i;
            const char *msg = json_string_value(json_object_get(ej, "message"));
            st = ffi_fail(&e, c, msg ? msg : "the attached exec failed");
            json_decref(env);
        } else {
            out_outcome->exit_code = code;
        }
        mxc_free(err_json);
    }
    if (st != 0)
        ffi_detail_fill(out_error, &e);
    mxc_error_clear(&e);
    return st;
}
