/* spec.h — a DriverSandbox proposed for create, checked before anything exists.
 * Owns: every field of ValidateSandboxCreate's DriverSandbox judged against what mxc can
 * honour, each refusal naming its field (docs/openshell.md lists them): the identity (id,
 * name, namespace, workspace as mxc labels), the spec (log_level, environment, the exact
 * command, tty, sandbox_token's shape), the template (image, agent_socket_path, labels,
 * environment, resources as strict quantities (quantity.h), platform_config (refused), and
 * driver_config: mxc's policy, read by mxc-gateway's policy mapper (drvcfg.h, policymap.h)
 * under the driver's host configuration), GPUs (refused), and the supervisor a create needs.  The refusal's code:
 * MXC_E_MALFORMED_REQUEST (a malformed value), MXC_E_UNSUPPORTED_CONTAINMENT (something
 * mxc does not do), MXC_E_BACKEND_UNAVAILABLE (this driver's configuration lacks it).
 * Pure: no I/O. */
#ifndef MXC_OSD_SPEC_H
#define MXC_OSD_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "osdpb.h"

/* What a checked spec asks of cgroups (0: not asked). */
typedef struct {
    uint64_t cpu_request_milli, cpu_limit_milli;
    uint64_t memory_request, memory_limit;
} osd_limits;

/* What a spec is judged under: the host configuration ([openshell.drivers.mxc] as mxc-gateway
 * reads it; its policy keys decide what driver_config may ask) and whether --supervisor was
 * given. */
typedef struct {
    const mxc_gw_config *cfg;
    bool have_supervisor;
} osd_judge;

/* 0 with *lim and, when driver_config is given, *fragment (the request's
 * {"filesystem","network"} the policy maps to; the caller's; NULL when none), or -1 with *e. */
int osd_spec_check(const pb_sandbox *sb, const osd_judge *j, osd_limits *lim, json_t **fragment, mxc_error *e);

/* An mxc label (sandbox ids and names): [A-Za-z0-9][A-Za-z0-9._-]*, at most 128. */
bool osd_id_is_valid(const char *s);

#endif
