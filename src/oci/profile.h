/* profile.h — a config's linux.seccomp, compiled.
 * Owns: checking the profile (actions, operators, flags, architectures:
 * a wrong type or an unknown value refused naming the field; the flag that
 * turns off speculative-store-bypass mitigation refused; SCMP_ACT_NOTIFY
 * only with an absolute listenerPath, never as the default action nor on
 * the calls that hand the listener over: write, sendmsg), compiling it with
 * libseccomp in the caller (host side) to a BPF program the container's
 * process loads with one system call, after the engine's baseline: the two
 * filters stack and the kernel takes the stricter answer of each call.
 * Syscall names this libseccomp does not know are skipped, as runc and crun
 * do. */
#ifndef MXC_OCI_PROFILE_H
#define MXC_OCI_PROFILE_H

#include <jansson.h>
#include <linux/filter.h>
#include <stdbool.h>

#include "error.h"

typedef struct {
    struct sock_filter *insns; /* NULL: no profile */
    unsigned short len;
    bool log;                  /* SECCOMP_FILTER_FLAG_LOG */
} oci_seccomp;

/* seccomp NULL or null: out->insns NULL. */
int oci_seccomp_compile(json_t *seccomp, oci_seccomp *out, mxc_error *e);
void oci_seccomp_free(oci_seccomp *s);
/* The program answers some call SCMP_ACT_NOTIFY (a seccomp agent's). */
bool oci_seccomp_notifies(const oci_seccomp *s);
/* In the container's process (no_new_privs set): 0, -errno, or when the
 * program notifies, the filter's listener (> 0, close-on-exec: the
 * caller hands it to mxc-oci, src/oci/notify.h, and closes it). */
int oci_seccomp_load(const oci_seccomp *s);

#endif
