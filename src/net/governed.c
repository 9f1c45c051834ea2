/* governed.c — see governed.h. */
#include "governed.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helperbounds.h"
#include "helpers.h"
#include "netplan.h"
#include "procs.h"
#include "sockmsg.h"

int mxc_governed_credential(mxc_net_policy *np, mxc_error *e)
{
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.credential", errno, NULL, "cannot draw the proxy credential");
    char hex[33];
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    snprintf(np->proxy_url, sizeof np->proxy_url, MXC_GOVERNED_URL_HEAD "%s@" MXC_GOVERNED_ADDR ":" MXC_GOVERNED_PORT_TEXT "/",
             hex);
    return 0;
}

/* In a child: join nsfd's network namespace, bring its loopback up, and
 * listen on 127.0.0.1:3128 there; the socket comes back over sp. */
static _Noreturn void make_listener(int nsfd, int sp)
{
    if (setns(nsfd, CLONE_NEWNET) < 0)
        _exit(10);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        _exit(11);
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        _exit(12);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(MXC_GOVERNED_PORT),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 1024) < 0)
        _exit(13);
    _exit(mxc_sockmsg_send_tag(sp, 'L', s) == 0 ? 0 : 14);
}

static int listener_in(int nsfd, mxc_error *e)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.proxy_listener", errno, NULL, "socketpair");
    pid_t c = fork();
    if (c == 0) {
        close(sp[0]);
        make_listener(nsfd, sp[1]);
    }
    close(sp[1]);
    int fd = -1, status = 0;
    if (c > 0) {
        char tag;
        if (mxc_sockmsg_recv_tag(sp[0], &tag, &fd) < 0)
            fd = -1;
        while (waitpid(c, &status, 0) < 0 && errno == EINTR)
            ;
    }
    close(sp[0]);
    if (fd < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot listen inside the sandbox's network namespace (step %d)",
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return fd;
}

/* The proxy, a grandchild in a session of its own (nothing of the caller's
 * terminal or process group reaches it), in the sandbox's helpers' cgroup
 * (cgfds: it moves itself in before it execs, so all of it is charged
 * there): fds 3 listener, 4 configuration (a socket: the caller's write can
 * never raise SIGPIPE in it), 5 the sandbox PID 1's pidfd, 6 status, 7
 * audit (when any). */
static void spawn(const char *exe, int lfd, int cfg, int hfd, int st, int afd, int *cgfds, int ncg)
{
    pid_t k = fork();
    if (k != 0) {
        if (k > 0)
            while (waitpid(k, NULL, 0) < 0 && errno == EINTR)
                ;
        return;
    }
    setsid();
    if (fork() != 0)
        _exit(0);
    if (mxc_cgroup_join_self(cgfds, (size_t)ncg) < 0) {
        (void)!write(st, "config: cannot join the sandbox's cgroup", 40);
        _exit(126);
    }
    /* the sandbox's OOM takes the workload, not its governed egress (helperbounds.h: where it can),
     * once charged to the sandbox's cgroup; uncharged (mxc-oci's) it keeps its caller's score */
    if (ncg > 0)
        (void)mxc_oom_score_adj_self(MXC_HELPER_OOM_SCORE_ADJ);
    int null = open("/dev/null", O_RDWR); /* moved high too: it may have landed on a target (3..7) */
    if (null >= 0) {
        int high = fcntl(null, F_DUPFD, 20);
        close(null);
        null = high;
    }
    int src[] = {lfd, cfg, hfd, st, afd};
    int moved[5];
    for (int i = 0; i < 5; i++) /* above every target first, so no dup2 overwrites a source */
        moved[i] = src[i] >= 0 ? fcntl(src[i], F_DUPFD, 20) : -1;
    for (int i = 0; i < 5; i++)
        if (moved[i] >= 0)
            dup2(moved[i], 3 + i);
    if (null >= 0)
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
    int keep[] = {0, 1, 2, 3, 4, 5, 6, 7};
    mxc_close_all_but(keep, afd >= 0 ? 8 : 7);
    mxc_reset_signals();
    const char *argv[] = {"mxc-proxy", "--listen-fd", "3", "--config-fd", "4", "--watch-fd", "5", "--status-fd", "6",
                          afd >= 0 ? "--audit-fd" : NULL, "7", NULL};
    char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(exe, (char *const *)argv, envp);
    _exit(127);
}

#define CA_DIR ".mxc-proxy"
#define SYSTEM_ROOTS "/etc/ssl/certs/ca-certificates.crt"
#define STATUS_MAX 65536

/* The directory name under .mxc-proxy/: the sandbox's name when it is one
 * path component, else a fixed one (a one-shot's /tmp is its own). */
static const char *ca_name(const mxc_net_policy *np)
{
    const char *s = np->sandbox;
    return s[0] && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") ? s : "sandbox";
}

int mxc_governed_workload_env(mxc_net_policy *np, mxc_error *e)
{
    json_t *out = json_array();
    char dir[1024], kv[1200];
    snprintf(dir, sizeof dir, "%s/" CA_DIR "/%s", np->ca_base, ca_name(np));
    for (size_t i = 0; i < np->ncreds; i++) {
        const mxc_net_credential *c = &np->creds[i];
        if (c->env) {
            snprintf(kv, sizeof kv, "%s=mxc:cred:%s:%lld", c->env, c->name, c->revision);
            json_array_append_new(out, json_string(kv));
        }
    }
    /* these replace the roots: the bundle (system roots + ours); these add to them: ours alone */
    static const char *const BUNDLE[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"};
    static const char *const EXTRA[] = {"NODE_EXTRA_CA_CERTS", "DENO_CERT"};
    for (size_t i = 0; i < sizeof BUNDLE / sizeof BUNDLE[0]; i++) {
        snprintf(kv, sizeof kv, "%s=%s/bundle.pem", BUNDLE[i], dir);
        json_array_append_new(out, json_string(kv));
    }
    for (size_t i = 0; i < sizeof EXTRA / sizeof EXTRA[0]; i++) {
        snprintf(kv, sizeof kv, "%s=%s/ca.pem", EXTRA[i], dir);
        json_array_append_new(out, json_string(kv));
    }
    free(np->workload_env);
    np->workload_env = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    return np->workload_env ? 0 : mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
}

/* A directory below dirfd, never through a link. */
static int beneath(int dirfd, const char *name)
{
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof how);
}

/* The same, made when missing (again when another run's end removed it
 * between the two steps). */
static int subdir(int dirfd, const char *name)
{
    for (int tries = 0; tries < 3; tries++) {
        if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
            return -1;
        int fd = beneath(dirfd, name);
        if (fd >= 0 || errno != ENOENT)
            return fd;
    }
    return -1;
}

/* The base the CA files go under (a host path the sandbox may have
 * replaced by a link at its last component: not followed). */
static int open_base(const mxc_net_policy *np)
{
    return np->ca_base[0] == '/' ? open(np->ca_base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
}

void mxc_governed_remove_ca(const mxc_net_policy *np)
{
    if (!np->creds)
        return;
    int base = open_base(np);
    int d1 = base < 0 ? -1 : beneath(base, CA_DIR);
    int d2 = d1 < 0 ? -1 : beneath(d1, ca_name(np));
    if (d2 >= 0) {
        unlinkat(d2, "ca.pem", 0);
        unlinkat(d2, "bundle.pem", 0);
        close(d2);
        unlinkat(d1, ca_name(np), AT_REMOVEDIR);
    }
    if (d1 >= 0) {
        close(d1);
        unlinkat(base, CA_DIR, AT_REMOVEDIR); /* when no other sandbox's is left in it */
    }
    if (base >= 0)
        close(base);
}

/* name in dirfd := a (+ b), by a fresh file renamed over it. */
static int put_file(int dirfd, const char *name, const char *a, size_t alen, const char *b, size_t blen)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".%s.%d", name, (int)getpid());
    unlinkat(dirfd, tmp, 0);
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const char *part[2] = {a, b};
    size_t len[2] = {alen, blen};
    bool ok = fchmod(fd, 0644) == 0;
    for (int k = 0; k < 2 && ok; k++)
        for (size_t off = 0; ok && off < len[k];) {
            ssize_t n = write(fd, part[k] + off, len[k] - off);
            ok = n > 0 || (n < 0 && errno == EINTR);
            off += n > 0 ? (size_t)n : 0;
        }
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dirfd, tmp, dirfd, name) < 0) {
        unlinkat(dirfd, tmp, 0);
        return -1;
    }
    return 0;
}

/* The system roots (bounded), for the bundle; "" when absent. */
static char *system_roots(size_t *len)
{
    *len = 0;
    int fd = open(SYSTEM_ROOTS, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *buf = NULL;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size < (16 << 20) && (buf = malloc((size_t)st.st_size + 2))) {
        ssize_t n;
        while (*len < (size_t)st.st_size && (n = read(fd, buf + *len, (size_t)st.st_size - *len)) > 0)
            *len += (size_t)n;
        if (*len && buf[*len - 1] != '\n')
            buf[(*len)++] = '\n';
    }
    if (fd >= 0)
        close(fd);
    return buf ? buf : calloc(1, 1);
}

/* The CA files where the workload finds them (see governed.h). */
static int write_ca(const mxc_net_policy *np, const char *pem, mxc_error *e)
{
    int base = open_base(np); /* the workspace or the grant: bound at the same path inside */
    int d1 = base < 0 ? -1 : subdir(base, CA_DIR);
    int d2 = d1 < 0 ? -1 : subdir(d1, ca_name(np));
    size_t rlen;
    char *roots = d2 < 0 ? NULL : system_roots(&rlen);
    int rc = roots && put_file(d2, "ca.pem", pem, strlen(pem), NULL, 0) == 0 &&
                     put_file(d2, "bundle.pem", roots, rlen, pem, strlen(pem)) == 0
                 ? 0
                 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.proxy_ca", errno, NULL,
                              "cannot write the sandbox's CA under %s/" CA_DIR " (a link or a file in the way?)",
                              np->ca_base);
    free(roots);
    if (d2 >= 0)
        close(d2);
    if (d1 >= 0)
        close(d1);
    if (base >= 0)
        close(base);
    return rc;
}

/* Wipes a JSON string's bytes in place (a secret) before it is freed. */
static void wipe(json_t *s)
{
    const char *v = json_string_value(s);
    if (v)
        explicit_bzero((char *)v, json_string_length(s));
}

/* The proxy's "credentials": each binding of the plan, its secret from the caller's environment. */
static json_t *proxy_credentials(const mxc_net_policy *np, mxc_error *e)
{
    json_t *out = json_array();
    for (size_t i = 0; i < np->ncreds; i++) {
        const mxc_net_credential *c = &np->creds[i];
        const char *secret = c->secret_env ? getenv(c->secret_env) : NULL;
        if (!secret || !*secret) {
            mxc_err(e, MXC_E_POLICY_VALIDATION, "network.credentials[%zu].secretEnv: %s is not set in the caller's "
                    "environment", i, c->secret_env ? c->secret_env : "?");
            mxc_err_set_remediation(e, "export the secret in that variable before the run (or session start)");
            json_decref(out);
            return NULL;
        }
        json_t *o = json_pack("{s:s, s:I, s:s, s:i, s:s}", "name", c->name, "revision", (json_int_t)c->revision,
                              "host", c->host, "port", c->port, "secret", secret);
        if (o && c->path_prefix)
            json_object_set_new(o, "pathPrefix", json_string(c->path_prefix));
        json_array_append_new(out, o);
    }
    return out;
}

static void wipe_credentials(json_t *doc)
{
    json_t *a = json_object_get(doc, "credentials");
    for (size_t i = 0; i < json_array_size(a); i++)
        wipe(json_object_get(json_array_get(a, i), "secret"));
}

static int config_text(const mxc_net_policy *np, char **out, mxc_error *e)
{
    json_error_t jerr;
    json_t *doc = json_loads(np->hosts ? np->hosts : "{}", 0, &jerr);
    const char *cred = strstr(np->proxy_url, MXC_GOVERNED_USER ":");
    const char *at = cred ? strchr(cred, '@') : NULL;
    if (!doc || !cred || !at) {
        json_decref(doc);
        return -1;
    }
    cred += sizeof MXC_GOVERNED_USER;
    json_object_set_new(doc, "sandbox", json_string(np->sandbox));
    json_object_set_new(doc, "user", json_string(MXC_GOVERNED_USER));
    json_object_set_new(doc, "token", json_stringn(cred, (size_t)(at - cred)));
    if (np->proxy_max_conns) /* the host's bounds (plan.c); unset: the proxy's own defaults, the same */
        json_object_set_new(doc, "maxConnections", json_integer(np->proxy_max_conns));
    if (np->proxy_audit_max)
        json_object_set_new(doc, "auditMaxBytes", json_integer((json_int_t)np->proxy_audit_max));
    const char *hosts = getenv("MXC_PROXY_HOSTS_FILE"); /* tests: names from a file, no DNS query */
    if (hosts && hosts[0] == '/')
        json_object_set_new(doc, "hostsFile", json_string(hosts));
    if (np->creds) {
        json_t *creds = proxy_credentials(np, e);
        if (!creds) {
            json_decref(doc);
            return -1;
        }
        json_object_set_new(doc, "credentials", creds);
        const char *ca = getenv("MXC_PROXY_UPSTREAM_CA"); /* tests: the origins' CA instead of the system roots */
        if (ca && ca[0] == '/')
            json_object_set_new(doc, "upstreamCa", json_string(ca));
    }
    *out = json_dumps(doc, JSON_COMPACT);
    wipe_credentials(doc);
    json_decref(doc);
    return *out ? 0 : -1;
}

/* The status pipe to its EOF (bounded, 10 s in all). */
static char *read_status(int fd)
{
    char *buf = malloc(STATUS_MAX);
    size_t n = 0;
    struct pollfd w = {.fd = fd, .events = POLLIN};
    for (int waited = 0; buf && n < STATUS_MAX - 1 && waited < 100; waited++) {
        int r = poll(&w, 1, 100);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        ssize_t got = read(fd, buf + n, STATUS_MAX - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    if (buf)
        buf[n] = '\0';
    return buf;
}

int mxc_governed_attach(const mxc_net_policy *np, const mxc_net_cgroup *cg, pid_t holder, mxc_error *e)
{
    char exe[PATH_MAX];
    if (!mxc_helper_path("mxc-proxy", exe, sizeof exe)) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "network.allowedHosts needs mxc-proxy, which is not installed beside mxc");
        mxc_err_set_remediation(e, "install mxc-proxy with mxc (ninja -C build), or use a blocked network");
        return -1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)holder);
    int nsfd = open(path, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.open_ns", errno, NULL, "cannot open the sandbox's network namespace");
    int lfd = listener_in(nsfd, e);
    close(nsfd);
    if (lfd < 0)
        return -1;
    int hfd = (int)syscall(SYS_pidfd_open, holder, 0);
    int cfg[2] = {-1, -1}, st[2] = {-1, -1}, afd = -1, cgfds[3], ncg = 0;
    char *text = NULL;
    int rc = -1;
    if (hfd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cfg) < 0 || pipe2(st, O_CLOEXEC) < 0 ||
        config_text(np, &text, e) < 0) {
        if (!e->code)
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.proxy", errno, NULL, "cannot prepare mxc-proxy");
        goto out;
    }
    /* its descriptors, memory and CPU: the sandbox's budget (cgroup.h, helperbounds.h) */
    if (cg && cg->name[0] &&
        (ncg = mxc_cgroup_helpers_join_fds(cg->name, cg->pids_max, cg->memory_max, cg->cpu_quota_us, cgfds, e)) < 0) {
        ncg = 0;
        goto out;
    }
    if (np->audit_path[0] && np->audit_by_caller) {
        mxc_error ae = {0};
        afd = mxc_hostpath_open_log(np->audit_path, &ae); /* refused: the run goes on unaudited, as with no file */
        mxc_error_clear(&ae);
    } else if (np->audit_path[0]) {
        afd = open(np->audit_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    spawn(exe, lfd, cfg[0], hfd, st[1], afd, cgfds, ncg);
    for (int i = 0; i < ncg; i++)
        close(cgfds[i]);
    ncg = 0;
    close(cfg[0]), close(st[1]);
    cfg[0] = st[1] = -1;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = send(cfg[1], text + off, len - off, MSG_NOSIGNAL); /* a proxy that died: EPIPE, no signal */
        if (n <= 0 && errno != EINTR)
            break;
        off += n > 0 ? (size_t)n : 0;
    }
    close(cfg[1]);
    cfg[1] = -1;
    char *answer = read_status(st[0]);
    if (!answer)
        mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    else if (!np->creds && !strcmp(answer, "ok"))
        rc = 0;
    else if (np->creds && !strncmp(answer, "ok\n-----BEGIN CERTIFICATE-----", 30))
        rc = write_ca(np, answer + 3, e);
    else if (!strncmp(answer, "policy: allowed[", 16))
        mxc_err(e, MXC_E_POLICY_VALIDATION, "network.allowedHosts%s", answer + 15);
    else if (!strncmp(answer, "policy: blocked[", 16))
        mxc_err(e, MXC_E_POLICY_VALIDATION, "network.blockedHosts%s", answer + 15);
    else if (!strncmp(answer, "config: credentials[", 20)) /* a binding the proxy refuses (never a secret) */
        mxc_err(e, MXC_E_POLICY_VALIDATION, "network.%.300s", answer + 8);
    else {
        answer[strcspn(answer, "\n")] = '\0';
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "mxc-proxy did not start: %.300s", answer[0] ? answer : "no answer");
        mxc_err_set_remediation(e, "check that mxc-proxy runs on this host, or use a blocked network");
    }
    free(answer);
out:
    if (text) {
        memset(text, 0, strlen(text)); /* the credential */
        free(text);
    }
    for (int i = 0; i < 2; i++) {
        if (cfg[i] >= 0)
            close(cfg[i]);
        if (st[i] >= 0)
            close(st[i]);
    }
    if (afd >= 0)
        close(afd);
    if (hfd >= 0)
        close(hfd);
    for (int i = 0; i < ncg; i++)
        close(cgfds[i]);
    close(lfd);
    return rc;
}
