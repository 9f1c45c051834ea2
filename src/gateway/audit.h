/* audit.h — the gateway's OCSF audit sink (JSON lines).
 * Owns: whether it is on (OPENSHELL_OCSF_JSON=1 or MXC_OCSF_JSON=1 at
 * serve), its file (<OPENSHELL_OCSF_LOG_DIR, default /var/log/mxc>/
 * mxc-gateway-ocsf.jsonl, 0600, appended), a non-blocking queue (4,096
 * records and 16 MiB at most; what does not fit is dropped and counted:
 * one warning at once, then at most one aggregated warning per 30 s, due
 * even if no further drop comes, and the rest at shutdown), the
 * writer thread, and the sources it collects: each sandbox's mxc-proxy
 * records (the file the driver names to the runtime with
 * MXC_PROXY_AUDIT_FILE), attributed only by the generation key of the
 * driver's mxc-exec (pid and kernel start time) that owns them — never by
 * command text — live while it runs and for 5 s after it exits; records a
 * retired source yields later are unattributed and dropped (coalesced
 * warnings).  A governed sandbox whose proxy never opened its sink yields a
 * Detection Finding (the coverage gap said, not hidden).  No record holds a
 * secret, a credential or a command line. */
#ifndef MXC_GATEWAY_AUDIT_H
#define MXC_GATEWAY_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* Reads the environment and opens the sink when on.  0, or -1 with why[].
 * Records emitted before gw_audit_start (the start-up reconciliation's)
 * wait in the queue, under its caps. */
int gw_audit_init(char *why, size_t whysz);
bool gw_audit_on(void);
/* Starts the writer thread.  0, or -1 with why[]. */
int gw_audit_start(char *why, size_t whysz);
/* Writes what is queued, then reports the drops not yet reported. */
void gw_audit_close(void);

/* Queues one OCSF record (stolen); never blocks.  The sink adds time and
 * the product metadata. */
void gw_audit_emit(json_t *rec);

/* A sandbox's proxy records at path, owned by the driver's mxc-exec
 * (pid, start); governed: whether a proxy should write there. */
void gw_audit_source_add(const char *sandbox, const char *path, pid_t pid, unsigned long long start, bool governed);
/* That mxc-exec ended: its source stays attributable for 5 s. */
void gw_audit_source_retire(pid_t pid, unsigned long long start);

/* Whether the kernel's audit is enabled (AUDIT_GET): 1, 0, or -1 unknown.
 * Landlock logs filesystem denials only when it is; the sink says the gap
 * with a Detection Finding at start (mxc-landlock-audit-unavailable). */
int gw_kernel_audit_enabled(void);

/* Records of the driver's own. */
void gw_audit_process(const char *sandbox, const char *backend, int activity, pid_t pid, int exit_code);
void gw_audit_refused(const char *sandbox, const char *reason);
/* A sandbox the start-up reconciliation found orphaned or gone: lost. */
void gw_audit_lost(const char *sandbox, const char *backend, const char *why);

#define GW_AUDIT_LAUNCH 1
#define GW_AUDIT_TERMINATE 2

#endif
