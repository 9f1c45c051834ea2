/* gateway.h — the gateway's endpoint (--gateway-endpoint) as the driver's sandboxes reach it.
 * Owns: the URL http://HOST[:PORT][/PATH] or https://… parsed strictly (HOST a name of
 * letters, digits, dots and dashes, a dotted-quad IPv4 address or a bracketed IPv6 one; PORT
 * 1-65535, else 80 or 443 by the scheme) into the allowedHosts entry HOST:PORT the driver adds to
 * every sandbox's governed egress (bundle.h), and, when HOST is an address, the same entry given
 * to mxc-oci as the one node-local endpoint its annotations may name
 * (MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS in the driver's environment, which mxc-oci inherits:
 * src/oci/nodelocal.h) and asked of the gateway as its listener (GetGatewayListenerRequirements:
 * exact_bind_address).  A tenant's driver_config gains nothing from it: every other node-local
 * destination it names is still refused by mxc-oci. */
#ifndef MXC_OSD_GATEWAY_H
#define MXC_OSD_GATEWAY_H

#include <stdbool.h>

#include "error.h"

typedef struct {
    char entry[300]; /* HOST:PORT, IPv6 as [ADDR]:PORT */
    bool literal;    /* HOST is an IP address */
} osd_gateway;

/* 0 and *gw, or -1 with *e (MXC_E_BACKEND_UNAVAILABLE) naming what is wrong. */
int osd_gateway_parse(const char *url, osd_gateway *gw, mxc_error *e);

/* A literal gw's entry added to MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS in this process's environment
 * (kept: what the operator set there).  0, or -1 with *e. */
int osd_gateway_allow(const osd_gateway *gw, mxc_error *e);

#endif
