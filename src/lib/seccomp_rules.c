/* seccomp_rules.c — see seccomp_rules.h.
 * Foreign architectures (i386 via int 0x80, x32) hit the bad-arch action,
 * so the same calls cannot be made through another ABI. */
#include "seccomp_rules.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <fcntl.h>

/* Denied with EPERM: kernel attack surface a workload never needs, and every
 * way to change the sandbox from inside. */
static const char *const DENIED[] = {
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "mount", "umount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
    "mount_setattr", "pivot_root", "chroot", "setns", "unshare",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "acct", "swapon", "swapoff", "reboot", "open_by_handle_at", "name_to_handle_at",
    "ptrace", "process_vm_readv", "process_vm_writev", "syslog", "quotactl", "lookup_dcookie",
    "vhangup", "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "uselib", "nfsservctl", "fanotify_init", "kcmp", "pidfd_getfd", "mbind", "set_mempolicy",
    "migrate_pages", "move_pages", "set_mempolicy_home_node", "quotactl_fd", "landlock_create_ruleset",
    "lsm_set_self_attr",
};

static int deny_all(scmp_filter_ctx ctx)
{
    for (size_t i = 0; i < sizeof DENIED / sizeof DENIED[0]; i++) {
        int nr = seccomp_syscall_resolve_name(DENIED[i]);
        if (nr == __NR_SCMP_ERROR)
            continue; /* not on this architecture */
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ioctl request numbers are 32-bit in the kernel: compare only the low
 * half, so TIOCSTI with high bits set (CVE-2019-10063) is caught too. */
static int deny_ioctls(scmp_filter_ctx ctx)
{
    const unsigned long bad[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, bad[i]));
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* New namespaces (user namespaces above all: they reach kernel code that
 * is otherwise root-only) cannot be made with clone; clone3 hides its
 * flags in memory seccomp cannot read, so it is ENOSYS and libc falls back
 * to clone. */
static int deny_namespace_clones(scmp_filter_ctx ctx)
{
    const unsigned long ns = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                             CLONE_NEWUTS | CLONE_NEWCGROUP;
    int rc;
    /* one rule per flag bit: any namespace flag set is refused */
    for (unsigned long bit = 1; bit; bit <<= 1) {
        if (!(ns & bit))
            continue;
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit));
        if (rc < 0)
            return rc;
    }
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
}

/* No file the workload creates or changes may carry setuid or setgid: its
 * writes into a grant land on the host as the grant's owner (root, often),
 * and a nosuid mount in here protects no one out there.  The mode argument
 * of every call that sets one is checked (open/openat/creat only with
 * O_CREAT or O_TMPFILE, where the mode is read); openat2 hides its mode in
 * memory seccomp cannot read, so it is ENOSYS (libc falls back to openat).
 * Directories too: a setgid directory would hand its group to what the
 * host's users create in it. */
static int deny_setid_modes(scmp_filter_ctx ctx)
{
    const struct { const char *name; unsigned mode_arg; int flags_arg; } calls[] = {
        {"chmod", 1, -1}, {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
        {"mknod", 1, -1}, {"mknodat", 2, -1}, {"mkdir", 1, -1}, {"mkdirat", 2, -1},
        {"creat", 1, -1}, {"open", 2, 1}, {"openat", 3, 2},
    };
    const unsigned long bits[] = {S_ISUID, S_ISGID};
    const unsigned long creating[] = {O_CREAT, __O_TMPFILE};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        int nr = seccomp_syscall_resolve_name(calls[i].name);
        if (nr == __NR_SCMP_ERROR)
            continue;
        for (size_t b = 0; b < 2; b++) {
            struct scmp_arg_cmp mode = {.arg = calls[i].mode_arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = bits[b],
                                        .datum_b = bits[b]};
            int rc;
            if (calls[i].flags_arg < 0) {
                rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, mode);
            } else {
                rc = 0;
                for (size_t c = 0; rc == 0 && c < 2; c++) {
                    struct scmp_arg_cmp fl = {.arg = (unsigned)calls[i].flags_arg, .op = SCMP_CMP_MASKED_EQ,
                                              .datum_a = creating[c], .datum_b = creating[c]};
                    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, fl, mode);
                }
            }
            if (rc < 0)
                return rc;
        }
    }
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
}

/* prlimit64 on another process: the holder and earlier execs share the
 * workload's uid, and lowering their limits would starve the session. */
static int limit_prlimit(scmp_filter_ctx ctx)
{
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_NE, 0, 0));
}

/* personality(): only the query and the native persona. */
static int limit_personality(scmp_filter_ctx ctx)
{
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
                              SCMP_A0(SCMP_CMP_NE, PER_LINUX, 0));
    if (rc < 0)
        return rc;
    return 0;
}

/* The variant for sandboxes whose memory only RLIMIT_AS bounds (no memory
 * cgroup): the allocators whose pages no rlimit counts are refused.
 * memfd_create (EPERM): pages written, never mapped.  SysV IPC — shmget,
 * msgget, semget (ENOSYS, the answer of a kernel built without
 * CONFIG_SYSVIPC, which programs handle): a segment or queue belongs to the
 * IPC namespace, not to a process, so it stays resident after every
 * process has detached, across execs of a session, outside RLIMIT_AS.
 * (POSIX message queues are bounded by RLIMIT_MSGQUEUE, harden.c; pipes
 * and socket buffers by the kernel's per-user limits.) */
static int deny_uncounted_memory(scmp_filter_ctx ctx)
{
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create), 0);
    const int sysv[] = {SCMP_SYS(shmget), SCMP_SYS(msgget), SCMP_SYS(semget)};
    for (size_t i = 0; rc == 0 && i < sizeof sysv / sizeof sysv[0]; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), sysv[i], 0);
    return rc;
}

scmp_filter_ctx mxc_seccomp_rules(bool no_memfd, int *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        *err = -ENOMEM;
        return NULL;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 5)
    /* A binary tree of system-call numbers, not a linear list: the same
     * decisions, and the kernel loads it in half the time (155 -> 80 us per
     * exec and one-shot here: on load it runs the program once per system
     * call number to build its allow-cache, and JITs it).  libseccomp
     * before 2.5 has no such option and writes the linear program. */
    if (rc == 0)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
#endif
    if (rc == 0)
        rc = deny_all(ctx);
    if (rc == 0)
        rc = deny_ioctls(ctx);
    if (rc == 0)
        rc = deny_namespace_clones(ctx);
    if (rc == 0)
        rc = limit_personality(ctx);
    if (rc == 0)
        rc = deny_setid_modes(ctx);
    if (rc == 0)
        rc = limit_prlimit(ctx);
    if (rc == 0 && no_memfd)
        rc = deny_uncounted_memory(ctx);
    if (rc < 0) {
        seccomp_release(ctx);
        *err = rc;
        return NULL;
    }
    return ctx;
}

unsigned mxc_seccomp_known_limit(void)
{
    unsigned top = 0;
    uint32_t arch = seccomp_arch_native();
    for (int nr = 0; nr < 4096; nr++) {
        char *name = seccomp_syscall_resolve_num_arch(arch, nr);
        if (name) {
            top = (unsigned)nr + 1;
            free(name);
        }
    }
    return top;
}

size_t mxc_seccomp_prologue(struct sock_filter out[MXC_SECCOMP_PROLOGUE_LEN], unsigned limit)
{
    /* nr >= limit and not an x32 number (bit 30; those reach the
     * bad-arch action of the main program) -> ENOSYS; else fall through
     * to the main program, which starts by checking the architecture.
     * i386 numbers above the limit also get ENOSYS here: harmless, the
     * main program would kill them. */
    const struct sock_filter p[MXC_SECCOMP_PROLOGUE_LEN] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, limit, 0, 2),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
    };
    memcpy(out, p, sizeof p);
    return MXC_SECCOMP_PROLOGUE_LEN;
}
