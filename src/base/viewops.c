/* viewops.c — see viewops.h. */
#include "viewops.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>
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
