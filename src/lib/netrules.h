/* netrules.h — the engine's reading of a network section's JSON into its typed parts (netplan.h:
 * mxc_net_directions, mxc_net_rules, mxc_net_credential), with the shape checks and their refusals
 * (policy_validation, naming the JSON path).  request.c calls these when it makes a section and
 * keeps each refusal in it, for src/net to give where its model asks for it. */
#ifndef MXC_NETRULES_H
#define MXC_NETRULES_H

#include <jansson.h>

#include "error.h"
#include "netplan.h"

/* The directional network object's keys and its directions' actions (net NULL: all deny). */
int mxc_net_directions_parse(json_t *net, mxc_net_directions *d, mxc_error *e);
/* Its egress rules, deny's then allow's (peers: IP addresses and CIDRs only; an allow naming IPv6
 * refused: the stack runs IPv4 only).  On failure nothing is left to free. */
int mxc_net_rules_parse(json_t *net, mxc_net_rules *deny, mxc_net_rules *allow, mxc_error *e);
/* The legacy network.credentials ([{name, revision, host, port, pathPrefix?, secretEnv, env?}]),
 * checked, into *out (owned, never NULL on success even when empty: mxc_net_credentials_free). */
int mxc_net_credentials_parse(json_t *a, mxc_net_credential **out, size_t *n, mxc_error *e);

#endif
