/* viewops.h — what every filesystem view of mxc shares, the engine's
 * sandbox view (fsview.c) and mxc-oci's container root (src/oci/init.c).
 * Owns: the /proc rules (the kernel-wide knobs made read-only, the kernel
 * memory, key, timer and allocator listings masked: one list, applied by
 * both), and the mount operations both apply by descriptor: a new detached
 * filesystem (fsopen, fsconfig, fsmount), a detached clone of a tree with
 * its attributes set (idmapped, read-only...), attaching a detached tree onto a
 * target, and a read-only copy of the tree at a target
 * put over it; the user namespace an idmapped mount takes (MOUNT_ATTR_IDMAP),
 * made with the maps asked.  Base layer: no engine header. */
#ifndef MXC_VIEWOPS_H
#define MXC_VIEWOPS_H

#include <stddef.h>
#include <sys/types.h>

struct mount_attr;

#define MXC_PROC_NREADONLY 5
#define MXC_PROC_NMASKED 12
/* Absolute paths; one absent on this kernel is skipped by every user. */
extern const char *const mxc_proc_readonly[MXC_PROC_NREADONLY];
extern const char *const mxc_proc_masked[MXC_PROC_NMASKED];

/* A new filesystem of type, detached, with opts (key, value pairs, NULL
 * ended; a NULL value: a flag) and attrs (MOUNT_ATTR_*): its mount fd, or
 * -errno. */
int mxc_view_new_fs(const char *type, const char *const *opts, unsigned attrs);

/* A detached clone of the mount at path under dirfd (open_tree's flags
 * besides OPEN_TREE_CLONE: AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW, AT_RECURSIVE:
 * the mounts below too), attr set on it (on all of it when recursive)
 * before anyone sees it: its fd, or -errno. */
int mxc_view_clone(int dirfd, const char *path, unsigned flags, const struct mount_attr *attr);

/* move_mount of the detached tree onto target (both descriptors, neither
 * closed).  0 or -errno. */
int mxc_view_attach(int tree, int target);

/* The mount tree at target, cloned (recursively), made read-only with
 * attrs besides (MOUNT_ATTR_*; recursively), and attached over target: the
 * object stays readable at its path and every mount below it stays put.
 * 0 or -errno. */
int mxc_view_readonly_at(int target, unsigned long long attrs);

/* A user namespace with these maps (uid_map and gid_map as /proc/PID/uid_map
 * takes them, "inside outside count" lines): a child born in a new one waits
 * on a pipe while the caller writes its maps and opens its ns file, then
 * exits (only system calls in the child: safe in a threaded caller).  The
 * namespace's descriptor, or -errno. */
int mxc_userns_with_maps(const char *uid_map, const char *gid_map);
/* text written whole to /proc/PID/file (uid_map, gid_map): 0 or -errno. */
int mxc_write_proc(pid_t pid, const char *file, const char *text);

#endif
