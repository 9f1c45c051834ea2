/* quota.c — see quota.h. */
#include "quota.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/dqblk_xfs.h>
#include <linux/quota.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd 443
#endif

static long quotactl_fd(int fd, unsigned cmd, unsigned id, void *addr)
{
    return syscall(SYS_quotactl_fd, fd, cmd, id, addr);
}

int mxc_quota_requested(unsigned long long *bytes, mxc_error *e)
{
    *bytes = 0;
    const char *v = getenv("MXC_WORKSPACE_MAX");
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10, end++; break;
    case 'm': case 'M': shift = 20, end++; break;
    case 'g': case 'G': shift = 30, end++; break;
    case 't': case 'T': shift = 40, end++; break;
    default: break;
    }
    if (end == v || *end || errno || v[0] == '-' || (shift && n > (~0ull >> shift)))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "MXC_WORKSPACE_MAX=%.40s is not a size (bytes, or with K, M, G or T)",
                       v);
    *bytes = n << shift;
    return 0;
}

/* An fd on dir's filesystem: dir, else its nearest existing ancestor. */
static int fs_fd(const char *dir)
{
    char buf[700];
    snprintf(buf, sizeof buf, "%s", dir);
    for (;;) {
        int fd = open(buf[0] ? buf : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT)
            return fd;
        char *slash = strrchr(buf, '/');
        if (!slash)
            return -1;
        *slash = '\0';
    }
}

bool mxc_quota_available(const char *dir, char *reason, size_t reasonsz)
{
    if (geteuid() != 0) {
        snprintf(reason, reasonsz, "rootless: a project quota's limit can only be set with CAP_SYS_ADMIN");
        return false;
    }
    int fd = fs_fd(dir);
    if (fd < 0) {
        snprintf(reason, reasonsz, "the workspace root %s cannot be opened: %s", dir, strerror(errno));
        return false;
    }
    struct fs_quota_statv st;
    memset(&st, 0, sizeof st);
    st.qs_version = FS_QSTATV_VERSION1;
    long rc = quotactl_fd(fd, QCMD(Q_XGETQSTATV, PRJQUOTA), 0, &st);
    int err = errno;
    close(fd);
    if (rc < 0) {
        if (err == ENOSYS)
            snprintf(reason, reasonsz, "the kernel has no quotactl_fd (built without quota support, or older than Linux 5.14)");
        else
            snprintf(reason, reasonsz, "the filesystem of the workspace root %s has no project quota (%s); it needs "
                     "one enforced (ext4 with prjquota, XFS with pquota), which mxc does not set up", dir,
                     strerror(err));
        return false;
    }
    if (!(st.qs_flags & FS_QUOTA_PDQ_ENFD)) {
        snprintf(reason, reasonsz, "project quota on the filesystem of %s is accounted but not enforced", dir);
        return false;
    }
    snprintf(reason, reasonsz, "project quota on the filesystem of %s (project id = the sandbox's uid)", dir);
    return true;
}

int mxc_quota_require(const char *dir, mxc_error *e)
{
    char why[400];
    if (mxc_quota_available(dir, why, sizeof why))
        return 0;
    mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "MXC_WORKSPACE_MAX asks for a workspace size limit, which this host cannot "
            "enforce: %s", why);
    mxc_err_set_remediation(e, "unset MXC_WORKSPACE_MAX, or put MXC_WORKSPACE_ROOT on a filesystem with project "
                               "quota enforced");
    return -1;
}

static int set_limit(int fd, unsigned project, unsigned long long bytes)
{
    struct if_dqblk q;
    memset(&q, 0, sizeof q);
    q.dqb_bhardlimit = q.dqb_bsoftlimit = (bytes + QIF_DQBLKSIZE - 1) / QIF_DQBLKSIZE;
    q.dqb_valid = QIF_BLIMITS;
    return quotactl_fd(fd, QCMD(Q_SETQUOTA, PRJQUOTA), project, &q) < 0 ? -errno : 0;
}

int mxc_quota_apply(const char *workspace, unsigned project, unsigned long long bytes, mxc_error *e)
{
    int fd = open(workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "quota.open", errno, NULL, "cannot open the workspace");
    struct fsxattr fx;
    int rc = ioctl(fd, FS_IOC_FSGETXATTR, &fx) < 0 ? -errno : 0;
    if (rc == 0) {
        fx.fsx_projid = project;
        fx.fsx_xflags |= FS_XFLAG_PROJINHERIT;
        rc = ioctl(fd, FS_IOC_FSSETXATTR, &fx) < 0 ? -errno : 0;
    }
    if (rc == 0)
        rc = set_limit(fd, project, bytes);
    close(fd);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "quota.set", -rc, NULL, "cannot limit the workspace to %llu bytes",
                          bytes);
    return 0;
}

void mxc_quota_clear(const char *workspace, unsigned project)
{
    int fd = fs_fd(workspace);
    if (fd < 0)
        return;
    set_limit(fd, project, 0);
    close(fd);
}
