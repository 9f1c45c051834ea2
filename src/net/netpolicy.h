/* netpolicy.h — a request's network, as one of the connectivity models.
 * Owns: choosing the model (host network, 1 direct egress under rules,
 * 2 the proxy endpoint only, 3 nothing) from either dialect, validating
 * the directional rules it lowers (CIDRs, except, protocol, port, endPort;
 * hostnames and unenforceable shapes refused with their JSON path), and
 * lowering them into the nftables script installed inside the sandbox's
 * network namespace.  Pure: no syscalls.  Never emits caller text into
 * the script: every address and port is re-printed from parsed numbers. */
#ifndef MXC_NET_NETPOLICY_H
#define MXC_NET_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "request.h"

typedef enum {
    MXC_NETM_NONE = 0, /* model 3: own namespace, loopback only */
    MXC_NETM_HOST,     /* the canonical unrestricted acknowledgment: the host network */
    MXC_NETM_DIRECT,   /* model 1: default route through the userspace stack, egress rules */
    MXC_NETM_PROXY,    /* model 2: only the caller's loopback proxy endpoint */
    MXC_NETM_GOVERNED, /* governed egress: own namespace, only mxc-proxy's listener on its loopback (host lists) */
} mxc_net_model;

/* Governed egress: where the sandbox reaches mxc-proxy (its own loopback)
 * and the user name of its credential. */
#define MXC_GOVERNED_ADDR "127.0.0.1"
#define MXC_GOVERNED_PORT_TEXT "3128"
#define MXC_GOVERNED_PORT 3128 /* = MXC_GOVERNED_PORT_TEXT */
#define MXC_GOVERNED_USER "mxc"
/* how a governed endpoint's URL begins (its credential follows) */
#define MXC_GOVERNED_URL_HEAD "http://" MXC_GOVERNED_USER ":"

/* The sandbox side of the userspace stack (the topology upstream's
 * slirp4netns build uses): tap0 10.0.2.100/24, the gateway 10.0.2.2 is the
 * host's loopback, 10.0.2.3 the stack's DNS forwarder. */
#define MXC_NET_IFNAME "tap0"
#define MXC_NET_ADDR "10.0.2.100"
#define MXC_NET_GATEWAY "10.0.2.2"
#define MXC_NET_DNS "10.0.2.3"
#define MXC_NET_TABLE "mxc"

typedef struct {
    mxc_net_model model;
    unsigned short proxy_port; /* model 2 */
    char proxy_url[128];      /* models 2 and governed: the endpoint as the sandbox reaches it (governed: with
                                 its credential) */
    char *ruleset;            /* models 1 and 2: the nftables script (owned) */
    char *hosts;              /* governed: {"allowed":[..],"blocked":[..]} for mxc-proxy (owned) */
    char sandbox[64];         /* governed: the sandbox's name, for the proxy's audit */
    char audit_path[768];     /* governed: where the proxy's audit records go ("" : nowhere) */
    bool audit_by_caller;     /*   named by the caller (MXC_PROXY_AUDIT_FILE): opened as --log-file is */
    char *creds;              /* governed: network.credentials as validated, JSON text (owned): bindings and
                                 secretEnv names, never a secret (src/net/governed.c reads those at attach) */
    char ca_base[768];        /* governed with credentials: the host directory the CA files go under
                                 (.mxc-proxy/<sandbox>/), bound at the same path inside (workspace or grant) */
    char *workload_env;       /* governed with credentials: JSON array of "K=V" for every process of the
                                 sandbox (placeholders, CA variables); a session's exec restores it from state */
    char dns[16];             /* model 1: the IPv4 resolver the stack's DNS forwarder relays to, never host
                                 loopback (src/net/resolver.h); "": no forwarder, dns_why says why */
    char dns_why[240];
    unsigned proxy_max_conns; /* governed: the proxy's connection cap (MXC_PROXY_MAX_CONNECTIONS, plan.c) */
    unsigned long long proxy_audit_max; /* governed: its audit file's cap (MXC_PROXY_AUDIT_MAX_BYTES, plan.c) */
    struct {                  /* set by container.c before the attach: the sandbox's cgroup (cgroup.h) and its
                                 limits; mxc-proxy and pasta run in its helpers' child ("": no cgroup) */
        char name[64];
        unsigned long long pids_max, memory_max, cpu_quota_us;
    } cgroup;
} mxc_net_policy;

/* A proxy URL as a session's state may hold it (what start recorded):
 * model 2's http(s)://10.0.2.2:PORT/, or governed egress's
 * http://mxc:<32 hex>@127.0.0.1:3128/. */
bool mxc_net_proxy_url_ok(const char *url);

/* The model a (structurally valid) request asks for, and for models 1
 * and 2 its rule set.  Refusals are policy_validation naming the path. */
int mxc_net_policy_build(const mxc_request *r, mxc_net_policy *np, mxc_error *e);
void mxc_net_policy_free(mxc_net_policy *np);
const char *mxc_net_model_name(mxc_net_model m);

#endif
