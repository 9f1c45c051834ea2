/* seccomp_rules.h — the workload's system-call policy, as libseccomp rules.
 * Owns: which calls are denied and with what errno.  Compiled to BPF once,
 * at build time (tools/gen_seccomp.c -> seccomp_bpf.h), not per exec: the
 * runtime loads the finished program (seccomp_filter.c).  The unit test
 * test_seccomp recompiles these rules and checks the embedded program is
 * byte-for-byte what libseccomp produces. */
#ifndef MXC_SECCOMP_RULES_H
#define MXC_SECCOMP_RULES_H

#include <seccomp.h>

/* A new libseccomp context holding every rule (caller releases), or NULL
 * with *err set to a negative errno. */
scmp_filter_ctx mxc_seccomp_rules(int *err);

#endif
