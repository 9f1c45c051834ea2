/* spec.h — a DriverSandbox proposed for create, checked before anything exists.
 * Owns: every field of ValidateSandboxCreate's DriverSandbox judged against what mxc can
 * honour, each refusal naming its field (docs/openshell.md lists them): the identity (id,
 * name, namespace, workspace as mxc labels), the spec (log_level, environment, the exact
 * command, tty, sandbox_token's shape), the template (image, agent_socket_path, labels,
 * environment, resources as strict quantities (quantity.h), platform_config and
 * driver_config), GPUs (refused), and the supervisor a create needs.  The refusal's code:
 * MXC_E_MALFORMED_REQUEST (a malformed value), MXC_E_UNSUPPORTED_CONTAINMENT (something
 * mxc does not do), MXC_E_BACKEND_UNAVAILABLE (this driver's configuration lacks it).
 * Pure: no I/O. */
#ifndef MXC_OSD_SPEC_H
#define MXC_OSD_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "osdpb.h"

/* What a checked spec asks of cgroups (0: not asked). */
typedef struct {
    uint64_t cpu_request_milli, cpu_limit_milli;
    uint64_t memory_request, memory_limit;
} osd_limits;

/* 0 with *lim, or -1 with *e.  have_supervisor: --supervisor was given. */
int osd_spec_check(const pb_sandbox *sb, bool have_supervisor, osd_limits *lim, mxc_error *e);

/* An mxc label (sandbox ids and names): [A-Za-z0-9][A-Za-z0-9._-]*, at most 128. */
bool osd_id_is_valid(const char *s);

#endif
