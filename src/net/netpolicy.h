/* netpolicy.h — a request's network, as one of the connectivity models.
 * Owns: choosing the model (host network, 1 direct egress under rules,
 * 2 the proxy endpoint only, 3 nothing) from either dialect (the shapes
 * it cannot deliver refused with their JSON path), and lowering the
 * directional rules, as the engine read them (netplan.h: netrules.c checks
 * CIDRs, except, protocol, port, endPort; refuses hostnames), into the
 * nftables script installed inside the sandbox's
 * network namespace (model 1's has an empty set of this host's own
 * destinations, which stack.c fills from thishost.h where the rules go
 * in, and rejects after the allows of exactly one address).  Pure: no
 * syscalls.  Never emits caller text into
 * the script: every address and port is re-printed from parsed numbers. */
#ifndef MXC_NET_NETPOLICY_H
#define MXC_NET_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "netplan.h"

/* The model a (structurally valid) request's network section asks for, and for models 1
 * and 2 its rule set, for governed egress its host lists and credentials.  Refusals are
 * policy_validation naming the path.  The rest of the plan is plan.c's (mxc_net_plan_build). */
int mxc_net_policy_build(const mxc_net_section *s, mxc_net_policy *np, mxc_error *e);

#endif
