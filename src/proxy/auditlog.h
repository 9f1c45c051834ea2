/* auditlog.h — owns: mxc-proxy's audit sink and its bounds.  A record is
 * one JSON line appended, whole, to a descriptor the proxy was given (a
 * session's proxy-audit.jsonl in the state root, or the caller's file);
 * the workload decides how many there are, so no line is written past two
 * budgets:
 *   rate — a token bucket per kind: refusals (every disposition but
 *          "allowed") and allowed traffic apart, so a flood of bad
 *          requests never costs the records of real egress;
 *   size — the file, whoever wrote what is already in it, never grows
 *          past max_bytes; the last AUDITLOG_RESERVE bytes below it are
 *          kept for the two records that say what was dropped.
 * What is not written is counted by disposition and said, never dropped in
 * silence: a summary record (OCSF 2004 Detection Finding,
 * "mxc-proxy-audit-dropped", its counts in "dropped") at most once a
 * second while records are dropped for the rate, "mxc-proxy-audit-full"
 * when the size cap is reached, and a last "mxc-proxy-audit-dropped" when
 * the proxy ends.  No rotation and no truncation: the file is only ever
 * appended to (mxc-gateway tails it by offset).  Thread-safe: interception
 * threads write records too. */
#ifndef MXC_PROXY_AUDITLOG_H
#define MXC_PROXY_AUDITLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDITLOG_RESERVE 2048 /* room below the cap for "full" and the last count (each < 1 KiB) */

/* The defaults: src/base/helperbounds.h (MXC_PROXY_AUDIT_*). */
typedef struct {
    uint64_t max_bytes; /* the file's size cap */
    unsigned denied_per_sec, denied_burst;
    unsigned allowed_per_sec, allowed_burst;
} mxc_auditlog_limits;

typedef struct mxc_auditlog mxc_auditlog;

/* fd: appended to (O_APPEND), not owned; its size now counts against the
 * cap.  sandbox: named in the summaries.  now_ms: a monotonic clock. */
mxc_auditlog *mxc_auditlog_new(int fd, const char *sandbox, const mxc_auditlog_limits *lim, uint64_t now_ms);
/* One record: a complete line of len bytes ending in '\n' (disposition
 * chooses the budget and the counter).  true when written. */
bool mxc_auditlog_write(mxc_auditlog *l, const char *disposition, const char *line, size_t len, uint64_t now_ms);
/* The loop's tick: the summary of what the rate dropped, once a second. */
void mxc_auditlog_tick(mxc_auditlog *l, uint64_t now_ms);
/* The proxy's end: the last summary (when anything is uncounted). */
void mxc_auditlog_finish(mxc_auditlog *l, uint64_t now_ms);
void mxc_auditlog_free(mxc_auditlog *l);

#endif
