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

/* pasta is charged to its sandbox's memory limit (its helpers' cgroup, a child of the sandbox's):
 * ~21 MiB of its own once started (20 MiB resident, its packet buffers, and 1 MiB of kernel
 * memory: Debian 12's passt.avx2, measured in a pool entry's cgroup), beside its keeper and the
 * workload.  A sandbox whose network runs it (models 1 and 2) and whose memory a cgroup limits is
 * refused below this (plan.c): under it pasta was OOM-killed as it started ("pasta failed
 * (signal 9)") or a pooled one's charge refused the limit ("Device or resource busy"). */
#define MXC_NET_STACK_MEMORY_MIN (32ull << 20)
#define MXC_NET_STACK_MEMORY_NEED_MIB 21

/* Both, and pasta's keeper, run with this OOM score adjustment once charged to the sandbox's
 * cgroup (the keeper and mxc-proxy write their own after joining it, before any exec; a pasta the
 * keeper starts inherits it; an adopted pool pasta is given it through its pidfd; an idle pool
 * entry's, and mxc-oci's uncharged helpers, keep their caller's): when the sandbox runs out of
 * memory its memory cgroup's OOM killer takes the workload, never the network it would live on
 * without.  Not -1000 (OOM_SCORE_ADJ_MIN): a helper stays killable as the
 * last resort, or a cgroup with nothing else left to kill would stall instead.  Lowering a score
 * needs CAP_SYS_RESOURCE over the host: without it (rootless, a container that drops it) the
 * helpers keep their caller's score, --probe says which (networkHelpers.oomScoreAdj). */
#define MXC_HELPER_OOM_SCORE_ADJ (-999)

#endif
