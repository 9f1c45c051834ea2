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
#include "fdio.h"
#include "front.h"
#include "net.h"

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
    return mxc_read_all(fd, (size_t)MXC_REQUEST_MAX_BYTES + 1, len);
}

/* The commands that answer at once (--help, --version, --probe,
 * --available-backends, --gc, --honor-matrix): their exit status, or -1
 * when a is none of them. */
static int info_command(const char *a)
{
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
    }
    return -1;
}

/* libmxc_ffi's mxc_run_json through a fresh process (src/lib/fresh.h): the
 * request on fd 3, the outcome to fd 4, the workload's stdio on 5-7 (our
 * own is /dev/null).  It lives no longer than its caller: killed with it,
 * and gone at once if the caller died before this was armed. */
static int oneshot_reported(pid_t reported_for, unsigned flags)
{
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

/* --log-file: opened by descriptor, never through a link, never inside
 * what a sandbox can write; and never the workload's stderr (fd 2 stays
 * the caller's).  0, or 1 with the envelope printed. */
static int open_log(const char *log_file)
{
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
    return 0;
}

/* The request, by upstream's precedence: base64 > --config > positional.
 * The text (malloc'd, *len bytes), or NULL with the refusal said and
 * *status the exit status. */
static char *read_request(const char *b64, const char *config, size_t *len, int *status)
{
    char *buf = NULL;
    *status = 1;
    if (b64) {
        size_t n = strlen(b64);
        buf = malloc(n / 4 * 3 + 4);
        long got = buf ? mxc_b64std_decode(b64, n, (unsigned char *)buf, n / 4 * 3 + 4) : -1;
        if (got < 0) {
            free(buf);
            *status = fail_input("Failed to decode base64 configuration",
                                 "--config-base64 is not valid padded standard base64%s", NULL);
            return NULL;
        }
        *len = (size_t)got;
        /* The request (its env may hold tokens) stays out of our argv: a
         * process that can read /proc/PID/cmdline must not find it there. */
        memset((char *)b64, 0, n);
    } else if (config) {
        mxc_error ce = {0};
        int fd = strcmp(config, "-") == 0 ? 0 : mxc_hostpath_open_read(config, &ce);
        mxc_error_clear(&ce);
        if (fd < 0) {
            *status = fail_input("Configuration file not found: ", "cannot read the request file %s", config);
            return NULL;
        }
        buf = read_bounded(fd, len);
        if (fd != 0)
            close(fd);
    } else { /* upstream's words first: its callers match them */
        fputs("Error: No config provided. Use a positional path, --config, or --config-base64\n\n", stderr);
        fputs(USAGE, stderr);
        fail_envelope("no request given: use --config FILE|- or --config-base64 B64%s", NULL);
        return NULL;
    }
    if (!buf)
        fail_envelope("out of memory reading the request%s", NULL);
    return buf;
}

int main(int argc, char **argv)
{
    mxc_net_install(); /* the network layer under the engine (src/net/iface/net.h) */
    /* a reader that goes away (| head) must not kill us in the middle of a
     * phase: writes fail with EPIPE instead (the workload gets SIGPIPE's
     * default back: mxc_exec_workload resets every disposition) */
    signal(SIGPIPE, SIG_IGN);
    const char *config = NULL, *b64 = NULL, *log_file = NULL;
    unsigned flags = 0;
    pid_t reported_for = 0; /* --oneshot-reported PPID: libmxc_ffi's fresh one-shot */
    bool debug = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = info_command(a);
        if (rc >= 0) {
            return rc;
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
    if (reported_for > 0)
        return oneshot_reported(reported_for, flags);
    if (log_file) {
        if (open_log(log_file) != 0)
            return 1;
        debug = true;
    }
    mxc_debug = debug;
    mxc_debugf("mxc-exec %s: flags=%u", MXC_VERSION, flags);
    size_t len = 0;
    int status;
    char *buf = read_request(b64, config, &len, &status);
    if (!buf)
        return status;
    fflush(stdout);
    status = mxc_run_request(buf, len, flags | MXC_RUN_EXITING, 0, 1, 2);
    free(buf);
    return status;
}
