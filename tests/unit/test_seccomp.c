/* test_seccomp.c — the seccomp program embedded at build time is exactly
 * what libseccomp compiles from seccomp_rules.c now (no stale copy), and
 * it is a real filter: it checks the architecture before anything else and
 * ends in a return; and what it decides, run here through a small classic
 * BPF interpreter on made-up seccomp_data: a foreign architecture (i386's
 * int 0x80, which this guest cannot even execute) is killed, x32 never
 * allowed, the refusals are the errnos we promise. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "seccomp_bpf.h"
#include "seccomp_rules.h"

static void same_as_fresh(bool no_memfd, const struct sock_filter *embedded, size_t size)
{
    int err = 0;
    scmp_filter_ctx ctx = mxc_seccomp_rules(no_memfd, &err);
    CHECK(ctx != NULL);
    int mfd = memfd_create("bpf", MFD_CLOEXEC);
    CHECK_INT_EQ(seccomp_export_bpf(ctx, mfd), 0);
    seccomp_release(ctx);
    off_t len = lseek(mfd, 0, SEEK_END);
    const size_t pl = MXC_SECCOMP_PROLOGUE_LEN * sizeof(struct sock_filter);
    struct sock_filter *fresh = malloc(pl + (size_t)len);
    mxc_seccomp_prologue(fresh, mxc_seccomp_known_limit());
    CHECK(pread(mfd, fresh + MXC_SECCOMP_PROLOGUE_LEN, (size_t)len, 0) == len);
    CHECK_MSG((size_t)len + pl == size && memcmp(fresh, embedded, size) == 0,
              "the embedded program (no_memfd=%d) differs from a fresh compile: rebuild seccomp_bpf.h", no_memfd);
    free(fresh);
    close(mfd);
}


/* Classic BPF as seccomp runs it (the instructions libseccomp emits and a
 * few more); an instruction outside that set fails the test. */
static uint32_t run_filter(const struct sock_filter *prog, size_t n, const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
    for (size_t pc = 0; pc < n; pc++) {
        const struct sock_filter *f = &prog[pc];
        uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
        switch (BPF_CLASS(f->code)) {
        case BPF_LD:
            if (BPF_MODE(f->code) == BPF_ABS && BPF_SIZE(f->code) == BPF_W && f->k + 4 <= sizeof *d && f->k % 4 == 0)
                memcpy(&a, (const char *)d + f->k, 4);
            else if (BPF_MODE(f->code) == BPF_IMM)
                a = f->k;
            else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
                a = mem[f->k];
            else
                goto bad;
            break;
        case BPF_LDX:
            if (BPF_MODE(f->code) == BPF_IMM)
                x = f->k;
            else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
                x = mem[f->k];
            else
                goto bad;
            break;
        case BPF_ST:
        case BPF_STX:
            if (f->k >= BPF_MEMWORDS)
                goto bad;
            mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
            break;
        case BPF_ALU:
            switch (BPF_OP(f->code)) {
            case BPF_ADD: a += src; break;
            case BPF_SUB: a -= src; break;
            case BPF_AND: a &= src; break;
            case BPF_OR: a |= src; break;
            case BPF_XOR: a ^= src; break;
            case BPF_LSH: a = src < 32 ? a << src : 0; break;
            case BPF_RSH: a = src < 32 ? a >> src : 0; break;
            case BPF_NEG: a = -a; break;
            default: goto bad;
            }
            break;
        case BPF_JMP: {
            bool t;
            switch (BPF_OP(f->code)) {
            case BPF_JA: pc += f->k; continue;
            case BPF_JEQ: t = a == src; break;
            case BPF_JGT: t = a > src; break;
            case BPF_JGE: t = a >= src; break;
            case BPF_JSET: t = (a & src) != 0; break;
            default: goto bad;
            }
            pc += t ? f->jt : f->jf;
            break;
        }
        case BPF_RET:
            return BPF_RVAL(f->code) == BPF_A ? a : f->k;
        case BPF_MISC:
            if (BPF_MISCOP(f->code) == BPF_TAX)
                x = a;
            else
                a = x;
            break;
        default:
            goto bad;
        }
    }
bad:
    CHECK_MSG(0, "the filter ran off its end or used an instruction this test does not know");
    return 0;
}

static uint32_t decide(const struct sock_filter *prog, size_t n, uint32_t arch, int nr, uint64_t a0, uint64_t a1)
{
    struct seccomp_data d;
    memset(&d, 0, sizeof d);
    d.arch = arch;
    d.nr = nr;
    d.args[0] = a0;
    d.args[1] = a1;
    return run_filter(prog, n, &d);
}

#define ERRNO_OF(e) (SECCOMP_RET_ERRNO | (e))

static void decisions(const struct sock_filter *prog, size_t n, bool no_memfd)
{
#if defined(__x86_64__)
    const uint32_t native = AUDIT_ARCH_X86_64;
    /* foreign ABIs: i386 (int 0x80 from a 64-bit process) and others are killed, x32 never allowed */
    CHECK_INT_EQ(decide(prog, n, AUDIT_ARCH_I386, 20 /* getpid */, 0, 0), SECCOMP_RET_KILL_PROCESS);
    CHECK_INT_EQ(decide(prog, n, AUDIT_ARCH_I386, 21 /* mount */, 0, 0), SECCOMP_RET_KILL_PROCESS);
    CHECK_INT_EQ(decide(prog, n, AUDIT_ARCH_AARCH64, 172 /* getpid */, 0, 0), SECCOMP_RET_KILL_PROCESS);
    uint32_t x32 = decide(prog, n, native, 39 | 0x40000000, 0, 0);
    CHECK_MSG(x32 != SECCOMP_RET_ALLOW, "x32 getpid allowed: %#x", x32);
    uint32_t x32_mount = decide(prog, n, native, SYS_mount | 0x40000000, 0, 0);
    CHECK_MSG(x32_mount != SECCOMP_RET_ALLOW, "x32 mount allowed: %#x", x32_mount);
    /* native: what a workload needs runs, what it must not is refused with the promised errno */
    CHECK_INT_EQ(decide(prog, n, native, SYS_getpid, 0, 0), SECCOMP_RET_ALLOW);
    CHECK_INT_EQ(decide(prog, n, native, SYS_ioctl, 0, TCGETS), SECCOMP_RET_ALLOW);
    CHECK_INT_EQ(decide(prog, n, native, SYS_ioctl, 0, TIOCSTI), ERRNO_OF(EPERM));
    CHECK_INT_EQ(decide(prog, n, native, SYS_ioctl, 0, TIOCSTI | 0x100000000ULL), ERRNO_OF(EPERM));
    CHECK_INT_EQ(decide(prog, n, native, SYS_mount, 0, 0), ERRNO_OF(EPERM));
    CHECK_INT_EQ(decide(prog, n, native, SYS_keyctl, 0, 0), ERRNO_OF(EPERM));
    CHECK_INT_EQ(decide(prog, n, native, SYS_bpf, 0, 0), ERRNO_OF(EPERM));
    CHECK_INT_EQ(decide(prog, n, native, SYS_unshare, CLONE_NEWUSER, 0), ERRNO_OF(EPERM));
    CHECK_INT_EQ(decide(prog, n, native, SYS_clone3, 0, 0), ERRNO_OF(ENOSYS));
    CHECK_INT_EQ(decide(prog, n, native, 1023, 0, 0), ERRNO_OF(ENOSYS));
    CHECK_INT_EQ(decide(prog, n, native, MXC_SECCOMP_KNOWN_LIMIT, 0, 0), ERRNO_OF(ENOSYS));
    uint32_t memfd = decide(prog, n, native, SYS_memfd_create, 0, 0);
    CHECK_MSG(no_memfd ? memfd != SECCOMP_RET_ALLOW : memfd == SECCOMP_RET_ALLOW, "memfd_create: %#x (no_memfd=%d)",
              memfd, no_memfd);
#else
    (void)prog, (void)n, (void)no_memfd;
#endif
}

int main(void)
{
    same_as_fresh(true, mxc_seccomp_bpf_no_memfd, sizeof mxc_seccomp_bpf_no_memfd);
    CHECK(sizeof mxc_seccomp_bpf_no_memfd > sizeof mxc_seccomp_bpf);
    int err = 0;
    scmp_filter_ctx ctx = mxc_seccomp_rules(false, &err);
    CHECK(ctx != NULL);
    int mfd = memfd_create("bpf", MFD_CLOEXEC);
    CHECK(mfd >= 0);
    CHECK_INT_EQ(seccomp_export_bpf(ctx, mfd), 0);
    seccomp_release(ctx);
    off_t len = lseek(mfd, 0, SEEK_END);
    const size_t pl = MXC_SECCOMP_PROLOGUE_LEN * sizeof(struct sock_filter);
    CHECK_INT_EQ((size_t)len + pl, sizeof mxc_seccomp_bpf);
    struct sock_filter *fresh = malloc(pl + (size_t)len);
    CHECK(fresh != NULL);
    unsigned limit = mxc_seccomp_known_limit();
    CHECK_INT_EQ(limit, MXC_SECCOMP_KNOWN_LIMIT);
    CHECK(limit > 400); /* x86_64 with libseccomp 2.5: up to set_mempolicy_home_node (450) */
    CHECK_INT_EQ(mxc_seccomp_prologue(fresh, limit), MXC_SECCOMP_PROLOGUE_LEN);
    CHECK(pread(mfd, fresh + MXC_SECCOMP_PROLOGUE_LEN, (size_t)len, 0) == len);
    CHECK_MSG((size_t)len + pl == sizeof mxc_seccomp_bpf && memcmp(fresh, mxc_seccomp_bpf, sizeof mxc_seccomp_bpf) == 0,
              "the embedded program differs from a fresh compile: rebuild seccomp_bpf.h");
    /* the prologue: nr >= limit (not x32) -> ENOSYS */
    CHECK_INT_EQ(mxc_seccomp_bpf[0].k, offsetof(struct seccomp_data, nr));
    CHECK_INT_EQ(mxc_seccomp_bpf[1].k, limit);
    CHECK_INT_EQ(mxc_seccomp_bpf[3].k, SECCOMP_RET_ERRNO | ENOSYS);
    /* then libseccomp's program, which loads seccomp_data.arch first */
    CHECK_INT_EQ(mxc_seccomp_bpf[4].code, BPF_LD | BPF_W | BPF_ABS);
    CHECK_INT_EQ(mxc_seccomp_bpf[4].k, offsetof(struct seccomp_data, arch));
    size_t n = sizeof mxc_seccomp_bpf / sizeof mxc_seccomp_bpf[0];
    CHECK_INT_EQ(BPF_CLASS(mxc_seccomp_bpf[n - 1].code), BPF_RET);
    /* the filter returns ERRNO for something and KILL_PROCESS for a bad arch */
    int errno_rets = 0, kills = 0;
    for (size_t i = 0; i < n; i++)
        if (BPF_CLASS(mxc_seccomp_bpf[i].code) == BPF_RET) {
            errno_rets += (mxc_seccomp_bpf[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO;
            kills += mxc_seccomp_bpf[i].k == SECCOMP_RET_KILL_PROCESS;
        }
    CHECK(errno_rets > 0);
    CHECK(kills > 0);
    decisions(mxc_seccomp_bpf, n, false);
    decisions(mxc_seccomp_bpf_no_memfd, sizeof mxc_seccomp_bpf_no_memfd / sizeof mxc_seccomp_bpf_no_memfd[0], true);
    free(fresh);
    close(mfd);
    return CHECK_DONE();
}
