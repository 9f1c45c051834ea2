/* stack.c — see stack.h.
 *
 * Process tree of one attach:  caller ──fork──> K (setsid) ──fork──> keeper
 * (K exits at once: the keeper is nobody's zombie) ──fork+exec──> pasta,
 * which daemonizes once its namespace side is configured.  The keeper then
 * waits on pidfds of the sandbox's PID 1 and of pasta and SIGKILLs pasta
 * when PID 1 is gone.  Neither runs in any namespace of the sandbox: the
 * workload cannot see, signal or trace them.  Both run in the sandbox's
 * helpers' cgroup (K moves itself in), pasta with MXC_NET_STACK_NOFILE
 * descriptors (helperbounds.h): bounded by the sandbox's budget. */
#include "stack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"
#include "fdio.h"
#include "governed.h"
#include "helperbounds.h"
#include "helpers.h"
#include "netpool.h"
#include "netplan.h"
#include "procs.h"
#include "resolver.h"
#include "thishost.h"

bool mxc_net_needs_stack(const mxc_net_policy *np)
{
    return np->model == MXC_NETM_DIRECT || np->model == MXC_NETM_PROXY || np->model == MXC_NETM_GOVERNED;
}

int mxc_net_require(const mxc_net_policy *np, bool rootless, mxc_error *e)
{
    if (np->model == MXC_NETM_GOVERNED) {
        char exe[4096];
        if (rootless) {
            mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "network.allowedHosts needs root here: the runtime makes mxc-proxy's "
                                                  "listener inside the sandbox's namespace as root");
            mxc_err_set_remediation(e, "run mxc as root, or use a blocked network");
            return -1;
        }
        if (!mxc_helper_path("mxc-proxy", exe, sizeof exe)) {
            mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "network.allowedHosts needs mxc-proxy, which is not installed "
                                                  "beside mxc");
            mxc_err_set_remediation(e, "install mxc-proxy with mxc, or use a blocked network");
            return -1;
        }
        return 0;
    }
    if (!mxc_net_needs_stack(np))
        return 0;
    if (access(MXC_NET_PASTA, X_OK) < 0) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "network %s needs the userspace network stack pasta (%s), which this host lacks",
                np->model == MXC_NETM_PROXY ? "runtimeConfig.networkProxy" : "egress", MXC_NET_PASTA);
        mxc_err_set_remediation(e, "install Debian's passt package (scripts/deps.sh), or use a blocked network");
        return -1;
    }
    char nft[4096];
    if (!mxc_helper_path("mxc-nft", nft, sizeof nft)) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "network %s needs mxc-nft (the rules' installer), which is not "
                "installed beside mxc", np->model == MXC_NETM_PROXY ? "runtimeConfig.networkProxy" : "egress");
        mxc_err_set_remediation(e, "install mxc-nft with mxc (ninja -C build), or use a blocked network");
        return -1;
    }
    if (rootless) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
                "network %s needs root here: the runtime starts the userspace network stack outside the sandbox as root",
                np->model == MXC_NETM_PROXY ? "runtimeConfig.networkProxy" : "egress");
        mxc_err_set_remediation(e, "run mxc as root, or use a blocked network");
        return -1;
    }
    return 0;
}

/* Reads what a child wrote on fd until EOF (bounded), NUL-terminated. */
static void slurp(int fd, char *buf, size_t sz)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, buf + n, sz - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || (n += (size_t)r) >= sz - 1)
            break;
    }
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
}

/* The rules go in through mxc-nft (src/net/nft_main.c), a helper beside
 * mxc that links libnftables: exec'd in a child that has joined the
 * namespace, the script on its fd 0 (a memfd), its error text on errfd.
 * Not a dlopen: libnftables and its five libraries were +20% on a one-shot
 * when linked into every mxc-exec start, and the CLI is static-pie now
 * (docs/design-decisions.md), where a dlopen would put a second libc,
 * version-locked to the one linked in, into the process.
 * nsfd >= 0: join that namespace (ping sockets opened for its workload
 * too); -1: a new namespace of the child's own (the probe). */
static pid_t nft_spawn(int nsfd, const char *script, int *errfd)
{
    char exe[4096];
    if (!mxc_helper_path("mxc-nft", exe, sizeof exe))
        return -ENOENT;
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) < 0)
        return -errno;
    int sfd = mxc_text_memfd("mxc-nft-script", script);
    if (sfd < 0) {
        close(pp[0]), close(pp[1]);
        return sfd;
    }
    pid_t c = fork();
    if (c < 0) {
        int err = errno;
        close(sfd), close(pp[0]), close(pp[1]);
        return -err;
    }
    if (c == 0) {
        if (nsfd >= 0 ? setns(nsfd, CLONE_NEWNET) < 0 : unshare(CLONE_NEWNET) < 0) {
            dprintf(pp[1], "%s the network namespace: %s", nsfd >= 0 ? "setns into" : "unshare", strerror(errno));
            _exit(1);
        }
        /* ICMP echo for the workload (it has no CAP_NET_RAW): ping sockets, this
         * namespace only; what they reach is still the rules' business */
        int pg = nsfd >= 0 ? open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY | O_CLOEXEC) : -1;
        if (pg >= 0) {
            (void)!write(pg, "0 2147483647", 12);
            close(pg);
        }
        if (dup2(sfd, 0) < 0 || dup2(pp[1], 1) < 0 || dup2(pp[1], 2) < 0)
            _exit(1);
        syscall(SYS_close_range, 3, ~0U, 0);
        char *argv[] = {"mxc-nft", NULL}, *envp[] = {NULL};
        execve(exe, argv, envp);
        dprintf(2, "cannot run %s: %s", exe, strerror(errno));
        _exit(127);
    }
    close(sfd), close(pp[1]);
    *errfd = pp[0];
    return c;
}

#define NFT_REMEDY "this host's kernel must provide nf_tables and nf_conntrack (modprobe nf_tables nf_conntrack), " \
                   "or use a blocked network"

/* The installer's end: 0, or -1 and, when e is not NULL, backend_unavailable "<what> (nf_tables):"
 * and why — the installer's own words (what it wrote on errfd), else the failure's errno text. */
static int rules_done(pid_t c, int errfd, const char *what, mxc_error *e)
{
    if (c == 0) /* nothing was to install (rules_start) */
        return 0;
    char why[600];
    slurp(errfd, why, sizeof why);
    close(errfd);
    int status;
    while (waitpid(c, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (e) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "%s (nf_tables): %s", what, why[0] ? why : strerror(EIO));
        mxc_err_set_remediation(e, NFT_REMEDY);
    }
    return -1;
}

/* In pasta's launcher, before the exec: a mount namespace of its own
 * (private: nothing reaches the host's) whose /etc/resolv.conf names only
 * ns, the resolver the plan chose — a file on a tmpfs over /tmp, there
 * only, bound over it.  0, or -1 with why on fd 2. */
static int pasta_resolv_conf(const char *ns)
{
    char text[64];
    int len = snprintf(text, sizeof text, "nameserver %s\n", ns);
    int fd = -1;
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16k,mode=0755") < 0 ||
        (fd = open("/tmp/resolv.conf", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0 ||
        write(fd, text, (size_t)len) != len || close(fd) < 0 ||
        mount("/tmp/resolv.conf", MXC_RESOLV_CONF, NULL, MS_BIND, NULL) < 0) {
        dprintf(2, "cannot give pasta its resolver %s: %s", ns, strerror(errno));
        return -1;
    }
    return 0;
}

char *mxc_net_rules_now(const mxc_net_policy *np, mxc_thishost *now, int *err)
{
    mxc_thishost mine = {0}, *t = now ? now : &mine;
    char *set = NULL, *out = NULL;
    *err = 0;
    if (!np->ruleset)
        return NULL;
    if (np->model == MXC_NETM_DIRECT) {
        /* the set is made by the same script: elements added, no flush (thishost.h) */
        if ((*err = mxc_thishost_read(t)) < 0 || !(set = mxc_thishost_script(t, false))) {
            *err = *err ? *err : -ENOMEM;
            mxc_thishost_free(&mine);
            return NULL;
        }
    }
    size_t a = strlen(np->ruleset), b = set ? strlen(set) : 0;
    if ((out = malloc(a + b + 1))) {
        memcpy(out, np->ruleset, a);
        memcpy(out + a, set ? set : "", b + 1);
    } else {
        *err = -ENOMEM;
    }
    free(set);
    mxc_thishost_free(&mine);
    return out;
}

/* ---- this host's destinations, followed (model 1) ------------------------
 * The rules hold the set as it was when they went in; the keeper keeps it
 * so.  The caller subscribes to IPv4 route changes before it reads the set
 * (the kernel adds and removes a local route with every address, and with
 * every AnyIP range), so no change falls between the read and the watch;
 * once the caller has closed its end of the gate (its rules are in),
 * every change that touches a local route, or a lost notification, reads
 * the set again and, when it differs, replaces it in one transaction
 * through mxc-nft. */
static int watch_open(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    struct sockaddr_nl me = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_ROUTE};
    if (fd >= 0 && bind(fd, (struct sockaddr *)&me, sizeof me) < 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* Drains the socket: whether a local IPv4 route came or went, or
 * notifications were lost (ENOBUFS: assume one did). */
static bool watch_drain(int fd)
{
    bool changed = false;
    union {
        struct nlmsghdr n;
        char b[8192];
    } buf;
    for (;;) {
        ssize_t got = recv(fd, &buf, sizeof buf, MSG_DONTWAIT);
        if (got < 0 && (errno == EINTR || errno == ENOBUFS)) {
            changed |= errno == ENOBUFS;
            continue;
        }
        if (got <= 0)
            return changed;
        size_t left = (size_t)got;
        for (struct nlmsghdr *h = &buf.n; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
            const struct rtmsg *r = NLMSG_DATA(h);
            if ((h->nlmsg_type == RTM_NEWROUTE || h->nlmsg_type == RTM_DELROUTE) &&
                h->nlmsg_len >= NLMSG_LENGTH(sizeof *r) && r->rtm_family == AF_INET && r->rtm_type == RTN_LOCAL)
                changed = true;
        }
    }
}

/* Reads the set again; when it differs from *cur, installs it.  0, or -1
 * (the set could not be read or installed). */
static int watch_refresh(int nsfd, mxc_thishost *cur)
{
    mxc_thishost now = {0};
    if (mxc_thishost_read(&now) < 0) {
        mxc_thishost_free(&now);
        return -1;
    }
    if (mxc_thishost_equal(&now, cur)) {
        mxc_thishost_free(&now);
        return 0;
    }
    char *script = mxc_thishost_script(&now, true); /* replaced in one transaction: never an empty set */
    int errfd = -1;
    pid_t c = script ? nft_spawn(nsfd, script, &errfd) : -1;
    free(script);
    if (c < 0 || rules_done(c, errfd, NULL, NULL) < 0) {
        mxc_thishost_free(&now);
        return -1;
    }
    mxc_thishost_free(cur);
    *cur = now;
    return 0;
}

/* pasta's launcher, forked: the namespace on fd 3, pasta's pid written to
 * fd 4 (what pasta daemonizes as), why not on fd 2; moved into the cgroup
 * whose `tasks` files join[] are first, when any. */
static _Noreturn void pasta_exec(const mxc_net_policy *np, int nsfd, int pidw, int errw, int *join, size_t njoin)
{
    if (njoin && mxc_cgroup_join_self(join, njoin) < 0) {
        dprintf(errw, "cannot join the cgroup made for pasta: %s", strerror(errno));
        _exit(127);
    }
    if (dup2(nsfd, 3) < 0 || dup2(pidw, 4) < 0 || dup2(errw, 2) < 0)
        _exit(127);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0)
        dup2(null, 0), dup2(null, 1);
    int keep[] = {0, 1, 2, 3, 4};
    mxc_close_all_but(keep, 5);
    /* pasta refuses to start with SIGPIPE already ignored (as our callers
     * have it): a clean signal state, as a fresh process would have */
    mxc_reset_signals();
    /* it raises its soft limit to the hard one: that bounds its flows */
    struct rlimit nofile = {MXC_NET_STACK_NOFILE, MXC_NET_STACK_NOFILE};
    if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
        _exit(127);
    const char *argv[40];
    int n = 0;
    argv[n++] = "pasta";
    argv[n++] = "--quiet";
    argv[n++] = "--runas";
    argv[n++] = "0:0"; /* pasta's default (nobody) cannot join the namespace here; it drops its capabilities itself */
    argv[n++] = "--config-net";
    argv[n++] = "--address", argv[n++] = MXC_NET_ADDR;
    argv[n++] = "--netmask", argv[n++] = "24";
    argv[n++] = "--gateway", argv[n++] = MXC_NET_GATEWAY;
    argv[n++] = "--ns-ifname", argv[n++] = MXC_NET_IFNAME;
    /* DNS: a forwarder only to the resolver the plan chose, never host
     * loopback (resolver.h): pasta relays to the first nameserver of the
     * /etc/resolv.conf it sees, so it sees one naming that resolver
     * (pasta_resolv_conf); without one no forwarder, and pasta reads no
     * resolv.conf at all (-D none).  Never --dns-forward with -D ADDR:
     * Debian 12's pasta then relays to 0.0.0.0, which is host loopback. */
    if (np->model == MXC_NETM_DIRECT && np->dns[0]) {
        if (pasta_resolv_conf(np->dns) < 0)
            _exit(127);
        argv[n++] = "--dns-forward", argv[n++] = MXC_NET_DNS;
    } else {
        argv[n++] = "--dns", argv[n++] = "none";
    }
    argv[n++] = "--ipv4-only";
    /* nothing is forwarded into the sandbox, in either protocol */
    argv[n++] = "-t", argv[n++] = "none", argv[n++] = "-u", argv[n++] = "none";
    argv[n++] = "-T", argv[n++] = "none", argv[n++] = "-U", argv[n++] = "none";
    if (np->model == MXC_NETM_DIRECT)
        argv[n++] = "--no-map-gw"; /* host loopback not even mapped (the rules drop it too) */
    argv[n++] = "--pid", argv[n++] = "/proc/self/fd/4";
    argv[n++] = "--netns", argv[n++] = "/proc/self/fd/3";
    argv[n++] = "--netns-only";
    argv[n] = NULL;
    char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    /* pasta (passt) re-execs itself as passt.avx2 where the CPU has AVX2: that build
     * directly, named pasta as the re-exec names it (one exec fewer: 15.2 -> 13.2 ms of
     * pasta's start here, docs/benchmarks.md) */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        execve(MXC_NET_PASTA_AVX2, (char *const *)argv, envp);
    execve(MXC_NET_PASTA, (char *const *)argv, envp);
    _exit(127);
}

pid_t mxc_net_pasta_start(const mxc_net_policy *np, int nsfd, int *join, size_t njoin, char *why, size_t whysz)
{
    int pidp[2], errp[2];
    if (pipe2(pidp, O_CLOEXEC) < 0) {
        snprintf(why, whysz, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(errp, O_CLOEXEC) < 0) {
        snprintf(why, whysz, "pipe: %s", strerror(errno));
        close(pidp[0]), close(pidp[1]);
        return -1;
    }
    pid_t launcher = fork();
    if (launcher == 0)
        pasta_exec(np, nsfd, pidp[1], errp[1], join, njoin);
    close(pidp[1]), close(errp[1]);
    if (launcher < 0) {
        snprintf(why, whysz, "fork: %s", strerror(errno));
        close(pidp[0]), close(errp[0]);
        return -1;
    }
    /* pasta's first process exits once the namespace side is configured;
     * one that hangs is killed before the caller's own wait runs out */
    signal(SIGPIPE, SIG_IGN);
    int lfd = (int)syscall(SYS_pidfd_open, launcher, 0);
    struct pollfd lw = {.fd = lfd, .events = POLLIN};
    if (lfd >= 0 && poll(&lw, 1, 8000) == 0)
        kill(launcher, SIGKILL);
    if (lfd >= 0)
        close(lfd);
    int status = 0;
    while (waitpid(launcher, &status, 0) < 0 && errno == EINTR)
        ;
    char pidtext[32], err[300];
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        slurp(errp[0], err, sizeof err);
        snprintf(why, whysz, "pasta failed (%s%d): %s", WIFEXITED(status) ? "status " : "signal ",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), err);
        close(errp[0]), close(pidp[0]);
        return -1;
    }
    close(errp[0]);
    /* the daemon keeps its end of the pipe open: read what it wrote, no EOF */
    fcntl(pidp[0], F_SETFL, O_NONBLOCK);
    ssize_t got = read(pidp[0], pidtext, sizeof pidtext - 1);
    pidtext[got > 0 ? got : 0] = '\0';
    close(pidp[0]);
    pid_t pasta = (pid_t)atoi(pidtext);
    if (pasta <= 0)
        snprintf(why, whysz, "pasta started but named no pid (\"%s\")", pidtext);
    return pasta > 0 ? pasta : -1;
}

/* The attach's installer: the whole script into nsfd, or, for a namespace of the pool's whose
 * entry holds the plan's rules (mxc_netpool_claimed_set), this host's set as it is now (cur)
 * when the entry's differs.  Its pid, 0 when nothing is to install, or -errno; rules_done's. */
static pid_t rules_start(int nsfd, const char *script, const mxc_thishost *cur, int *errfd)
{
    const char *held = mxc_netpool_claimed_set(nsfd);
    if (!held)
        return nft_spawn(nsfd, script, errfd);
    char *set = mxc_thishost_script(cur, false), *replace = NULL; /* the form the entry installed */
    pid_t c = !set ? -ENOMEM : strcmp(set, held) == 0 ? 0 : !(replace = mxc_thishost_script(cur, true)) ? -ENOMEM
                                                                                           : nft_spawn(nsfd, replace, errfd);
    free(set);
    free(replace);
    return c;
}

/* The keeper: starts pasta on the namespace (or, adopt >= 0, watches the
 * pidfd of the pool's pasta already attached to it, netpool.h), reports
 * "ok" or why not on rep, then ends pasta when PID 1 (hfd) exits.  Model 1
 * (wfd >= 0): once gate (a pipe's read end) reports the caller's end
 * closed, follows this host's destinations into the rules (above), and
 * ends pasta — the sandbox keeps no network — when it cannot. */
/* A pasta of the pool's (netpool.h) that the keeper takes over: its pidfd (-1: none, the keeper
 * starts one) and pid, and the helpers' cgroup files it is moved in through. */
typedef struct {
    int pfd;
    pid_t pid;
    const int *cgfds;
    int ncg;
    bool charged; /* in the sandbox's helpers' cgroup already (the pool's renamed cgroup), but the cpu one */
    bool cpu;     /* the sandbox has a cpu cgroup, which pasta is not in yet */
} adopted;

/* The adopted pasta into the sandbox's helpers cgroup, by pid — unless it is there already: on
 * v1 the pool made it in a cgroup of its own, which the claim renamed into the sandbox's
 * (netpool.h), and only a cpu cgroup (a CPU limit) is still to join.  A migration by pid holds
 * cgroup_mutex across the threadgroup lock's RCU grace period (~10-15 ms on v1), which every
 * other cgroup step of the start (the holder's own join) then waits for: the caller's start
 * waits for it (the answer's end comes after it), so the workload never runs with pasta charged
 * elsewhere, nor outlives a kill-all that missed it.  0, or -1: the keeper kills it (no network
 * rather than an uncharged one, and the start fails). */
static int adopted_move(const adopted *a)
{
    int rc = a->pfd >= 0 && (!a->charged || a->cpu) ? mxc_netpool_move(a->cgfds, (size_t)a->ncg, a->pid) : 0;
    if (rc == 0 && a->pfd >= 0 && a->ncg > 0) /* charged now: below the workload, as the keeper is */
        (void)mxc_oom_score_adj_of(a->pid, a->pfd, MXC_HELPER_OOM_SCORE_ADJ);
    for (int i = 0; a->pfd >= 0 && i < a->ncg; i++)
        close(a->cgfds[i]);
    errno = rc < 0 ? -rc : 0;
    return rc < 0 ? -1 : 0;
}

static _Noreturn void keeper(const mxc_net_policy *np, int nsfd, int hfd, int rep, int gate, int wfd,
                             mxc_thishost *cur, const adopted *a)
{
    int pfd = a->pfd;
    if (pfd < 0) {
        char why[400];
        pid_t pasta = mxc_net_pasta_start(np, nsfd, NULL, 0, why, sizeof why);
        if (pasta < 0) {
            dprintf(rep, "%s", why);
            _exit(1);
        }
        pfd = (int)syscall(SYS_pidfd_open, pasta, 0);
        if (pfd < 0) {
            int err = errno;
            dprintf(rep, "pasta started but its pid (%d) cannot be watched", (int)pasta);
            if (err != ESRCH) /* gone: the pid may be another's now (pasta is not our child) */
                kill(pasta, SIGKILL);
            _exit(1);
        }
    }
    signal(SIGPIPE, SIG_IGN);
    if (wfd < 0)
        close(nsfd);
    /* the answer once pasta is in the sandbox's cgroup(s): moved first where it is not (v2, an
     * entry without a cgroup of its own, a cpu cgroup); at once where the claim's rename put it */
    if (adopted_move(a) < 0) {
        dprintf(rep, "cannot move the pool's pasta into the sandbox's cgroup: %s", strerror(errno));
        syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
        _exit(1);
    }
    if (write(rep, "ok", 2) != 2) {
        syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
        _exit(1);
    }
    close(rep);
    /* w[2]: first the gate (POLLHUP once the caller's rules are in), then
     * the watch */
    struct pollfd w[3] = {{.fd = hfd, .events = POLLIN}, {.fd = pfd, .events = POLLIN}, {.fd = wfd < 0 ? -1 : gate}};
    for (;;) {
        while (poll(w, 3, -1) < 0 && errno == EINTR)
            ;
        if (w[0].revents || w[1].revents)
            break;
        if (w[2].fd == gate && w[2].revents) {
            close(gate);
            w[2] = (struct pollfd){.fd = wfd, .events = POLLIN};
            if (watch_drain(wfd) && watch_refresh(nsfd, cur) < 0)
                break;
        } else if (w[2].revents && watch_drain(wfd) && watch_refresh(nsfd, cur) < 0) {
            break;
        }
    }
    syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
    _exit(0);
}

int mxc_net_attach(const mxc_net_policy *np, const mxc_net_cgroup *cg, pid_t holder, mxc_error *e)
{
    if (np->model == MXC_NETM_GOVERNED)
        return mxc_governed_attach(np, cg, holder, e); /* src/net/governed.c: the proxy, no stack */
    if (!mxc_net_needs_stack(np))
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)holder);
    int nsfd = open(path, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.open_ns", errno, NULL, "cannot open the sandbox's network namespace");
    if (mxc_fault("NETPOOL_ATTACH_FAILS") && mxc_netpool_claimed_set(nsfd)) { /* tests: a pooled start fails unadopted */
        close(nsfd);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "MXC_FAULT_NETPOOL_ATTACH_FAILS");
    }
    /* model 1: the watch on this host's destinations opens before they are
     * read into the rules (nothing falls between) */
    int wfd = np->model == MXC_NETM_DIRECT ? watch_open() : -1;
    if (np->model == MXC_NETM_DIRECT && wfd < 0) {
        int err = errno;
        close(nsfd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.thishost", err, NULL,
                          "cannot watch this host's addresses (NETLINK_ROUTE)");
    }
    mxc_thishost cur = {0};
    int serr = 0;
    char *script = mxc_net_rules_now(np, &cur, &serr);
    if (!script) {
        if (wfd >= 0)
            close(wfd);
        close(nsfd);
        mxc_thishost_free(&cur);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.thishost", -serr, NULL,
                          "cannot list this host's own addresses (RTM_GETROUTE), which the rules reject");
    }
    /* the rules and the stack start side by side (pasta's start is most of
     * the cost); both are in place before this returns, and the workload
     * exists only after that.  A pool's entry holds the plan's rules already
     * (netpool.h): only this host's set, and only when it changed since */
    int rules_err = -1;
    pid_t rules = rules_start(nsfd, script, &cur, &rules_err);
    free(script);
    if (rules < 0) {
        if (wfd >= 0)
            close(wfd);
        close(nsfd);
        mxc_thishost_free(&cur);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.rules", (int)-rules, NULL, "cannot start the rules' installer");
    }
    int hfd = (int)syscall(SYS_pidfd_open, holder, 0);
    /* rp: the keeper's report; gp: its gate (closed here once the rules are in) */
    int rp[2] = {-1, -1}, gp[2] = {-1, -1};
    if (hfd < 0 || pipe2(rp, O_CLOEXEC) < 0 || pipe2(gp, O_CLOEXEC) < 0) {
        int err = errno;
        int fds[] = {hfd, rp[0], rp[1], gp[0], gp[1]};
        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        if (wfd >= 0)
            close(wfd);
        close(nsfd);
        mxc_thishost_free(&cur);
        rules_done(rules, rules_err, NULL, NULL);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.pidfd", err, NULL, "cannot watch the sandbox's PID 1");
    }
    int cgfds[3], ncg = cg && cg->name[0] ? mxc_cgroup_helpers_join_fds(cg->name, cg->pids_max, cg->memory_max,
                                                                            cg->cpu_quota_us, cgfds, e)
                                           : 0;
    if (ncg < 0) {
        close(hfd), close(nsfd), close(rp[0]), close(rp[1]), close(gp[0]), close(gp[1]);
        if (wfd >= 0)
            close(wfd);
        mxc_thishost_free(&cur);
        rules_done(rules, rules_err, NULL, NULL);
        return -1;
    }
    /* the pool's entry this caller claimed for this namespace (netpool.h): its pasta is adopted */
    pid_t pooled = 0;
    bool charged = false;
    int adopt = mxc_netpool_adopt(nsfd, &pooled, &charged);
    pid_t k = fork();
    if (k == 0) {
        setsid();
        /* the keeper is born inside, and so is a pasta it starts; an adopted one (one thread:
         * v1 `tasks` moves it whole) is moved in by the keeper once it has answered.  Both below
         * the workload for the sandbox's OOM (helperbounds.h) once charged to the sandbox: a
         * pasta the keeper starts inherits its score, an adopted one is given it (adopted_move);
         * uncharged (no sandbox cgroup: mxc-oci's) they keep their caller's, never shielded where
         * no limit of the sandbox counts them, nor the pool's idle ones */
        int joined = adopt >= 0 ? mxc_netpool_move(cgfds, (size_t)ncg, 0) : mxc_cgroup_join_self(cgfds, (size_t)ncg);
        if (joined >= 0 && ncg > 0)
            (void)mxc_oom_score_adj_self(MXC_HELPER_OOM_SCORE_ADJ);
        if (joined < 0) {
            if (adopt >= 0)
                syscall(SYS_pidfd_send_signal, adopt, SIGKILL, NULL, 0);
            dprintf(rp[1], "cannot join the sandbox's cgroup: %s", strerror(-joined));
            _exit(0);
        }
        int keep[] = {nsfd, hfd, rp[1], gp[0], adopt, cgfds[0], cgfds[1], cgfds[2], wfd};
        for (int i = adopt >= 0 ? ncg : 0; i < 3; i++)
            keep[5 + i] = -1;
        mxc_close_all_but(keep, wfd >= 0 ? 9 : 8);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0)
            dup2(null, 0), dup2(null, 1), dup2(null, 2);
        adopted a = {.pfd = adopt, .pid = pooled, .cgfds = cgfds, .ncg = ncg, .charged = charged,
                     .cpu = cg && cg->cpu_quota_us};
        if (fork() == 0)
            keeper(np, nsfd, hfd, rp[1], gp[0], wfd, &cur, &a);
        _exit(0);
    }
    if (adopt >= 0) {
        if (k < 0) /* no keeper to own it */
            syscall(SYS_pidfd_send_signal, adopt, SIGKILL, NULL, 0);
        close(adopt);
    }
    close(rp[1]), close(gp[0]), close(nsfd), close(hfd);
    for (int i = 0; i < ncg; i++)
        close(cgfds[i]);
    if (wfd >= 0)
        close(wfd);
    mxc_thishost_free(&cur);
    if (k > 0)
        while (waitpid(k, NULL, 0) < 0 && errno == EINTR)
            ;
    int rc = rules_done(rules, rules_err, "cannot install the sandbox's network rules", e);
    close(gp[1]); /* the rules are in (or failed): the keeper may follow this host now */
    if (rc < 0) {
        close(rp[0]); /* the keeper ends pasta when the sandbox's PID 1, which the caller now kills, exits */
        return -1;
    }
    struct pollfd w = {.fd = rp[0], .events = POLLIN};
    char answer[600] = ""; /* the keeper's: "ok", or why pasta did not start */
    if (k > 0 && poll(&w, 1, 10000) > 0)
        slurp(rp[0], answer, sizeof answer);
    close(rp[0]);
    if (strcmp(answer, "ok") == 0)
        return 0;
    mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "cannot start the userspace network stack: %s",
            answer[0] ? answer : k < 0 ? "fork failed" : "no answer within 10 s");
    mxc_err_set_remediation(e, "check that pasta (Debian's passt package) runs on this host and that /dev/net/tun "
                               "exists, or use a blocked network");
    return -1;
}

int mxc_net_rules_into(int nsfd, const char *script, mxc_error *e)
{
    int errfd = -1;
    pid_t c = nft_spawn(nsfd, script, &errfd);
    if (c < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.rules", (int)-c, NULL, "cannot start the rules' installer");
    return rules_done(c, errfd, "cannot install the network rules", e);
}

/* The follower of a stackless model 1 (mxc_net_rules_followed): this host's destinations into
 * the set while holder (hfd) lives; when they cannot be followed, fallback goes in instead (the
 * namespace keeps nothing but what it allows: fail closed). */
static _Noreturn void follower(int nsfd, int hfd, int wfd, mxc_thishost *cur, const char *fallback)
{
    struct pollfd w[2] = {{.fd = hfd, .events = POLLIN}, {.fd = wfd, .events = POLLIN}};
    for (;;) {
        while (poll(w, 2, -1) < 0 && errno == EINTR)
            ;
        if (w[0].revents)
            _exit(0);
        if (w[1].revents && watch_drain(wfd) && watch_refresh(nsfd, cur) < 0) {
            int errfd = -1;
            pid_t c = nft_spawn(nsfd, fallback, &errfd);
            if (c > 0)
                rules_done(c, errfd, NULL, NULL);
            _exit(1);
        }
    }
}

int mxc_net_rules_followed(const mxc_net_policy *np, int nsfd, pid_t holder, const char *head, const char *fallback,
                           mxc_error *e)
{
    /* the watch opens before this host's destinations are read into the rules: nothing falls between */
    int wfd = watch_open();
    if (wfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.thishost", errno, NULL,
                          "cannot watch this host's addresses (NETLINK_ROUTE)");
    mxc_thishost cur = {0};
    int serr = 0;
    char *rules = mxc_net_rules_now(np, &cur, &serr), *script = NULL;
    if (!rules || asprintf(&script, "%s%s", head, rules) < 0) {
        free(rules);
        close(wfd);
        mxc_thishost_free(&cur);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.thishost", serr ? -serr : ENOMEM, NULL,
                          "cannot list this host's own addresses (RTM_GETROUTE), which the rules reject");
    }
    free(rules);
    int rc = mxc_net_rules_into(nsfd, script, e);
    free(script);
    int hfd = rc == 0 ? (int)syscall(SYS_pidfd_open, holder, 0) : -1;
    if (rc == 0 && hfd < 0)
        rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.pidfd", errno, NULL, "cannot watch the sandbox's PID 1");
    pid_t k = rc == 0 ? fork() : -1;
    if (k == 0) {
        setsid();
        int keep[] = {nsfd, hfd, wfd};
        mxc_close_all_but(keep, 3);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0)
            dup2(null, 0), dup2(null, 1), dup2(null, 2);
        if (fork() == 0)
            follower(nsfd, hfd, wfd, &cur, fallback);
        _exit(0);
    }
    if (k > 0)
        while (waitpid(k, NULL, 0) < 0 && errno == EINTR)
            ;
    else if (rc == 0)
        rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "net.fork", errno, NULL, "cannot start the rules' follower");
    close(wfd);
    if (hfd >= 0)
        close(hfd);
    mxc_thishost_free(&cur);
    return rc;
}

int mxc_net_after_maps(const mxc_net_policy *np, const mxc_net_cgroup *cg, bool direct, pid_t pid1, mxc_error *e)
{
    return direct ? mxc_net_attach(np, cg, pid1, e) : 0;
}

/* In a child with a network namespace of its own: does nf_tables (and
 * conntrack) take a table like ours? */
static bool nft_works(bool conntrack)
{
    int errfd = -1;
    pid_t c = nft_spawn(-1, conntrack ? "table inet p {\n chain c {\n  type filter hook input priority "
                                        "filter;\n  ct state established accept\n }\n}\n"
                                      : "table inet p {\n chain c {\n  type filter hook output priority "
                                        "filter;\n  reject\n }\n}\n",
                        &errfd);
    if (c < 0)
        return false;
    return rules_done(c, errfd, NULL, NULL) == 0;
}

json_t *mxc_net_probe(void)
{
    bool pasta = access(MXC_NET_PASTA, X_OK) == 0;
    bool root = geteuid() == 0;
    /* model 1's DNS forwarder as a run would have it now (resolver.h) */
    mxc_net_policy m1 = {.model = MXC_NETM_DIRECT};
    mxc_resolver_plan(&m1);
    json_t *dns = m1.dns[0] ? json_pack("{s:s, s:s}", "forwarder", MXC_NET_DNS, "upstream", m1.dns)
                            : json_pack("{s:n, s:s}", "forwarder", "reason", m1.dns_why);
    /* model 1's bound on this host (thishost.h): what its rules would reject
     * now unless an allow names the address exactly; followed while a
     * sandbox lives */
    mxc_thishost th = {0};
    json_t *self = json_array();
    if (mxc_thishost_read(&th) == 0)
        for (size_t i = 0; i < th.n; i++) {
            char a[INET_ADDRSTRLEN + 4];
            struct in_addr in = {.s_addr = htonl(th.p[i].addr)};
            inet_ntop(AF_INET, &in, a, INET_ADDRSTRLEN);
            snprintf(a + strlen(a), 4, "/%u", th.p[i].len);
            json_array_append_new(self, json_string(a));
        }
    else
        self = (json_decref(self), json_null());
    mxc_thishost_free(&th);
    return json_pack("{s:{s:s, s:s, s:b}, s:b, s:b, s:b, s:o, s:{s:o, s:b}, s:o}", "userspaceStack", "name", "pasta",
                     "path", MXC_NET_PASTA, "present", pasta, "nfTables", root && nft_works(false), "conntrack",
                     root && nft_works(true), "models", root && pasta, "dns", dns, "thisHost", "rejected", self,
                     "followsChanges", true, "pool", mxc_netpool_probe());
}
