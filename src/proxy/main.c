/* main.c — mxc-proxy, the binary: a thin shell over proxy.c.
 *
 *   mxc-proxy --listen-fd N --config-fd N [--watch-fd N] [--status-fd N] [--audit-fd N]
 *
 * The executor (src/net/governed.c) starts it with the listening socket it
 * made inside the sandbox's network namespace, a pidfd of the sandbox's
 * PID 1, and the configuration as one JSON object on a pipe (never in argv
 * or the environment: it holds the sandbox's proxy credential):
 *   {"sandbox": NAME, "user": U, "token": T, "allowed": [..], "blocked": [..],
 *    "hostsFile": PATH?, "maxConnections": N?, "headTimeoutMs": N?,
 *    "idleTimeoutMs": N?, "resolveTimeoutMs": N? (default 10000), "pipeBudgetKiB": N? (the relay pipes' total, default 32768),
 *    "auditMaxBytes": N?, "auditDeniedPerSec": N?, "auditDeniedBurst": N?, "auditAllowedPerSec": N?,
 *    "auditAllowedBurst": N? (the audit's budgets: auditlog.h has the defaults),
 *    "credentials": [{"name": N, "revision": R, "host": H, "port": P,
 *                     "pathPrefix": "/..."?, "secret": S}]?, "upstreamCa": PATH?}
 * On the status fd it answers once its policy is built, then closes it:
 *   "ok"                        no credentials;
 *   "ok\n" + the CA's PEM       credentials: the sandbox's CA (tlsmint.h),
 *                               made now, whose certificate the workload
 *                               must trust; EOF ends the PEM;
 *   "policy: <entry>: <why>" / "config: <why>" (and exits 2).
 * Its descriptors are its own, not its caller's: RLIMIT_NOFILE (soft and
 * hard) is set to what maxConnections needs (nofile_for), so a caller's soft
 * 1024 never starves it and nothing raises it later.
 * Secrets are held only in this process's memory (not dumpable, nobody):
 * the configuration text is cleansed once parsed, jansson's strings are
 * cleansed when freed, the credential set cleanses its copies. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <openssl/crypto.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "credbind.h"
#include "fdio.h"
#include "helperbounds.h"
#include "hostpolicy.h"
#include "intercept.h"
#include "proxy.h"
#include "tlsmint.h"

#define CONFIG_MAX (1 << 20)

static int fd_arg(int argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            return *end || v < 0 || v > 65535 ? -2 : (int)v;
        }
    return -1;
}

static int strings(json_t *a, const char ***out, size_t *n)
{
    *n = json_array_size(a);
    *out = calloc(*n + 1, sizeof **out);
    if (!*out)
        return -1;
    for (size_t i = 0; i < *n; i++)
        if (!((*out)[i] = json_string_value(json_array_get(a, i))))
            return -1;
    return 0;
}

static unsigned num(json_t *cfg, const char *key, unsigned dflt)
{
    json_t *v = json_object_get(cfg, key);
    return json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 10000000
               ? (unsigned)json_integer_value(v)
               : dflt;
}

static uint64_t num64(json_t *cfg, const char *key, uint64_t dflt)
{
    json_t *v = json_object_get(cfg, key);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : dflt;
}

/* The descriptors the cap needs, as both limits (root may raise the hard
 * one); not root and below it: the soft limit up to the hard one, and the
 * accept loop sheds and rests when they run out (proxy.c). */
static void nofile_for(unsigned max_conns)
{
    rlim_t need = (rlim_t)max_conns * MXC_PROXY_NOFILE_PER_CONN + MXC_PROXY_NOFILE_FIXED;
    struct rlimit rl = {need, need};
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
}

static char *read_small(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    ssize_t r;
    while (buf && n < cap && (r = read(fd, buf + n, cap - n)) > 0)
        n += (size_t)r;
    close(fd);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* jansson's memory is cleansed when freed: it held the secrets. */
static void *json_zalloc(size_t n)
{
    return malloc(n);
}

static void json_zfree(void *p)
{
    if (p)
        OPENSSL_cleanse(p, malloc_usable_size(p));
    free(p);
}

/* The configuration, whole (bounded), parsed, its text cleansed. */
static json_t *read_config(int fd)
{
    char *buf = malloc(CONFIG_MAX);
    size_t n = 0;
    ssize_t r;
    while (buf && n < CONFIG_MAX && ((r = read(fd, buf + n, CONFIG_MAX - n)) > 0 || (r < 0 && errno == EINTR)))
        n += r > 0 ? (size_t)r : 0;
    close(fd);
    json_error_t jerr;
    json_t *cfg = buf && n < CONFIG_MAX ? json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (buf)
        OPENSSL_cleanse(buf, CONFIG_MAX);
    free(buf);
    return cfg;
}

/* "credentials": the set, or NULL with err (never a secret). */
static mxc_credset *credentials(json_t *a, mxc_error *err)
{
    mxc_credset *s = mxc_credset_new();
    if (!s || (a && !json_is_array(a))) {
        mxc_err(err, MXC_E_MALFORMED_REQUEST, "credentials: not a list");
        mxc_credset_free(s);
        return NULL;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *o = json_array_get(a, i), *rev = json_object_get(o, "revision"), *port = json_object_get(o, "port");
        json_t *prefix = json_object_get(o, "pathPrefix");
        if (!json_is_integer(rev) || json_integer_value(rev) < 0 || !json_is_integer(port) ||
            json_integer_value(port) < 1 || json_integer_value(port) > 65535 || (prefix && !json_is_string(prefix))) {
            mxc_err(err, MXC_E_MALFORMED_REQUEST, "credentials[%zu]: revision, port or pathPrefix not valid", i);
            mxc_credset_free(s);
            return NULL;
        }
        if (mxc_credset_add(s, json_string_value(json_object_get(o, "name")), (unsigned long)json_integer_value(rev),
                            json_string_value(json_object_get(o, "host")), (unsigned)json_integer_value(port),
                            json_string_value(prefix), json_string_value(json_object_get(o, "secret")), err) < 0) {
            mxc_credset_free(s);
            return NULL;
        }
    }
    return s;
}

/* Root is needed only to be given what it holds; the relay runs as nobody,
 * not dumpable (no process of that uid can read its memory: the
 * credential), with no way back to privilege. */
static int drop_privileges(void)
{
    if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                           setresuid(65534, 65534, 65534) < 0))
        return -1;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return 0;
}

static void status(int fd, const char *text)
{
    if (fd < 0)
        return;
    (void)mxc_write_all(fd, text, strlen(text));
    close(fd);
}

/* A refusal before serving: "<what>: <why>" on the status descriptor; 2,
 * the exit status that says so. */
static int refused(int sfd, const char *what, const mxc_error *e)
{
    char line[sizeof e->message + 16];
    snprintf(line, sizeof line, "%s: %s", what, e->message);
    status(sfd, line);
    return 2;
}

int main(int argc, char **argv)
{
    int lfd = fd_arg(argc, argv, "--listen-fd"), cfd = fd_arg(argc, argv, "--config-fd");
    int wfd = fd_arg(argc, argv, "--watch-fd"), afd = fd_arg(argc, argv, "--audit-fd");
    int sfd = fd_arg(argc, argv, "--status-fd");
    if (lfd < 0 || cfd < 0 || wfd < -1 || afd < -1 || sfd < -1) {
        fprintf(stderr, "usage: mxc-proxy --listen-fd N --config-fd N [--watch-fd N] [--status-fd N] [--audit-fd N]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    json_set_alloc_funcs(json_zalloc, json_zfree);
    json_t *cfg = read_config(cfd);
    const char **allowed = NULL, **blocked = NULL;
    size_t na = 0, nb = 0;
    const char *user = json_string_value(json_object_get(cfg, "user"));
    const char *token = json_string_value(json_object_get(cfg, "token"));
    if (!json_is_object(cfg) || !user || !token || !*token ||
        strings(json_object_get(cfg, "allowed"), &allowed, &na) < 0 ||
        strings(json_object_get(cfg, "blocked"), &blocked, &nb) < 0) {
        fprintf(stderr, "mxc-proxy: the configuration is not valid\n");
        status(sfd, "config: the configuration is not valid");
        return 2;
    }
    mxc_error err = {0};
    mxc_hostpolicy *hp = mxc_hostpolicy_new(allowed, na, blocked, nb, &err);
    if (!hp) {
        fprintf(stderr, "mxc-proxy: %s\n", err.message);
        return refused(sfd, "policy", &err);
    }
    const char *sandbox = json_string_value(json_object_get(cfg, "sandbox"));
    char *hosts = NULL; /* tests: a hosts table instead of DNS, read now, before the privileges go */
    const char *hosts_path = json_string_value(json_object_get(cfg, "hostsFile"));
    if (hosts_path && !(hosts = read_small(hosts_path))) {
        status(sfd, "config: cannot read hostsFile");
        return 2;
    }
    /* credentials: the set, the sandbox's CA, the TLS contexts (the
     * upstream roots read now, before the privileges go) */
    mxc_credset *creds = credentials(json_object_get(cfg, "credentials"), &err);
    if (!creds)
        return refused(sfd, "config", &err);
    mxc_intercept_ctx ix = {.creds = creds};
    char *ok = NULL;
    if (mxc_credset_count(creds)) {
        const char *ca = json_string_value(json_object_get(cfg, "upstreamCa"));
        if (!(ix.mint = mxc_tlsmint_new(sandbox, &err)) || mxc_intercept_ctx_init(&ix, ca, &err) < 0)
            return refused(sfd, "config", &err);
        const char *pem = mxc_tlsmint_ca_pem(ix.mint);
        if (!(ok = malloc(strlen(pem) + 4))) {
            status(sfd, "config: out of memory");
            return 2;
        }
        snprintf(ok, strlen(pem) + 4, "ok\n%s", pem);
    }
    unsigned max_conns = num(cfg, "maxConnections", MXC_PROXY_MAX_CONNECTIONS);
    if (max_conns > MXC_PROXY_MAX_CONNECTIONS_MOST)
        max_conns = MXC_PROXY_MAX_CONNECTIONS_MOST;
    nofile_for(max_conns); /* while root: the hard limit too */
    if (drop_privileges() < 0) {
        status(sfd, "config: cannot drop privileges");
        return 2;
    }
    mxc_proxy_config pc = {
        .listen_fd = lfd, .watch_fd = wfd, .audit_fd = afd, .sandbox = sandbox ? sandbox : "",
        .user = user, .token = token, .policy = hp,
        .hosts = hosts,
        .max_conns = max_conns,
        .head_timeout_ms = num(cfg, "headTimeoutMs", 10000),
        .idle_timeout_ms = num(cfg, "idleTimeoutMs", 300000),
        .resolve_timeout_ms = num(cfg, "resolveTimeoutMs", 10000),
        .pipe_bytes_max = (size_t)num(cfg, "pipeBudgetKiB", 32768) * 1024,
        .intercept = ix.mint ? &ix : NULL,
        .audit_limits = {.max_bytes = num64(cfg, "auditMaxBytes", MXC_PROXY_AUDIT_MAX_BYTES),
                         .denied_per_sec = num(cfg, "auditDeniedPerSec", MXC_PROXY_AUDIT_DENIED_PER_SEC),
                         .denied_burst = num(cfg, "auditDeniedBurst", MXC_PROXY_AUDIT_DENIED_BURST),
                         .allowed_per_sec = num(cfg, "auditAllowedPerSec", MXC_PROXY_AUDIT_ALLOWED_PER_SEC),
                         .allowed_burst = num(cfg, "auditAllowedBurst", MXC_PROXY_AUDIT_ALLOWED_BURST)},
    };
    ix.head_timeout_ms = pc.head_timeout_ms;
    ix.idle_timeout_ms = pc.idle_timeout_ms;
    status(sfd, ok ? ok : "ok"); /* the listener already queues connections: ready */
    free(ok);
    int rc = mxc_proxy_run(&pc);
    if (rc < 0)
        fprintf(stderr, "mxc-proxy: %s\n", strerror(errno));
    if (mxc_proxy_intercepting()) /* threads still use all of it: the process's end frees it */
        _exit(rc < 0 ? 1 : 0);
    mxc_intercept_ctx_free(&ix);
    mxc_tlsmint_free(ix.mint);
    mxc_credset_free(creds);
    mxc_hostpolicy_free(hp);
    free(allowed);
    free(blocked);
    free(hosts);
    json_decref(cfg);
    return rc < 0 ? 1 : 0;
}
