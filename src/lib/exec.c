/* exec.c — see exec.h. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cgroup.h"
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

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Closes every fd above 2 but the given ones: the joiner must not hold the
 * caller's ends of the stdio pipes (the workload would never see EOF) nor
 * anything else of the caller's. */
static void close_all_but(int *keep, size_t n)
{
    qsort(keep, n, sizeof *keep, cmp_int);
    unsigned from = 3;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < 3)
            continue;
        if ((unsigned)keep[i] > from)
            syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0);
        from = (unsigned)keep[i] + 1;
    }
    syscall(SYS_close_range, from, ~0U, 0);
}

/* The workload: everything here runs inside the sandbox, then execs. */
static _Noreturn void workload_main(const mxc_plan *p, const mxc_exec_spec *s, int ctl, int in, int out, int err_fd)
{
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
    close_all_but(keep, sizeof keep / sizeof keep[0]);
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

/* The joiner: enters every namespace of the holder at once, becomes uid 0
 * of the sandbox's user namespace, forks the workload into its PID
 * namespace and waits for it. */
static _Noreturn void joiner_main(pid_t holder, const mxc_plan *p, const mxc_exec_spec *s, int ctl, int in, int out,
                                  int err_fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int keep[] = {ctl, in, out, err_fd};
    close_all_but(keep, sizeof keep / sizeof keep[0]);
    const char *stage = "exec.pidfd_open";
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
    if (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
        goto fail;
    /* Wait until the caller has moved us into the sandbox's cgroup, so
     * that the workload is born under its limits. */
    exec_msg go;
    stage = "exec.cgroup_wait";
    if (recv(ctl, &go, sizeof go, 0) != (ssize_t)sizeof go || go.kind != 3)
        goto fail;
    stage = "exec.fork";
    pid_t w = fork();
    if (w < 0)
        goto fail;
    if (w == 0)
        workload_main(p, s, ctl, in, out, err_fd);
    report(ctl, 1, 0, w, NULL, NULL);
    close(ctl);
    close(in), close(out), close(err_fd);
    int status;
    while (waitpid(w, &status, 0) < 0)
        if (errno != EINTR)
            _exit(255);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
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

int mxc_exec_start(pid_t holder, const mxc_plan *p, const mxc_exec_spec *s, const mxc_cgroup *cg, bool pty,
                   mxc_proc *proc, mxc_error *e)
{
    memset(proc, 0, sizeof *proc);
    proc->in_fd = proc->out_fd = proc->err_fd = proc->joiner_pidfd = -1;
    proc->pty = pty;
    proc->timeout_ms = s->timeout_ms;
    int child_in = -1, child_out = -1, child_err = -1;
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    if (pty) {
        int master, slave;
        if (openpty(&master, &slave, NULL, NULL, NULL) < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.openpty", errno, NULL, "cannot allocate a pty");
        fcntl(master, F_SETFD, FD_CLOEXEC);
        proc->out_fd = master;
        child_in = child_out = child_err = slave;
    } else {
        if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
            int err = errno;
            for (int i = 0; i < 2; i++)
                close_fd(&pin[i]), close_fd(&pout[i]), close_fd(&perr[i]);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.pipe2", err, NULL, "cannot create the stdio pipes");
        }
        proc->in_fd = pin[1], proc->out_fd = pout[0], proc->err_fd = perr[0];
        child_in = pin[0], child_out = pout[1], child_err = perr[1];
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int err = errno;
        mxc_exec_close(proc);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.socketpair", err, NULL, "cannot create the control socket");
    }
    clock_gettime(CLOCK_MONOTONIC, &proc->started);
    pid_t j = fork();
    if (j == 0) {
        close(sv[0]);
        joiner_main(holder, p, s, sv[1], child_in, child_out, child_err);
    }
    int fork_err = errno;
    close(sv[1]);
    close(child_in);
    if (!pty)
        close(child_out), close(child_err);
    if (j < 0) {
        close(sv[0]);
        mxc_exec_close(proc);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.fork", fork_err, NULL, "cannot fork");
    }
    proc->joiner = j;
    proc->joiner_pidfd = (int)syscall(SYS_pidfd_open, j, 0);
    exec_msg m = {.kind = 3};
    int rc = 0;
    ssize_t n;
    char leaf[32];
    snprintf(leaf, sizeof leaf, "exec-%d", (int)j);
    proc->has_cgroup = cg && mxc_cgroup_child(cg, leaf, &proc->cgroup);
    if (cg && mxc_cgroup_add(proc->has_cgroup ? &proc->cgroup : cg, j, e) < 0)
        rc = -1;
    else if (send(sv[0], &m, sizeof m, MSG_NOSIGNAL) != (ssize_t)sizeof m)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "the exec joiner died before starting the workload");
    while (rc == 0 && (n = recv(sv[0], &m, sizeof m, 0)) == (ssize_t)sizeof m) {
        if (m.kind == 1)
            proc->workload = m.pid;
        else if (m.kind == 2) {
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
    }
    close(sv[0]);
    if (rc == 0 && proc->workload <= 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "the exec joiner died before starting the workload");
    if (rc < 0) {
        int status;
        waitpid(j, &status, 0);
        proc->joiner = 0;
        mxc_exec_close(proc);
        return -1;
    }
    return 0;
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

static void reap(mxc_proc *proc)
{
    int status;
    pid_t r;
    while ((r = waitpid(proc->joiner, &status, 0)) < 0 && errno == EINTR)
        ;
    if (r == proc->joiner)
        proc->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
        struct pollfd pf[4];
        int n = 0, i_in = -1, i_out = -1, i_err = -1;
        pf[n++] = (struct pollfd){.fd = joiner_done ? -1 : proc->joiner_pidfd, .events = POLLIN};
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
        waitpid(proc->joiner, NULL, 0);
        proc->joiner = 0;
    }
    close_fd(&proc->in_fd);
    close_fd(&proc->out_fd);
    close_fd(&proc->err_fd);
    close_fd(&proc->joiner_pidfd);
}
