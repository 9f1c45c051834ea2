/* apparmor.c — see apparmor.h. */
#include "apparmor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

bool oci_apparmor_enabled(int root_fd)
{
    struct stat st;
    if (fstatat(root_fd, "sys/kernel/security/apparmor", &st, 0) < 0)
        return false;
    int fd = openat(root_fd, "sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char c = 0;
    ssize_t n = read(fd, &c, 1);
    close(fd);
    return n == 1 && c == 'Y';
}

int oci_apparmor_name_check(const char *name, const char *field, mxc_error *e)
{
    size_t n = strlen(name);
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s: a profile name of printable characters (a control "
                           "character at %zu)", field, i);
    if (n > 4095)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s: a profile name of at most 4095 characters", field);
    return 0;
}

int oci_apparmor_usable(const char *profile, const char *field, mxc_error *e)
{
    if (!profile || !*profile)
        return 0;
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    bool on = root >= 0 && oci_apparmor_enabled(root);
    if (root >= 0)
        close(root);
    if (on)
        return 0;
    mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "%s \"%.200s\": this kernel has no AppArmor enabled "
            "(/sys/module/apparmor/parameters/enabled is not \"Y\"): the profile cannot be applied, and a profile "
            "asked for is never dropped (runc fails the same way: its write of /proc/self/attr/exec is refused)",
            field, profile);
    mxc_err_set_remediation(e, "leave process.apparmorProfile out on a node without AppArmor (containerd's CRI "
                            "sets it only where AppArmor is enabled), or enable AppArmor in the kernel");
    return -1;
}

int oci_apparmor_proc(const char *op, mxc_error *e)
{
    int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, op, errno, NULL, "process.apparmorProfile: the host's /proc");
    struct statfs sfs;
    if (fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
        return fd;
    close(fd);
    return mxc_err_os(e, MXC_E_BACKEND_ERROR, op, EXDEV, NULL, "process.apparmorProfile: the host's /proc");
}

static int open_beneath(int dir, const char *path)
{
    struct open_how how = {.flags = O_WRONLY | O_CLOEXEC | O_NOCTTY,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    int fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

int oci_apparmor_attr_open(int proc_fd, const char *profile, mxc_error *e)
{
    int fd = open_beneath(proc_fd, "thread-self/attr/apparmor/exec");
    if (fd == -ENOENT) /* before Linux 5.8: the first LSM's attr/exec (runc's fallback) */
        fd = open_beneath(proc_fd, "thread-self/attr/exec");
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.init", -fd, NULL,
                          "process.apparmorProfile \"%s\": opening the AppArmor exec attribute in the host's /proc",
                          profile);
    return fd;
}

int oci_apparmor_exec_write(int attr_fd, const char *profile, mxc_error *e)
{
    char buf[4096 + 8];
    int len = snprintf(buf, sizeof buf, "exec %s", profile);
    int err = ENAMETOOLONG;
    if (len >= 0 && (size_t)len < sizeof buf) {
        ssize_t n = write(attr_fd, buf, (size_t)len);
        err = n < 0 ? errno : n != len ? EIO : 0;
    }
    if (err)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.init", err, NULL,
                          "process.apparmorProfile \"%s\": writing the AppArmor exec attribute", profile);
    return 0;
}
