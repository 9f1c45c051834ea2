/* seccomp_filter.c — loading the workload's system-call filter.
 * Owns: installing the BPF program that tools/gen_seccomp.c compiled from
 * seccomp_rules.c at build time.  Compiling with libseccomp on every exec
 * cost ~0.3 ms here; the program is the same every time, so it is built
 * once.  Loaded last in mxc_harden_self; it survives execve and covers
 * every later thread (TSYNC). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harden.h"
#include "seccomp_bpf.h"

int mxc_seccomp_apply(bool no_memfd)
{
    struct sock_fprog prog = {
        .len = no_memfd ? (unsigned short)(sizeof mxc_seccomp_bpf_no_memfd / sizeof mxc_seccomp_bpf_no_memfd[0])
                        : (unsigned short)(sizeof mxc_seccomp_bpf / sizeof mxc_seccomp_bpf[0]),
        .filter = (struct sock_filter *)(no_memfd ? mxc_seccomp_bpf_no_memfd : mxc_seccomp_bpf),
    };
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
        return errno ? -errno : -EINVAL;
    return 0;
}
