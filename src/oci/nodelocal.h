/* nodelocal.h — the node's own destinations in an io.mxc.network policy (issue 34, finding 4).
 * Owns: refusing, before anything runs, what in an annotation's policy reaches the node itself —
 * the container's mxc-proxy and pasta dial from mxc-oci's (the node's) network namespace, and
 * under Kubernetes the annotation is a tenant's while node-local services (the kubelet, etcd, a
 * cloud's metadata service) are the operator's.  Refused, naming the entry:
 *   - an allowedHosts IP literal or CIDR, or a model-1 egress.allow[].to[].cidr, that meets
 *     loopback (127.0.0.0/8, ::1), "this host" (0.0.0.0/8, ::) or link-local (169.254.0.0/16,
 *     fe80::/10), directly or through an IPv6 form embedding IPv4 (v4-mapped, compat, SIIT, NAT64,
 *     6to4: the forms src/proxy/hostpolicy.c judges by the embedded address) — unless the rule's
 *     own `except` carves that part out;
 *   - one that is exactly one of the node's own addresses (IPv4: every `local` route, thishost.h;
 *     IPv6: its interfaces' addresses) — the shape through which the engine admits them
 *     (a wider CIDR never does: src/proxy/hostpolicy.h, netpolicy.h);
 *   - model 1's egress.default allow without an egress.deny rule (all ports) covering
 *     169.254.0.0/16 (loopback and the node's addresses it never reaches: thishost.h);
 *   - network.proxy (model 2): an endpoint on the node's loopback by definition.
 * Names are not judged: an allowed name never reaches a special address (hostpolicy.h).
 * Unless the node's operator allows them: MXC_OCI_ALLOW_NODE_LOCAL=1 in mxc-oci's own environment
 * (the runtime entry containerd or Podman runs it with; a container's process.env never reaches
 * it).  Narrower: MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS=EP[,EP...] (at most 16), each exactly
 * a.b.c.d:PORT or [v6]:PORT (port 1-65535, decimal), anything else refused naming it: an
 * allowedHosts entry that is exactly one of them (same address, same port; IPv4 also as
 * [::ffff:a.b.c.d]), or a model-1 peer of one address (/32, /128) in a rule whose ports are
 * exactly that one TCP port, is let through; every other node-local entry is still refused
 * (mxc-openshell-driver sets it to its gateway's endpoint: docs/openshell.md).  The wire contract (mxc-exec) keeps the engine's rules: its caller is the policy's author. */
#ifndef MXC_OCI_NODELOCAL_H
#define MXC_OCI_NODELOCAL_H

#include <jansson.h>

#include "error.h"
#include "front.h"

#define OCI_ALLOW_NODE_LOCAL_ENV "MXC_OCI_ALLOW_NODE_LOCAL"
#define OCI_ALLOW_NODE_LOCAL_ENDPOINTS_ENV "MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS"

/* s: the annotation's network section as the engine parsed it (legacy dialect), network its JSON,
 * model what the engine made of it.  0, or -1 with *e set (policy_validation naming the entry; backend_error when the
 * node's addresses cannot be read, MXC_OCI_ALLOW_NODE_LOCAL holds another value than 1, or an endpoint is malformed). */
int oci_nodelocal_check(const mxc_net_section *s, const json_t *network, mxc_net_model model, mxc_error *e);

#endif
