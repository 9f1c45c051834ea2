/* localroute.h — owns: asking the kernel of the namespace mxc-proxy dials
 * from whether a destination is this host — whether a connection to it
 * would be delivered locally (a route of type local: an address of any of
 * the host's interfaces, loopback, an AnyIP range) — through one
 * RTM_GETROUTE request on a NETLINK_ROUTE socket, asked afresh before each
 * dial (addresses come and go).  The policy's answer to "local" is
 * hostpolicy.h's check_dial; this module only asks.  Needs no privilege. */
#ifndef MXC_PROXY_LOCALROUTE_H
#define MXC_PROXY_LOCALROUTE_H

#include <sys/socket.h>

/* 1: a to this host; 0: routed elsewhere, or no route; -1: the kernel
 * could not be asked (the caller fails closed).  An IPv4-mapped IPv6
 * address is asked as the IPv4 one it is connected as. */
int mxc_dest_is_local(const struct sockaddr *a);

#endif
