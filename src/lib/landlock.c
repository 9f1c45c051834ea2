/* landlock.c — Landlock rules mirroring the filesystem view.
 * Owns: building the ruleset from the plan (system directories read-only,
 * /dev, /tmp and the workspace read-write, grants as granted) and scoping
 * signals and abstract unix sockets (ABI 6).  The mount view is the first
 * enforcement; this is the second, so a mount mistake alone is not an
 * escape.  Never degrades silently: the caller refuses when the ABI is
 * below MXC_LANDLOCK_ABI_NEEDED, and the host network below
 * MXC_LANDLOCK_ABI_SCOPE (the scope is what keeps it out of the host's
 * abstract unix sockets). */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fault.h"
#include "harden.h"

/* Debian 12's uapi headers stop at ABI 2; the values are kernel ABI. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

struct ruleset_attr_v6 {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

int mxc_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

/* The ABI the refusals below judge: the kernel's, or lower under fault
 * injection (tests/faults: MXC_FAULT_LANDLOCK_ABI), which can only make
 * mxc refuse — the rules applied always follow the kernel's own ABI. */
static int abi_for_require(void)
{
    int abi = mxc_landlock_abi();
    const char *f = mxc_fault("LANDLOCK_ABI");
    if (f && *f && atoi(f) >= 0 && atoi(f) < abi)
        abi = atoi(f);
    return abi;
}

int mxc_landlock_require_scope(mxc_error *e)
{
    int abi = abi_for_require();
    if (abi >= MXC_LANDLOCK_ABI_SCOPE)
        return 0;
    mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
            "the host network cannot be given on this kernel: its Landlock ABI is %d, and only ABI %d scopes "
            "abstract unix sockets, which the host network would otherwise share with the host",
            abi, MXC_LANDLOCK_ABI_SCOPE);
    mxc_err_set_remediation(e, "boot a kernel >= 6.12, or give the sandbox its own network (any network policy "
                               "other than allow-all with local network)");
    return -1;
}

int mxc_landlock_require(mxc_error *e)
{
    int abi = abi_for_require();
    if (abi >= MXC_LANDLOCK_ABI_NEEDED)
        return 0;
    mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "this kernel's Landlock ABI is %d; mxc needs %d or newer", abi,
            MXC_LANDLOCK_ABI_NEEDED);
    mxc_err_set_remediation(e, "boot a kernel >= 6.2 with Landlock enabled (lsm=landlock,...)");
    return -1;
}

#define FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_WRITE_V1                                                                                     \
    (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |   \
     LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |         \
     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |      \
     LANDLOCK_ACCESS_FS_MAKE_SYM)

static uint64_t handled_fs(int abi)
{
    uint64_t h = FS_READ | FS_WRITE_V1;
    if (abi >= 2)
        h |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        h |= LANDLOCK_ACCESS_FS_TRUNCATE;
#ifdef LANDLOCK_ACCESS_FS_IOCTL_DEV
    if (abi >= 5)
        h |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
#endif
    return h;
}

/* The rule's directory is opened without following any symlink: a name
 * the workload of an earlier exec replaced by a link (say to "/") must not
 * widen this exec's rules.  Absent, or reached only through a link: no
 * rule, which is the safe direction. */
static int add_path(int ruleset, const char *path, uint64_t access, uint64_t handled)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0)
        return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? 0 : -errno;
    struct landlock_path_beneath_attr attr = {.allowed_access = access & handled, .parent_fd = fd};
    long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
    if (rc < 0 && errno == EINVAL) { /* a file takes only file rights */
        attr.allowed_access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
                               LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE
#ifdef LANDLOCK_ACCESS_FS_IOCTL_DEV
                               | LANDLOCK_ACCESS_FS_IOCTL_DEV
#endif
            ;
        rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
    }
    int err = errno;
    close(fd);
    return rc < 0 ? -err : 0;
}

int mxc_landlock_apply(const mxc_plan *p, const char **stage)
{
    int abi = mxc_landlock_abi();
    *stage = "landlock.create_ruleset";
    if (abi < MXC_LANDLOCK_ABI_NEEDED)
        return -EOPNOTSUPP;
    uint64_t handled = handled_fs(abi);
    struct ruleset_attr_v6 attr = {.handled_access_fs = handled};
    size_t size = sizeof(uint64_t) * (abi >= 6 ? 3 : abi >= 4 ? 2 : 1);
    if (abi >= 6)
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0)
        return -errno;
    uint64_t all = handled, ro = FS_READ;
    uint64_t rw = all;
#ifdef LANDLOCK_ACCESS_FS_IOCTL_DEV
    rw &= ~(uint64_t)LANDLOCK_ACCESS_FS_IOCTL_DEV; /* device ioctls only on /dev */
#endif
    const struct { const char *path; uint64_t access; } base[] = {
        {"/", LANDLOCK_ACCESS_FS_READ_DIR}, /* listing only; the mount view decides what exists */
        {"/usr", ro}, {"/bin", ro}, {"/sbin", ro}, {"/lib", ro}, {"/lib32", ro}, {"/lib64", ro},
        {"/libx32", ro}, {"/etc", ro}, {"/proc", ro | LANDLOCK_ACCESS_FS_WRITE_FILE}, {"/dev", all},
        {"/tmp", rw},
    };
    int rc = 0;
    *stage = "landlock.add_rule";
    for (size_t i = 0; rc == 0 && i < sizeof base / sizeof base[0]; i++)
        rc = add_path(rs, base[i].path, base[i].access, handled);
    if (rc == 0 && p->workspace)
        rc = add_path(rs, p->workspace, rw, handled);
    for (size_t i = 0; rc == 0 && i < p->ngrants; i++) {
        const mxc_grant *g = &p->grants[i];
        if (g->mode != MXC_GRANT_DENIED)
            rc = add_path(rs, g->path, g->mode == MXC_GRANT_RW ? rw : ro, handled);
    }
    if (rc == 0) {
        *stage = "landlock.restrict_self";
        if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
            rc = -errno;
    }
    close(rs);
    return rc;
}
