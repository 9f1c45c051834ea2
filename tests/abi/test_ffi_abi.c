/* test_ffi_abi.c — libmxc_ffi.so's ABI as upstream's callers use it: status
 * numbers and argument checks, captured output (lossy UTF-8, large), free
 * functions handed a copy of the struct, handles from several threads,
 * native stdio and its rules, a terminal behind pipes, streams and closers,
 * the native timeout, the whole state-aware lifecycle, and dlopen/dlclose
 * cycles.  Run as root by tests/integration/test_ffi.py (and under ASan and
 * valgrind by run-tests.sh).  Usage: test-ffi-abi PATH/TO/libmxc_ffi.so [--no-sandbox]
 * (--no-sandbox: only what runs no sandbox, for valgrind, which cannot
 * follow a clone into new namespaces). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/check.h"
#include "mxc_ffi.h"

static const char *LIB;

#define ONESHOT(cmd) "{\"version\":\"1.0.0\",\"containment\":\"bubblewrap\",\"process\":{\"commandLine\":\"" cmd "\"}}"

static void test_arguments(void)
{
    MxcRunResult r;
    CHECK_INT_EQ(mxc_run_json(NULL, 0, &r), MXC_STATUS_NULL_ARGUMENT);
    CHECK_STR_EQ(r.error.message_utf8, "request JSON pointer is null");
    mxc_run_result_free(&r);
    CHECK_INT_EQ(mxc_run_json(ONESHOT("true"), 0, NULL), MXC_STATUS_NULL_ARGUMENT);
    CHECK_INT_EQ(mxc_run_json("{\"version\":\"1.0.0\",\"x\":\"\xff\"}", 0, &r), MXC_STATUS_INVALID_UTF8);
    mxc_run_result_free(&r);
    /* the legacy dialect is not this library's */
    CHECK_INT_EQ(mxc_run_json("{\"process\":{\"commandLine\":\"true\"}}", 0, &r), 1);
    CHECK_CONTAINS(r.error.message_utf8, "version");
    CHECK(r.stdout_utf8 == NULL && r.stderr_utf8 == NULL && r.error.operation_utf8 == NULL);
    mxc_run_result_free(&r);
    CHECK_INT_EQ(mxc_run_json("{\"version\":\"1.0.0\",\"phase\":\"start\",\"sandboxId\":\"iso:abc\"}", 0, &r), 1);
    CHECK_CONTAINS(r.error.message_utf8, "expected a one-shot request");
    mxc_run_result_free(&r);
    CHECK_INT_EQ(mxc_run_json(ONESHOT("true") " x", 0, &r), 1);
    mxc_run_result_free(&r);
    MxcStateAwareResult s;
    CHECK_INT_EQ(mxc_run_state_aware_json(ONESHOT("true"), 0, 0, &s), 1);
    CHECK_CONTAINS(s.error.message_utf8, "expected a state-aware lifecycle request");
    mxc_state_aware_result_free(&s);
    CHECK_INT_EQ(mxc_run_state_aware_json(NULL, 0, 0, NULL), MXC_STATUS_NULL_ARGUMENT);
    MxcSandbox *h = (MxcSandbox *)1;
    MxcErrorDetail d = {(char *)1, (char *)1, (char *)1, (char *)1};
    CHECK_INT_EQ(mxc_spawn_json(NULL, 0, &h, &d), MXC_STATUS_NULL_ARGUMENT);
    CHECK(h == NULL);
    mxc_error_detail_free(&d);
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT("true"), 0, NULL, NULL), MXC_STATUS_NULL_ARGUMENT);
    CHECK_INT_EQ(mxc_spawn_pty_json(ONESHOT("true"), 0, 0, 80, &h, &d), 1);
    CHECK_CONTAINS(d.message_utf8, "between 1 and 32767");
    mxc_error_detail_free(&d);
    mxc_error_detail_free(&d); /* twice is safe */
    mxc_error_detail_free(NULL);
    mxc_run_result_free(NULL);
    mxc_state_aware_result_free(NULL);
    mxc_sandbox_free(NULL);
    mxc_string_free(NULL);
    mxc_native_pipe_close(-1);
    int32_t a, b, c;
    CHECK_INT_EQ(mxc_sandbox_try_wait(NULL, &a, &b, &c), MXC_STATUS_NULL_ARGUMENT);
    CHECK_INT_EQ(mxc_sandbox_kill(NULL), MXC_STATUS_NULL_ARGUMENT);
    CHECK_INT_EQ(mxc_sandbox_id(NULL), 0);
    CHECK_STR_EQ(mxc_version(), "1.0.1");
}

/* Codes the way the SDK maps them. */
static void test_refusals(void)
{
    static const struct { const char *json; int32_t status; } T[] = {
        {ONESHOT(""), 1},
        {"{\"version\":\"9.9.9\",\"process\":{\"commandLine\":\"true\"}}", 1},
        {"{\"version\":\"1.0.0\",\"containment\":\"seatbelt\",\"process\":{\"commandLine\":\"true\"}}", 2},
        {"{\"version\":\"1.1.0-alpha\",\"containment\":\"hyperlight\",\"process\":{\"commandLine\":\"true\"}}", 4},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"true\"},\"network\":{\"ingress\":{\"default\":\"allow\"}}}", 12},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"true\",\"cwd\":\"rel\"}}", 12},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        MxcRunResult r;
        int32_t st = mxc_run_json(T[i].json, 0, &r);
        CHECK_MSG(st == T[i].status && r.status == st, "%s: %d, want %d", T[i].json, st, T[i].status);
        CHECK(r.error.message_utf8 && r.error.message_utf8[0]);
        mxc_run_result_free(&r);
    }
    MxcRunResult r;
    CHECK_INT_EQ(mxc_run_json("{\"version\":\"1.1.0-alpha\",\"containment\":\"hyperlight\",\"process\":{\"commandLine\":\"true\"}}",
                              1, &r), 2);
    mxc_run_result_free(&r);
}

static void test_run(void)
{
    MxcRunResult r;
    CHECK_INT_EQ(mxc_run_json(ONESHOT("printf 'a\\\\000b\\\\377c'; echo err >&2; exit 3"), 0, &r), 0);
    CHECK_INT_EQ(r.exit_code, 3);
    CHECK_INT_EQ(r.timed_out, 0);
    CHECK_STR_EQ(r.stdout_utf8, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c");
    CHECK_STR_EQ(r.stderr_utf8, "err\n");
    CHECK(r.warnings_json_utf8 == NULL && r.output_metadata_json_utf8 == NULL && r.error.message_utf8 == NULL);
    /* the free function frees by the field values: a copy will do */
    MxcRunResult copy = r;
    memset(&r, 0, sizeof r);
    mxc_run_result_free(&copy);

    CHECK_INT_EQ(mxc_run_json(ONESHOT("head -c 300000 /dev/zero | tr '\\\\0' x; cat; echo end"), 0, &r), 0);
    CHECK_INT_EQ((long long)strlen(r.stdout_utf8), 300004);
    mxc_run_result_free(&r);

    CHECK_INT_EQ(mxc_run_json("{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"echo a; sleep 30\",\"timeout\":200}}", 0, &r),
                 0);
    CHECK_INT_EQ(r.timed_out, 1);
    CHECK_INT_EQ(r.exit_code, -1);
    CHECK_STR_EQ(r.stdout_utf8, "a\n");
    mxc_run_result_free(&r);
}

static void *run_one(void *arg)
{
    MxcRunResult r;
    int32_t st = mxc_run_json(ONESHOT("echo parallel"), 0, &r);
    bool ok = st == 0 && r.exit_code == 0 && r.stdout_utf8 && strcmp(r.stdout_utf8, "parallel\n") == 0;
    mxc_run_result_free(&r);
    *(bool *)arg = ok;
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[4];
    bool ok[4] = {0};
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, run_one, &ok[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK_MSG(ok[i], "parallel run %d", i);
    }
}

static ssize_t read_until(int fd, char *buf, size_t cap, const char *want)
{
    size_t n = 0;
    while (n + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 20000) <= 0)
            break;
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k < 0 && errno == EAGAIN)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
        buf[n] = '\0';
        if (want && strstr(buf, want))
            break;
    }
    buf[n] = '\0';
    return (ssize_t)n;
}

static void test_spawn(void)
{
    MxcSandbox *h;
    MxcErrorDetail d;
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT("read x; echo got $x; echo e >&2; exit 6"), 0, &h, &d), 0);
    CHECK(d.message_utf8 == NULL);
    CHECK(mxc_sandbox_id(h) > 0);
    char *w = (char *)1;
    CHECK_INT_EQ(mxc_sandbox_warnings_json(h, &w), 0);
    CHECK(w == NULL);
    CHECK_INT_EQ(mxc_sandbox_output_metadata_json(h, &w), 0);
    CHECK(w == NULL);
    int32_t ex = 0, run = 0, to = 0;
    CHECK_INT_EQ(mxc_sandbox_try_wait(h, &ex, &run, &to), 0);
    CHECK_INT_EQ(run, 1); /* it waits for its input */
    CHECK_INT_EQ(mxc_sandbox_pty_resize(h, 10, 10), 12);
    MxcNativeStdio io;
    CHECK_INT_EQ(mxc_sandbox_take_native_stdio(h, &io), 0);
    CHECK(io.stdin_handle >= 0 && io.stdout_handle >= 0 && io.stderr_handle >= 0);
    CHECK(fcntl((int)io.stdout_handle, F_GETFL) & O_NONBLOCK);
    CHECK(!(fcntl((int)io.stdin_handle, F_GETFL) & O_NONBLOCK));
    MxcNativeStdio again;
    CHECK_INT_EQ(mxc_sandbox_take_native_stdio(h, &again), 4);
    CHECK(again.stdin_handle == -1 && again.stdout_handle == -1 && again.stderr_handle == -1);
    CHECK(mxc_sandbox_take_stdout(h) == NULL);
    CHECK(write((int)io.stdin_handle, "hi\n", 3) == 3);
    close((int)io.stdin_handle);
    char buf[256];
    read_until((int)io.stdout_handle, buf, sizeof buf, "\n");
    CHECK_STR_EQ(buf, "got hi\n");
    read_until((int)io.stderr_handle, buf, sizeof buf, "\n");
    CHECK_STR_EQ(buf, "e\n");
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK_INT_EQ(ex, 6);
    CHECK_INT_EQ(to, 0);
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0); /* repeatable */
    CHECK_INT_EQ(mxc_sandbox_try_wait(h, &ex, &run, &to), 0);
    CHECK(run == 0 && ex == 6);
    CHECK_INT_EQ(mxc_sandbox_kill(h), 0); /* after the exit: accepted, no change */
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK_INT_EQ(ex, 6);
    close((int)io.stdout_handle);
    close((int)io.stderr_handle);
    mxc_sandbox_free(h);

    /* kill: exit -1, not timed out; kill_for_timeout: timed out */
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT("sleep 30 & sleep 30"), 0, &h, &d), 0);
    CHECK_INT_EQ(mxc_sandbox_kill(h), 0);
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK(ex == -1 && to == 0);
    mxc_sandbox_free(h);
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT("sleep 30"), 0, &h, &d), 0);
    CHECK_INT_EQ(mxc_sandbox_kill_for_timeout(h), 0);
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK(ex == -1 && to == 1);
    mxc_sandbox_free(h);
    /* the native deadline, with nobody polling */
    CHECK_INT_EQ(mxc_spawn_json("{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"sleep 30\",\"timeout\":200}}", 0, &h, &d), 0);
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK(ex == -1 && to == 1);
    mxc_sandbox_free(h);
    /* untaken pipes: wait gives stdin EOF and drains the output */
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT("cat; head -c 1000000 /dev/zero; exit 2"), 0, &h, &d), 0);
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK_INT_EQ(ex, 2);
    mxc_sandbox_free(h);
    /* freed while running: killed, reaped */
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT("sleep 30"), 0, &h, &d), 0);
    mxc_sandbox_free(h);
    /* a refused spawn: NULL handle, the detail filled */
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT(""), 0, &h, &d), 1);
    CHECK(h == NULL && d.message_utf8);
    MxcErrorDetail dc = d;
    mxc_error_detail_free(&dc);
}

static void test_pty(void)
{
    MxcSandbox *h;
    MxcErrorDetail d;
    CHECK_INT_EQ(mxc_spawn_pty_json(ONESHOT("test -t 0 && test -t 1 && test -t 2 && echo isatty; read x; stty size; exit 3"),
                                    0, 30, 100, &h, &d), 0);
    MxcNativeStdio io;
    CHECK_INT_EQ(mxc_sandbox_take_native_stdio(h, &io), 0);
    CHECK(io.stdin_handle >= 0 && io.stdout_handle >= 0);
    CHECK_INT_EQ(io.stderr_handle, -1);
    CHECK(!isatty((int)io.stdin_handle) && !isatty((int)io.stdout_handle)); /* pipes a Node socket can adopt */
    char buf[512];
    read_until((int)io.stdout_handle, buf, sizeof buf, "isatty");
    CHECK_CONTAINS(buf, "isatty");
    CHECK_INT_EQ(mxc_sandbox_pty_resize(h, 40, 120), 0);
    CHECK(write((int)io.stdin_handle, "\n", 1) == 1);
    read_until((int)io.stdout_handle, buf, sizeof buf, "40 120");
    CHECK_CONTAINS(buf, "40 120");
    int32_t ex, to;
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK_INT_EQ(ex, 3);
    close((int)io.stdin_handle);
    close((int)io.stdout_handle);
    mxc_sandbox_free(h);
}

struct blocked_read {
    MxcReadStream *s;
    int32_t status;
    size_t n;
};

static void *reader(void *arg)
{
    struct blocked_read *b = arg;
    uint8_t buf[64];
    b->status = mxc_stream_read(b->s, buf, sizeof buf, &b->n);
    return NULL;
}

static void test_streams(void)
{
    MxcSandbox *h;
    MxcErrorDetail d;
    CHECK_INT_EQ(mxc_spawn_json(ONESHOT("read x; echo $x; sleep 30"), 0, &h, &d), 0);
    MxcWriteStream *in = mxc_sandbox_take_stdin(h);
    MxcReadStream *out = mxc_sandbox_take_stdout(h);
    CHECK(in && out);
    CHECK(mxc_sandbox_take_stdin(h) == NULL && mxc_sandbox_take_stdout(h) == NULL);
    MxcNativeStdio io;
    CHECK_INT_EQ(mxc_sandbox_take_native_stdio(h, &io), 12);
    MxcStreamCloser *closer = mxc_sandbox_stdout_closer(h);
    CHECK(closer != NULL);
    size_t n = 0;
    CHECK_INT_EQ(mxc_stream_write(in, (const uint8_t *)"ping\n", 5, &n), 0);
    CHECK_INT_EQ((long long)n, 5);
    CHECK_INT_EQ(mxc_stream_flush(in), 0);
    mxc_write_stream_free(in);
    uint8_t buf[64];
    CHECK_INT_EQ(mxc_stream_read(out, buf, sizeof buf, &n), 0);
    CHECK(n == 5 && memcmp(buf, "ping\n", 5) == 0);
    /* a read blocked on a live workload ends at the closer, the workload lives */
    struct blocked_read b = {.s = out};
    pthread_t t;
    pthread_create(&t, NULL, reader, &b);
    usleep(50000);
    CHECK_INT_EQ(mxc_stream_closer_close(closer), 0);
    CHECK_INT_EQ(mxc_stream_closer_close(closer), 0);
    pthread_join(t, NULL);
    CHECK(b.status == 0 && b.n == 0);
    int32_t ex, run, to;
    CHECK_INT_EQ(mxc_sandbox_try_wait(h, &ex, &run, &to), 0);
    CHECK_INT_EQ(run, 1);
    CHECK_INT_EQ(mxc_stream_read(NULL, buf, 1, &n), MXC_STATUS_NULL_ARGUMENT);
    mxc_stream_closer_free(closer);
    mxc_read_stream_free(out);
    MxcReadStream *err = mxc_sandbox_take_stderr(h);
    CHECK(err != NULL);
    mxc_read_stream_free(err);
    mxc_sandbox_free(h);
}

static const char *field(const char *json, const char *key, char *out, size_t outsz)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = json ? strstr(json, pat) : NULL;
    out[0] = '\0';
    if (!p)
        return out;
    p += strlen(pat);
    size_t n = strcspn(p, "\"");
    snprintf(out, outsz, "%.*s", (int)(n < outsz ? n : outsz - 1), p);
    return out;
}

static int32_t phase(const char *fmt, const char *id, char *response, size_t cap, int dry)
{
    char req[4096];
    snprintf(req, sizeof req, fmt, id);
    MxcStateAwareResult r;
    int32_t st = mxc_run_state_aware_json(req, dry, 0, &r);
    if (response)
        snprintf(response, cap, "%s", r.response_json_utf8 ? r.response_json_utf8 : "");
    MxcStateAwareResult copy = r;
    mxc_state_aware_result_free(&copy);
    return st;
}

static void test_lifecycle(void)
{
    char resp[4096], id[2048];
    const char *prov = "{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\",%s"
                       "\"network\":{\"egress\":{\"default\":\"allow\"},\"ingress\":{\"default\":\"allow\",\"hostLoopback\":\"allow\"}}}";
    CHECK_INT_EQ(phase(prov, "", resp, sizeof resp, 1), 0);
    CHECK_STR_EQ(resp, "{\"result\":{}}");
    CHECK_INT_EQ(phase(prov, "", resp, sizeof resp, 0), 0);
    field(resp, "sandboxId", id, sizeof id);
    CHECK_MSG(strncmp(id, "iso:", 4) == 0, "%s", resp);
    CHECK_CONTAINS(resp, "ephemeralWorkspacePath");
    const char *start = "{\"version\":\"1.0.0\",\"phase\":\"start\",\"sandboxId\":\"%s\"}";
    const char *stop = "{\"version\":\"1.0.0\",\"phase\":\"stop\",\"sandboxId\":\"%s\"}";
    const char *deprov = "{\"version\":\"1.0.0\",\"phase\":\"deprovision\",\"sandboxId\":\"%s\"}";
    CHECK_INT_EQ(phase(start, id, resp, sizeof resp, 0), 0);
    CHECK_STR_EQ(resp, "{\"result\":{}}");
    CHECK_INT_EQ(phase(start, id, NULL, 0, 0), 9); /* already_started */
    char exec[2300];
    snprintf(exec, sizeof exec,
             "{\"version\":\"1.0.0\",\"phase\":\"exec\",\"sandboxId\":\"%s\",\"process\":{\"commandLine\":\"echo in; exit 5\"}}", id);
    CHECK_INT_EQ(phase("%s", exec, NULL, 0, 0), 1); /* exec has no envelope */
    CHECK_INT_EQ(phase("%s", exec, NULL, 0, 1), 0); /* but validates */
    MxcRunResult r;
    CHECK_INT_EQ(mxc_run_state_aware_exec_json(exec, 0, &r), 0);
    CHECK_INT_EQ(r.exit_code, 5);
    CHECK_STR_EQ(r.stdout_utf8, "in\n");
    mxc_run_result_free(&r);
    MxcSandbox *h;
    MxcErrorDetail d;
    CHECK_INT_EQ(mxc_exec_state_aware_json(exec, 0, &h, &d), 0);
    int32_t ex, to;
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK_INT_EQ(ex, 5);
    mxc_sandbox_free(h);
    CHECK_INT_EQ(mxc_state_aware_exec_pty(exec, 0, 20, 70, &h, &d), 0);
    MxcNativeStdio io;
    CHECK_INT_EQ(mxc_sandbox_take_native_stdio(h, &io), 0);
    CHECK_INT_EQ(io.stderr_handle, -1);
    CHECK_INT_EQ(mxc_sandbox_wait(h, &ex, &to), 0);
    CHECK_INT_EQ(ex, 5);
    close((int)io.stdin_handle);
    close((int)io.stdout_handle);
    mxc_sandbox_free(h);
    MxcExecOutcome o;
    CHECK_INT_EQ(mxc_exec_state_aware_attached_json(exec, 0, &o, &d), 1); /* no terminal here */
    CHECK_CONTAINS(d.message_utf8, "Nothing has been run");
    mxc_error_detail_free(&d);
    CHECK_INT_EQ(phase(stop, id, NULL, 0, 0), 0);
    CHECK_INT_EQ(phase(stop, id, NULL, 0, 0), 10); /* already_stopped */
    CHECK_INT_EQ(mxc_exec_state_aware_json(exec, 0, &h, &d), 8); /* not_started */
    mxc_error_detail_free(&d);
    CHECK_INT_EQ(phase(start, id, NULL, 0, 0), 0);
    CHECK_INT_EQ(phase(deprov, id, NULL, 0, 0), 0);
    CHECK_INT_EQ(phase(start, id, NULL, 0, 0), 6); /* stale_id */
    CHECK_INT_EQ(phase(start, "abc", NULL, 0, 0), 5);
    CHECK_INT_EQ(phase(start, "zzz:abc", NULL, 0, 0), 2);
    CHECK_INT_EQ(phase(start, "wslc:abc", NULL, 0, 0), 4);
}

static void test_telemetry(void)
{
    char *s = NULL;
    CHECK_INT_EQ(mxc_telemetry_get_consent(&s), 0);
    CHECK_STR_EQ(s, "not-applicable");
    mxc_string_free(s);
    CHECK_INT_EQ(mxc_telemetry_get_consent_status(&s), 0);
    CHECK_CONTAINS(s, "\"storedState\":\"not-applicable\"");
    mxc_string_free(s);
    CHECK_INT_EQ(mxc_telemetry_withdraw_consent(&s), 0);
    CHECK_CONTAINS(s, "notApplicable");
    mxc_string_free(s);
    int32_t need = 1;
    CHECK_INT_EQ(mxc_telemetry_needs_consent_prompt(&need), 0);
    CHECK_INT_EQ(need, 0);
    CHECK_INT_EQ(mxc_telemetry_request_consent(NULL, NULL, NULL, &s), MXC_STATUS_NULL_ARGUMENT);
    CHECK_INT_EQ(mxc_telemetry_get_policy(NULL), MXC_STATUS_NULL_ARGUMENT);
    char *b = mxc_available_backends_json();
    CHECK_CONTAINS(b, "\"backend\":\"bubblewrap\"");
    mxc_string_free(b);
    b = mxc_platform_support_json();
    CHECK_CONTAINS(b, "\"isSupported\":true");
    mxc_string_free(b);
}

/* As the SDK does around every run(): load, call, unload. */
static void test_reload(void)
{
    for (int i = 0; i < 5; i++) {
        void *lib = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
        CHECK_MSG(lib != NULL, "%s", dlerror());
        if (!lib)
            return;
        int32_t (*run)(const char *, int32_t, MxcRunResult *) = (int32_t(*)(const char *, int32_t, MxcRunResult *))dlsym(lib, "mxc_run_json");
        void (*result_free)(MxcRunResult *) = (void (*)(MxcRunResult *))dlsym(lib, "mxc_run_result_free");
        CHECK(run && result_free && dlsym(lib, "mxc_version"));
        CHECK(dlsym(lib, "mxc_request_parse") == NULL); /* the engine stays private */
        MxcRunResult r;
        CHECK_INT_EQ(run(ONESHOT("echo reload"), 0, &r), 0);
        CHECK_STR_EQ(r.stdout_utf8, "reload\n");
        result_free(&r);
        CHECK_INT_EQ(dlclose(lib), 0);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH/TO/libmxc_ffi.so\n", argv[0]);
        return 2;
    }
    LIB = argv[1];
    bool sandboxes = !(argc > 2 && strcmp(argv[2], "--no-sandbox") == 0);
    test_arguments();
    test_refusals();
    test_telemetry();
    if (!sandboxes) {
        printf("%d passed, %d failed\n", check_total - check_failed, check_failed);
        return CHECK_DONE();
    }
    test_run();
    test_threads();
    test_spawn();
    test_pty();
    test_streams();
    test_lifecycle();
    test_reload();
    printf("%d passed, %d failed\n", check_total - check_failed, check_failed);
    return CHECK_DONE();
}
