/* cgroup.h — the one cgroup manager: resource limits and kill-all through
 * cgroups, for sessions, one-shots and mxc-oci's containers.
 * Owns: the backend this host gives mxc (v2, v1 or none: chosen once, see
 * mxc_cgroup_host; none = no cgroup for mxc, the PID namespace is the
 * kill-all), typed limits and how they are written on v1 and v2
 * (cgroup_limits.c), the operations on one cgroup directory every user of a
 * cgroup shares (cgroup_dir.c: its files, making it, entering it, its
 * processes, signalling and killing them by pidfd after a membership check,
 * freezing, removing it), and for the engine's sandboxes: one cgroup per
 * sandbox with pids.max / memory limits and, when asked for, a CPU quota,
 * moving a process in, killing everything in it, removing it.
 * cgroup v2 is used where /sys/fs/cgroup is cgroup2, or under a delegated
 * cgroup2 directory named by MXC_CGROUP2_ROOT (a controller counts only
 * when enabled for the root's children): one directory per sandbox
 * (made even when no controller is enabled there: it is still the exact
 * kill-all, cgroup.kill), and processes are born in it with
 * clone3(CLONE_INTO_CGROUP) instead of being moved.  Else the v1 pids,
 * memory and cpu hierarchies; on v1 a process moves itself by writing "0"
 * to `tasks` (no global lock).
 * The host-side helpers a workload drives (mxc-proxy, pasta) run in a child
 * of the sandbox's cgroup (MXC_CGROUP_HELPERS), charged to its limits.
 * Degrades honestly: what is missing is reported by --probe and the PID
 * namespace stays the kill-all; a CPU limit that cannot be had is an error.
 * mxc-oci (src/oci/cgroup.c) keeps only what is OCI's: cgroupsPath, the
 * linux.resources checks and lowering, its state record, the cgroup mount. */
#ifndef MXC_CGROUP_H
#define MXC_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "iface/front.h" /* the manager's backend, directory operations and typed limits */

typedef struct {
    bool v2;
    char v2_dir[512];     /* v2: the sandbox's one directory ("" on v1) */
    char pids_dir[512];   /* "" = no pids limit on this host */
    char memory_dir[512]; /* "" = no memory limit on this host */
    char cpu_dir[512];    /* "" = no cpu controller on this host */
    bool cpu_limited;     /* cpu_dir is in use: the sandbox has a CPU limit */
} mxc_cgroup;

/* The child of a sandbox's cgroup (in each v1 hierarchy it has; in its v2
 * directory) where the host-side helpers a workload drives run: a child
 * counts against its parent's pids, memory and CPU limits (v2: it has no
 * controller of its own, so its use is its parent's), so the sandbox's
 * budget is theirs too; killed and removed with the sandbox's. */
#define MXC_CGROUP_HELPERS "helpers"

/* The CFS period every CPU quota is expressed against. */
#define MXC_CGROUP_CPU_PERIOD_US 100000u

/* What the host offers, for --probe: "v2", "v1", or "none" per controller. */
const char *mxc_cgroup_mode(const char *controller);
/* The cgroup2 directory under which sandboxes get theirs (NULL: v1 or none). */
const char *mxc_cgroup_v2_root(void);
/* Whether a limit on this controller can be applied here at all. */
bool mxc_cgroup_available(const char *controller);

/* Creates (or reuses) the sandbox's cgroups and writes the limits.
 * cpu_quota_us: microseconds per MXC_CGROUP_CPU_PERIOD_US; 0 = no CPU
 * limit, and then no cpu cgroup at all.  A quota on a host without a cpu
 * controller is backend_unavailable.  On failure nothing made is left. */
int mxc_cgroup_create(const char *name, uint64_t pids_max, uint64_t memory_max, uint64_t cpu_quota_us, mxc_cgroup *cg,
                      mxc_error *e);
/* Reattaches to existing cgroups of a sandbox (no creation); its cpu
 * cgroup is used when it exists (the sandbox was started with a limit). */
void mxc_cgroup_open(const char *name, mxc_cgroup *cg);
/* Opens, as the (privileged) caller, the files through which a process
 * moves itself into cg.  On v1 that is each hierarchy's `tasks`: a single
 * thread that writes "0" there moves itself without the global threadgroup
 * lock, so without the RCU grace period that every other migration waits
 * for (5-15 ms after idle on this kind of host); the permission check uses
 * the opener's credentials, so the sandbox's own uid can do it.  v2 gets
 * cgroup.procs.  Returns how many fds (0-3) are in fds[], or -1. */
int mxc_cgroup_join_fds(const mxc_cgroup *cg, int fds[3], mxc_error *e);
/* The helpers' child of the sandbox `name`: the sandbox's cgroups are
 * made (or reused) with its limits as mxc_cgroup_create makes them — a
 * helper may start before the sandbox's first process joins — and the
 * child in each; opens, as the (privileged) caller, the files through which
 * a helper moves itself in (cgroup.procs, the whole process; with
 * mxc_cgroup_join_self, before it execs).  Returns how many fds (0-3: none
 * where this host has no cgroup for mxc) are in fds[], or -1. */
int mxc_cgroup_helpers_join_fds(const char *name, uint64_t pids_max, uint64_t memory_max, uint64_t cpu_quota_us,
                                int fds[3], mxc_error *e);
/* Model 1's pool (src/net/netpool.h), v1 only: a sandbox's cgroup made ahead under `name`
 * (pids and memory where this host has them; EEXIST when one exists: never one found), its
 * helpers' child with it, and the helpers' `tasks` files opened into fds, for a helper started
 * ahead to move itself in ("0": no global lock).  Returns how many (1-2), or -errno (-ENOTSUP:
 * not v1); on failure nothing made is left. */
int mxc_cgroup_pool_make(const char *name, int fds[2]);
/* v1 only: the cgroup `from` renamed `to` in each hierarchy (the kernel renames a v1 cgroup
 * within its parent; cgroup2 has no rename).  The processes in it and what they are charged go
 * with it, with no migration and so no grace period: how a pool's helper made ahead becomes a
 * sandbox's.  0, or -errno (-EIO: half renamed and not undone). */
int mxc_cgroup_rename(const char *from, const char *to);
/* Model 1's pool: a pool's cgroup made by mxc_cgroup_pool_make: what is in it killed, and removed. */
void mxc_cgroup_pool_remove(const char *name);
/* v2: an fd of the sandbox's directory, for clone3(CLONE_INTO_CGROUP) —
 * the child is born inside, no migration.  -1 with errno on v1 (ENOTSUP)
 * or failure. */
int mxc_cgroup_dir_fd(const mxc_cgroup *cg);
/* clone3 with CLONE_INTO_CGROUP when cgroup_fd >= 0 (else a plain
 * clone): flags are namespace flags; SIGCHLD on exit.  Returns as fork. */
pid_t mxc_cgroup_clone(unsigned long long flags, int cgroup_fd);
/* In the process that moves: writes "0" to each fd and closes them.
 * Returns 0 or -errno. */
int mxc_cgroup_join_self(int *fds, size_t n);
/* The path /proc/PID/cgroup names for the cgroup directory dir: dir's real
 * path below its cgroup mount, after the mount's root as mountinfo shows it
 * (both are relative to this process's cgroup namespace).  The real path is
 * the opened directory's name (/proc/self/fd), its mount the one with its
 * mount ID, read from mountinfo once per mount and process (thread-safe).
 * 0, or -ENOENT when dir is not on a cgroup mount, or -errno. */
int mxc_cgroup_proc_path(const char *dir, char *out, size_t outsz);
/* Whether the cgroup directory dir may have cgroups below it (cgroupfs counts
 * them in its link count: 2 is none; true where that cannot be read). */
bool mxc_cgroup_has_children(const char *dir);
/* Whether one /proc/PID/cgroup line is of the hierarchy ctrl names (NULL:
 * v2's "0::") and names exactly path — never the hierarchy's root ("/"). */
bool mxc_cgroup_line_is(const char *line, const char *ctrl, const char *path);
/* After a moment for the helpers to end (at most 200 ms), kills every
 * process of the sandbox's cgroup and the ones below it (mxc_cgroup_kill_dir). */
void mxc_cgroup_kill_all(const mxc_cgroup *cg);
/* Removes the sandbox's cgroups (the helpers' child and leftovers of
 * earlier builds first), waiting while they are busy (mxc_cgroup_rmdir). */
void mxc_cgroup_remove(const mxc_cgroup *cg);

#endif
