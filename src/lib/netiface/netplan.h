/* netplan.h — the typed network plan: the one header of the engine the network layer (src/net)
 * may include (scripts/layers.json "interfaces"; docs/architecture.md, the network section).
 * Owns: the connectivity models; a request's network section as the engine parsed it
 * (mxc_net_section, from the wire by request.c, from mxc-oci's io.mxc.network annotation by
 * mxc_net_section_parse — the same checks); the plan src/net lowers it into and attaches
 * (mxc_net_policy: built whole by plan.c's mxc_net_plan_build, read-only afterwards); what the
 * network layer attaches with besides the plan (mxc_net_cgroup: the sandbox's cgroup, known only
 * once the sandbox is made); and the few engine services src/net uses for its helpers (their
 * cgroup, their descriptors and signals, the proxy's audit file), declared here so that src/net
 * reaches the engine through this header alone (each is defined, and declared again, by its
 * module: cgroup.h, harden.h, hostpath.h; plan.c includes both, so the compiler keeps them equal).
 * And the inversion between the two layers: the engine sits below the network, so it never calls
 * src/net; it declares here what it needs of a network layer (mxc_net_ops) and calls that, and
 * the network layer provides the table (src/net/iface/net.h mxc_net_install: each front calls it at
 * startup; libmxc.so, which carries the network layer whole, has it installed at load).  Until
 * one is installed the engine's own table answers, failing closed: a request with no network
 * (model 3) is planned, anything else refused backend_unavailable. */
#ifndef MXC_NETPLAN_H
#define MXC_NETPLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef enum {
    MXC_NETM_NONE = 0, /* model 3: own namespace, loopback only */
    MXC_NETM_HOST,     /* the canonical unrestricted acknowledgment: the host network */
    MXC_NETM_DIRECT,   /* model 1: default route through the userspace stack, egress rules */
    MXC_NETM_PROXY,    /* model 2: only the caller's loopback proxy endpoint */
    MXC_NETM_GOVERNED, /* governed egress: own namespace, only mxc-proxy's listener on its loopback (host lists) */
} mxc_net_model;

/* Model 1's pool of network namespaces made ahead (src/net/netpool.h): root's records of pids it
 * kills and namespaces it joins, so never a sandbox's to reach (hostpath.c refuses a grant of it). */
#define MXC_NETPOOL_DIR "/run/mxc-netpool"

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

/* A section's typed parts (src/lib/netrules.h reads them from its JSON with their shape checks), so
 * that src/net lowers typed rules: the directions' defaults, the egress rules, the credentials. */
typedef struct {
    int family; /* AF_INET / AF_INET6 */
    unsigned char addr[16];
    int len;    /* the prefix length; the host part is zero */
} mxc_cidr;
typedef struct {
    mxc_cidr cidr;
    mxc_cidr *except; /* of cidr's family (owned) */
    size_t nexcept;
} mxc_net_peer;
typedef enum { MXC_NET_PROTO_ANY, MXC_NET_PROTO_TCP, MXC_NET_PROTO_UDP, MXC_NET_PROTO_ICMP } mxc_net_proto;
typedef struct {
    mxc_net_proto proto;
    int port, end_port; /* 0: any port; else port <= end_port (end_port == port: the one port); icmp: 0 */
} mxc_net_port;
typedef struct {
    mxc_net_peer *to; /* none: any destination */
    size_t nto;
    mxc_net_port *ports; /* none: any protocol and port */
    size_t nports;
} mxc_net_rule;
typedef struct {
    mxc_net_rule *v; /* owned (mxc_net_rules_free) */
    size_t n;
} mxc_net_rules;
typedef struct {
    bool egress_allow, ingress_allow, loopback_allow; /* egress.default, ingress.default, ingress.hostLoopback */
    bool has_rules;                                   /* egress.allow or egress.deny non-empty */
} mxc_net_directions;
/* One of network.credentials, as checked: a binding and where its secret is, never the secret. */
typedef struct {
    char *name, *host;     /* owned */
    long long revision;
    int port;
    char *path_prefix;     /* owned; NULL: none */
    char *secret_env;      /* owned: the caller's variable the secret is read from at attach */
    char *env;             /* owned; NULL: none (the workload's variable for the placeholder) */
} mxc_net_credential;
/* A request's network, as parsed: either dialect's section (and contract 1.0's
 * runtimeConfig.networkProxy), before src/net chooses its model, all of it typed by the engine
 * (request.c, netrules.h: refusals name their paths): src/net reads no JSON of it. */
typedef struct mxc_net_section {
    bool present;              /* a network section, or runtimeConfig.networkProxy alone */
    bool directional;          /* the egress/ingress form (schema 0.8+, or contract 1.0): read by netrules.c */
    bool allow;                /* legacy: defaultPolicy "allow" */
    bool allow_local;          /* legacy: allowLocalNetwork true */
    bool proxy;                /* legacy: network.proxy, as read (request.c): */
    const char *proxy_url;     /*   its url (borrowed); NULL: none */
    bool proxy_localhost;      /*   its localhost given */
    int proxy_localhost_port;  /*   that, when an integer from 1 to 65535; else 0 */
    bool proxy_builtin_test;   /*   its builtinTestServer given */
    const char **allowed_hosts, **blocked_hosts; /* legacy host lists (borrowed strings) */
    size_t nallowed, nblocked;
    bool owns_lists;           /* mxc_net_section_parse's: the arrays are its (mxc_net_section_free) */
    bool credentials;          /* legacy network.credentials given (typed below) */
    const char *network_proxy; /* contract 1.0: runtimeConfig.networkProxy (borrowed); NULL: none */
    /* the directional form, typed by the engine when the section is made (netrules.c); each refusal is
     * kept, for src/net to give where the model asks for it (the directions' first; the rules' only
     * once the model is model 1, after the model's own refusals): */
    mxc_net_directions dirs;
    int dirs_rc;               /* 0, or -1 with dirs_err */
    mxc_error dirs_err;
    mxc_net_rules egress_deny, egress_allow; /* owned (mxc_net_section_free) */
    int rules_rc;              /* 0, or -1 with rules_err */
    mxc_error rules_err;
    mxc_net_credential *creds; /* network.credentials, checked (owned; NULL: none or refused) */
    size_t ncreds;
    int creds_rc;              /* 0, or -1 with creds_err (given once governed egress is chosen) */
    mxc_error creds_err;
} mxc_net_section;

/* A policy_validation refusal, its message bounded at 400 bytes: the network's refusals, the
 * engine's readers' of a section (netrules.c) and src/net's of a model.  -1. */
int mxc_net_refuse(mxc_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parsed by the engine (netrules.h) when a section is made; freed with the section. */
void mxc_net_rules_free(mxc_net_rules *r);
/* The section's credentials copied into a plan (its own: the plan outlives the section); NULL when
 * c is.  Freed by mxc_net_credentials_free. */
int mxc_net_credentials_copy(const mxc_net_credential *c, size_t n, mxc_net_credential **out, mxc_error *e);
void mxc_net_credentials_free(mxc_net_credential *c, size_t n);

/* The lowered network plan: the model and what attaching it needs. */
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
    mxc_net_credential *creds; /* governed: network.credentials as checked (owned; NULL: none given): bindings
                                  and secretEnv names, never a secret (src/net/governed.c reads those at attach) */
    size_t ncreds;
    char ca_base[768];        /* governed with credentials: the host directory the CA files go under
                                 (.mxc-proxy/<sandbox>/ below it; mxc-oci: the directory itself) */
    char *workload_env;       /* governed with credentials: JSON array of "K=V" for every process of the
                                 sandbox (placeholders, CA variables); a session's exec restores it from state */
    char dns[16];             /* model 1: the IPv4 resolver the stack's DNS forwarder relays to, never host
                                 loopback (src/net/resolver.h); "": no forwarder, dns_why says why */
    char dns_why[240];
    unsigned proxy_max_conns; /* governed: the proxy's connection cap (MXC_PROXY_MAX_CONNECTIONS, plan.c) */
    unsigned long long proxy_audit_max; /* governed: its audit file's cap (MXC_PROXY_AUDIT_MAX_BYTES, plan.c) */
} mxc_net_policy;

/* The sandbox's cgroup (cgroup.h) and its limits, given to the attach: mxc-proxy and pasta run
 * in its helpers' child.  NULL or name "": no cgroup. */
typedef struct {
    char name[64];
    unsigned long long pids_max, memory_max, cpu_quota_us;
} mxc_net_cgroup;

/* What the engine asks of the network layer (each as src/net documents it: netpolicy.h,
 * stack.h, governed.h, resolver.h). */
typedef struct mxc_net_ops {
    /* the model of a section, its rules, host lists and credentials (mxc_net_policy_build) */
    int (*lower)(const mxc_net_section *s, mxc_net_policy *np, mxc_error *e);
    /* backend_unavailable when this host cannot enforce the model (mxc_net_require) */
    int (*require)(const mxc_net_policy *np, bool rootless, mxc_error *e);
    /* governed egress: a fresh proxy credential; what every process gets with credentials */
    int (*credential)(mxc_net_policy *np, mxc_error *e);
    int (*workload_env)(mxc_net_policy *np, mxc_error *e);
    /* model 1: the DNS forwarder's resolver, read now (mxc_resolver_plan) */
    void (*resolve)(mxc_net_policy *np);
    /* something to attach from outside before the workload runs (mxc_net_needs_stack) */
    bool (*needs_stack)(const mxc_net_policy *np);
    int (*after_maps)(const mxc_net_policy *np, const mxc_net_cgroup *cg, bool direct, pid_t pid1, mxc_error *e);
    int (*attach)(const mxc_net_policy *np, const mxc_net_cgroup *cg, pid_t holder, mxc_error *e);
    /* a one-shot's end: its CA files (mxc_governed_remove_ca) */
    void (*remove_ca)(const mxc_net_policy *np);
    /* --dry-run: the rule set as it would go in now (mxc_net_rules_now), owned; NULL with *err */
    char *(*rules_now)(const mxc_net_policy *np, int *err);
    /* --probe's networkModels (mxc_net_probe), new reference */
    json_t *(*probe)(void);
    /* model 1, root: a network namespace made ahead with its stack attached (src/net/netpool.h),
     * claimed one-use: its descriptor, which the caller joins (setns) to clone the sandbox's first
     * process without CLONE_NEWNET, and which after_maps/attach then recognise; -1: none (the
     * caller makes a namespace as without a pool); cgroup: the sandbox's cgroup name, not made
     * yet (v1: the entry's cgroup, pasta in it, is renamed to it) */
    int (*pool_claim)(const mxc_net_policy *np, const char *cgroup);
    /* the pool topped up for the plan's key by a detached refiller, off the caller's path */
    void (*pool_refill)(const mxc_net_policy *np);
    /* --gc: the pool's stale entries (killed and removed when act), counted into r */
    void (*pool_sweep)(bool act, json_t *r);
    /* a start that failed: the entry it claimed and did not adopt (pool_claim) ended now, its
     * pasta killed and its record removed (nothing for --gc to find); a no-op without one */
    void (*pool_release)(void);
} mxc_net_ops;

/* The network layer's table, installed once (at startup, before any thread); NULL: none. */
void mxc_net_ops_set(const mxc_net_ops *ops);
/* The installed table, else the engine's failing-closed one: never NULL. */
const mxc_net_ops *mxc_net_ops_get(void);

/* A session exec's network plan, from what its start recorded: model 2 or governed egress when
 * proxy_url is in exactly one of the two shapes start writes (mxc_net_proxy_url_ok), with the
 * workload's environment (env: a JSON array of "K=V", may be NULL); else model 3's empty plan.
 * Only what the exec's environment needs (mxc_exec_spec_build). */
void mxc_net_plan_restore(const char *proxy_url, const json_t *env, mxc_net_policy *np);
/* The plan's owned parts freed (netplan.c). */
void mxc_net_policy_free(mxc_net_policy *np);
const char *mxc_net_model_name(mxc_net_model m);
/* A proxy URL as a session's state may hold it (what start recorded):
 * model 2's http(s)://10.0.2.2:PORT/, or governed egress's
 * http://mxc:<32 hex>@127.0.0.1:3128/. */
bool mxc_net_proxy_url_ok(const char *url);

/* --- engine services for the network layer's helpers (defined by their modules) --- */
/* cgroup.h: the helpers' child cgroup of sandbox `name` (made with its limits), and the files a
 * helper moves itself in through (v1: `tasks`, so the mover must be single-threaded — a process
 * just forked): how many (0-3) are in fds[], or -1. */
int mxc_cgroup_helpers_join_fds(const char *name, uint64_t pids_max, uint64_t memory_max, uint64_t cpu_quota_us,
                                int fds[3], mxc_error *e);
/* cgroup.h: in the process that moves: "0" written to each fd, and closed.  0 or -errno. */
int mxc_cgroup_join_self(int *fds, size_t n);
/* cgroup.h: model 1's pool (src/net/netpool.h), v1 only: a sandbox's cgroup made ahead under
 * `name` (pids and memory, where this host has them; never one that exists), its helpers' child
 * with it, and the helpers' `tasks` files opened into fds: how many (1-2), or -errno (-ENOTSUP:
 * not v1), nothing left made. */
int mxc_cgroup_pool_make(const char *name, int fds[2]);
/* cgroup.h: v1 only: the cgroup `from` renamed `to` in each hierarchy (v1 renames within one
 * parent; its processes and their charges go with it, with no migration).  0, or -errno
 * (-EIO: the first hierarchy could not be renamed back). */
int mxc_cgroup_rename(const char *from, const char *to);
/* cgroup.h: a pool's cgroup made by mxc_cgroup_pool_make: what is in it killed, and removed. */
void mxc_cgroup_pool_remove(const char *name);
/* harden.h: every descriptor closed but keep[]; every signal's disposition and mask reset. */
void mxc_close_all_but(int *keep, size_t n);
void mxc_reset_signals(void);
/* hostpath.h: a log file named by the caller, opened for appending, never through a link. */
int mxc_hostpath_open_log(const char *path, mxc_error *e);

#endif
