/* request.h — the wire request, parsed and structurally validated.
 * Owns: bytes -> JSON (bounded size and depth, duplicate keys, NUL, UTF-8),
 * the exact JSON type of every field, unknown-key refusal at every level of
 * the stable surface (naming the JSON path), the version gate and the
 * mode rules (phase/sandboxId/containment/commandLine).  Pure: no syscalls.
 * Policy dispositions are policy.c's; this module only says what was sent. */
#ifndef MXC_REQUEST_H
#define MXC_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "netplan.h"

#define MXC_REQUEST_MAX_BYTES (1u << 20) /* 1 MiB */
#define MXC_REQUEST_MAX_DEPTH 32
#define MXC_LIST_MAX 256 /* entries in any array field */

typedef enum { MXC_PHASE_NONE = 0, MXC_PHASE_PROVISION, MXC_PHASE_START, MXC_PHASE_EXEC, MXC_PHASE_STOP,
               MXC_PHASE_DEPROVISION } mxc_phase;

typedef enum { MXC_CONT_PROCESS = 0, MXC_CONT_ISOLATION_SESSION } mxc_containment;

typedef enum { MXC_TRI_ABSENT = 0, MXC_TRI_FALSE, MXC_TRI_TRUE } mxc_tri;

/* Which wire dialect a request speaks, chosen by its "version": the legacy
 * 0.6-0.9 schemas (version absent or a semver in that range), or the
 * exact registered contracts 0.9.0-alpha, 1.0.0 and 1.1.0-alpha
 * (request_v1.c). */
typedef enum { MXC_DIALECT_LEGACY = 0, MXC_DIALECT_V1 } mxc_dialect;

/* Contract 1.0's directional network, as one of the postures we enforce. */
typedef enum {
    MXC_NET_V1_NONE = 0,    /* legacy request */
    MXC_NET_V1_BLOCK,       /* egress default deny, no rules, ingress deny: own namespace, loopback only */
    MXC_NET_V1_ALLOW_ALL,   /* egress, ingress and hostLoopback allow, no rules: the host network */
    MXC_NET_V1_RULES,       /* anything else: rules, egress or hostLoopback allow, ingress allow alone — lowered
                               (or refused, naming the path) by src/net/netpolicy.c */
} mxc_net_v1;

#define MXC_PARSE_EXPERIMENTAL 1u /* experimental backends are permitted (contract 1.1.0-alpha) */

typedef struct {
    const char **v; /* borrowed from the JSON tree */
    size_t n;
} mxc_strlist;

typedef struct mxc_request {
    json_t *root;
    mxc_dialect dialect;
    const char *contract;     /* V1: the registered version it names */
    mxc_phase phase;
    bool has_containment;
    mxc_containment containment;
    const char *containment_name;
    const char *sandbox_id; /* NULL = absent */

    bool has_process;
    const char *command_line;
    const char *cwd;
    mxc_strlist env;
    uint32_t timeout_ms;

    bool has_filesystem;
    mxc_strlist rw, ro, denied;

    bool has_network;
    bool net_directional;         /* egress/ingress form */
    bool net_allow;               /* defaultPolicy == "allow" */
    bool net_has_default_policy;
    bool net_has_enforcement_mode;
    mxc_tri net_allow_local;
    mxc_strlist allowed_hosts, blocked_hosts;
    bool net_proxy;               /* legacy network.proxy (model 2: src/net) */
    json_t *net_credentials;      /* legacy network.credentials (borrowed from root; governed egress only) */

    bool has_ui;
    mxc_tri ui_disable, ui_injection;
    const char *ui_clipboard; /* NULL = absent */

    bool has_lifecycle;
    mxc_tri destroy_on_exit, preserve_policy;
    bool has_fallback;
    bool has_container_id;
    bool has_runtime_config;
    const char *stable_section; /* first stable backend section present, or NULL */

    /* V1 only */
    bool env_given;           /* process.env present (even []) */
    bool inherit_default_env; /* process.inheritDefaultEnv true */
    bool has_telemetry;
    bool has_wslc_section;    /* a top-level wslc section (the schema refuses it first; the matrix says why) */
    mxc_net_v1 net_v1;
    const char *net_v1_what;  /* RULES: the shape, for messages */
    const char *network_proxy; /* runtimeConfig.networkProxy; NULL = absent */

    /* not from the wire: an in-process caller's terminal size for an exec on a pty (0 = default) */
    unsigned short pty_rows, pty_cols;

    json_t *experimental; /* borrowed; NULL = absent */
    bool has_app_id;      /* the provision's appId: experimental.isolation_session.provision.appId;
                             contract 1.0: isolationSession.provision.appId */
    const char *app_id;
    size_t app_id_len;
} mxc_request;

int mxc_request_parse(const char *buf, size_t len, mxc_request *r, mxc_error *e);
/* The same, with MXC_PARSE_* options. */
int mxc_request_parse_opts(const char *buf, size_t len, unsigned opts, mxc_request *r, mxc_error *e);

/* request_v1.c: true for an exact registered contract version. */
bool mxc_contract_is_registered(const char *version);
/* request_v1.c: parses root (a JSON object whose "version" is registered;
 * r->root already owns it) as contract 0.9.0-alpha / 1.0.0 / 1.1.0-alpha. */
int mxc_request_parse_v1(mxc_request *r, unsigned opts, mxc_error *e);

/* The policy a provision fixes for the session's life, in the engine's own
 * (legacy) shape, whatever dialect the request spoke: {filesystem, network,
 * ui}.  New reference. */
json_t *mxc_request_policy_json(const mxc_request *r);
void mxc_request_free(mxc_request *r);

/* The request's network as the typed section src/net lowers (netplan.h): borrows from r, its typed
 * rules freed by mxc_net_section_free; what the plan (plan.c) and the policy check (policy.c) hand
 * to src/net. */
void mxc_request_net_section(const mxc_request *r, mxc_net_section *s);
/* A network section alone — mxc-oci's io.mxc.network annotation — checked exactly as a one-shot
 * request's network is (the legacy schema at its newest, 0.9: its keys and values, then the policy
 * matrix's one-shot column, policy.c) and parsed into s, with no request around it.  Borrows from
 * n; mxc_net_section_free frees what it allocated.  -1 with *e set (malformed_request or
 * policy_validation, naming the field). */
int mxc_net_section_parse(json_t *n, mxc_net_section *s, mxc_error *e);
void mxc_net_section_free(mxc_net_section *s);
/* A request behind a pointer, as a front holds it (iface/front.h says each). */
mxc_request *mxc_request_new(void);
void mxc_request_delete(mxc_request *r);
bool mxc_request_is_v1(const mxc_request *r);
bool mxc_request_is_exec(const mxc_request *r);
bool mxc_request_in_session(const mxc_request *r);
const char *mxc_request_contract(const mxc_request *r);
json_t *mxc_request_json(const mxc_request *r);
void mxc_request_set_pty_size(mxc_request *r, unsigned short rows, unsigned short cols);

const char *mxc_phase_name(mxc_phase p);

#endif
