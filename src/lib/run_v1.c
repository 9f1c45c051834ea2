/* run_v1.c — what a contract-1.0 one-shot looks like on the command line:
 * upstream's lxc-exec surface.
 * Owns: the streams and exit codes by outcome (a parse error: "Request
 * error" and the message on stderr, exit 1; a backend this host lacks:
 * "error: ..." on stderr, exit 1; any later failure and a timeout: the
 * message and one {"error":...} envelope on stderr, exit 255; otherwise the
 * workload's own exit code) and --dry-run's report on stdout; the workload
 * itself is run by the caller's runner (api.c: the terminal).  The legacy
 * dialect and state-aware requests keep api.c's envelopes on stdout. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run_v1.h"
#include "fdio.h"
#include "oneshot.h"
#include "session.h"

static void put(int fd, const char *s)
{
    (void)mxc_write_all(fd, s, strlen(s));
}

static void putf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(int fd, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    put(fd, buf);
}

/* Upstream's backend failure: the message, immediately followed by the
 * envelope, on one line. */
static int backend_failure(int err, const mxc_error *e)
{
    char *env = mxc_error_envelope_text(e);
    putf(err, "%s%s\n", e->message, env ? env : "");
    free(env);
    return 255;
}

static void dry_run_head(const mxc_request *r, int out)
{
    json_t *cid = json_object_get(r->root, "containerId");
    putf(out, "Script code length: %zu\nWorking directory: %s\nScript timeout: %u\nContainer name: %s\n",
         r->command_line ? strlen(r->command_line) : 0, r->cwd ? r->cwd : "", r->timeout_ms,
         json_is_string(cid) ? json_string_value(cid) : "");
}

int mxc_v1_report_refusal(const mxc_request *r, const mxc_error *e, unsigned flags, int out, int err)
{
    switch (e->code) {
    case MXC_E_MALFORMED_REQUEST:
        putf(err, "Request error\nConfiguration parse error: %s\n", e->message);
        return 1;
    case MXC_E_UNSUPPORTED_CONTAINMENT:
    case MXC_E_BACKEND_UNAVAILABLE:
        putf(err, "error: %s\n", e->message);
        if (e->remediation[0])
            putf(err, "%s\n", e->remediation);
        return 1;
    default:
        if (flags & MXC_RUN_DRY_RUN) {
            dry_run_head(r, out);
            putf(out, "Runner completed in 0ms\nDry run completed. Result: validation failed: %s\n", e->message);
            return 255;
        }
        return backend_failure(err, e);
    }
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

int mxc_v1_run_oneshot(mxc_request *r, unsigned flags, int in, int out, int err, mxc_v1_runner *run)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mxc_error e = {0};
    if (flags & MXC_RUN_DRY_RUN) {
        json_t *plan = mxc_plan_describe(r, &e);
        int status;
        if (!plan) {
            status = mxc_v1_report_refusal(r, &e, flags, out, err);
        } else {
            dry_run_head(r, out);
            const char *rules = json_string_value(json_object_get(plan, "networkRules")); /* src/net, models 1/2 */
            if (rules)
                putf(out, "Network: %s\nNetwork rules (nftables, in the sandbox's namespace):\n%s",
                     json_string_value(json_object_get(plan, "network")), rules);
            json_t *dns = json_object_get(plan, "networkDns"); /* model 1's forwarder (src/net/resolver.h) */
            const char *up = json_string_value(json_object_get(dns, "upstream"));
            if (dns && up)
                putf(out, "Network DNS: the forwarder %s, relaying to %s\n",
                     json_string_value(json_object_get(dns, "forwarder")), up);
            else if (dns)
                putf(out, "Network DNS: none: %s\n", json_string_value(json_object_get(dns, "reason")));
            putf(out, "Runner completed in %ldms\nDry run completed. Result: validation passed\n", ms_since(&t0));
            json_decref(plan);
            status = 0;
        }
        mxc_error_clear(&e);
        return status;
    }
    int code = 255;
    bool timed_out = false;
    int status;
    if (run(r, flags, in, out, err, &code, &timed_out, &e) < 0) {
        status = backend_failure(err, &e);
    } else if (timed_out) {
        mxc_err(&e, MXC_E_BACKEND_ERROR, "script timed out after %ums", r->timeout_ms);
        e.details = json_pack("{s:b, s:I}", "timedOut", 1, "timeoutMs", (json_int_t)r->timeout_ms);
        char *env = mxc_error_envelope_text(&e); /* stdout belongs to the workload */
        putf(err, "%s\n", env ? env : "");
        free(env);
        status = 255;
    } else {
        status = code;
    }
    mxc_error_clear(&e);
    return status;
}

json_t *mxc_backends_json(void)
{
    /* Our one-shot sandbox answers to "bubblewrap", upstream's Linux
     * default; proxy enforcement is not offered (yet), said as upstream
     * says it: a warning instead of the proxyEnforcement capability. */
    return json_pack("[{s:s, s:[s]}]", "backend", "bubblewrap", "warnings",
                     "mxc: runtimeConfig.networkProxy is not supported by this build (it has no governed egress "
                     "path to the proxy yet); requests that name one are refused with backend_error.");
}
