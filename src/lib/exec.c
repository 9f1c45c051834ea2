/* exec.c — see exec.h. */
#include "exec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cgroup.h"
#include "fdio.h"
#include "fsview.h"
#include "harden.h"
#include "ptypair.h"
#include "sockmsg.h"
#include "ttyattach.h"

bool mxc_debug;
int mxc_debug_fd = 2;

void mxc_debugf(const char *fmt, ...)
{
    if (!mxc_debug)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    (void)!write(mxc_debug_fd, buf, (size_t)n);
}

/* The messages of a start channel and of a session exec's connection. */
enum {
    M_PID = 1,   /* the workload's pid (SCM_CREDENTIALS) */
    M_FAIL = 2,  /* a stage failed: err, stage, detail */
    M_PTY = 4,   /* the pty's master (SCM_RIGHTS) */
    M_EXIT = 5,  /* the workload's exit code (err) */
    M_KILL = 7,  /* caller -> exec init: kill every process of the exec */
    M_EXEC = 8,  /* caller -> holder: the spec (a memfd) and the stdio (SCM_RIGHTS) */
};

typedef mxc_msg exec_msg; /* kind: M_* */

static void report(int fd, int kind, int err, pid_t pid, const char *stage, const char *detail)
{
    (void)mxc_msg_send(fd, kind, err, pid, stage, detail, NULL, 0);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The workload: everything here runs inside the sandbox, then execs.  It
 * may share its parent's memory (vfork semantics): system calls on itself
 * and stack buffers only. */
_Noreturn void mxc_exec_workload(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c)
{
    int ctl = c->ctl, in = c->in, out = c->out, err_fd = c->err;
    /* Nothing blocked or ignored is inherited: the exec init and the holder
     * block what their signalfd reads, an in-process caller (Node) ignores
     * SIGPIPE.  This child has its own copy of the dispositions. */
    mxc_reset_signals();
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
        report(ctl, M_FAIL, err, 0, "exec.chdir", detail);
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
    report(ctl, M_FAIL, errno, 0, stage, NULL);
    _exit(127);
}

int mxc_exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void mxc_exec_report_exit(int fd, int code)
{
    report(fd, M_EXIT, code, 0, NULL, NULL);
}


/* One control message of `kind` with nfds descriptors (SCM_RIGHTS).
 * Returns what sendmsg returned. */
static ssize_t send_with_fds(int fd, int kind, const int *fds, size_t nfds)
{
    return mxc_msg_send(fd, kind, 0, 0, NULL, NULL, fds, nfds) == 0 ? (ssize_t)sizeof(exec_msg) : -1;
}

void mxc_exec_announce(int ctl, pid_t w)
{
    /* Our pid numbers are not the caller's: hand the kernel the workload's
     * pid as credentials (we hold CAP_SYS_ADMIN over our PID namespace),
     * and it arrives translated into the caller's namespace. */
    exec_msg m = {.kind = M_PID};
    (void)mxc_sockmsg_send_cred(ctl, &m, sizeof m, w, getuid(), getgid());
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

pid_t mxc_exec_spawn(const mxc_plan *p, const mxc_exec_spec *s, const mxc_exec_child *c)
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
        pid = clone(workload_entry, (char *)stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
        err = errno;
        munmap(stack, size);
    }
    if (pid < 0 && err != EAGAIN) { /* e.g. under an emulator that refuses CLONE_VM: fork semantics */
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
        if (pid == 0)
            mxc_exec_workload(p, s, c);
    }
    return pid;
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

static void proc_init(mxc_proc *proc, mxc_proc_role role, bool pty, uint32_t timeout_ms)
{
    memset(proc, 0, sizeof *proc);
    proc->in_fd = proc->out_fd = proc->err_fd = proc->ctl_fd = proc->resize_fd = -1;
    proc->role = role;
    proc->pty = pty;
    proc->timeout_ms = timeout_ms;
    if (role == MXC_PROC_ONESHOT)
        proc->oneshot.child_pidfd = proc->oneshot.pid1_pidfd = proc->oneshot.report_fd = -1;
    else
        proc->session.conn = -1;
    clock_gettime(CLOCK_MONOTONIC, &proc->started);
}

/* The workload's stdio pipes: our ends in proc, its ends in c. */
static int make_pipes(mxc_proc *proc, mxc_exec_child *c, mxc_error *e)
{
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
        int err = errno;
        for (int i = 0; i < 2; i++)
            close_fd(&pin[i]), close_fd(&pout[i]), close_fd(&perr[i]);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.pipe2", err, NULL, "cannot create the stdio pipes");
    }
    proc->in_fd = pin[1], proc->out_fd = pout[0], proc->err_fd = perr[0];
    c->in = pin[0], c->out = pout[1], c->err = perr[1];
    return 0;
}

int mxc_exec_prepare(bool pty, uint32_t timeout_ms, mxc_proc *proc, mxc_exec_child *c, mxc_error *e)
{
    proc_init(proc, MXC_PROC_ONESHOT, pty, timeout_ms);
    *c = (mxc_exec_child){-1, -1, -1, -1};
    if (!pty && make_pipes(proc, c, e) < 0)
        return -1;
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
    return 0;
}

/* One control message and, with it, the sender's host pid (and a passed
 * fd, -1 if none).  Returns what recvmsg returned. */
static ssize_t recv_report(int fd, exec_msg *m, pid_t *sender, int *passed, int flags)
{
    mxc_sockmsg_in in;
    ssize_t n = mxc_sockmsg_recv(fd, m, sizeof *m, flags, &in, 1); /* nobody asked for more than one */
    *sender = n > 0 && in.has_cred ? in.cred_pid : 0;
    *passed = in.fds[0];
    return n;
}

/* A failure report as the error it describes. */
static int fail_error(const exec_msg *m, mxc_error *e)
{
    if (m->detail[0])
        mxc_err_os(e, MXC_E_BACKEND_ERROR, m->stage, m->err, NULL, "%s", m->detail);
    else
        mxc_err_os(e, MXC_E_BACKEND_ERROR, m->stage, m->err,
                   m->err == EOPNOTSUPP ? "this kernel lacks the Landlock ABI mxc needs (3 or newer)" : NULL,
                   "starting the workload failed at %s", m->stage);
    if (m->err == EOPNOTSUPP)
        e->code = MXC_E_BACKEND_UNAVAILABLE;
    return -1;
}

/* Reads the start channel until the workload's pid (and, with a pty, its
 * master) arrived: stop_at_pid for a session's connection, which stays
 * open; else until EOF (every holder of the child end is gone: the
 * workload's is CLOEXEC, so EOF means it exec'd, or died). */
static int read_start(mxc_proc *proc, int fd, bool stop_at_pid, mxc_error *e)
{
    int rc = 0;
    exec_msg m;
    pid_t sender;
    int passed = -1;
    while (rc == 0 && !(stop_at_pid && proc->workload > 0 && (!proc->pty || proc->out_fd >= 0)) &&
           recv_report(fd, &m, &sender, &passed, 0) == (ssize_t)sizeof m) {
        if (m.kind == M_PTY && passed >= 0 && proc->pty && proc->out_fd < 0) {
            proc->out_fd = passed; /* the master of the exec's own pty */
            passed = -1;
        } else if (m.kind == M_PID && (m.pid > 0 || sender > 0)) {
            proc->workload = m.pid > 0 ? m.pid : sender;
        } else if (m.kind == M_FAIL) {
            rc = fail_error(&m, e);
        }
        if (passed >= 0) /* an fd nobody asked for */
            close(passed);
    }
    if (rc == 0 && proc->pty && proc->out_fd < 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox's pty did not arrive");
    if (rc == 0 && proc->workload <= 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox's exec process died before starting the workload");
    return rc;
}

int mxc_exec_adopt(mxc_proc *proc, mxc_exec_child *c, pid_t child, pid_t pid1, mxc_error *e)
{
    mxc_exec_child_close(c);
    proc->oneshot.child = child;
    proc->oneshot.child_pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    if (pid1 > 0)
        proc->oneshot.pid1_pidfd = (int)syscall(SYS_pidfd_open, pid1, 0);
    int rc = read_start(proc, proc->ctl_fd, false, e);
    close_fd(&proc->ctl_fd);
    if (rc < 0) {
        waitpid(child, NULL, 0);
        proc->oneshot.child = 0;
        mxc_exec_close(proc);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Session exec: the holder forks the exec init. */

/* The exec's own terminal: a devpts instance of its own, in a mount
 * namespace of its own (a slave of the sandbox's, so that masks the holder
 * puts back still reach it), so that no other exec can open it. */
static int own_pty(int conn, const mxc_exec_spec *s, mxc_exec_child *c)
{
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
        return -1;
    int fs = fsopen("devpts", FSOPEN_CLOEXEC);
    if (fs < 0)
        return -1;
    int m = -1;
    if (fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) == 0 &&
        fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) == 0 &&
        fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
        m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
    close(fs);
    if (m < 0)
        return -1;
    int rc = move_mount(m, "", AT_FDCWD, "/dev/pts", MOVE_MOUNT_F_EMPTY_PATH);
    close(m);
    if (rc < 0)
        return -1;
    return mxc_exec_make_pty(conn, s, c);
}

int mxc_exec_make_pty(int ctl, const mxc_exec_spec *s, mxc_exec_child *c)
{
    int pts = open("/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (pts < 0)
        return -1;
    /* the size the caller asked for, before the workload can look */
    bool sized = s->pty_rows && s->pty_cols;
    mxc_pty pty;
    mxc_pty_step step;
    int rc = mxc_pty_open(pts, "ptmx", sized ? s->pty_rows : 0, sized ? s->pty_cols : 0, &pty, &step);
    close(pts);
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    if (send_with_fds(ctl, M_PTY, &pty.master, 1) < 0) {
        int err = errno;
        close(pty.master);
        close(pty.slave);
        errno = err;
        return -1;
    }
    close(pty.master);
    c->in = c->out = c->err = pty.slave;
    return 0;
}

/* The exec init's descendants (it is a subreaper: nothing of the exec
 * leaves its subtree), from the sandbox's /proc.  Returns how many live
 * ones were killed. */
static size_t kill_descendants(void)
{
    enum { MAX = 65536 };
    static pid_t pid[MAX], ppid[MAX];
    static char live[MAX], mine[MAX];
    size_t n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && n < MAX && (de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%.20s/stat", de->d_name);
        char *rp = mxc_read_small_at(AT_FDCWD, path, buf, sizeof buf) > 0 ? strrchr(buf, ')') : NULL;
        char state;
        int pp;
        if (!rp || sscanf(rp + 1, " %c %d", &state, &pp) != 2)
            continue;
        pid[n] = atoi(de->d_name), ppid[n] = pp, live[n] = state != 'Z', mine[n] = 0;
        n++;
    }
    if (d)
        closedir(d);
    pid_t self = getpid();
    for (bool grew = true; grew;) { /* the tree below us */
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (mine[i])
                continue;
            bool under = ppid[i] == self;
            for (size_t j = 0; !under && j < n; j++)
                under = mine[j] && pid[j] == ppid[i];
            if (under)
                mine[i] = 1, grew = true;
        }
    }
    size_t killed = 0;
    for (size_t i = 0; i < n; i++)
        if (mine[i] && live[i]) {
            kill(pid[i], SIGKILL);
            killed++;
        }
    return killed;
}

typedef struct {
    pid_t workload;
    bool done;    /* the workload was reaped (and its status sent) */
    int conn;     /* -1 once the caller is gone */
} exec_init_state;

/* Reaps every child that is ready; the workload's status goes to the
 * caller.  Returns false when no child is left. */
static bool reap_ready(exec_init_state *st, bool block)
{
    for (;;) {
        int status;
        pid_t r = waitpid(-1, &status, (block ? 0 : WNOHANG) | __WALL);
        if (r < 0)
            return errno != ECHILD;
        if (r == 0)
            return true;
        block = false;
        if (r == st->workload && !st->done) {
            st->done = true;
            if (st->conn >= 0)
                report(st->conn, M_EXIT, mxc_exit_code(status), 0, NULL, NULL);
        }
    }
}

/* Kills the whole exec: every descendant, again and again, as the killed
 * ones' children come up to us, until nothing is left. */
static void kill_exec(exec_init_state *st)
{
    while (kill_descendants() > 0)
        if (!reap_ready(st, true))
            break;
    reap_ready(st, false);
}

/* The exec init: a child of the holder (so in the sandbox's cgroup from
 * birth: no migration), a subreaper for everything the workload starts.
 * It reports the workload's exit; kills the exec on M_KILL or when the
 * caller's end closes before the workload is done (a killed CLI, an
 * AbortSignal: the exec dies with its caller); once the workload is done
 * it stays only as long as what the workload left running. */
static _Noreturn void exec_init(const mxc_plan *p, const mxc_exec_spec *s, int conn, mxc_exec_child *c)
{
    prctl(PR_SET_NAME, "mxc-exec");
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_DUMPABLE, 0);
    int keep[] = {conn, c->in, c->out, c->err};
    mxc_close_all_but(keep, sizeof keep / sizeof keep[0]);
    if (s->pty && own_pty(conn, s, c) < 0) {
        report(conn, M_FAIL, errno, 0, "exec.pty", NULL);
        _exit(127);
    }
    c->ctl = fcntl(conn, F_DUPFD_CLOEXEC, 3); /* where the workload reports a failed start */
    pid_t w = c->ctl < 0 ? -1 : mxc_exec_spawn(p, s, c);
    if (w < 0) {
        report(conn, M_FAIL, errno, 0, "exec.fork", NULL);
        _exit(127);
    }
    mxc_exec_announce(conn, w);
    mxc_exec_child_close(c);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    exec_init_state st = {.workload = w, .conn = conn};
    for (;;) {
        if (!reap_ready(&st, false) && st.done)
            _exit(0); /* the workload and everything it left are gone */
        struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = st.conn, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            _exit(1);
        if (pf[0].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) > 0)
                ;
        }
        if (st.conn >= 0 && pf[1].revents) {
            exec_msg m;
            ssize_t n = recv(st.conn, &m, sizeof m, MSG_DONTWAIT);
            if (n == (ssize_t)sizeof m && m.kind == M_KILL) {
                kill_exec(&st);
            } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                if (!st.done) /* the caller is gone before the workload: so is the exec */
                    kill_exec(&st);
                close_fd(&st.conn);
            }
        }
    }
}

/* The spec, as the caller sends it: in a memfd, never in argv. */
static int spec_to_memfd(const mxc_exec_spec *s, bool pty, mxc_error *e)
{
    json_t *env = json_array();
    for (size_t i = 0; s->envp && s->envp[i]; i++)
        json_array_append_new(env, json_string(s->envp[i]));
    json_t *j = json_pack("{s:s, s:o, s:b, s:i, s:i}", "cmd", s->command_line, "env", env, "pty", pty, "rows",
                          (int)s->pty_rows, "cols", (int)s->pty_cols);
    if (s->cwd)
        json_object_set_new(j, "cwd", json_string(s->cwd));
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    int fd = text ? mxc_text_memfd("mxc-exec-spec", text) : -ENOMEM;
    free(text);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.spec", -fd, NULL, "cannot pass the exec request");
    return fd;
}

typedef struct {
    mxc_exec_spec s;
    bool pty;
    char *cmd, *cwd;
} served_spec;

static void served_free(served_spec *v)
{
    /* The request may hold secrets (a token in env, in the command line):
     * the holder lives as long as the session, so none of it stays in its
     * heap, where a later exec's child (a copy of the holder) could find it. */
    for (size_t i = 0; v->s.envp && v->s.envp[i]; i++) {
        explicit_bzero(v->s.envp[i], strlen(v->s.envp[i]));
        free(v->s.envp[i]);
    }
    free(v->s.envp);
    char *own[] = {v->cmd, v->cwd};
    for (size_t i = 0; i < 2; i++)
        if (own[i]) {
            explicit_bzero(own[i], strlen(own[i]));
            free(own[i]);
        }
    v->s.envp = NULL;
    v->s.command_line = v->s.cwd = NULL;
    v->cmd = v->cwd = NULL;
}

static int spec_from_memfd(int fd, served_spec *v)
{
    memset(v, 0, sizeof *v);
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > (off_t)(8u << 20))
        return -EINVAL;
    char *text = malloc((size_t)st.st_size + 1);
    if (!text || pread(fd, text, (size_t)st.st_size, 0) != st.st_size) {
        free(text);
        return -EIO;
    }
    text[st.st_size] = '\0';
    json_t *j = json_loads(text, 0, NULL);
    free(text);
    const char *cmd = json_string_value(json_object_get(j, "cmd"));
    json_t *env = json_object_get(j, "env");
    if (!cmd || !json_is_array(env)) {
        json_decref(j);
        return -EINVAL;
    }
    v->cmd = strdup(cmd);
    const char *cwd = json_string_value(json_object_get(j, "cwd"));
    v->cwd = cwd ? strdup(cwd) : NULL;
    v->pty = json_is_true(json_object_get(j, "pty"));
    v->s.envp = calloc(json_array_size(env) + 1, sizeof *v->s.envp);
    size_t i;
    json_t *kv;
    json_array_foreach(env, i, kv) {
        if (v->s.envp && json_is_string(kv))
            v->s.envp[i] = strdup(json_string_value(kv));
    }
    v->s.command_line = v->cmd;
    v->s.cwd = v->cwd;
    v->s.pty_rows = (unsigned short)json_integer_value(json_object_get(j, "rows"));
    v->s.pty_cols = (unsigned short)json_integer_value(json_object_get(j, "cols"));
    json_decref(j);
    return v->cmd && v->s.envp ? 0 : -ENOMEM;
}

void mxc_exec_serve(const mxc_plan *p, int conn, int listen_fd, int ctl)
{
    exec_msg m;
    mxc_sockmsg_in in;
    ssize_t n = mxc_sockmsg_recv(conn, &m, sizeof m, 0, &in, 4);
    int *fds = in.fds;
    size_t nfds = in.nfds;
    served_spec v;
    int rc = n == (ssize_t)sizeof m && m.kind == M_EXEC && nfds >= 1 ? spec_from_memfd(fds[0], &v) : -EPROTO;
    if (rc < 0) {
        report(conn, M_FAIL, -rc, 0, "exec.request", "the exec request is malformed");
        goto out;
    }
    if (!v.pty && nfds != 4) {
        report(conn, M_FAIL, EPROTO, 0, "exec.request", "the exec request carries no stdio");
        served_free(&v);
        goto out;
    }
    /* The host may have replaced a masked file since the last exec (the
     * kernel then drops its mount): put the masks back, or refuse. */
    mxc_error verr = {0};
    rc = mxc_fsview_verify(p, &verr);
    if (rc < 0) {
        char why[256]; /* the report's detail: what it carries of the message */
        snprintf(why, sizeof why, "%.255s", verr.message);
        report(conn, M_FAIL, -rc, 0, "exec.verify", why);
        served_free(&v);
        goto out;
    }
    v.s.pty = v.pty;
    /* A raw clone, not fork(3): the holder is a copy of its caller, whose
     * fork handlers (an in-process caller's: Node's libuv closes "its" fds
     * 3 and 4, by now ours) must never run here.  The holder is
     * single-threaded, so nothing else holds a libc lock. */
    pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
    if (pid == 0) {
        close(listen_fd);
        if (ctl >= 0)
            close(ctl);
        close(fds[0]);
        mxc_exec_child c = {v.pty ? -1 : fds[1], v.pty ? -1 : fds[2], v.pty ? -1 : fds[3], -1};
        exec_init(p, &v.s, conn, &c);
    }
    if (pid < 0)
        report(conn, M_FAIL, errno, 0, "exec.fork", NULL);
    served_free(&v);
out:
    for (size_t i = 0; i < nfds && i < 4; i++)
        close(fds[i]);
    close(conn);
}

int mxc_exec_start(const char *sock, const mxc_exec_spec *s, bool pty, mxc_proc *proc, mxc_error *e)
{
    proc_init(proc, MXC_PROC_SESSION, pty, s->timeout_ms);
    mxc_exec_child c = {-1, -1, -1, -1};
    if (!pty && make_pipes(proc, &c, e) < 0)
        return -1;
    int conn = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    int on = 1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    int rc = 0;
    if (conn < 0 || setsockopt(conn, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0)
        rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "exec.socket", errno, NULL, "cannot create the exec's socket");
    else if (connect(conn, (struct sockaddr *)&sa, sizeof sa) < 0)
        rc = mxc_err_os(e, MXC_E_NOT_STARTED, "exec.connect", errno, NULL, "the sandbox's session is not running");
    int spec = rc == 0 ? spec_to_memfd(s, pty, e) : -1;
    if (rc == 0 && spec < 0)
        rc = -1;
    if (rc == 0) {
        int fds[4] = {spec, c.in, c.out, c.err};
        if (send_with_fds(conn, M_EXEC, fds, pty ? 1 : 4) < 0)
            rc = mxc_err_os(e, MXC_E_NOT_STARTED, "exec.send", errno, NULL, "the sandbox's session is not running");
    }
    if (spec >= 0)
        close(spec);
    mxc_exec_child_close(&c);
    proc->session.conn = conn;
    if (rc == 0)
        rc = read_start(proc, conn, true, e);
    if (rc < 0) {
        mxc_exec_close(proc);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Running: relay, ladder, drain. */

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
 * left it); SIGKILL reaches every process of the exec: the exec init kills
 * its whole subtree (session), or PID 1 dies with its namespace (one-shot).
 * Returns -1 only when the kernel refused the group signal. */
static int signal_exec(mxc_proc *proc, int sig)
{
    int rc = 0;
    if (proc->workload > 0) {
        if (kill(-proc->workload, sig) < 0 && kill(proc->workload, sig) < 0 && errno != ESRCH)
            rc = -1;
        else
            kill(proc->workload, sig);
    }
    if (sig != SIGKILL)
        return rc;
    if (proc->role == MXC_PROC_SESSION && proc->session.conn >= 0)
        report(proc->session.conn, M_KILL, 0, 0, NULL, NULL);
    if (proc->role == MXC_PROC_ONESHOT && proc->oneshot.pid1_pidfd >= 0)
        syscall(SYS_pidfd_send_signal, proc->oneshot.pid1_pidfd, SIGKILL, NULL, 0);
    return rc;
}

static void ladder_step(mxc_proc *proc)
{
    proc->timed_out = true; /* sticky: the deadline was spent while it ran */
    proc->ladder++;
    if (proc->ladder == 1)
        close_fd(&proc->in_fd);
    else
        signal_exec(proc, proc->ladder == 2 ? SIGTERM : SIGKILL);
}

/* The relay's buffers, one pair per run: allocated once its first data
 * arrived (an exec with no output makes none; its EOF is read on the
 * stack) and freed when the run ends.  Not
 * thread-local: a static TLS block is zeroed by the loader in every process
 * that starts this code and in every thread of a process that loads the
 * library — 132 KiB, 33 page faults per start of the CLI, measured. */
typedef struct {
    unsigned char raw[65536], filtered[65536 + MXC_TERMFILTER_SEQ_MAX];
} relay_buf;

/* One read and its relay (through the terminal filter when one is set):
 * 1 data, 0 EOF (or an error), -1 nothing now.  Without memory for the
 * buffers it relays through a small pair on the stack. */
static int pump(int from, int to, mxc_termfilter *filter, relay_buf **rb)
{
    struct {
        unsigned char raw[4096], filtered[4096 + MXC_TERMFILTER_SEQ_MAX];
    } small;
    bool big = *rb != NULL;
    unsigned char *raw = big ? (*rb)->raw : small.raw, *filtered = big ? (*rb)->filtered : small.filtered;
    ssize_t n = read(from, raw, big ? sizeof (*rb)->raw : sizeof small.raw);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? -1 : 0;
    if (n == 0)
        return 0;
    if (!big) /* data flows: the reads after this one get the large pair */
        *rb = malloc(sizeof **rb);
    unsigned char *buf = raw;
    if (filter) {
        n = (ssize_t)mxc_termfilter_run(filter, raw, (size_t)n, filtered);
        buf = filtered;
    }
    /* a failure: the reader went away; keep draining.  The filtered stream goes to the caller's
     * terminal, whose open file description another program may have left O_NONBLOCK: waited
     * for, never cut short (a cut inside a sequence the filter passed would leave the terminal
     * mid-sequence); pipes of the C ABI and the gateway keep the plain write */
    if (to >= 0)
        (void)(filter ? mxc_write_all_wait(to, buf, (size_t)n) : mxc_write_all(to, buf, (size_t)n));
    return 1;
}

/* The workload's status from the channel that reports it (PID 1's early
 * report, or the exec init's M_EXIT): true once known.  A session whose
 * connection closes without one lost its workload with its sandbox (stop,
 * a crashed holder): killed. */
static bool read_status(mxc_proc *proc)
{
    int fd = proc->role == MXC_PROC_SESSION ? proc->session.conn : proc->oneshot.report_fd;
    exec_msg m;
    ssize_t n = recv(fd, &m, sizeof m, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (n == (ssize_t)sizeof m && m.kind == M_EXIT) {
        proc->exit_code = m.err;
        proc->reported = true;
        return true;
    }
    if (n == (ssize_t)sizeof m)
        return false; /* something else: not the status */
    if (proc->role == MXC_PROC_SESSION) {
        proc->exit_code = 128 + SIGKILL;
        return true;
    }
    proc->oneshot.report_fd = -1; /* PID 1 went away without a report: its exit status is the answer */
    return false;
}

/* The one-shot's child is done: its exit status, unless the report came first. */
static void reap_oneshot(mxc_proc *proc)
{
    pid_t child = proc->oneshot.child;
    proc->oneshot.child = 0;
    if (child <= 0)
        return;
    if (proc->reported) {
        /* PID 1 is tearing down; whoever reaps it (we, or init once we are
         * gone), the status is already known */
        if (!proc->oneshot.detach)
            waitpid(child, NULL, 0);
        return;
    }
    int status;
    pid_t r;
    while ((r = waitpid(child, &status, 0)) < 0 && errno == EINTR)
        ;
    proc->exit_code = r == child ? mxc_exit_code(status) : 255;
}

int mxc_exec_run(mxc_proc *proc, int relay_in, int relay_out, int relay_err, mxc_error *e)
{
    (void)e;
    bool relaying = relay_out >= 0 || relay_err >= 0;
    bool done = false; /* the workload's outcome is known */
    struct timespec done_at = {0}, last_data = {0};
    bool session = proc->role == MXC_PROC_SESSION;
    relay_buf *rb = NULL;
    while (!proc->finished) {
        struct pollfd pf[6];
        int n = 0, i_status = -1, i_child = -1, i_in = -1, i_out = -1, i_err = -1;
        int status_fd = session ? proc->session.conn : proc->oneshot.report_fd;
        if (!done && status_fd >= 0)
            i_status = n, pf[n++] = (struct pollfd){.fd = status_fd, .events = POLLIN};
        if (!done && !session && proc->oneshot.child_pidfd >= 0)
            i_child = n, pf[n++] = (struct pollfd){.fd = proc->oneshot.child_pidfd, .events = POLLIN};
        if (relaying && proc->out_fd >= 0)
            i_out = n, pf[n++] = (struct pollfd){.fd = proc->out_fd, .events = POLLIN};
        if (relaying && proc->err_fd >= 0 && !proc->pty)
            i_err = n, pf[n++] = (struct pollfd){.fd = proc->err_fd, .events = POLLIN};
        if (!done && relay_in >= 0 && (proc->in_fd >= 0 || proc->pty))
            i_in = n, pf[n++] = (struct pollfd){.fd = relay_in, .events = POLLIN};
        int i_resize = -1;
        if (!done && proc->resize_fd >= 0 && proc->pty && proc->out_fd >= 0)
            i_resize = n, pf[n++] = (struct pollfd){.fd = proc->resize_fd, .events = POLLIN};
        int wait_ms = -1;
        long due = done ? -1 : next_step_at(proc);
        if (due >= 0) {
            long left = due - elapsed_ms(&proc->started);
            wait_ms = left < 0 ? 0 : (int)left;
        }
        if (done) { /* draining: for as long as output keeps coming, within the bound */
            long idle = MXC_DRAIN_IDLE_MS - elapsed_ms(&last_data), total = MXC_DRAIN_MAX_MS - elapsed_ms(&done_at);
            long left = idle < total ? idle : total;
            if (!relaying || (i_out < 0 && i_err < 0) || left <= 0) {
                if (relaying && (i_out >= 0 || i_err >= 0))
                    mxc_debugf("exec: output drain stopped %ld ms after the workload exited, with its pipes still "
                               "open (something it left running holds them)", elapsed_ms(&done_at));
                proc->finished = true;
                break;
            }
            wait_ms = (int)left;
        }
        int rc = poll(pf, (nfds_t)n, wait_ms);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc == 0 && !done && due >= 0 && elapsed_ms(&proc->started) >= due) {
            ladder_step(proc);
            continue;
        }
        if (i_resize >= 0 && pf[i_resize].revents) { /* SIGWINCH: the caller's size, onto the workload's terminal */
            mxc_ttyattach_resize(proc->out_fd);
        }
        if (i_out >= 0 && pf[i_out].revents) {
            int r = pump(proc->out_fd, relay_out, proc->pty ? proc->filter : NULL, &rb);
            if (r == 0)
                close_fd(&proc->out_fd);
            if (r == 1)
                clock_gettime(CLOCK_MONOTONIC, &last_data);
        }
        if (i_err >= 0 && pf[i_err].revents) {
            int r = pump(proc->err_fd, relay_err, NULL, &rb);
            if (r == 0)
                close_fd(&proc->err_fd);
            if (r == 1)
                clock_gettime(CLOCK_MONOTONIC, &last_data);
        }
        if (i_in >= 0 && pf[i_in].revents) {
            int to = proc->pty ? proc->out_fd : proc->in_fd;
            if (pump(relay_in, to, NULL, &rb) == 0) {
                if (!proc->pty)
                    close_fd(&proc->in_fd);
                relay_in = -1;
            }
        }
        bool now_done = (i_status >= 0 && pf[i_status].revents && read_status(proc)) ||
                        (i_child >= 0 && pf[i_child].revents);
        if (!done && now_done) {
            done = true;
            /* A spent deadline ends the whole exec, whichever tier ended
             * the workload: what it left running goes too. */
            if (proc->timed_out && session && proc->session.conn >= 0)
                report(proc->session.conn, M_KILL, 0, 0, NULL, NULL);
            if (!session)
                reap_oneshot(proc);
            clock_gettime(CLOCK_MONOTONIC, &done_at);
            last_data = done_at;
        }
    }
    free(rb);
    if (!done && !session)
        reap_oneshot(proc);
    proc->finished = true;
    return 0;
}

int mxc_exec_relay_terminal(int master, int pidfd, int in, int out)
{
    mxc_proc proc = {.in_fd = -1, .err_fd = -1, .ctl_fd = -1, .pty = true, .role = MXC_PROC_ONESHOT};
    proc.oneshot = (mxc_oneshot_link){.child_pidfd = pidfd, .pid1_pidfd = -1, .report_fd = -1};
    /* the container's output reaches the person's terminal through the filter mxc's own attach
     * uses (termfilter.h): no clipboard write, title, or query whose reply would be typed into the
     * person's shell once the container is gone */
    mxc_termfilter filter;
    mxc_termfilter_init(&filter);
    proc.filter = &filter;
    proc.out_fd = fcntl(master, F_DUPFD_CLOEXEC, 3); /* the run closes it at EOF; master stays the caller's */
    if (proc.out_fd < 0)
        return -1;
    proc.resize_fd = mxc_ttyattach_begin(in, MXC_TTY_RESTORE_IF_DEFAULT);
    clock_gettime(CLOCK_MONOTONIC, &proc.started);
    mxc_error e = {0};
    mxc_exec_run(&proc, in, out, -1, &e);
    mxc_error_clear(&e);
    mxc_ttyattach_end();
    close_fd(&proc.out_fd);
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
    if (proc->role == MXC_PROC_ONESHOT) {
        if (proc->oneshot.child > 0) {
            kill(proc->oneshot.child, SIGKILL);
            if (!proc->oneshot.detach)
                waitpid(proc->oneshot.child, NULL, 0);
            proc->oneshot.child = 0;
        }
        close_fd(&proc->oneshot.child_pidfd);
        close_fd(&proc->oneshot.pid1_pidfd);
    } else {
        close_fd(&proc->session.conn); /* an exec not yet done dies with it */
    }
    close_fd(&proc->in_fd);
    close_fd(&proc->out_fd);
    close_fd(&proc->err_fd);
    close_fd(&proc->ctl_fd);
}

void mxc_exec_killer_take(const mxc_proc *proc, mxc_exec_killer *k)
{
    k->conn = proc->role == MXC_PROC_SESSION && proc->session.conn >= 0 ? fcntl(proc->session.conn, F_DUPFD_CLOEXEC, 3)
                                                                         : -1;
    k->pidfd = proc->role == MXC_PROC_ONESHOT && proc->oneshot.pid1_pidfd >= 0
                   ? fcntl(proc->oneshot.pid1_pidfd, F_DUPFD_CLOEXEC, 3) : -1;
    k->group = proc->workload;
}

void mxc_exec_killer_fire(const mxc_exec_killer *k)
{
    if (k->group > 0)
        kill(-k->group, SIGKILL);
    if (k->conn >= 0)
        report(k->conn, M_KILL, 0, 0, NULL, NULL);
    if (k->pidfd >= 0)
        syscall(SYS_pidfd_send_signal, k->pidfd, SIGKILL, NULL, 0);
}

void mxc_exec_killer_drop(mxc_exec_killer *k)
{
    close_fd(&k->conn);
    close_fd(&k->pidfd);
    k->group = 0;
}

/* ---- a started workload behind a pointer, as a front holds it ---- */

mxc_proc *mxc_proc_new(void)
{
    return calloc(1, sizeof(mxc_proc));
}

void mxc_proc_delete(mxc_proc *p)
{
    free(p);
}

pid_t mxc_proc_workload(const mxc_proc *p)
{
    return p->workload;
}

void mxc_proc_take_stdio(mxc_proc *p, int *in, int *out, int *err)
{
    *in = p->in_fd, *out = p->out_fd, *err = p->err_fd;
    p->in_fd = p->out_fd = p->err_fd = -1;
}

int mxc_proc_terminal(const mxc_proc *p)
{
    return p->pty ? p->out_fd : -1;
}

int mxc_proc_exit_code(const mxc_proc *p)
{
    return p->exit_code;
}

bool mxc_proc_timed_out(const mxc_proc *p)
{
    return p->timed_out;
}
