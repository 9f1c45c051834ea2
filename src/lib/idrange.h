/* idrange.h — host-wide claims of 65536-id ranges (an OCI container's).
 * Owns: the range region (MXC_RANGE_BASE, MXC_RANGE_SLOTS: slots of 65536
 * ids, 65536-aligned, never overlapping the single-uid region of
 * registry.h), claiming a slot atomically in the engine's claim directory
 * (/var/lib/mxc/claims/range-<base>, link(2) of a complete file: two state
 * roots never share a range), skipping slots that overlap a local account
 * or a subordinate range (/etc/passwd, /etc/group, /etc/subuid,
 * /etc/subgid), naming the claim's live owner (the container's init:
 * `mxc --gc` releases the claim once that process is gone, as a
 * one-shot's, and removes the cgroup directories it names), and releasing it; a pod member's claim on
 * its pod's range (mxc_idrange_join: the range in use until the last claim on it is gone).  Root
 * only (rootless: later). */
#ifndef MXC_IDRANGE_H
#define MXC_IDRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

#define MXC_IDRANGE_SIZE 65536u
#define MXC_IDRANGE_NAME_MAX 32

/* The region: its first id and the number of slots in it. */
void mxc_idrange_region(unsigned *base, unsigned *slots);
/* Claims a free slot for the container whose state directory is
 * state_dir: *base its first host id, name[] the claim (empty on failure).
 * writable[] are the host paths the container can write (its read-write
 * binds), recorded by device and inode as a sandbox's are (registry.h: no
 * sandbox's symlink in them is followed).  The claim names the calling
 * process until mxc_idrange_set_owner. */
int mxc_idrange_claim(const char *state_dir, const char *const *writable, size_t nwritable, unsigned *base,
                      char name[MXC_IDRANGE_NAME_MAX], mxc_error *e);
/* Claims the 65536 host ids at base (65536-aligned, outside the region: a config's own maps, e.g. a
 * Kubernetes pod's user namespace, checked by the caller with mxc_idrange_host_use first) for the
 * container at state_dir, as mxc_idrange_claim claims a slot: name[] the claim.  Refused when
 * another claim (a range's or a pod member's) has them. */
int mxc_idrange_claim_at(unsigned base, const char *state_dir, const char *const *writable, size_t nwritable,
                         char name[MXC_IDRANGE_NAME_MAX], mxc_error *e);
/* A pod member's claim on the range of the claim `of` (a pod container's, proved by the caller
 * live: its state directory of_state_dir, its owner of_pid): member-<base>-<tag> in name[], the
 * range's first id in *base.  The range stays claimed while any claim on it is (the range's own,
 * released as its container ends, or a member's): mxc_idrange_claim skips it, the sweeper releases
 * each claim once its own owner is gone, a member's without killing the range's processes.
 * Refused when `of` is no longer that container's. */
int mxc_idrange_join(const char *of, const char *of_state_dir, pid_t of_pid, const char *state_dir,
                     const char *const *writable, size_t nwritable, unsigned *base, char name[MXC_IDRANGE_NAME_MAX],
                     mxc_error *e);
/* Rewrites the claim (atomically) to name pid, with its start time, as
 * its owner.  0 or -errno. */
int mxc_idrange_set_owner(const char *name, pid_t pid);
/* Records in the claim (atomically, before they are made) the container's
 * cgroup directories: the sweeper removes them, when empty, as it releases
 * the claim of a container whose init is gone (a create killed, and no
 * `delete` ever called for it).  0 or -errno. */
int mxc_idrange_set_cgroups(const char *name, const char *const *dirs, size_t n);
void mxc_idrange_release(const char *name);
/* Whether host ids [lo, lo+n) are someone else's: a local account's
 * (/etc/passwd) or group's (/etc/group) id, in a subordinate range
 * (/etc/subuid, /etc/subgid), or in a range claim other than mine (its
 * name; NULL: any); gid: a gid map's, the group files named first.  1 with what[] naming the first ("local account 1000
 * (user)"), 0 none, -errno (a file or the claim directory unreadable).
 * The files are the rule mxc's own slots follow (mxc_idrange_claim skips
 * a slot they meet); a config's own maps follow all of it. */
int mxc_idrange_host_use(unsigned long long lo, unsigned long long n, bool gid, const char *mine, char *what,
                         size_t size);
/* Releases the claim only while it is still the container's: its state
 * directory and its owner pid (the sweeper may have released it once the
 * container's init was gone, and the slot been claimed again since). */
void mxc_idrange_release_owned(const char *name, const char *state_dir, pid_t pid);
/* Releases every claim of state_dir whose owner is gone (a create killed
 * before it recorded its init as the owner: `delete --force` of what it
 * left), and the files of claims being written for state_dir whose writer
 * is dead.  A claim is written whole before it has a name (O_TMPFILE where
 * the file system has it): a kill never leaves an empty one. */
void mxc_idrange_release_dead(const char *state_dir);

#endif
