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
 *    "idleTimeoutMs": N?}
 * On the status fd it answers "ok" once its policy is built, or
 * "policy: <entry>: <why>" / "config: <why>" and exits 2. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostpolicy.h"
#include "proxy.h"

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
    (void)!write(fd, text, strlen(text));
    close(fd);
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
    FILE *f = fdopen(cfd, "r");
    json_error_t jerr;
    json_t *cfg = f ? json_loadf(f, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (f)
        fclose(f);
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
    char err[300] = "";
    mxc_hostpolicy *hp = mxc_hostpolicy_new(allowed, na, blocked, nb, err, sizeof err);
    if (!hp) {
        fprintf(stderr, "mxc-proxy: %s\n", err);
        char line[sizeof err + 16];
        snprintf(line, sizeof line, "policy: %s", err);
        status(sfd, line);
        return 2;
    }
    const char *sandbox = json_string_value(json_object_get(cfg, "sandbox"));
    char *hosts = NULL; /* tests: a hosts table instead of DNS, read now, before the privileges go */
    const char *hosts_path = json_string_value(json_object_get(cfg, "hostsFile"));
    if (hosts_path && !(hosts = read_small(hosts_path))) {
        status(sfd, "config: cannot read hostsFile");
        return 2;
    }
    if (drop_privileges() < 0) {
        status(sfd, "config: cannot drop privileges");
        return 2;
    }
    mxc_proxy_config pc = {
        .listen_fd = lfd, .watch_fd = wfd, .audit_fd = afd, .sandbox = sandbox ? sandbox : "",
        .user = user, .token = token, .policy = hp,
        .hosts = hosts,
        .max_conns = num(cfg, "maxConnections", 1024),
        .head_timeout_ms = num(cfg, "headTimeoutMs", 10000),
        .idle_timeout_ms = num(cfg, "idleTimeoutMs", 300000),
    };
    status(sfd, "ok"); /* the listener already queues connections: ready */
    int rc = mxc_proxy_run(&pc);
    if (rc < 0)
        fprintf(stderr, "mxc-proxy: %s\n", strerror(errno));
    mxc_hostpolicy_free(hp);
    free(allowed);
    free(blocked);
    free(hosts);
    json_decref(cfg);
    return rc < 0 ? 1 : 0;
}
