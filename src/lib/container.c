/* container.c — see container.h.
 *
 * Process tree at start:  caller ──fork──> C1 (drops to the plan's uid,
 * unshares the user namespace; the caller writes its maps) ──unshare the
 * rest, fork──> holder (PID 1).  C1 reports the holder's pid and exits, so
 * the holder is nobody's child but init's and outlives the caller. */
#include "container.h"
#include "fault.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
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
#include <time.h>
#include <unistd.h>

#include "loopback.h"
#include "fsview.h"
#include "harden.h"
#include "sockmsg.h"
#include "userns.h"

typedef mxc_msg ctl_msg; /* kind: MSG_* */

/* the exit status of a holder whose caller died before releasing it */
#define HOLDER_UNRELEASED 87

enum { MSG_MAPS_PLEASE = 1, MSG_MAPS_DONE, MSG_PID, MSG_READY, MSG_FAIL, MSG_RELEASE, MSG_CGROUP_DONE, MSG_RELEASED, MSG_NET_DONE };

#define MAX_JOIN_FDS 3

/* One message, optionally with fds (SCM_RIGHTS). */
static int send_msg_fds(int fd, int kind, int err, pid_t pid, const char *stage, const int *fds, size_t nfds)
{
    return mxc_msg_send(fd, kind, err, pid, stage, NULL, fds, nfds);
}

static int send_msg(int fd, int kind, int err, pid_t pid, const char *stage)
{
    return send_msg_fds(fd, kind, err, pid, stage, NULL, 0);
}

/* One message; fds passed with it land in fds[] (*nfds of them, at most
 * MAX_JOIN_FDS; any other is closed). */
static int recv_msg_fds(int fd, ctl_msg *m, int *fds, size_t *nfds, int flags)
{
    mxc_sockmsg_in in;
    int rc = mxc_msg_recv(fd, m, flags, &in, fds && nfds ? MAX_JOIN_FDS : 0);
    if (nfds) {
        *nfds = in.nfds;
        if (fds && *nfds)
            memcpy(fds, in.fds, sizeof(int) * in.nfds);
    }
    return rc;
}

static int recv_msg(int fd, ctl_msg *m)
{
    return recv_msg_fds(fd, m, NULL, NULL, 0);
}

/* One-shot: when the workload is reaped, everything else of the sandbox
 * is SIGKILLed (no code of it runs after this), the status goes to the
 * caller — who may return at once, as bwrap's parent does, instead of
 * waiting for the kernel to tear the namespaces down — and PID 1 exits. */
static void reap_children(int ctl, pid_t workload)
{
    int status;
    pid_t r;
    while ((r = waitpid(-1, &status, WNOHANG)) > 0)
        if (r == workload) {
            kill(-1, SIGKILL);
            if (ctl >= 0)
                mxc_exec_report_exit(ctl, mxc_exit_code(status));
            _exit(mxc_exit_code(status));
        }
}

/* PID 1: reap everything; exit on SIGTERM or, when attached, on the
 * caller's end of the control socket closing, or (one-shot) with the
 * status of the workload once it is reaped; serve exec requests arriving
 * on listen_fd (a session). */
static _Noreturn void holder_loop(const mxc_plan *p, int ctl, bool detached, pid_t workload, int listen_fd)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = (int)syscall(SYS_signalfd4, -1, &set, 8, O_CLOEXEC);
    /* A child that exited before SIGCHLD was blocked left no signal, only
     * a zombie: sweep once before the first wait. */
    reap_children(ctl, workload);
    for (;;) {
        struct pollfd pfd[3] = {{.fd = sfd, .events = POLLIN},
                                {.fd = detached ? -1 : ctl, .events = POLLIN},
                                {.fd = listen_fd, .events = POLLIN}};
        if (poll(pfd, 3, -1) < 0 && errno != EINTR)
            _exit(1);
        if (pfd[1].revents)
            _exit(0); /* attached: the caller is gone or done */
        if (pfd[0].revents) {
            struct { uint32_t signo; char pad[124]; } info;
            if (read(sfd, &info, sizeof info) > 0 && info.signo != SIGCHLD)
                _exit(0);
            reap_children(ctl, workload);
        }
        if (pfd[2].revents) {
            int conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (conn >= 0)
                mxc_exec_serve(p, conn, listen_fd, sfd);
        }
    }
}

/* Forks the one-shot workload (on a terminal of the sandbox's devpts when
 * asked: its master goes to the caller); PID 1 keeps none of its fds. */
static pid_t fork_first_exec(const mxc_plan *p, const mxc_first_exec *fx)
{
    if (fx->spec->pty && mxc_exec_make_pty(fx->child->ctl, fx->spec, (mxc_exec_child *)fx->child) < 0)
        return -1;
    pid_t w = mxc_exec_spawn(p, fx->spec, fx->child);
    if (w > 0)
        mxc_exec_announce(fx->child->ctl, w);
    mxc_exec_child_close((mxc_exec_child *)fx->child);
    return w;
}

/* The sandbox's identity inside its user namespace: MXC_INNER_UID, never
 * 0.  The capabilities the setup needs come from being the namespace's
 * first process (or its creator's child), not from the uid: host root is
 * unmapped inside, so these changes keep them. */
static int become_inner(bool rootless)
{
    if (!rootless && setgroups(0, NULL) < 0)
        return -errno;
    if (setresgid(MXC_INNER_GID, MXC_INNER_GID, MXC_INNER_GID) < 0 ||
        setresuid(MXC_INNER_UID, MXC_INNER_UID, MXC_INNER_UID) < 0)
        return -errno;
    return 0;
}

/* await_cgroup: the caller makes the sandbox's cgroup while we build the
 * view (direct one-shot) and sends the files through which we move
 * ourselves into it; the workload must not be forked, nor the cgroup
 * namespace made, before that is done. */
static _Noreturn void holder_main(const mxc_plan *p, mxc_fsview_sources *src, int ctl, bool detached,
                                  const mxc_first_exec *fx, bool await_cgroup, int listen_fd)
{
    /* A session's holder is the session only once its starter has
     * recorded it and released it: until then it is "mxc-starting", which
     * no phase counts as running (a starter killed in between leaves a
     * holder that exits on its own, not a session). */
    prctl(PR_SET_NAME, detached ? "mxc-starting" : "mxc-holder");
    /* Nobody inside may read our memory, environ or fds (hidepid and
     * Landlock hide us already; this holds without them).  Rootless, the
     * caller's setns(pidfd) into us needs ptrace access, which a
     * non-dumpable holder denies to an unprivileged caller. */
    if (!p->rootless)
        prctl(PR_SET_DUMPABLE, 0);
    const char *stage = "holder.sethostname";
    int rc = sethostname(p->hostname, strlen(p->hostname)) < 0 ? -errno : 0;
    if (rc == 0 && !p->host_network && !p->net_pooled) { /* a pooled namespace's lo is up already */
        stage = "holder.loopback";
        rc = mxc_loopback_up();
    }
    if (rc == 0)
        rc = mxc_fsview_build(p, src, &stage);
    if (rc < 0) {
        send_msg(ctl, MSG_FAIL, -rc, 0, stage);
        _exit(1);
    }
    /* Keep only the control socket (and the first exec's ends); every
     * source fd is spent. */
    int keep[] = {ctl, fx ? fx->child->in : -1, fx ? fx->child->out : -1, fx ? fx->child->err : -1,
                  fx ? fx->child->ctl : -1, listen_fd};
    mxc_close_all_but(keep, sizeof keep / sizeof keep[0]);
    if (await_cgroup) {
        ctl_msg m;
        int join[MAX_JOIN_FDS];
        size_t njoin = 0;
        if (recv_msg_fds(ctl, &m, join, &njoin, 0) < 0 || m.kind != MSG_CGROUP_DONE)
            _exit(1);
        if ((rc = mxc_cgroup_join_self(join, njoin)) < 0) {
            send_msg(ctl, MSG_FAIL, -rc, 0, "holder.cgroup_join");
            _exit(1);
        }
        if (unshare(CLONE_NEWCGROUP) < 0) {
            send_msg(ctl, MSG_FAIL, errno, 0, "holder.unshare_cgroup");
            _exit(1);
        }
    }
    if (send_msg(ctl, MSG_READY, 0, getpid(), NULL) < 0)
        _exit(1);
    /* a one-shot through C1 (a multi-threaded caller): our network
     * namespace was made after the maps, so the caller installs the rules
     * and the route now, and the workload waits for them */
    if (fx && !await_cgroup && mxc_net_ops_get()->needs_stack(&p->net)) {
        ctl_msg m;
        if (recv_msg(ctl, &m) < 0 || m.kind != MSG_NET_DONE)
            _exit(1);
    }
    pid_t workload = fx ? fork_first_exec(p, fx) : 0;
    if (workload < 0)
        _exit(127);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 0), dup2(devnull, 1), dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    if (detached) {
        ctl_msg m;
        if (recv_msg(ctl, &m) < 0 || m.kind != MSG_RELEASE)
            _exit(HOLDER_UNRELEASED); /* the caller died before recording us: leave nothing */
        prctl(PR_SET_NAME, "mxc-holder");
        (void)send_msg(ctl, MSG_RELEASED, 0, 0, NULL); /* unheard if the caller died since: we are the session */
        close(ctl);
        ctl = -1;
    }
    holder_loop(p, ctl, detached, workload, listen_fd);
}

/* Nothing of the caller's but what the holder needs: in particular not
 * the caller's end of the workload's stdin (it would never see EOF). */
static void close_inherited(const mxc_plan *p, mxc_fsview_sources *src, int ctl, const mxc_first_exec *fx,
                            const int *join, size_t njoin, int listen_fd)
{
    int keep[MXC_MAX_GRANTS + 7 + MAX_JOIN_FDS];
    size_t nkeep = 0;
    keep[nkeep++] = listen_fd;
    for (size_t i = 0; i < p->ngrants; i++)
        keep[nkeep++] = src->grant_fd[i];
    keep[nkeep++] = src->workspace_fd;
    keep[nkeep++] = ctl;
    if (fx) {
        keep[nkeep++] = fx->child->in, keep[nkeep++] = fx->child->out;
        keep[nkeep++] = fx->child->err, keep[nkeep++] = fx->child->ctl;
    }
    for (size_t i = 0; i < njoin; i++)
        keep[nkeep++] = join[i];
    mxc_close_all_but(keep, nkeep);
}

/* PID 1, direct: cloned straight into the new user, mount, PID, IPC, UTS
 * (and network) namespaces, one process fewer than the C1 path.  The
 * caller maps the user namespace without being asked (it existed when
 * clone returned), then we take our identity inside and build the view
 * while the caller makes the cgroup (two cores, two jobs); we move
 * ourselves into it, and only then make the cgroup namespace and fork the
 * workload.
 * A one-shot's PID 1 (fx) dies with its caller (PDEATHSIG).  A session's
 * holder (the monitor cloned it) has none: a session outlives
 * its monitor as it did through C1. */
static _Noreturn void direct_child(const mxc_plan *p, mxc_fsview_sources *src, int ctl, bool session,
                                   const mxc_first_exec *fx, int listen_fd)
{
    if (!session)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    close_inherited(p, src, ctl, fx, NULL, 0, listen_fd);
    ctl_msg m;
    int fds[MAX_JOIN_FDS];
    size_t nfds = 0;
    if (recv_msg_fds(ctl, &m, fds, &nfds, 0) < 0 || m.kind != MSG_MAPS_DONE)
        _exit(1);
    for (size_t i = 0; i < nfds; i++) { /* a session's /etc, made by its caller meanwhile */
        if (i == 0)
            src->etc_fd = fds[i];
        else
            close(fds[i]);
    }
    const char *stage = "holder.setsid";
    int rc = setsid() < 0 ? -errno : 0;
    if (rc == 0) {
        stage = "holder.setresuid";
        rc = become_inner(p->rootless);
    }
    if (rc < 0) {
        send_msg(ctl, MSG_FAIL, -rc, 0, stage);
        _exit(1);
    }
    holder_main(p, src, ctl, session, fx, true, listen_fd);
}

/* C1: move into the sandbox's cgroup, become the plan's identity, create
 * the user namespace, get mapped, create the rest, fork PID 1. */
static _Noreturn void first_child(const mxc_plan *p, mxc_fsview_sources *src, int ctl, bool detached,
                                   const mxc_first_exec *fx, int *join, size_t njoin, int listen_fd)
{
    close_inherited(p, src, ctl, fx, join, njoin, listen_fd);
    const char *stage = "holder.cgroup_join";
    int rc = mxc_cgroup_join_self(join, njoin);
    if (rc == 0) {
        stage = "holder.setsid";
        rc = setsid() < 0 ? -errno : 0;
    }
    if (rc == 0 && getuid() != p->uid) {
        stage = "holder.setresuid";
        if (setgroups(0, NULL) < 0 || setresgid(p->gid, p->gid, p->gid) < 0 || setresuid(p->uid, p->uid, p->uid) < 0)
            rc = -errno;
    }
    if (!detached) /* after the uid change, which clears it */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (rc == 0) {
        stage = "holder.unshare_user";
        if (unshare(CLONE_NEWUSER) < 0)
            rc = -errno;
    }
    ctl_msg m;
    if (rc == 0) {
        if (send_msg(ctl, MSG_MAPS_PLEASE, 0, getpid(), NULL) < 0 || recv_msg(ctl, &m) < 0 || m.kind != MSG_MAPS_DONE)
            _exit(1);
        stage = "holder.unshare";
        int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
        if (!p->host_network)
            flags |= CLONE_NEWNET;
        if ((rc = become_inner(true)) == 0 && unshare(flags) < 0)
            rc = -errno;
    }
    pid_t holder = -1;
    if (rc == 0) {
        stage = "holder.fork";
        /* raw: the caller's fork handlers ran once, for us (C1, forked by
         * fork(3) so that libc's own state is sound); they must not run
         * again in the holder, where fd numbers they remember are ours now */
        holder = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
        if (holder < 0)
            rc = -errno;
        if (holder == 0) {
            if (!detached)
                prctl(PR_SET_PDEATHSIG, SIGKILL);
            holder_main(p, src, ctl, detached, fx, false, listen_fd);
        }
        if (fx)
            mxc_exec_child_close((mxc_exec_child *)fx->child);
    }
    if (rc < 0) {
        send_msg(ctl, MSG_FAIL, -rc, 0, stage);
        _exit(1);
    }
    /* fault injection (tests/faults): let the holder's MSG_READY overtake */
    const char *late = mxc_fault("PID_LATE_MS");
    if (late && *late)
        usleep((useconds_t)atoi(late) * 1000);
    send_msg(ctl, MSG_PID, 0, holder, NULL);
    if (detached)
        _exit(0);
    /* attached: stay as the holder's parent so that PDEATHSIG chains, and
     * hand its status (the one-shot workload's) to the caller */
    int status = 0;
    while (waitpid(holder, &status, 0) < 0 && errno == EINTR)
        ;
    _exit(mxc_exit_code(status));
}

static int fail_from(const ctl_msg *m, mxc_error *e)
{
    const char *remedy = NULL;
    if (m->err == EPERM || m->err == ENOSPC)
        remedy = "check that user namespaces are enabled (user.max_user_namespaces) and that mxc runs as root";
    return mxc_err_os(e, MXC_E_BACKEND_ERROR, m->stage, m->err, remedy, "sandbox setup failed at %s", m->stage);
}

/* The other side went away: if it said why first (a MSG_FAIL still
 * queued), that is the answer — the stage and errno always reach the
 * caller. */
static int died(int ctl, mxc_error *e)
{
    ctl_msg m;
    while (recv_msg_fds(ctl, &m, NULL, NULL, MSG_DONTWAIT) == 0)
        if (m.kind == MSG_FAIL)
            return fail_from(&m, e);
    return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox's setup process died before it reported a stage");
}

/* The one-shot's user namespace must belong to the sandbox's uid, not to
 * host root: the kernel charges per-user limits (user namespaces, inotify
 * instances, process counts) to the owner of a namespace.  A single-threaded
 * caller borrows that euid for the clone (the real and saved uid stay 0, so
 * it gets its privileges back at once). */
static pid_t clone_as(const mxc_plan *p, unsigned long flags, int cgroup_fd)
{
    bool borrow = geteuid() == 0 && p->uid != 0;
    /* A change of euid clears this process's parent-death signal (the
     * fresh mxc-exec of an in-process one-shot dies with its caller by it):
     * it is armed again below, and a parent that died meanwhile is acted on. */
    int pdeath = 0;
    pid_t parent = getppid();
    if (borrow)
        prctl(PR_GET_PDEATHSIG, &pdeath);
    if (borrow && (syscall(SYS_setresgid, -1, p->gid, -1) < 0 || syscall(SYS_setresuid, -1, p->uid, -1) < 0)) {
        int err = errno;
        syscall(SYS_setresgid, -1, 0, -1);
        errno = err;
        return -1;
    }
    /* CLONE_INTO_CGROUP checks write access to cgroup.procs with the
     * filesystem ids: those stay root's (the namespace owner is the euid) */
    if (borrow && cgroup_fd >= 0)
        syscall(SYS_setfsuid, 0), syscall(SYS_setfsgid, 0);
    pid_t c = mxc_cgroup_clone(flags, cgroup_fd);
    if (c == 0)
        return 0;
    int err = errno;
    if (borrow) {
        syscall(SYS_setresuid, -1, 0, -1);
        syscall(SYS_setresgid, -1, 0, -1);
        if (pdeath > 0) {
            prctl(PR_SET_PDEATHSIG, pdeath);
            if (getppid() != parent)
                raise(pdeath);
        }
    }
    errno = err;
    return c;
}

/* "killed by signal 9" / "exited with status 1", from waitid's report. */
static void describe_exit(const siginfo_t *si, char *out, size_t outsz)
{
    if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED)
        snprintf(out, outsz, "killed by signal %d\n", si->si_status);
    else
        snprintf(out, outsz, "exited with status %d\n", si->si_status);
}

/* holder.exit, whole or not at all (a reader never sees it empty). */
static void record_death(int dirfd, const char *text)
{
    int fd = openat(dirfd, ".holder.exit", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    bool whole = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    if (!whole || renameat(dirfd, ".holder.exit", dirfd, "holder.exit") < 0)
        unlinkat(dirfd, ".holder.exit", 0);
}

/* The monitor of a session: clones the holder straight into its
 * namespaces (our child; we are also the subreaper of whatever it
 * orphans), then waits for it.  If it dies while its record still exists — not a stop,
 * which removes the record first — how it died goes into holder.exit, for
 * the next phase to report, before the holder is reaped: a phase that finds
 * the holder gone from /proc finds the record too, and one that finds it a
 * zombie waits for it (session.c).  It keeps nothing of the caller's but
 * the sandbox's directory. */
static _Noreturn void monitor_main(const mxc_plan *p, mxc_fsview_sources *src, int ctl, int cgfd,
                                   const mxc_holder_session *session, int caller)
{
    setsid();
    prctl(PR_SET_NAME, "mxc-monitor");
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* raw: the caller's fork handlers ran once, for C1 (fork(3)), or C1
     * shared a single-threaded caller's memory (vfork); never again below.
     * v2: C1, and so the holder, is born in the sandbox's cgroup. */
    /* The holder itself, cloned straight into its namespaces (the user
     * namespace owned by the sandbox's uid, clone_as); its pid is the
     * caller's first message, for the maps. */
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    if (!p->host_network && !p->net_pooled)
        flags |= CLONE_NEWNET;
    int dirfd = session->dirfd; /* read before the caller goes on */
    pid_t c1 = clone_as(p, flags, cgfd);
    if (c1 < 0)
        send_msg(ctl, MSG_FAIL, errno, 0, "holder.clone");
    if (c1 == 0)
        direct_child(p, src, ctl, true, NULL, session->listen_fd);
    if (c1 > 0) {
        /* fault injection (tests/faults): the pid as late as it can be */
        const char *late = mxc_fault("PID_LATE_MS");
        if (late && *late)
            usleep((useconds_t)atoi(late) * 1000);
        send_msg(ctl, MSG_MAPS_PLEASE, 0, c1, NULL);
    }
    int keep[] = {dirfd, caller};
    mxc_close_all_but(keep, caller >= 0 ? 2 : 1);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 0), dup2(devnull, 1), dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    /* Sharing the caller's memory (monitor_clone): nothing more of ours
     * runs beside it — not a libc call that might set errno, which lives
     * in the memory we share — until it has exited. */
    if (caller >= 0) {
        struct pollfd pf = {.fd = caller, .events = POLLIN};
        while (poll(&pf, 1, -1) < 0 && errno == EINTR)
            ;
        close(caller);
    }
    if (c1 < 0)
        _exit(1);
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) < 0) {
            if (errno == EINTR)
                continue;
            _exit(0); /* nothing left to watch */
        }
        pid_t r = si.si_pid;
        /* The holder's death while its record names it is a crash (a stop
         * clears the record first).  Anything else reaped here (a setup
         * process orphaned to this subreaper) is not the holder. */
        char rec[96] = "";
        if (mxc_read_small_at(dirfd, "holder", rec, sizeof rec) > 0 && atoi(rec) == (int)r) {
            char text[64];
            if (si.si_code == CLD_EXITED && si.si_status == HOLDER_UNRELEASED)
                snprintf(text, sizeof text, "%s\n", MXC_HOLDER_NEVER_RELEASED);
            else
                describe_exit(&si, text, sizeof text);
            /* fault injection (tests/faults): a monitor slow to record */
            const char *slow = mxc_fault("MONITOR_SLOW_MS");
            if (slow && *slow)
                usleep((useconds_t)atoi(slow) * 1000);
            record_death(dirfd, text);
        }
        while (waitpid(r, NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

/* A monitor that shares its caller's memory (CLONE_VM) instead of
 * copying it: on this kind of host a fork costs 0.6 ms of address-space
 * copy (and its first writes copy-on-write faults), a CLONE_VM child
 * 0.02 ms.  Only for a caller that exits once it answers (the CLI, the C
 * ABI's fresh mxc-exec) and is single-threaded.  The rules that make it
 * sound: the holder is cloned from this memory, so the caller touches no
 * heap or global state until the monitor has cloned it (it waits for
 * MSG_MAPS_PLEASE; what it does meanwhile — making /etc — is system calls
 * on its own stack); the monitor runs on a stack of its own (mapped here,
 * never unmapped: the holder lives on its copy of it) and, once the holder
 * exists, only system calls that succeed until the caller has exited
 * (monitor_main waits on the caller's pidfd).  Its arguments sit at the
 * top of that stack, where nothing of the caller's can overwrite them.
 * -1 where such a clone is refused (valgrind answers EINVAL) or its
 * stack or the caller's pidfd cannot be had: the caller forks one
 * instead. */
typedef struct {
    const mxc_plan *p;
    mxc_fsview_sources *src;
    int ctl, other, caller, cgfd;
    const mxc_holder_session *session;
} monitor_args;

static int monitor_entry(void *arg)
{
    const monitor_args *a = arg;
    close(a->other);
    monitor_main(a->p, a->src, a->ctl, a->cgfd, a->session, a->caller);
}

#define MONITOR_STACK (8u << 20) /* reserved, not committed: what is touched */

static pid_t monitor_clone(const mxc_plan *p, mxc_fsview_sources *src, const int sv[2], int cgfd,
                           const mxc_holder_session *session)
{
    char *stack = mmap(NULL, MONITOR_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                       -1, 0);
    if (stack == MAP_FAILED)
        return -1;
    int caller = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (caller < 0 || mprotect(stack, 4096, PROT_NONE) < 0) { /* a guard page below it */
        int err = errno;
        if (caller >= 0)
            close(caller);
        munmap(stack, MONITOR_STACK);
        errno = err;
        return -1;
    }
    monitor_args *a = (monitor_args *)(stack + MONITOR_STACK - 256);
    *a = (monitor_args){.p = p, .src = src, .ctl = sv[1], .other = sv[0], .caller = caller, .cgfd = cgfd,
                        .session = session};
    pid_t pid = clone(monitor_entry, (char *)a - 64, CLONE_VM | SIGCHLD, a);
    int err = errno;
    close(caller); /* the monitor's own copy stays open */
    if (pid < 0)
        munmap(stack, MONITOR_STACK);
    errno = err;
    return pid;
}

/* mxc_holder_spawn's way back before any child exists: what it opened is
 * closed, the cgroup it made (cg; NULL when it made none) removed. */
static int spawn_undo(mxc_fsview_sources *src, int *join, int njoin, int cgfd, mxc_cgroup *cg, int err,
                      const char *op, const char *what, mxc_error *e)
{
    mxc_fsview_close_sources(src);
    free(src);
    for (int i = 0; i < njoin; i++)
        close(join[i]);
    if (cgfd >= 0)
        close(cgfd);
    if (cg)
        mxc_cgroup_remove(cg);
    return mxc_err_os(e, MXC_E_BACKEND_ERROR, op, err, NULL, "%s", what);
}

/* v1, a session: the cgroup its holder joins once its view is built. */
static int make_late_cgroup(const mxc_plan *p, const char *name, mxc_cgroup *cg, int *join, int *njoin, mxc_error *e)
{
    if (mxc_cgroup_create(name, p->pids_max, p->memory_max, p->cpu_quota_us, cg, e) < 0)
        return -1;
    *njoin = mxc_cgroup_join_fds(cg, join, e);
    return *njoin < 0 ? -1 : 0;
}

/* mxc_holder_spawn's state between its steps. */
typedef struct {
    mxc_plan *p;
    const char *cgroup_name;
    const mxc_holder_session *session;
    const mxc_first_exec *fx;
    mxc_holder *h;
    mxc_cgroup *cg;
    bool detached;      /* a session (its holder outlives us) */
    bool direct;        /* a one-shot of a single-threaded caller: C1 is PID 1 */
    bool born_in;       /* v2: PID 1 (or the holder) is cloned into the cgroup */
    bool late_cgroup;   /* v1, a session: made while the monitor clones the holder */
    bool made_now;      /* the cgroup made before the fork (spawn_undo removes it) */
    bool monitor_first; /* the monitor is our child, no C1 */
    bool shared;        /* the monitor shares our memory (monitor_clone) */
    int join[MAX_JOIN_FDS];
    int njoin;
    int cgfd;
    mxc_fsview_sources *src;
    int sv[2];
    pid_t c1;
    mxc_net_cgroup netcg; /* the cgroup src/net charges the sandbox's helpers to */
    int pool_self;        /* our own network namespace while we are in a pooled one (pool_join) */
} spawn_state;

/* Step 1: the cgroup, as far as it is made before any child.  v2: the
 * first process of the sandbox is born in its cgroup (clone3
 * CLONE_INTO_CGROUP), so the cgroup is made first; v1: the direct path
 * makes it while PID 1 builds the view, and the process moves itself in
 * through `tasks`. */
static int spawn_cgroup_first(spawn_state *s, mxc_error *e)
{
    mxc_plan *p = s->p;
    /* src/net: the helpers it starts (mxc-proxy, pasta) are charged to this cgroup */
    snprintf(s->netcg.name, sizeof s->netcg.name, "%s", s->cgroup_name);
    s->netcg.pids_max = p->pids_max;
    s->netcg.memory_max = p->memory_max;
    s->netcg.cpu_quota_us = p->cpu_quota_us;
    mxc_cgroup_open(s->cgroup_name, s->cg);
    s->born_in = s->cg->v2 && (s->direct || s->detached);
    /* v1, a session: made while the monitor clones the holder (the holder
     * joins it only once its view is built) */
    s->late_cgroup = s->detached && !s->born_in;
    s->made_now = (!s->direct || s->born_in) && !s->late_cgroup;
    if (s->made_now && mxc_cgroup_create(s->cgroup_name, p->pids_max, p->memory_max, p->cpu_quota_us, s->cg, e) < 0)
        return -1;
    if (s->born_in && (s->cgfd = mxc_cgroup_dir_fd(s->cg)) < 0) {
        int err = errno;
        mxc_cgroup_remove(s->cg);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.open", err, NULL, "cannot open the cgroup %s",
                          s->cg->v2_dir);
    }
    if (!s->direct && !s->born_in && !s->late_cgroup && (s->njoin = mxc_cgroup_join_fds(s->cg, s->join, e)) < 0) {
        mxc_cgroup_remove(s->cg);
        return -1;
    }
    return 0;
}

/* Step 2: the view's sources, opened by us (the children only attach
 * them), and the control socket. */
static int spawn_sources(spawn_state *s, mxc_error *e)
{
    s->src = malloc(sizeof *s->src);
    if (!s->src || mxc_fsview_open_sources(s->p, s->src, e) < 0) {
        if (!s->src)
            mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        free(s->src);
        for (int i = 0; i < s->njoin; i++)
            close(s->join[i]);
        if (s->cgfd >= 0)
            close(s->cgfd);
        return -1;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s->sv) < 0)
        return spawn_undo(s->src, s->join, s->njoin, s->cgfd, s->made_now ? s->cg : NULL, errno,
                          "session.socketpair", "cannot create the control socket", e);
    return 0;
}

/* Model 1, root, a direct one-shot or a session: a network namespace made ahead with pasta
 * attached (src/net/netpool.h), claimed one-use and joined by this thread for the clone below,
 * which then makes none (p->net_pooled): the namespace is owned by the host's user namespace,
 * so the workload's CAP_NET_ADMIN never applies to it.  Our own namespace's fd to return to
 * (pool_leave), or -1: no entry, the clone makes a namespace as without a pool. */
static int pool_join(spawn_state *s)
{
    mxc_plan *p = s->p;
    p->net_pooled = false;
    if (p->host_network || p->rootless || !(s->direct || s->detached) || !mxc_net_ops_get()->needs_stack(&p->net) ||
        !mxc_single_threaded()) /* one claim per process at a time (netpool.h) */
        return -1;
    int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int ns = self >= 0 ? mxc_net_ops_get()->pool_claim(&p->net, s->cgroup_name) : -1;
    if (ns >= 0 && setns(ns, CLONE_NEWNET) == 0)
        p->net_pooled = true;
    else if (ns >= 0) /* claimed but not joined: the entry ended now, not at --gc */
        mxc_net_ops_get()->pool_release();
    if (ns >= 0)
        close(ns);
    if (!p->net_pooled && self >= 0) {
        close(self);
        self = -1;
    }
    return self;
}

/* Back into our own namespace after the clone: everything after (this host's destinations
 * read for the rules, the helpers) runs there.  Not back: this process must go no further. */
static void pool_leave(int self)
{
    if (self < 0)
        return;
    if (setns(self, CLONE_NEWNET) < 0)
        abort();
    close(self);
}

/* Step 3: the first child (C1, PID 1 itself, or the monitor); the child's
 * side never returns. */
static int spawn_children(spawn_state *s, mxc_error *e)
{
    mxc_plan *p = s->p;
    s->pool_self = pool_join(s);
    const mxc_holder_session *session = s->session;
    /* a session started by a process that exits once it answers (the CLI,
     * libmxc_ffi's fresh mxc-exec): the monitor is its child, orphaned when
     * it exits, as C1's exit orphans it otherwise; no C1 to make and wait
     * for.  Single-threaded only (the raw clone below). */
    s->monitor_first = s->detached && session->caller_exits && mxc_single_threaded();
    if (s->monitor_first) {
        /* tests/faults: the forked monitor, as valgrind gets it */
        s->c1 = mxc_fault("FORKED_MONITOR") ? -1 : monitor_clone(p, s->src, s->sv, s->cgfd, session);
        s->shared = s->c1 > 0;
        if (s->c1 < 0)
            s->c1 = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
        if (s->c1 == 0) {
            close(s->sv[0]);
            monitor_main(p, s->src, s->sv[1], s->cgfd, session, -1);
        }
    } else if (s->direct) {
        unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
        if (!p->host_network && !p->net_pooled)
            flags |= CLONE_NEWNET;
        s->c1 = clone_as(p, flags, s->cgfd);
    } else if (s->detached && mxc_single_threaded()) {
        /* C1 of a session only forks the monitor and exits: it shares our
         * memory (vfork) instead of copying it, so neither its copy nor its
         * exit (an address space torn down) is paid for; the monitor below
         * is still a copy of its own.  Single-threaded callers only (the
         * CLI): the monitor is then a raw clone of a process no other
         * thread can have left holding a libc lock; a threaded caller's C1
         * goes through fork(3), which makes libc's state sound for it. */
        s->c1 = vfork();
    } else {
        s->c1 = fork();
    }
    if (s->c1 != 0) /* the children went on in the claimed namespace */
        pool_leave(s->pool_self);
    if (s->c1 < 0) {
        int err = errno;
        close(s->sv[0]), close(s->sv[1]);
        return spawn_undo(s->src, s->join, s->njoin, s->cgfd, s->made_now ? s->cg : NULL, err,
                          "session.fork", "cannot fork the session holder", e);
    }
    if (s->c1 == 0 && !s->monitor_first) {
        close(s->sv[0]);
        if (s->direct)
            direct_child(p, s->src, s->sv[1], false, s->fx, -1);
        if (s->detached) { /* the monitor, orphaned at once: nobody's zombie when it is done */
            if ((pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0) == 0)
                monitor_main(p, s->src, s->sv[1], s->cgfd, session, -1);
            _exit(0);
        }
        first_child(p, s->src, s->sv[1], false, s->fx, s->join, (size_t)s->njoin, s->session ? s->session->listen_fd : -1);
    }
    return 0;
}

/* Step 4: the user namespace's maps (C1's, or a session's holder's, named
 * by its monitor), the network's rules after them, and a session's /etc. */
static int spawn_maps(spawn_state *s, int ctl, ctl_msg *m, mxc_error *e)
{
    mxc_plan *p = s->p;
    if (s->detached && !s->monitor_first)
        waitpid(s->c1, NULL, 0);
    pid_t mapped = s->c1; /* whose user namespace the maps are for: C1 (a session's is the monitor's child) */
    close(s->sv[1]);
    /* a session: its /etc is made here, while the monitor clones the
     * holder (which needs it only once its namespaces and root exist) */
    int etc = s->detached ? mxc_fsview_prepare_etc(p, s->src) : -1;
    int rc = 0;
    /* shared: nothing below until the holder is cloned from our memory */
    if (s->shared && recv_msg(ctl, m) < 0)
        rc = died(ctl, e);
    mxc_fsview_close_sources(s->src);
    free(s->src);
    s->src = NULL;
    if (!s->detached) /* a session's holder gets them once it is mapped (below) */
        for (int i = 0; i < s->njoin; i++)
            close(s->join[i]);
    if (s->cgfd >= 0)
        close(s->cgfd);
    /* made late: a failure here closes ctl below, and the holder, waiting
     * for its maps, exits; a shared monitor's holder exists already, so
     * its maps go first and the cgroup is made while it builds its view */
    if (rc == 0 && s->late_cgroup && !s->shared && make_late_cgroup(p, s->cgroup_name, s->cg, s->join, &s->njoin, e) < 0)
        rc = -1;
    if (rc == 0 && !s->direct && !s->shared && recv_msg(ctl, m) < 0)
        rc = died(ctl, e);
    if (rc == 0 && m->kind == MSG_FAIL)
        rc = fail_from(m, e);
    if (rc == 0 && s->detached)
        mapped = s->h->pid = m->pid; /* the holder itself, named by its monitor */
    if (rc == 0) {
        /* MXC_INNER_UID inside is the plan's host uid; nothing else is mapped (host root in
         * particular is not).  Rootless, the kernel takes a gid map from an unprivileged writer
         * only once setgroups(2) is disabled for the namespace. */
        const mxc_idmap_range um = {MXC_INNER_UID, p->uid, 1}, gm = {MXC_INNER_GID, p->gid, 1};
        int err = mxc_userns_write_map(mapped, false, &um, 1);
        if (!err && p->rootless)
            err = mxc_userns_deny_setgroups(mapped);
        if (!err)
            err = mxc_userns_write_map(mapped, true, &gm, 1);
        if (err)
            rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "session.uid_map", -err, NULL, "cannot write the id maps");
        else if (send_msg_fds(ctl, MSG_MAPS_DONE, 0, 0, NULL, &etc, etc >= 0 ? 1 : 0) < 0)
            rc = died(ctl, e);
        /* src/net: rules + stack while PID 1 (or a session's holder, cloned into its namespaces
         * by the monitor) builds its view; it waits for MSG_CGROUP_DONE (step 5), sent only once
         * they are in, before its workload or its readiness (and so before any exec) */
        else if (mxc_net_ops_get()->after_maps(&p->net, &s->netcg, s->direct || s->detached, mapped, e) < 0)
            rc = -1;
    }
    if (rc == 0 && s->late_cgroup && s->shared && make_late_cgroup(p, s->cgroup_name, s->cg, s->join, &s->njoin, e) < 0)
        rc = -1;
    if (etc >= 0)
        close(etc);
    return rc;
}

/* Step 5: the files through which the holder (or PID 1) moves itself into
 * the cgroup once its view is built (none on v2: born in it); a session's
 * holder is recorded by the caller meanwhile. */
static int spawn_cgroup_join(spawn_state *s, int ctl, int rc, mxc_error *e)
{
    mxc_plan *p = s->p;
    if (s->detached) {
        if (rc == 0 && send_msg_fds(ctl, MSG_CGROUP_DONE, 0, 0, NULL, s->join, (size_t)s->njoin) < 0)
            rc = died(ctl, e);
        for (int i = 0; i < s->njoin; i++)
            close(s->join[i]);
        /* the holder builds its view now: the caller records it meanwhile */
        if (rc == 0 && s->session->record &&
            s->session->record(s->session->record_ctx, s->h->pid, mxc_proc_start_time(s->h->pid), e) < 0)
            rc = -1;
    }
    if (rc == 0 && s->direct) {
        /* v2: PID 1 was born inside; the message (with no fds) only says
         * that it may go on */
        if (!s->born_in && (mxc_cgroup_create(s->cgroup_name, p->pids_max, p->memory_max, p->cpu_quota_us, s->cg, e) < 0 ||
                            (s->njoin = mxc_cgroup_join_fds(s->cg, s->join, e)) < 0)) {
            rc = -1;
        } else {
            if (send_msg_fds(ctl, MSG_CGROUP_DONE, 0, 0, NULL, s->join, (size_t)s->njoin) < 0)
                rc = died(ctl, e);
            for (int i = 0; i < s->njoin; i++)
                close(s->join[i]);
        }
    }
    return rc;
}

/* Step 6: the holder's pid and its readiness.  MSG_PID comes from C1 after
 * its clone returns, MSG_READY from the holder itself: two writers, either
 * order (a busy machine runs the holder first).  Both are needed — a
 * holder recorded as pid 0 is a session nobody can reach or stop.  (A
 * session's holder pid came first, from its monitor, before the holder
 * could be ready.) */
static int spawn_wait_ready(spawn_state *s, int ctl, int rc, mxc_error *e)
{
    ctl_msg m;
    bool ready = false;
    while (rc == 0 && !(ready && (s->direct || s->h->pid > 0))) {
        if (recv_msg(ctl, &m) < 0) {
            rc = died(ctl, e);
        } else if (m.kind == MSG_FAIL) {
            rc = fail_from(&m, e);
        } else if (m.kind == MSG_PID) {
            s->h->pid = m.pid;
        } else if (m.kind == MSG_READY) {
            ready = true;
        }
    }
    return rc;
}

/* A start that failed once children exist: they are killed, C1 reaped. */
static int spawn_abort(spawn_state *s, int ctl, pid_t holder)
{
    if (holder > 0)
        kill(holder, SIGKILL);
    if (!s->detached) {
        kill(s->c1, SIGKILL);
        waitpid(s->c1, NULL, 0);
    }
    close(ctl);
    return -1;
}

static int holder_spawn(mxc_plan *p, const char *cgroup_name, const mxc_holder_session *session,
                        const mxc_first_exec *fx, mxc_holder *h, mxc_cgroup *cg, mxc_error *e)
{
    memset(h, 0, sizeof *h);
    h->ctl_fd = -1;
    spawn_state s = {.p = p, .cgroup_name = cgroup_name, .session = session, .fx = fx, .h = h, .cg = cg,
                     .detached = session != NULL, .cgfd = -1, .sv = {-1, -1}};
    s.direct = !s.detached && mxc_single_threaded();
    if (spawn_cgroup_first(&s, e) < 0 || spawn_sources(&s, e) < 0 || spawn_children(&s, e) < 0)
        return -1;
    int ctl = s.sv[0];
    ctl_msg m = {0};
    int rc = spawn_maps(&s, ctl, &m, e);
    rc = spawn_cgroup_join(&s, ctl, rc, e);
    if (spawn_wait_ready(&s, ctl, rc, e) < 0)
        return spawn_abort(&s, ctl, h->pid);
    if (s.direct)
        h->pid = s.c1; /* it knows itself only as pid 1 */
    /* src/net: a one-shot's through C1 before its workload (the holder waits for
     * MSG_NET_DONE); a direct one-shot's and a session's were attached with the maps */
    int nrc = 0;
    if (!s.direct && !s.detached && mxc_net_ops_get()->needs_stack(&p->net)) {
        nrc = mxc_net_ops_get()->attach(&p->net, &s.netcg, h->pid, e);
        if (nrc == 0 && !s.detached && send_msg(ctl, MSG_NET_DONE, 0, 0, NULL) < 0)
            nrc = died(ctl, e);
    }
    if (nrc < 0)
        return spawn_abort(&s, ctl, h->pid);
    h->start_time = mxc_proc_start_time(h->pid);
    h->ctl_fd = ctl;
    h->first_child = s.detached ? 0 : s.c1;
    /* src/net: model 1's pool topped up again by a detached refiller, now that this session runs
     * (a no-op unless root, model 1, pool on); a direct one-shot's once it is over (oneshot.c) */
    if (s.detached && !p->host_network && mxc_net_ops_get()->needs_stack(&p->net))
        mxc_net_ops_get()->pool_refill(&p->net);
    return 0;
}

int mxc_holder_spawn(mxc_plan *p, const char *cgroup_name, const mxc_holder_session *session, const mxc_first_exec *fx,
                     mxc_holder *h, mxc_cgroup *cg, mxc_error *e)
{
    int rc = holder_spawn(p, cgroup_name, session, fx, h, cg, e);
    if (rc < 0) /* src/net: a pool entry claimed (pool_join) and not adopted by the attach: ended now */
        mxc_net_ops_get()->pool_release();
    return rc;
}

int mxc_holder_release(mxc_holder *h, mxc_error *e)
{
    /* answered once it calls itself mxc-holder: a phase that follows ours
     * must find it running */
    ctl_msg m;
    int rc = send_msg(h->ctl_fd, MSG_RELEASE, 0, 0, NULL);
    if (rc == 0 && (recv_msg(h->ctl_fd, &m) < 0 || m.kind != MSG_RELEASED))
        rc = -1;
    close(h->ctl_fd);
    h->ctl_fd = -1;
    return rc < 0 ? mxc_err(e, MXC_E_BACKEND_ERROR, "the session holder exited before it was released") : 0;
}

int mxc_holder_kill(pid_t pid, unsigned long long start_time, mxc_error *e)
{
    int pfd = mxc_pidfd_of(pid, start_time); /* pid reuse: checked once the pidfd pins the process */
    if (pfd < 0)
        return pfd == -ESRCH ? 0 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "session.pidfd_open", -pfd, NULL, "cannot open the session holder");
    if (syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH) {
        int err = errno;
        close(pfd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "session.pidfd_send_signal", err, NULL, "cannot kill the session holder");
    }
    struct pollfd p = {.fd = pfd, .events = POLLIN};
    int rc = poll(&p, 1, 10000);
    close(pfd);
    if (rc <= 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the session holder did not exit within 10 s of SIGKILL");
    /* It is gone; wait for the kernel to finish tearing the namespace down
     * (the zombie is reaped by init). */
    for (int i = 0; i < 200 && mxc_pid_alive(pid, start_time); i++)
        usleep(5000);
    return 0;
}
