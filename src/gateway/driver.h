/* driver.h — the compute driver: a gateway sandbox made real with mxc-exec.
 * Owns: a create request checked and mapped before anything exists (name,
 * command, environment, policy through policymap.h, grants that would reach
 * the gateway's own state, audit directory or socket, then the runtime's own
 * --dry-run: a refusal leaves no record and no sandbox), the runtime
 * requests for each backend (process: one one-shot; isolation_session:
 * provision, start, exec, and stop + deprovision at delete), running the
 * configured mxc-exec (never through PATH) with the request on a pipe, the
 * workload's output through a pipe into its bounded log (sblog.h), its exit watched on a thread and
 * recorded, readiness reported by the driver itself (running once the
 * workload is launched), delete, and the reconciliation at start-up
 * (records left running by a previous gateway: their runtime state gone ->
 * lost; orphaned sessions it owns -> stopped, deprovisioned, lost).  In mock
 * mode (OPENSHELL_MXC_MOCK_WXC=1, MXC_GATEWAY_MOCK_EXEC=1 or MXC_GATEWAY_MOCK=1)
 * an in-process mock stands for the executor: the same checks, mapping,
 * environment, providers, records and audit, and each runtime request the
 * real path would send written to the sandbox's log ("mock: would run PHASE
 * JSON"; secrets are never in a request, only in the real executor's
 * environment); nothing runs, the workload "exits 0" at once — or, with
 * MXC_GATEWAY_MOCK_HOLD=1, stays running until delete (restart wiring). */
#ifndef MXC_GATEWAY_DRIVER_H
#define MXC_GATEWAY_DRIVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define GW_MOCK_OFF 0
#define GW_MOCK_EXIT 1 /* mock workloads exit 0 at once */
#define GW_MOCK_HOLD 2 /* mock workloads run until delete */
/* socket_path: the daemon's socket, one of the places no grant may reach. */
void gw_driver_init(const mxc_gw_config *cfg, int mock, const char *socket_path);
bool gw_driver_mock(void);

/* req: {"name","policy" (a SandboxPolicy object),"command":[...],"cwd"?,
 * "env":["K=V"...]?,"providers":[...]?}.  The new record, or NULL with
 * *http (400 refused, 409 exists, 500 runtime) and *e. */
json_t *gw_create(const json_t *req, int *http, mxc_error *e);
/* Stops and removes name; -1 (404) when there is none. */
int gw_delete(const char *name, mxc_error *e);
/* Once, before serving. */
void gw_reconcile(void);

#endif
