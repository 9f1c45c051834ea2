/* test_seccomp.c — the seccomp program embedded at build time is exactly
 * what libseccomp compiles from seccomp_rules.c now (no stale copy), and
 * it is a real filter: it checks the architecture before anything else and
 * ends in a return. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "seccomp_bpf.h"
#include "seccomp_rules.h"

int main(void)
{
    int err = 0;
    scmp_filter_ctx ctx = mxc_seccomp_rules(&err);
    CHECK(ctx != NULL);
    int mfd = memfd_create("bpf", MFD_CLOEXEC);
    CHECK(mfd >= 0);
    CHECK_INT_EQ(seccomp_export_bpf(ctx, mfd), 0);
    seccomp_release(ctx);
    off_t len = lseek(mfd, 0, SEEK_END);
    CHECK_INT_EQ(len, (off_t)sizeof mxc_seccomp_bpf);
    struct sock_filter *fresh = malloc((size_t)len);
    CHECK(fresh && pread(mfd, fresh, (size_t)len, 0) == len);
    CHECK_MSG(len == (off_t)sizeof mxc_seccomp_bpf && memcmp(fresh, mxc_seccomp_bpf, (size_t)len) == 0,
              "the embedded program differs from a fresh compile: rebuild seccomp_bpf.h");
    /* first instruction loads seccomp_data.arch */
    CHECK_INT_EQ(mxc_seccomp_bpf[0].code, BPF_LD | BPF_W | BPF_ABS);
    CHECK_INT_EQ(mxc_seccomp_bpf[0].k, offsetof(struct seccomp_data, arch));
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
