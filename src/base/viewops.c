/* viewops.c — see viewops.h. */
#include "viewops.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const mxc_proc_readonly[MXC_PROC_NREADONLY] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
                                                           "/proc/bus", "/proc/fs"};

/* World-readable leaks of kernel addresses, timers and keys, and the root-only memory listings
 * (which permissions already refuse to a sandbox's uid: masked all the same, in case a host
 * loosens them). */
const char *const mxc_proc_masked[MXC_PROC_NMASKED] = {
    "/proc/kcore",     "/proc/keys",    "/proc/key-users", "/proc/timer_list",  "/proc/sched_debug",
    "/proc/kallsyms",  "/proc/kmsg",    "/proc/acpi",      "/proc/scsi",        "/proc/slabinfo",
    "/proc/vmallocinfo", "/proc/pagetypeinfo"};

int mxc_view_new_fs(const char *type, const char *const *opts, unsigned attrs)
{
    int fs = fsopen(type, FSOPEN_CLOEXEC);
    if (fs < 0)
        return -errno;
    int rc = 0;
    for (size_t i = 0; opts && opts[i] && rc == 0; i += 2)
        if (fsconfig(fs, opts[i + 1] ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, opts[i], opts[i + 1], 0) < 0)
            rc = -errno;
    if (rc == 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        rc = -errno;
    int m = rc == 0 ? fsmount(fs, FSMOUNT_CLOEXEC, attrs) : -1;
    if (rc == 0 && m < 0)
        rc = -errno;
    close(fs);
    return rc < 0 ? rc : m;
}

int mxc_view_clone(int dirfd, const char *path, unsigned flags, const struct mount_attr *attr)
{
    int tree = open_tree(dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | flags);
    if (tree < 0)
        return -errno;
    if (mount_setattr(tree, "", AT_EMPTY_PATH | (flags & AT_RECURSIVE), (struct mount_attr *)attr, sizeof *attr) < 0) {
        int err = errno;
        close(tree);
        return -err;
    }
    return tree;
}

int mxc_view_attach(int tree, int target)
{
    return move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ? -errno : 0;
}

int mxc_view_readonly_at(int target, unsigned long long attrs)
{
    int tree = open_tree(target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (tree < 0)
        return -errno;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | attrs};
    int rc = mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0 ? -errno : 0;
    if (rc == 0)
        rc = mxc_view_attach(tree, target);
    close(tree);
    return rc;
}

int mxc_write_proc(pid_t pid, const char *file, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int rc = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
    close(fd);
    return rc;
}

int mxc_userns_with_maps(const char *uid_map, const char *gid_map)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    pid_t child = (pid_t)syscall(SYS_clone, (unsigned long)CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
    if (child == 0) {
        char b;
        close(p[1]);
        (void)!read(p[0], &b, 1);
        _exit(0);
    }
    close(p[0]);
    if (child < 0) {
        int err = errno;
        close(p[1]);
        return -err;
    }
    char path[64];
    int rc = mxc_write_proc(child, "uid_map", uid_map);
    if (rc == 0)
        rc = mxc_write_proc(child, "gid_map", gid_map);
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)child);
    int fd = rc == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (rc == 0 && fd < 0)
        rc = -errno;
    close(p[1]); /* the child exits */
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    return rc < 0 ? rc : fd;
}
