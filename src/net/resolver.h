/* resolver.h — owns: which resolver model 1's DNS forwarder relays to.
 * The sandbox asks pasta's forwarder (MXC_NET_DNS, 10.0.2.3); pasta sends
 * the datagram on from the host's namespace.  Left to itself it relays to
 * the first nameserver of the host's /etc/resolv.conf — host loopback
 * wherever systemd-resolved (127.0.0.53), dnsmasq or Docker's embedded DNS
 * (127.0.0.11) runs — and model 1 never lets the sandbox reach host
 * loopback (hostLoopback: deny is the only value it delivers).  So the
 * runtime chooses, and names the choice to pasta (-D): the first IPv4
 * nameserver of /etc/resolv.conf that is not host loopback (127/8, 0/8);
 * when the file names only host-loopback ones, systemd-resolved's own
 * upstreams (/run/systemd/resolve/resolv.conf) the same way; when there is
 * none, no forwarder at all (pasta without --dns-forward, -D none), said
 * in the plan (--dry-run's networkDns), the probe and the sandbox's
 * /etc/resolv.conf.  An IPv6 nameserver never counts: the stack runs IPv4
 * only. */
#ifndef MXC_NET_RESOLVER_H
#define MXC_NET_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>

#include "netpolicy.h"

#define MXC_RESOLV_CONF "/etc/resolv.conf"
#define MXC_RESOLV_RESOLVED "/run/systemd/resolve/resolv.conf" /* systemd-resolved's upstreams */

/* Pure: the first IPv4 `nameserver` of a resolv.conf text that is not host
 * loopback, into out (dotted quad): true; false when none.  *loopback
 * (may be NULL) is set when a host-loopback nameserver was seen. */
bool mxc_resolver_pick(const char *text, char *out, size_t outsz, bool *loopback);

/* Model 1's choice, read now from the host's files: np->dns (the resolver,
 * or "" with np->dns_why).  No-op for every other model. */
void mxc_resolver_plan(mxc_net_policy *np);

#endif
