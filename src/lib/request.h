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

#define MXC_REQUEST_MAX_BYTES (1u << 20) /* 1 MiB */
#define MXC_REQUEST_MAX_DEPTH 32
#define MXC_LIST_MAX 256 /* entries in any array field */

typedef enum { MXC_PHASE_NONE = 0, MXC_PHASE_PROVISION, MXC_PHASE_START, MXC_PHASE_EXEC, MXC_PHASE_STOP,
               MXC_PHASE_DEPROVISION } mxc_phase;

typedef enum { MXC_CONT_PROCESS = 0, MXC_CONT_ISOLATION_SESSION } mxc_containment;

typedef enum { MXC_TRI_ABSENT = 0, MXC_TRI_FALSE, MXC_TRI_TRUE } mxc_tri;

typedef struct {
    const char **v; /* borrowed from the JSON tree */
    size_t n;
} mxc_strlist;

typedef struct mxc_request {
    json_t *root;
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

    bool has_ui;
    mxc_tri ui_disable, ui_injection;
    const char *ui_clipboard; /* NULL = absent */

    bool has_lifecycle;
    mxc_tri destroy_on_exit, preserve_policy;
    bool has_fallback;
    bool has_container_id;
    bool has_runtime_config;
    const char *stable_section; /* first stable backend section present, or NULL */

    json_t *experimental; /* borrowed; NULL = absent */
    bool has_app_id;      /* experimental.isolation_session.provision.appId (provision only) */
    const char *app_id;
    size_t app_id_len;
} mxc_request;

int mxc_request_parse(const char *buf, size_t len, mxc_request *r, mxc_error *e);
void mxc_request_free(mxc_request *r);

const char *mxc_phase_name(mxc_phase p);

#endif
