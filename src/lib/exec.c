/* exec.c — see exec.h. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cgroup.h"
#include "fsview.h"
#include "harden.h"

typedef struct {
    int kind; /* 1 = pid, 2 = failure */
    int err;
    pid_t pid;
    char stage[64];
    char detail[256];
} exec_msg;

static void report(int fd, int kind, int err, pid_t pid, const char *stage, const char *detail)
{
    exec_msg m = {.kind = kind, .err = err, .pid = pid};
    snprintf(m.stage, sizeof m.stage, "%s", stage ? stage : "");
    snprintf(m.detail, sizeof m.detail, "%s", detail ? detail : "");
    (void)!send(fd, &m, sizeof m, MSG_NOSIGNAL);
}

/* The workload: everything here runs inside the sandbox, then execs. */
_Noreturn void mxc_exec_workload(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c)
{
    int ctl = c->ctl, in = c->in, out = c->out, err_fd = c->err;
    const char *stage = "exec.setsid";
    if (setsid() < 0)
        goto fail;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    stage = "exec.stdio";
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err_fd, 2) < 0)
        goto fail;
    if (in == out) /* pty: make it our controlling terminal */
        ioctl(0, TIOCSCTTY, 0);
    /* Before chdir: a cwd of /proc/self/fd/N must not reach a leaked
     * directory fd (CVE-2024-21626). */
    int keep[] = {0, 1, 2, ctl};
    mxc_close_all_but(keep, sizeof keep / sizeof keep[0]);
    const char *cwd = s->cwd ? s->cwd : mxc_plan_default_cwd(p);
    char where[8];
    if (chdir(cwd) < 0 || (!getcwd(where, sizeof where) && errno != ERANGE)) {
        int err = errno;
        char detail[256];
        snprintf(detail, sizeof detail, "process.cwd %.150s is not a directory inside the sandbox", cwd);
        report(ctl, 2, err, 0, "exec.chdir", detail);
        _exit(127);
    }
    int rc = mxc_harden_self(p, ctl, &stage);
    if (rc < 0) {
        errno = -rc;
        goto fail;
    }
    char *argv[] = {"sh", "-c", (char *)s->command_line, NULL};
    stage = "exec.execve";
    execve("/bin/sh", argv, s->envp);
fail:
    report(ctl, 2, errno, 0, stage, NULL);
    _exit(127);
}

int mxc_exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void mxc_exec_report_exit(int fd, int code)
{
    report(fd, 5, code, 0, NULL, NULL);
}

/* One control message with one ancillary item (SCM_RIGHTS or
 * SCM_CREDENTIALS).  Returns what sendmsg returned. */
static ssize_t send_with_cmsg(int fd, int kind, int type, const void *data, size_t len)
{
    exec_msg m = {.kind = kind};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(struct ucred))]; /* the larger of the two */
    } cm;
    memset(&cm, 0, sizeof cm);
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf, .msg_controllen = CMSG_SPACE(len)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = type;
    h->cmsg_len = CMSG_LEN(len);
    memcpy(CMSG_DATA(h), data, len);
    ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
    return n == (ssize_t)sizeof m ? n : -1;
}

void mxc_exec_announce(int ctl, pid_t w, bool translate)
{
    if (!translate) {
        report(ctl, 1, 0, w, NULL, NULL);
        return;
    }
    /* Our pid numbers are not the caller's: hand the kernel the workload's
     * pid as credentials (we hold CAP_SYS_ADMIN over our PID namespace),
     * and it arrives translated into the caller's namespace. */
    struct ucred u = {.pid = w, .uid = getuid(), .gid = getgid()};
    (void)send_with_cmsg(ctl, 1, SCM_CREDENTIALS, &u, sizeof u);
}

struct spawn_arg {
    const mxc_plan *p;
    const mxc_exec_spec *s;
    const mxc_exec_child *c;
};

static int workload_entry(void *arg)
{
    const struct spawn_arg *a = arg;
    mxc_exec_workload(a->p, a->s, a->c);
}

pid_t mxc_exec_spawn(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c, bool sibling)
{
    /* vfork semantics (shared memory, we sleep until it execs or exits):
     * no copy of our address space for a child that only sets itself up
     * and execs — ~0.1 ms per exec here.  Everything mxc_exec_workload does
     * is system calls on its own task and stack buffers (no allocation, no
     * lock), which is what makes sharing the memory safe. */
    const size_t size = 256 * 1024;
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    pid_t pid = -1;
    int err = ENOMEM;
    if (stack != MAP_FAILED) {
        struct spawn_arg a = {p, s, c};
        pid = clone(workload_entry, (char *)stack + size,
                    CLONE_VM | CLONE_VFORK | (sibling ? CLONE_PARENT : 0) | SIGCHLD, &a);
        err = errno;
        munmap(stack, size);
    }
    if (pid < 0 && err != EAGAIN) { /* e.g. under an emulator that refuses CLONE_VM: fork semantics */
        pid = (pid_t)syscall(SYS_clone, (sibling ? CLONE_PARENT : 0) | SIGCHLD, NULL, NULL, NULL, 0);
        if (pid == 0)
            mxc_exec_workload(p, s, c);
    }
    return pid;
}

/* Attached mode: the pty comes from the sandbox's own devpts (so the
 * workload's ttyname(3) names a /dev/pts entry it can see); the master
 * goes to the caller over the control socket, the slave to the workload. */
static int sandbox_pty(int ctl, const mxc_exec_spec *s, mxc_exec_child *c)
{
    int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        return -1;
    int unlock = 0;
    int slave = ioctl(master, TIOCSPTLCK, &unlock) < 0 ? -1 : ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
        close(master);
        return -1;
    }
    if (s->pty_rows && s->pty_cols) { /* the size the caller asked for, before the workload can look */
        struct winsize ws = {.ws_row = s->pty_rows, .ws_col = s->pty_cols};
        ioctl(master, TIOCSWINSZ, &ws);
    }
    ssize_t n = send_with_cmsg(ctl, 4, SCM_RIGHTS, &master, sizeof master);
    close(master);
    if (n < 0) {
        close(slave);
        return -1;
    }
    c->in = c->out = c->err = slave;
    return 0;
}

/* The joiner: moves itself into the exec's cgroup (no migration by the
 * caller: see mxc_cgroup_join_fds), enters every namespace of the holder
 * at once, re-verifies the view's masks, becomes the sandbox's uid, starts
 * the workload in the sandbox's PID namespace as the caller's child,
 * reports it and exits. */
static _Noreturn void joiner_main(pid_t holder, const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *cc,
                                  int *join, size_t njoin)
{
    mxc_exec_child own = *cc, *c = &own;
    int ctl = c->ctl;
    /* our memory holds the request (env included) until the workload
     * execs, and the workload shares it: nobody may read it */
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int keep[4 + 3] = {c->ctl, c->in, c->out, c->err, -1, -1, -1};
    for (size_t i = 0; i < njoin && i < 3; i++)
        keep[4 + i] = join[i];
    mxc_close_all_but(keep, sizeof keep / sizeof keep[0]);
    const char *stage = "exec.cgroup_join";
    int rc = mxc_cgroup_join_self(join, njoin);
    if (rc < 0) {
        errno = -rc;
        goto fail;
    }
    stage = "exec.pidfd_open";
    int pfd = (int)syscall(SYS_pidfd_open, holder, 0);
    if (pfd < 0)
        goto fail;
    stage = "exec.setns";
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (!p->host_network)
        flags |= CLONE_NEWNET;
    if (setns(pfd, flags) < 0)
        goto fail;
    close(pfd);
    stage = "exec.setresuid";
    /* rootless: setgroups is denied in the namespace (the caller's
     * supplementary groups stay, as they do for the caller itself); the
     * capabilities setns gave us in the namespace stay too (host root is
     * unmapped inside) */
    if ((!p->rootless && setgroups(0, NULL) < 0) || setresgid(MXC_INNER_GID, MXC_INNER_GID, MXC_INNER_GID) < 0 ||
        setresuid(MXC_INNER_UID, MXC_INNER_UID, MXC_INNER_UID) < 0)
        goto fail;
    /* The host may have replaced a masked file since the last exec (the
     * kernel then drops its mount): put the masks back, or refuse. */
    char why[256];
    rc = mxc_fsview_verify(p, why, sizeof why);
    if (rc < 0) {
        report(ctl, 2, -rc, 0, "exec.verify", why);
        _exit(127);
    }
    stage = "exec.pty";
    if (c->in < 0 && sandbox_pty(ctl, s, c) < 0)
        goto fail;
    /* The workload is the caller's child, not ours (CLONE_PARENT): the
     * caller waits for it directly and we are done once it runs — one
     * process and one wake-up fewer between its exit and the caller. */
    stage = "exec.fork";
    pid_t w = mxc_exec_spawn(p, s, c, true);
    if (w < 0)
        goto fail;
    mxc_exec_announce(ctl, w, false); /* our pids are the caller's */
    mxc_exec_child_close(c);
    _exit(0);
fail:
    report(ctl, 2, errno, 0, stage, NULL);
    _exit(127);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void mxc_exec_child_close(mxc_exec_child *c)
{
    if (c->out != c->in) {
        close_fd(&c->out);
        close_fd(&c->err);
    }
    c->out = c->err = -1;
    close_fd(&c->in);
    close_fd(&c->ctl);
}

int mxc_exec_prepare(bool pty, uint32_t timeout_ms, mxc_proc *proc, mxc_exec_child *c, mxc_error *e)
{
    memset(proc, 0, sizeof *proc);
    proc->in_fd = proc->out_fd = proc->err_fd = proc->joiner_pidfd = proc->ctl_fd = proc->killall_pidfd = -1;
    proc->status_fd = -1;
    proc->pty = pty;
    proc->timeout_ms = timeout_ms;
    *c = (mxc_exec_child){-1, -1, -1, -1};
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    if (!pty) { /* with a pty the joiner makes it inside the sandbox (sandbox_pty) */
        if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
            int err = errno;
            for (int i = 0; i < 2; i++)
                close_fd(&pin[i]), close_fd(&pout[i]), close_fd(&perr[i]);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.pipe2", err, NULL, "cannot create the stdio pipes");
        }
        proc->in_fd = pin[1], proc->out_fd = pout[0], proc->err_fd = perr[0];
        c->in = pin[0], c->out = pout[1], c->err = perr[1];
    }
    int sv[2], on = 1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
        setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0) {
        int err = errno;
        mxc_exec_child_close(c);
        mxc_exec_close(proc);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.socketpair", err, NULL, "cannot create the control socket");
    }
    proc->ctl_fd = sv[0];
    c->ctl = sv[1];
    clock_gettime(CLOCK_MONOTONIC, &proc->started);
    return 0;
}

/* One control message and, with it, the sender's host pid (and a passed
 * fd, -1 if none). */
static ssize_t recv_report(int fd, exec_msg *m, pid_t *sender, int *passed)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int))];
    } cm;
    struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf, .msg_controllen = sizeof cm.buf};
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    *sender = 0;
    *passed = -1;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); n > 0 && h; h = CMSG_NXTHDR(&mh, h)) {
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_CREDENTIALS) {
            struct ucred u;
            memcpy(&u, CMSG_DATA(h), sizeof u);
            *sender = u.pid;
        } else if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS && *passed < 0 &&
                   h->cmsg_len == CMSG_LEN(sizeof(int))) {
            memcpy(passed, CMSG_DATA(h), sizeof *passed);
        }
    }
    return n;
}

int mxc_exec_adopt(mxc_proc *proc, mxc_exec_child *c, pid_t supervisor, int killall_pid, mxc_error *e)
{
    mxc_exec_child_close(c);
    proc->joiner = supervisor;
    proc->joiner_pidfd = (int)syscall(SYS_pidfd_open, supervisor, 0);
    if (killall_pid > 0)
        proc->killall_pidfd = (int)syscall(SYS_pidfd_open, killall_pid, 0);
    int rc = 0;
    exec_msg m;
    pid_t sender;
    /* Until every holder of the child end is gone: the workload's is
     * CLOEXEC, so EOF means it exec'd (or died). */
    int passed = -1;
    while (rc == 0 && recv_report(proc->ctl_fd, &m, &sender, &passed) == (ssize_t)sizeof m) {
        if (m.kind == 4 && passed >= 0 && proc->pty && proc->out_fd < 0) {
            proc->out_fd = passed; /* the master of the sandbox's pty */
            passed = -1;
        } else if (m.kind == 1 && (m.pid > 0 || sender > 0)) {
            proc->workload = m.pid > 0 ? m.pid : sender;
        } else if (m.kind == 2) {
            rc = -1;
            if (m.detail[0])
                mxc_err_os(e, MXC_E_BACKEND_ERROR, m.stage, m.err, NULL, "%s", m.detail);
            else
                mxc_err_os(e, MXC_E_BACKEND_ERROR, m.stage, m.err,
                           m.err == EOPNOTSUPP ? "this kernel lacks the Landlock ABI mxc needs (3 or newer)" : NULL,
                           "starting the workload failed at %s", m.stage);
            if (m.err == EOPNOTSUPP)
                e->code = MXC_E_BACKEND_UNAVAILABLE;
        }
        if (passed >= 0) /* an fd nobody asked for */
            close(passed);
    }
    close_fd(&proc->ctl_fd);
    if (rc == 0 && proc->pty && proc->out_fd < 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox's pty did not arrive");
    if (rc == 0 && proc->workload <= 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox's exec process died before starting the workload");
    if (rc < 0) {
        waitpid(supervisor, NULL, 0);
        if (proc->workload_is_child && proc->workload > 0) {
            kill(proc->workload, SIGKILL);
            waitpid(proc->workload, NULL, 0);
        }
        proc->joiner = 0;
        mxc_exec_close(proc);
        return -1;
    }
    if (proc->workload_is_child) { /* the joiner is done; the workload is ours to wait for */
        waitpid(supervisor, NULL, 0);
        close_fd(&proc->joiner_pidfd);
        proc->joiner = proc->workload;
        proc->joiner_pidfd = (int)syscall(SYS_pidfd_open, proc->workload, 0);
    }
    return 0;
}

int mxc_exec_start(pid_t holder, const mxc_plan *p, const mxc_exec_spec *s, const mxc_cgroup *cg, bool pty,
                   mxc_proc *proc, mxc_error *e)
{
    mxc_exec_child c;
    if (mxc_exec_prepare(pty, s->timeout_ms, proc, &c, e) < 0)
        return -1;
    /* This exec's own child of the sandbox's cgroup where the host allows
     * (the last tier's kill-all), which the joiner moves itself into. */
    char leaf[48];
    snprintf(leaf, sizeof leaf, "exec-%d-%ld", (int)getpid(), (long)proc->started.tv_nsec);
    proc->has_cgroup = cg && mxc_cgroup_child(cg, leaf, &proc->cgroup);
    int join[3];
    int njoin = cg ? mxc_cgroup_join_fds(proc->has_cgroup ? &proc->cgroup : cg, join, e) : 0;
    if (njoin < 0) {
        mxc_exec_child_close(&c);
        mxc_exec_close(proc);
        return -1;
    }
    pid_t j = fork();
    if (j == 0) {
        close(proc->ctl_fd);
        joiner_main(holder, p, s, &c, join, (size_t)njoin);
    }
    int err = errno;
    for (int i = 0; i < njoin; i++)
        close(join[i]);
    if (j < 0) {
        mxc_exec_child_close(&c);
        mxc_exec_close(proc);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.fork", err, NULL, "cannot fork");
    }
    proc->workload_is_child = true;
    return mxc_exec_adopt(proc, &c, j, 0, e);
}

static long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000L + (now.tv_nsec - since->tv_nsec) / 1000000L;
}

/* Next ladder step due at this many ms after start (or -1: none). */
static long next_step_at(const mxc_proc *proc)
{
    if (!proc->timeout_ms)
        return -1;
    long t = proc->timeout_ms;
    switch (proc->ladder) {
    case 0: return t;
    case 1: return t + MXC_LADDER_TERM_AFTER_MS;
    case 2: return t + MXC_LADDER_TERM_AFTER_MS + MXC_LADDER_KILL_AFTER_MS;
    default: return -1;
    }
}

/* Signals the workload's process group (and the workload, should it have
 * left it); SIGKILL also reaches every process of the exec's cgroup.
 * Returns -1 only when the kernel refused the group signal. */
static int signal_exec(mxc_proc *proc, int sig)
{
    int rc = 0;
    if (kill(-proc->workload, sig) < 0 && kill(proc->workload, sig) < 0 && errno != ESRCH)
        rc = -1;
    else
        kill(proc->workload, sig);
    if (sig == SIGKILL && proc->has_cgroup) /* every descendant, in or out of the group */
        mxc_cgroup_kill_all(&proc->cgroup);
    if (sig == SIGKILL && proc->killall_pidfd >= 0) /* one-shot: PID 1, and with it the namespace */
        syscall(SYS_pidfd_send_signal, proc->killall_pidfd, SIGKILL, NULL, 0);
    return rc;
}

static void ladder_step(mxc_proc *proc)
{
    proc->timed_out = true; /* sticky: the deadline was spent while it ran */
    proc->ladder++;
    if (proc->ladder == 1) {
        close_fd(&proc->in_fd);
    } else {
        signal_exec(proc, proc->ladder == 2 ? SIGTERM : SIGKILL);
    }
}

static bool pump(int from, int to)
{
    char buf[16384];
    ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0)
        return n < 0 && (errno == EINTR || errno == EAGAIN);
    for (ssize_t off = 0; to >= 0 && off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break; /* the reader went away; keep draining */
        }
        off += w;
    }
    return true;
}

/* The one-shot's early status (mxc_exec_report_exit); false when PID 1
 * went away without one (then its exit status is the answer). */
static bool read_status(mxc_proc *proc)
{
    exec_msg m;
    ssize_t n = recv(proc->status_fd, &m, sizeof m, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    proc->status_fd = -1; /* not ours to close: the holder's control socket */
    if (n != (ssize_t)sizeof m || m.kind != 5)
        return false;
    proc->exit_code = m.err;
    proc->reported = true;
    return true;
}

static void reap(mxc_proc *proc)
{
    if (proc->reported) {
        /* PID 1 is tearing down; whoever reaps it (we, or init once we are
         * gone), the status is already known */
        proc->finished = true;
        if (!proc->detach_teardown && proc->joiner > 0)
            waitpid(proc->joiner, NULL, 0);
        proc->joiner = 0;
        return;
    }
    int status;
    pid_t r;
    while ((r = waitpid(proc->joiner, &status, 0)) < 0 && errno == EINTR)
        ;
    if (r == proc->joiner)
        proc->exit_code = mxc_exit_code(status);
    else
        proc->exit_code = 255;
    proc->finished = true;
    proc->joiner = 0;
}

int mxc_exec_run(mxc_proc *proc, int relay_in, int relay_out, int relay_err, mxc_error *e)
{
    (void)e;
    bool relaying = relay_out >= 0 || relay_err >= 0;
    bool joiner_done = false;
    while (!proc->finished) {
        struct pollfd pf[5];
        int n = 0, i_in = -1, i_out = -1, i_err = -1, i_status = -1;
        pf[n++] = (struct pollfd){.fd = joiner_done ? -1 : proc->joiner_pidfd, .events = POLLIN};
        if (!joiner_done && proc->status_fd >= 0)
            i_status = n, pf[n++] = (struct pollfd){.fd = proc->status_fd, .events = POLLIN};
        if (relaying && proc->out_fd >= 0)
            i_out = n, pf[n++] = (struct pollfd){.fd = proc->out_fd, .events = POLLIN};
        if (relaying && proc->err_fd >= 0)
            i_err = n, pf[n++] = (struct pollfd){.fd = proc->err_fd, .events = POLLIN};
        if (relay_in >= 0 && (proc->in_fd >= 0 || proc->pty))
            i_in = n, pf[n++] = (struct pollfd){.fd = relay_in, .events = POLLIN};
        long due = next_step_at(proc);
        int wait_ms = -1;
        if (due >= 0) {
            long left = due - elapsed_ms(&proc->started);
            wait_ms = left < 0 ? 0 : (int)left;
        }
        if (joiner_done)
            wait_ms = 0;
        int rc = poll(pf, (nfds_t)n, wait_ms);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc == 0 && due >= 0 && elapsed_ms(&proc->started) >= due && !joiner_done) {
            ladder_step(proc);
            continue;
        }
        if (i_out >= 0 && pf[i_out].revents && !pump(proc->out_fd, relay_out))
            close_fd(&proc->out_fd);
        if (i_err >= 0 && pf[i_err].revents && !pump(proc->err_fd, relay_err))
            close_fd(&proc->err_fd);
        if (i_in >= 0 && pf[i_in].revents) {
            int to = proc->pty ? proc->out_fd : proc->in_fd;
            if (!pump(relay_in, to)) {
                if (!proc->pty)
                    close_fd(&proc->in_fd);
                relay_in = -1;
            }
        }
        if (!joiner_done && i_status >= 0 && pf[i_status].revents && read_status(proc))
            joiner_done = true;
        if (!joiner_done && pf[0].revents)
            joiner_done = true;
        else if (joiner_done && rc > 0 && !(i_out >= 0 && pf[i_out].revents) && !(i_err >= 0 && pf[i_err].revents))
            rc = 0; /* only stdin was ready: nothing of the workload's left to drain */
        /* Done when the joiner exited and (when relaying) the output is
         * drained: EOF, or nothing more ready (a descendant that escaped the
         * process group may hold the pipes open; it does not hold us). */
        bool drained = (proc->out_fd < 0 || proc->pty) && proc->err_fd < 0;
        if (joiner_done && (!relaying || drained || rc == 0))
            reap(proc);
    }
    if (!proc->finished)
        reap(proc);
    return 0;
}

int mxc_exec_kill(mxc_proc *proc)
{
    if (proc->finished)
        return 0; /* a confirmed exit retires the terminator */
    return signal_exec(proc, SIGKILL);
}

void mxc_exec_close(mxc_proc *proc)
{
    if (proc->has_cgroup) {
        if (proc->timed_out)
            mxc_cgroup_kill_all(&proc->cgroup);
        rmdir(proc->cgroup.pids_dir); /* EBUSY while background jobs live: stop removes it */
        proc->has_cgroup = false;
    }
    if (proc->joiner > 0) {
        kill(proc->joiner, SIGKILL);
        if (!proc->detach_teardown)
            waitpid(proc->joiner, NULL, 0);
        proc->joiner = 0;
    }
    close_fd(&proc->in_fd);
    close_fd(&proc->out_fd);
    close_fd(&proc->err_fd);
    close_fd(&proc->joiner_pidfd);
    close_fd(&proc->killall_pidfd);
    close_fd(&proc->ctl_fd);
}
