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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A directory this many levels below the start is not walked: the walk that forked (not a worker)
 * binds it read-only whole by descriptor, so nothing below it is writable and nothing is left
 * unprotected; a workload's mkdir -p makes such a chain, and it never refuses a start. */
#define MXC_SETID_MAX_DEPTH 512
/* After this many files (about 4 ms) a walk is shared with up to MAX_WORKERS - 1 forked workers
 * (one per CPU this process may run on), each walking the tree again but checking only a share of
 * the directories (none the forking walk had finished) and handing back what it found; all binds
 * are made by the caller, one at a time. */
#define MXC_SETID_SHARE_AFTER 2000
#define MXC_SETID_MAX_WORKERS 4

typedef struct {
    uint64_t mnt, ino; /* a directory: the mount holding its entry, the entry's inode */
} mxc_setid_key;

typedef struct {
    uint64_t *ids; /* mounts already walked from their root (so a nested grant is walked once) */
    size_t n, cap;
    char **found;  /* one walk's privileged files, relative to its start */
    size_t nfound, capfound;
    char rel[4096]; /* the directory being walked, relative to the start */
    size_t len, overflow; /* overflow: directories below the one whose name did not fit in rel */
    size_t dirs, files, bound; /* what the walks saw and bound */
    /* the caller's: the binds keep set-id working for processes inside (mxc-oci, whose
     * noNewPrivileges false honours the image's set-uid programs within the container's own ids:
     * only nodev added); else they are nosuid too (the engine: its grants are nosuid anyway) */
    bool keep_setid;
    /* a large walk shared out (MXC_SETID_SHARE_AFTER): worker k of w checks the files of the
     * directories whose entry's inode hashes to k; 0 of 1 before */
    int start;
    unsigned w, k;
    size_t n0;
    int pid[MXC_SETID_MAX_WORKERS], out[MXC_SETID_MAX_WORKERS];
    size_t nworkers;
    mxc_setid_key *done; /* directories whose files the walk checked before it shared out */
    size_t ndone, capdone;
} mxc_setid_scan;

/* Walks fd (a directory, or a regular file: then only it) and binds every
 * privileged regular file in it onto itself read-only, after pinning every
 * directory on its way (a copy of the directory bound onto itself: a mount
 * point cannot be renamed from inside, so another view of the same tree —
 * a second sandbox of a shared grant — cannot move a privileged file out
 * of the way of this walk while it runs; whatever has pins cannot move
 * one either).  Never follows a symlink; enters every mount below not
 * walked already (a read-only one too, whose files it leaves: a writable
 * mount may lie below it); a directory the caller cannot open
 * (EACCES: neither could the workload, whose credentials are no stronger)
 * is left.  0, or -errno (the tree may be left partly bound: the caller
 * fails the start).  A privileged file whose path is beyond 4095 bytes is
 * -ENAMETOOLONG. */
int mxc_setid_pin(int fd, mxc_setid_scan *s);
void mxc_setid_scan_free(mxc_setid_scan *s);

#endif
