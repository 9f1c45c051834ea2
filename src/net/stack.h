/* stack.h — the userspace network stack and the rules, from the caller's side.
 * Owns: installing a plan's nftables rule set inside the sandbox's network
 * namespace (from a short-lived process outside the sandbox, through
 * libnftables), starting pasta for that namespace as the runtime (in the
 * caller's namespaces, never in the sandbox's), and a keeper process that
 * ends pasta when the sandbox's PID 1 is gone; the host-capability checks
 * and the probe's network keys.  Must never run before the namespace
 * exists, nor let the workload start before both rules and route are in
 * place (the caller calls it while the holder still waits).  The calls a
 * front makes itself (attach, the rules into a pod's namespace) are
 * declared in net.h, the engine's through its table (netplan.h). */
#ifndef MXC_NET_STACK_H
#define MXC_NET_STACK_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "net.h"
#include "netpolicy.h"
#include "thishost.h"

#define MXC_NET_PASTA "/usr/bin/pasta"
#define MXC_NET_PASTA_AVX2 "/usr/bin/passt.avx2" /* what pasta re-execs itself as on an AVX2 CPU */

/* Whether a plan of this model needs something attached from outside
 * before its workload runs: the stack and the rules (models 1, 2), or
 * mxc-proxy (governed egress). */
bool mxc_net_needs_stack(const mxc_net_policy *np);
/* backend_unavailable (with a remediation) when this host cannot enforce
 * the model: pasta missing, or rootless (pasta is started as root here). */
int mxc_net_require(const mxc_net_policy *np, bool rootless, mxc_error *e);
/* The nftables script mxc_net_attach would install now: the plan's rule
 * set and, for model 1, the `thishost` set's elements as the caller's
 * namespace has them now (into *now, which the caller frees, when not
 * NULL).  Owned text; NULL with *err = -errno when they cannot be listed,
 * or when the plan has no rules (*err 0). */
char *mxc_net_rules_now(const mxc_net_policy *np, mxc_thishost *now, int *err);
/* pasta started on the namespace nsfd with model 1's (or 2's) arguments for np, by a launcher
 * forked here, which first moves itself into a cgroup through the `tasks` files join[] (njoin 0:
 * none): the pid it daemonized as, or -1 with why (the keeper's; the pool's refiller). */
pid_t mxc_net_pasta_start(const mxc_net_policy *np, int nsfd, int *join, size_t njoin, char *why, size_t whysz);
/* container.c's hook once the id maps are written and sent: a direct
 * one-shot's PID 1 or a session's holder (pid1, cloned into its namespaces)
 * exists and builds its view meanwhile (direct true), so its network is
 * attached now; it runs nothing (workload, readiness, so no exec) before
 * container.c's next message, sent after this returns.  Otherwise (a
 * one-shot of a multi-threaded in-process caller, whose namespaces C1 makes
 * after the maps) container.c calls mxc_net_attach once the holder is
 * ready, and the workload waits for it. */
int mxc_net_after_maps(const mxc_net_policy *np, const mxc_net_cgroup *cg, bool direct, pid_t pid1, mxc_error *e);
/* {"userspaceStack":{...}, "nfTables":bool, "conntrack":bool, "dns":{...},
 * "thisHost":{"rejected":[prefixes], "followsChanges":true}} */
json_t *mxc_net_probe(void);

#endif
