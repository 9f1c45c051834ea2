/* viewops.h — what every filesystem view of mxc shares, the engine's
 * sandbox view (fsview.c) and mxc-oci's container root (src/oci/init.c).
 * Owns: the /proc rules (the kernel-wide knobs made read-only, the kernel
 * memory, key, timer and allocator listings masked: one list, applied by
 * both), and the mount operations both apply by descriptor: attaching a
 * detached tree onto a target, and a read-only copy of the tree at a target
 * put over it.  Base layer: no engine header. */
#ifndef MXC_VIEWOPS_H
#define MXC_VIEWOPS_H

#include <stddef.h>

#define MXC_PROC_NREADONLY 5
#define MXC_PROC_NMASKED 12
/* Absolute paths; one absent on this kernel is skipped by every user. */
extern const char *const mxc_proc_readonly[MXC_PROC_NREADONLY];
extern const char *const mxc_proc_masked[MXC_PROC_NMASKED];

/* move_mount of the detached tree onto target (both descriptors, neither
 * closed).  0 or -errno. */
int mxc_view_attach(int tree, int target);

/* The mount tree at target, cloned (recursively), made read-only with
 * attrs besides (MOUNT_ATTR_*; recursively), and attached over target: the
 * object stays readable at its path and every mount below it stays put.
 * 0 or -errno. */
int mxc_view_readonly_at(int target, unsigned long long attrs);

#endif
