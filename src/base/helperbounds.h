/* helperbounds.h — owns: the numbers that bound the host-side network
 * helpers a workload drives (mxc-proxy for governed egress, pasta for
 * models 1 and 2), one place for the executor, the proxy, --probe and
 * docs/security.md.  Both also run in a child cgroup of their sandbox's
 * (cgroup.h, MXC_CGROUP_HELPERS): the sandbox's pids, memory and CPU limits
 * count them, not the host.  Macros only: no code, no syscalls. */
#ifndef MXC_HELPERBOUNDS_H
#define MXC_HELPERBOUNDS_H

/* mxc-proxy: concurrent client connections (MXC_PROXY_MAX_CONNECTIONS) */
#define MXC_PROXY_MAX_CONNECTIONS 1024
#define MXC_PROXY_MAX_CONNECTIONS_MOST 65536
/* its RLIMIT_NOFILE, soft and hard, whatever its caller's: per connection
 * (a relayed one holds six: two sockets, two pipes; a name lookup's
 * sockets), plus its own (listener, pidfd, audit, epoll, the reserve) */
#define MXC_PROXY_NOFILE_PER_CONN 8
#define MXC_PROXY_NOFILE_FIXED 64
/* its audit file (MXC_PROXY_AUDIT_MAX_BYTES) and the records' rates: a
 * token bucket for refusals, one for allowed traffic (src/proxy/auditlog.h) */
#define MXC_PROXY_AUDIT_MAX_BYTES (16ull << 20)
#define MXC_PROXY_AUDIT_DENIED_PER_SEC 50
#define MXC_PROXY_AUDIT_DENIED_BURST 500
#define MXC_PROXY_AUDIT_ALLOWED_PER_SEC 200
#define MXC_PROXY_AUDIT_ALLOWED_BURST 2000

/* pasta: its RLIMIT_NOFILE, soft and hard (it raises its soft limit to
 * the hard one, which bounds how many flows the sandbox can hold open) */
#define MXC_NET_STACK_NOFILE 8192

#endif
