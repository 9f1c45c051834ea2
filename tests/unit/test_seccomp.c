/* test_seccomp.c — the seccomp program embedded at build time is exactly
 * what libseccomp compiles from seccomp_rules.c now (no stale copy), and
 * it is a real filter: it checks the architecture before anything else and
 * ends in a return. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
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
    free(fresh);
    close(mfd);
    return CHECK_DONE();
}
