/* audit.h — the gateway's OCSF audit sink (JSON lines).
 * Owns: whether it is on (OPENSHELL_OCSF_JSON=1 or MXC_OCSF_JSON=1 at
 * serve), its directory (OPENSHELL_OCSF_LOG_DIR; /var/log/mxc as root, else
 * ~/.local/state/mxc/logs or <private dir>/mxc-logs: a directory of the
 * gateway's uid no one else can write) and file (mxc-gateway-ocsf.jsonl,
 * 0600, appended; at GW_AUDIT_LOG_MAX bytes renamed to .1 — the older .1
 * discarded — and a new file begun with the finding that says so
 * (mxc-gateway-audit-rotated), so the sink holds at most two files), a
 * non-blocking queue (4,096
 * records and 16 MiB at most; what does not fit is dropped and counted:
 * one warning at once, then at most one aggregated warning per 30 s, due
 * even if no further drop comes, and the rest at shutdown), the
 * writer thread, and the sources it collects: each sandbox's mxc-proxy
 * records (the file the driver names to the runtime with
 * MXC_PROXY_AUDIT_FILE), attributed only by the generation key of the
 * driver's mxc-exec (pid and kernel start time) that owns them — never by
 * command text — live while it runs and for 5 s after it exits; records a
 * retired source yields later are unattributed and dropped (coalesced
 * warnings).  Each source yields at most GW_AUDIT_SOURCE_RATE records a
 * second (a burst of ten seconds' worth); what comes faster is dropped and
 * said, per sandbox, as an mxc-proxy-audit-dropped finding; a line longer
 * than 16 KiB is dropped; what was read of a source's file is freed (a hole
 * punched), and a source is read until its sandbox is deleted, so the file
 * a workload makes its proxy write holds only what is not read yet.  A governed sandbox whose proxy never opened its sink yields a
 * Detection Finding (the coverage gap said, not hidden).  No record holds a
 * secret, a credential or a command line. */
#ifndef MXC_GATEWAY_AUDIT_H
#define MXC_GATEWAY_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* Reads the environment and opens the sink when on.  0, or -1 with *e.
 * Records emitted before gw_audit_start (the start-up reconciliation's)
 * wait in the queue, under its caps. */
int gw_audit_init(mxc_error *e);
bool gw_audit_on(void);
/* Starts the writer thread.  0, or -1 with *e. */
int gw_audit_start(mxc_error *e);
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

#define GW_AUDIT_LOG_MAX (64u << 20)  /* bytes per file, two files; MXC_OCSF_LOG_MAX may lower it */
#define GW_AUDIT_SOURCE_RATE 100       /* a sandbox's proxy records a second; MXC_OCSF_SOURCE_RATE may lower it */

/* The sink's directory (NULL when off): no grant may reach it. */
const char *gw_audit_dir(void);
/* name was deleted: its source's last lines are read and it is dropped. */
void gw_audit_source_forget(const char *sandbox);

#define GW_AUDIT_LAUNCH 1
#define GW_AUDIT_TERMINATE 2

#endif
