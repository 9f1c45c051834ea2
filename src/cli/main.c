/* mxc-exec — the command-line executor: a thin argv shell over libmxc.
 * Owns: flags, reading the request (--config FILE|-, --config-base64,
 * or a positional path) and the answer when there is none to read (both
 * dialects at once: upstream lxc-exec's lines on stderr, the legacy
 * envelope on stdout, exit 1), diagnostics routing (--debug, --log-file).
 * Everything else is the library's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "mxc.h"
#include "error.h"
#include "exec.h"
#include "hostpath.h"
#include "net.h"
#include "request.h"
#include "sandbox_id.h"

static const char USAGE[] =
    "usage: mxc-exec [--experimental] [--debug] [--log-file PATH] [--dry-run] [--raw-terminal]\n"
    "                [--allow-testing-features] (--config FILE|- | --config-base64 B64 | FILE)\n"
    "       mxc-exec --probe | --gc | --available-backends | --honor-matrix | --version | --help\n"
    "\n"
    "Runs one MXC request (JSON) in a Linux sandbox. Non-exec phases print one\n"
    "{\"result\":...} or {\"error\":...} envelope on stdout; exec and one-shot\n"
    "requests stream the workload's output and exit with its status.  A contract\n"
    "1.0 one-shot is answered as upstream's lxc-exec answers it (docs/wire-contract.md).\n";

/* No request could be read: the dialect is unknown, so both are answered —
 * upstream lxc-exec's "Request error" lines on stderr (what a contract-1.0
 * caller reads) and one malformed_request envelope on stdout (what a
 * legacy caller reads).  Exit 1, as upstream. */
static void fail_envelope(const char *fmt, const char *arg)
{
    mxc_error e = {0};
    mxc_err(&e, MXC_E_MALFORMED_REQUEST, fmt, arg ? arg : "");
    char *s = mxc_error_envelope_text(&e);
    if (s)
        printf("%s\n", s);
    free(s);
    mxc_error_clear(&e);
}

static int fail_input(const char *upstream, const char *fmt, const char *arg)
{
    fprintf(stderr, "Request error\nConfiguration parse error: %s%s\n", upstream, arg ? arg : "");
    fail_envelope(fmt, arg);
    return 1;
}

/* Reads at most MXC_REQUEST_MAX_BYTES + 1 so the library can say "too big". */
static char *read_bounded(int fd, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap > MXC_REQUEST_MAX_BYTES)
                break;
            cap *= 2;
            char *g = realloc(buf, cap);
            if (!g) {
                free(buf);
                return NULL;
            }
            buf = g;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    mxc_net_install(); /* the network layer under the engine (src/net/net.h) */
    /* a reader that goes away (| head) must not kill us in the middle of a
     * phase: writes fail with EPIPE instead (the workload gets SIGPIPE's
     * default back: mxc_exec_workload resets every disposition) */
    signal(SIGPIPE, SIG_IGN);
    const char *config = NULL, *b64 = NULL, *log_file = NULL;
    unsigned flags = 0;
    pid_t reported_for = 0; /* --oneshot-reported PPID: libmxc_ffi's fresh one-shot (below) */
    bool debug = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("mxc-exec %s\n", MXC_VERSION);
            return 0;
        } else if (!strcmp(a, "--probe")) {
            char *p = mxc_probe_json();
            printf("%s\n", p ? p : "{}");
            mxc_free(p);
            return 0;
        } else if (!strcmp(a, "--available-backends")) { /* upstream lxc-exec's discovery */
            char *b = mxc_available_backends_text();
            fputs(b ? b : "[]\n", stdout);
            mxc_free(b);
            return 0;
        } else if (!strcmp(a, "--gc")) {
            char *g = mxc_gc_json();
            printf("%s\n", g ? g : "{}");
            int bad = !g || strncmp(g, "{\"result\":", 10) != 0;
            mxc_free(g);
            return bad;
        } else if (!strcmp(a, "--honor-matrix")) {
            char *m = mxc_honor_matrix_markdown();
            fputs(m ? m : "", stdout);
            mxc_free(m);
            return 0;
        } else if (!strcmp(a, "--oneshot-reported") && i + 1 < argc) {
            reported_for = atoi(argv[++i]);
        } else if (!strcmp(a, "--experimental")) {
            flags |= MXC_RUN_EXPERIMENTAL;
        } else if (!strcmp(a, "--dry-run")) {
            flags |= MXC_RUN_DRY_RUN;
        } else if (!strcmp(a, "--debug")) {
            debug = true;
        } else if (!strcmp(a, "--raw-terminal")) {
            flags |= MXC_RUN_RAW_TERMINAL; /* on a terminal: the workload's output unfiltered */
        } else if (!strcmp(a, "--allow-testing-features")) {
            /* accepted: this build ships no testing-only features */
        } else if ((!strcmp(a, "--config") || !strcmp(a, "--config-base64") || !strcmp(a, "--log-file")) &&
                   i + 1 < argc) {
            const char **slot = !strcmp(a, "--config") ? &config : !strcmp(a, "--log-file") ? &log_file : &b64;
            *slot = argv[++i];
        } else if (a[0] != '-' && !config) {
            config = a;
        } else {
            fail_envelope("unknown or incomplete argument %s (see --help)", a);
            return 2;
        }
    }
    if (reported_for > 0) {
        /* libmxc_ffi's mxc_run_json through a fresh process (src/lib/fresh.h):
         * the request on fd 3, the outcome to fd 4, the workload's stdio on
         * 5-7 (our own is /dev/null).  It lives no longer than its caller:
         * killed with it, and gone at once if the caller died before this
         * was armed. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != reported_for)
            return 1;
        size_t n = 0;
        char *req = read_bounded(3, &n);
        close(3);
        int rc = req ? mxc_run_oneshot_reported(req, n, flags, 5, 6, 7, 4) : 1;
        free(req);
        return rc;
    }
    if (log_file) {
        /* by descriptor, never through a link, never inside what a
         * sandbox can write; and never the workload's stderr (fd 2 stays
         * the caller's) */
        mxc_error le = {0};
        int fd = mxc_hostpath_open_log(log_file, &le);
        if (fd < 0) {
            char *s = mxc_error_envelope_text(&le);
            if (s)
                printf("%s\n", s);
            free(s);
            mxc_error_clear(&le);
            return 1;
        }
        mxc_debug_fd = fd;
        debug = true;
    }
    mxc_debug = debug;
    mxc_debugf("mxc-exec %s: flags=%u", MXC_VERSION, flags);
    char *buf = NULL;
    size_t len = 0;
    if (b64) { /* precedence as upstream: base64 > --config > positional */
        size_t n = strlen(b64);
        buf = malloc(n / 4 * 3 + 4);
        long got = buf ? mxc_b64std_decode(b64, n, (unsigned char *)buf, n / 4 * 3 + 4) : -1;
        if (got < 0) {
            free(buf);
            return fail_input("Failed to decode base64 configuration", "--config-base64 is not valid padded standard base64%s",
                              NULL);
        }
        len = (size_t)got;
        /* The request (its env may hold tokens) stays out of our argv: a
         * process that can read /proc/PID/cmdline must not find it there. */
        memset((char *)b64, 0, n);
    } else if (config) {
        mxc_error ce = {0};
        int fd = strcmp(config, "-") == 0 ? 0 : mxc_hostpath_open_read(config, &ce);
        mxc_error_clear(&ce);
        if (fd < 0)
            return fail_input("Configuration file not found: ", "cannot read the request file %s", config);
        buf = read_bounded(fd, &len);
        if (fd != 0)
            close(fd);
    } else { /* upstream's words first: its callers match them */
        fputs("Error: No config provided. Use a positional path, --config, or --config-base64\n\n", stderr);
        fputs(USAGE, stderr);
        fail_envelope("no request given: use --config FILE|- or --config-base64 B64%s", NULL);
        return 1;
    }
    if (!buf) {
        fail_envelope("out of memory reading the request%s", NULL);
        return 1;
    }
    fflush(stdout);
    int status = mxc_run_request(buf, len, flags | MXC_RUN_EXITING, 0, 1, 2);
    free(buf);
    return status;
}
