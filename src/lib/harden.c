/* harden.c — see harden.h.  The order of mxc_harden_self is the checklist;
 * each step says why it sits where it does. */
#include "harden.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Why a keep list: the processes that fork a workload must not hold the
 * caller's ends of the stdio pipes (the workload would never see EOF) nor
 * anything else of the caller's. */
void mxc_reset_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &dfl, NULL);
}

void mxc_close_all_but(int *keep, size_t n)
{
    qsort(keep, n, sizeof *keep, cmp_int);
    unsigned from = 3;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < 3 || (unsigned)keep[i] < from)
            continue;
        if ((unsigned)keep[i] > from)
            syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0);
        from = (unsigned)keep[i] + 1;
    }
    syscall(SYS_close_range, from, ~0U, 0);
}

static int drop_capabilities(void)
{
    /* securebits first: with NOROOT locked, uid 0 inside regains nothing on
     * execve.  Needs CAP_SETPCAP, so it precedes the drop. */
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
        return -errno;
    /* Capabilities are numbered without gaps up to the kernel's last one;
     * the first EINVAL is past it (and every higher number is too). */
    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno != EINVAL)
                return -errno;
            break;
        }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
        return -errno;
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2] = {{0}};
    if (syscall(SYS_capset, &hdr, data) < 0)
        return -errno;
    return 0;
}

static int set_limits(const mxc_plan *p)
{
    const struct { int res; rlim_t val; bool on; } lim[] = {
        {RLIMIT_CORE, 0, true},          /* no core file anywhere */
        {RLIMIT_NOFILE, 4096, true},
        /* the fallbacks where no cgroup takes a limit: processes of this
         * user namespace (Linux >= 5.14 counts them per namespace), and the
         * address space per process — RLIMIT_AS counts what RLIMIT_DATA
         * does not: shared anonymous mappings, mapped memfds, stack growth
         * (memfd_create itself is refused then: written, not mapped, its
         * pages count against nothing).  Node 20 starts under 1 GiB; a JVM
         * needs -Xmx below the limit. */
        {RLIMIT_NPROC, (rlim_t)p->pids_max, p->nproc_rlimit},
        {RLIMIT_AS, (rlim_t)p->memory_max, p->as_rlimit},
    };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
        if (!lim[i].on)
            continue;
        struct rlimit rl = {lim[i].val, lim[i].val};
        if (setrlimit(lim[i].res, &rl) < 0)
            return -errno;
    }
    /* POSIX message queues: their bytes count against RLIMIT_MSGQUEUE, not
     * RLIMIT_AS; without a memory cgroup keep it at most Linux's default
     * (800 KiB) and within the bound (only ever lowered). */
    struct rlimit mq;
    if (p->as_rlimit && getrlimit(RLIMIT_MSGQUEUE, &mq) == 0) {
        rlim_t cap = (rlim_t)p->memory_max < 819200 ? (rlim_t)p->memory_max : 819200;
        if (mq.rlim_max == RLIM_INFINITY || mq.rlim_max > cap)
            mq.rlim_max = cap;
        if (mq.rlim_cur == RLIM_INFINITY || mq.rlim_cur > mq.rlim_max)
            mq.rlim_cur = mq.rlim_max;
        if (setrlimit(RLIMIT_MSGQUEUE, &mq) < 0)
            return -errno;
    }
    return 0;
}

int mxc_harden_self(const mxc_plan *p, int keep_fd, const char **stage)
{
    int rc;
    /* Inherited descriptors: only 0, 1, 2 (and our CLOEXEC error channel). */
    *stage = "harden.close_range";
    if (keep_fd > 3 && syscall(SYS_close_range, 3, keep_fd - 1, 0) < 0)
        return -errno;
    if (syscall(SYS_close_range, keep_fd >= 3 ? keep_fd + 1 : 3, ~0U, 0) < 0)
        return -errno;
    *stage = "harden.rlimits";
    if ((rc = set_limits(p)) < 0)
        return rc;
    *stage = "harden.capabilities";
    if ((rc = drop_capabilities()) < 0)
        return rc;
    /* no_new_privs: setuid and file-capability binaries grant nothing; it is
     * also what lets an unprivileged task load Landlock and seccomp. */
    *stage = "harden.no_new_privs";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    if ((rc = mxc_landlock_apply(p, stage)) < 0)
        return rc;
    /* seccomp last: it denies calls (landlock_*, prctl variants) the steps
     * above needed. */
    *stage = "harden.seccomp";
    return mxc_seccomp_apply(p->as_rlimit);
}
