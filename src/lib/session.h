/* session.h — the isolation_session backend.
 * Owns: provision (identity, workspace, fixed policy: staged, then
 * committed), start (holder, monitor, holder record), exec (into the live
 * holder, no lock on the way), stop, deprovision (a tombstone first, then
 * the teardown), the teardown of a damaged or interrupted sandbox, the
 * idempotence codes, and this backend's one-shot (the whole lifecycle in
 * one call).  Every phase but exec holds the sandbox's flock. */
#ifndef MXC_SESSION_H
#define MXC_SESSION_H

#include <jansson.h>
#include <stdbool.h>

#include "exec.h"
#include "request.h"

/* Non-exec phases: *result receives the success object (new reference). */
int mxc_session_phase(const mxc_request *r, json_t **result, mxc_error *e);

/* As mxc_session_phase, for a caller that delivers the answer itself (the
 * CLI writes it to its stdout): a provision's sandbox stays marked
 * unanswered until mxc_session_answered(result), called once the answer is
 * written; if the caller dies before that, the sweeper tears the sandbox
 * down (nobody knows its id).  A death between the write and the record
 * is the one window left (no order of the two closes it): the caller then
 * holds an id the sweep finishes, and a later phase on it says stale_id.
 * That side is chosen over the other (record first, then write: a death
 * between leaves a sandbox nobody knows, for good) — a killed call's answer
 * is no promise, its exit status says so, and nothing is left behind.
 * mxc_session_phase counts returning as answering.  exiting: the caller exits once it answers (the CLI), so a
 * start's monitor may be its own child (container.h). */
int mxc_session_phase_deliver(const mxc_request *r, bool exiting, json_t **result, mxc_error *e);
void mxc_session_answered(json_t *result);

/* The sweeper's: a ".unanswered." mark of root whose maker is dead (its
 * sandbox, committed or not, is finished; the mark removed), and a sandbox
 * directory of root that no claim names (damaged, or a deprovision that
 * could not remove it).  True when entry/name is one (act: and was dealt
 * with). */
bool mxc_session_reap_unanswered(const char *root, const char *entry, bool act);
bool mxc_session_reap_unclaimed(const char *root, const char *name, bool act);

/* Fault injection (tests/faults): appends "begin" to $MXC_FAULT_PHASE_MARK
 * once a phase (or a one-shot) has begun, so that a test knows its kill
 * landed inside it. */
void mxc_session_fault_mark(void);

/* exec: starts the workload in the live session. */
int mxc_session_exec_start(const mxc_request *r, bool pty, mxc_proc *proc, mxc_error *e);

/* containment isolation_session, one-shot: provision, start, exec, stop,
 * deprovision in one call, nothing left behind. */
int mxc_session_oneshot(const mxc_request *r, int in, int out, int err, int *code, bool *timed_out, mxc_error *e);

/* Finishes an entombed or interrupted sandbox at path (a tombstone or a
 * staging directory of root): its holder, cgroup, claim, workspace and
 * files.  Used by deprovision, by a later call that finds a dead one's
 * tombstone, and by the sweeper.  *report (may be NULL) gets what was done. */
void mxc_session_finish(const char *path, json_t *report);

/* What a person is shown of the sandbox directory root/name (inventory.h),
 * read without its lock: {"agentName","sandboxId","state" (provisioned,
 * starting, running, stopped, damaged),"created" (epoch s),"uid",
 * "workspace","rootless","holderPid"/"limits" (running),"damage"}; full adds
 * "policy", "view" and the proxy endpoint (its credential masked).  NULL
 * when root/name is not a sandbox directory. */
json_t *mxc_session_summary(const char *root, const char *name, bool full);

#endif
