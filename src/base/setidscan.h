/* setidscan.h — the privileged files of a writable tree made read-only.
 * Owns: finding, by descriptor, every regular file beneath a directory that
 * carries a privilege on the host — S_ISUID, S_ISGID with group execute, or
 * a security.capability xattr — in every mount of the tree the workload can
 * write, and binding each onto itself read-only, nosuid, nodev.  Why: the
 * kernel clears set-id bits and file capabilities on write(2), truncate and
 * chown, never on a page-fault write through a shared writable mmap, and an
 * idmapped read-write tree makes a root-owned (or another user's) set-id
 * file the workload's to open for write.  As a mount point, the file also
 * cannot be unlinked or renamed (EBUSY) nor hard-linked (EXDEV) from inside.
 * Run before the workload exists (the engine's view, mxc-oci's rootfs).
 * Base layer: no engine header. */
#ifndef MXC_SETIDSCAN_H
#define MXC_SETIDSCAN_H

#include <stddef.h>
#include <stdint.h>

/* Deeper than this many directories below the start is refused (-ELOOP): nothing is left unwalked. */
#define MXC_SETID_MAX_DEPTH 512

typedef struct {
    uint64_t *ids; /* mounts already walked from their root (so a nested grant is walked once) */
    size_t n, cap;
    char **found;  /* one walk's privileged files, relative to its start */
    size_t nfound, capfound;
    char rel[4096]; /* the directory being walked, relative to the start */
    size_t len, overflow; /* overflow: directories below the one whose name did not fit in rel */
    size_t dirs, files, bound; /* what the walks saw and bound */
} mxc_setid_scan;

/* Walks fd (a directory, or a regular file: then only it) and binds every
 * privileged regular file in it onto itself read-only, after pinning every
 * directory on its way (a copy of the directory bound onto itself: a mount
 * point cannot be renamed from inside, so another view of the same tree —
 * a second sandbox of a shared grant — cannot move a privileged file out
 * of the way of this walk while it runs; whatever has pins cannot move
 * one either).  Never follows a symlink; enters a mount below only when it
 * is writable and not walked already; a directory the caller cannot open
 * (EACCES: neither could the workload, whose credentials are no stronger)
 * is left.  0, or -errno (the tree may be left partly bound: the caller
 * fails the start).  A privileged file whose path is beyond 4095 bytes is
 * -ENAMETOOLONG. */
int mxc_setid_pin(int fd, mxc_setid_scan *s);
void mxc_setid_scan_free(mxc_setid_scan *s);

#endif
