/* cgroup.h — resource limits and kill-all through cgroups.
 * Owns: detecting what this host delegates (cgroup v2 with pids/memory
 * controllers, else the v1 pids and memory hierarchies), one cgroup per
 * sandbox with pids.max / memory limits, moving a process in, killing
 * everything in it, removing it.  Degrades honestly: what is missing is
 * reported by --probe and the PID namespace stays the kill-all. */
#ifndef MXC_CGROUP_H
#define MXC_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef struct {
    bool v2;
    char pids_dir[512];   /* "" = no pids limit on this host */
    char memory_dir[512]; /* "" = no memory limit on this host */
} mxc_cgroup;

/* What the host offers, for --probe: "v2", "v1", or "none" per controller. */
const char *mxc_cgroup_mode(const char *controller);

/* Creates (or reuses) the sandbox's cgroups and writes the limits. */
int mxc_cgroup_create(const char *name, uint64_t pids_max, uint64_t memory_max, mxc_cgroup *cg, mxc_error *e);
/* Reattaches to existing cgroups of a sandbox (no creation). */
void mxc_cgroup_open(const char *name, mxc_cgroup *cg);
int mxc_cgroup_add(const mxc_cgroup *cg, pid_t pid, mxc_error *e);
void mxc_cgroup_kill_all(const mxc_cgroup *cg);
/* A child cgroup of the pids hierarchy for one exec, so that the timeout's
 * last tier and the terminator reach every process of that exec, even one
 * that left the process group.  Returns false where the host cannot. */
bool mxc_cgroup_child(const mxc_cgroup *parent, const char *leaf, mxc_cgroup *child);
void mxc_cgroup_remove(const mxc_cgroup *cg);

#endif
