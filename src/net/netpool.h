/* netpool.h — model 1's pool of network namespaces made ahead, pasta already attached (root).
 * Owns: the pool's directory (MXC_NETPOOL_DIR, root's, 0700: ready/, claimed/, the refiller's
 * lock), making entries off the caller's critical path (a detached refiller), claiming one
 * one-use for a sandbox (renameat(2) of the entry out of ready/: one winner; then held by
 * descriptor), handing its pasta to the stack's keeper (stack.c), and sweeping what is stale.
 *
 * An entry is a network namespace made by root — owned by the host's user namespace, so the
 * workload's CAP_NET_ADMIN never applies to it — held by a holder process (mxc-netpool, pause()
 * inside it: no mount, nothing for a sandbox's mount namespace to copy), with its own
 * ping_group_range "0 2147483647" (ping, as in a sandbox's own namespace; ports < 1024 stay
 * refused to the workload's capability-less uid, as there), lo up, the plan's nftables rules
 * installed (the rule set and this host's destinations as they were then; the script kept as
 * the entry's "rules", compared byte for byte at a claim), and pasta
 * started on it with exactly model 1's arguments (stack.c's mxc_net_pasta_start), from the
 * refiller's network namespace (where pasta dials from), for one DNS upstream and that rule set: the key
 * in the entry's name (<namespace inode>-<dns or "none">-<the rule set's hash>.<holder pid>); an
 * entry is never handed out for another key or other rules, and pasta's namespace is checked to be the claimer's at the claim.  Its record ("pids": holder pid, start time, pasta pid, start
 * time) is checked against the live processes by pidfd (pid reuse) at the claim.
 * Nothing here may fail or delay a sandbox: an empty, stale or foreign pool is "no entry",
 * and the caller makes its namespace as without a pool. */
#ifndef MXC_NET_NETPOOL_H
#define MXC_NET_NETPOOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "netplan.h"

/* MXC_NETPOOL_DIR: netplan.h (the engine refuses grants of it, hostpath.c) */
#define MXC_NETPOOL_DEFAULT_SIZE 0
#define MXC_NETPOOL_MAX_AGE_S 3600 /* an entry older than this is swept, not handed out */

/* The pool's size: MXC_NETPOOL_SIZE (0-32; 0: off), else MXC_NETPOOL_DEFAULT_SIZE; the bound on the
 * ready entries of one caller's namespace, whatever their keys' rule sets (the refiller ends the
 * oldest of another rule set's to make one). */
int mxc_netpool_size(void);
/* For a model-1 plan, root, pool on: an entry of the plan's key claimed (this process's one
 * claim, until mxc_netpool_adopt; one left unadopted by a failed start is dropped here, its
 * pasta killed), its holder killed, its namespace's descriptor returned; -1: none (the caller
 * makes its namespace as without a pool).  On v1 an entry's pasta lives in a cgroup of the
 * entry's own ("netpool-<holder>-<start time>", its helpers' child), renamed here to the sandbox's cgroup
 * `cgroup` (which does not exist yet: an entry whose cgroup cannot be renamed is not used), so
 * pasta needs no migration (cgroup.h).  Single-threaded callers only. */
int mxc_netpool_claim(const mxc_net_policy *np, const char *cgroup);
/* The claim this process made and did not adopt (its start failed): its pasta killed, its record
 * removed, at once; a no-op without one (the next claim does it too). */
void mxc_netpool_release(void);
/* In the claiming process's attach: when nsfd is the claimed entry's namespace, the entry's
 * record is removed and its pasta's pidfd returned (*pasta its pid; *charged: it is in the
 * sandbox's helpers' cgroup already), the claim spent; else -1. */
int mxc_netpool_adopt(int nsfd, pid_t *pasta, bool *charged);
/* Before the adoption, in the claiming process's attach: when nsfd is the claimed entry's
 * namespace, this host's set's script as the entry's rules hold it (the plan's rule set is in
 * already: the claim compared it byte for byte); else NULL.  The attach installs the set only
 * when this host's destinations differ now (and nothing when they do not). */
const char *mxc_netpool_claimed_set(int nsfd);
/* Writes pid into each of the helpers' cgroup join files fds (not closed): 0 or -errno. */
int mxc_netpool_move(const int *fds, size_t n, pid_t pid);
/* A detached refiller (a session of its own, every descriptor closed) tops the plan's key up to
 * the pool's size (ending the oldest entries of the caller's namespace's other rule sets for
 * room: mxc_netpool_size); returns at once; does nothing unless root, model 1, pool on.  One refiller
 * at a time (the lock): a second returns. */
void mxc_netpool_refill(const mxc_net_policy *np);
/* --gc: entries whose holder or pasta died, over-age ones, every ready one when the pool is off,
 * claimed ones whose claimer died, half-made ones whose maker died (their holder by its record made
 * before it was told to stay, their pasta by the holder's namespace until its pid is recorded):
 * killed and removed (act), or counted.  Adds "netpoolEntries" to r. */
void mxc_netpool_sweep(bool act, json_t *r);
/* --probe: {"size", "ready", "maxAgeSeconds", "idlePssKiB" (one ready entry's holder + pasta,
 * measured now; null without one)} */
json_t *mxc_netpool_probe(void);

#endif
