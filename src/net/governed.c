/* governed.c — see governed.h. */
#include "governed.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harden.h"

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

static bool beside(const char *file, char *out, size_t sz)
{
    const char *slash = strrchr(file, '/');
    if (!slash || (size_t)(slash - file) + sizeof "/mxc-proxy" > sz)
        return false;
    snprintf(out, sz, "%.*s/mxc-proxy", (int)(slash - file), file);
    return access(out, X_OK) == 0;
}

bool mxc_governed_proxy_path(char *out, size_t sz)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        if (beside(self, out, sz))
            return true;
    }
    Dl_info info; /* an in-process caller: beside libmxc / libmxc_ffi */
    if (dladdr((void *)mxc_governed_proxy_path, &info) && info.dli_fname && beside(info.dli_fname, out, sz))
        return true;
    static const char *const INSTALLED[] = {"/usr/local/bin/mxc-proxy", "/usr/bin/mxc-proxy"};
    for (size_t i = 0; i < sizeof INSTALLED / sizeof INSTALLED[0]; i++)
        if (access(INSTALLED[i], X_OK) == 0) {
            snprintf(out, sz, "%s", INSTALLED[i]);
            return true;
        }
    return false;
}

/* One byte with room for one fd (SCM_RIGHTS), either way. */
typedef struct {
    char byte;
    struct iovec iov;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr msg;
} fd_msg;

static void fd_msg_init(fd_msg *m)
{
    m->byte = 'L';
    m->iov = (struct iovec){.iov_base = &m->byte, .iov_len = 1};
    m->msg = (struct msghdr){.msg_iov = &m->iov, .msg_iovlen = 1, .msg_control = m->u.buf,
                             .msg_controllen = sizeof m->u.buf};
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
    fd_msg m;
    fd_msg_init(&m);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m.msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &s, sizeof s);
    _exit(sendmsg(sp, &m.msg, MSG_NOSIGNAL) == 1 ? 0 : 14);
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
        fd_msg m;
        fd_msg_init(&m);
        if (recvmsg(sp[0], &m.msg, MSG_CMSG_CLOEXEC) == 1) {
            struct cmsghdr *cm = CMSG_FIRSTHDR(&m.msg);
            if (cm && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        }
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
 * terminal or process group reaches it): fds 3 listener, 4 configuration
 * (a socket: the caller's write can never raise SIGPIPE in it), 5 the
 * sandbox PID 1's pidfd, 6 status, 7 audit (when any). */
static void spawn(const char *exe, int lfd, int cfg, int hfd, int st, int afd)
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

static int config_text(const mxc_net_policy *np, char **out)
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
    const char *hosts = getenv("MXC_PROXY_HOSTS_FILE"); /* tests: names from a file, no DNS query */
    if (hosts && hosts[0] == '/')
        json_object_set_new(doc, "hostsFile", json_string(hosts));
    *out = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return *out ? 0 : -1;
}

int mxc_governed_attach(const mxc_net_policy *np, pid_t holder, mxc_error *e)
{
    char exe[PATH_MAX];
    if (!mxc_governed_proxy_path(exe, sizeof exe)) {
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
    int cfg[2] = {-1, -1}, st[2] = {-1, -1}, afd = -1;
    char *text = NULL;
    int rc = -1;
    if (hfd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cfg) < 0 || pipe2(st, O_CLOEXEC) < 0 ||
        config_text(np, &text) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.proxy", errno, NULL, "cannot prepare mxc-proxy");
        goto out;
    }
    if (np->audit_path[0])
        afd = open(np->audit_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    spawn(exe, lfd, cfg[0], hfd, st[1], afd);
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
    char answer[400] = "";
    struct pollfd w = {.fd = st[0], .events = POLLIN};
    if (poll(&w, 1, 10000) > 0) {
        ssize_t n = read(st[0], answer, sizeof answer - 1);
        answer[n > 0 ? n : 0] = '\0';
    }
    if (!strcmp(answer, "ok"))
        rc = 0;
    else if (!strncmp(answer, "policy: allowed[", 16))
        mxc_err(e, MXC_E_POLICY_VALIDATION, "network.allowedHosts%s", answer + 15);
    else if (!strncmp(answer, "policy: blocked[", 16))
        mxc_err(e, MXC_E_POLICY_VALIDATION, "network.blockedHosts%s", answer + 15);
    else {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "mxc-proxy did not start: %s", answer[0] ? answer : "no answer");
        mxc_err_set_remediation(e, "check that mxc-proxy runs on this host, or use a blocked network");
    }
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
    close(lfd);
    return rc;
}
