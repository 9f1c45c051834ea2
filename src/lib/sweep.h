/* sweep.h — reclaiming what crashes left.
 * Owns: finding, and (act) removing, what no live sandbox owns any more:
 * tombstones and half-made sandboxes of the state root whose makers are
 * dead, claims (registry.h) whose sandbox is gone (with an OCI range
 * claim, the cgroup directories it names, when empty), cgroups without a live
 * owner (including the mxc/ leftovers of earlier builds), and orphaned
 * holders — session holders whose sandbox no longer exists.  Every phase
 * does the cheap part (its state root's transient directories, in
 * session.c); mxc-exec --gc does all of it; --probe reports what a sweep
 * would find. */
#ifndef MXC_SWEEP_H
#define MXC_SWEEP_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

/* {"tombstones":n, "halfProvisions":n, "unanswered":n, "unclaimed":n,
 *  "claims":n, "cgroups":n, "holders":n} (unanswered: provisions committed
 * whose maker died before delivering the id; unclaimed: sandbox
 * directories no claim names):
 * what was removed (act) or would be (dry). */
json_t *mxc_sweep(bool act, mxc_error *e);

#endif
