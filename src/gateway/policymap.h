/* policymap.h — an OpenShell SandboxPolicy, mapped to the runtime's request.
 * Owns: reading the policy document (already JSON: the YAML is loaded by
 * libyaml through src/base/yamljson.h) against its schema — every field
 * known or refused by name — and deciding, before anything exists, what
 * the runtime is asked for: filesystem grants, the network (blocked, the
 * pc_network_allow fallback, or governed egress through mxc-proxy: the
 * network_policies endpoints become the sandbox's allowed hosts), and the
 * refusals spec 002 requires (network rules without egress_proxy,
 * pc_network_allow with egress_proxy and no rules, network_middlewares)
 * plus the Linux ones (what the runtime or mxc-proxy cannot enforce: L7
 * inspection fields, single-label wildcards, a chosen uid, a graphical
 * UI).  Pure: no I/O.  docs/gateway.md lists every field's mapping. */
#ifndef MXC_GATEWAY_POLICYMAP_H
#define MXC_GATEWAY_POLICYMAP_H

#include <jansson.h>
#include <stddef.h>

#include "config.h"

/* The request fragment {"filesystem":{...}, "network":{...}} for policy
 * (a SandboxPolicy document), under the host configuration cfg, for a
 * workload whose working directory is workdir (NULL: none given;
 * include_workdir then refuses).  NULL with *e naming the field. */
json_t *mxc_gw_map_policy(const json_t *policy, const mxc_gw_config *cfg, const char *workdir,
                          mxc_error *e);

#endif
