/* seccomp_rules.h — the workload's system-call policy, as libseccomp rules.
 * Owns: which calls are denied and with what errno.  Compiled to BPF once,
 * at build time (tools/gen_seccomp.c -> seccomp_bpf.h), not per exec: the
 * runtime loads the finished program (seccomp_filter.c).  The unit test
 * test_seccomp recompiles these rules and checks the embedded program is
 * byte-for-byte what libseccomp produces. */
#ifndef MXC_SECCOMP_RULES_H
#define MXC_SECCOMP_RULES_H

#include <linux/filter.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>

/* A new libseccomp context holding every rule (caller releases), or NULL
 * with *err set to a negative errno.  no_memfd: also refuse memfd_create
 * (EPERM) and SysV shmget/msgget/semget (ENOSYS) — the variant for
 * sandboxes whose memory only RLIMIT_AS bounds (no memory cgroup), since
 * pages written into a memfd, and SysV segments and queues (held by the IPC
 * namespace, resident after every process detached), are counted by no
 * rlimit. */
scmp_filter_ctx mxc_seccomp_rules(bool no_memfd, int *err);

/* One past the highest system-call number this libseccomp knows for the
 * native architecture: what the build can name, it can judge. */
unsigned mxc_seccomp_known_limit(void);

/* The program's first instructions: any call numbered >= limit (a call
 * newer than the build's syscall table, e.g. one a later kernel adds) is
 * refused with ENOSYS — the answer of a kernel that lacks it, which
 * programs handle — instead of being allowed until someone lists it. */
#define MXC_SECCOMP_PROLOGUE_LEN 4
size_t mxc_seccomp_prologue(struct sock_filter out[MXC_SECCOMP_PROLOGUE_LEN], unsigned limit);

#endif
