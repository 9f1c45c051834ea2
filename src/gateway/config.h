/* config.h — the gateway's host configuration, [openshell.drivers.mxc].
 * Owns: reading the TOML file (toml.h), every key's type and range, the
 * refusals that must come before any sandbox exists (a missing or relative
 * mxc_exec_path, an egress_proxy_addr off loopback, a key nobody knows),
 * and the defaults.  Each key's Linux meaning is in docs/gateway.md.
 * [mxc.providers.NAME] tables name provider credentials (a static token
 * from the gateway's environment or a file, its endpoints, the workload
 * variable that receives its placeholder, a revision).  Other tables of the
 * file are not ours and are left alone. */
#ifndef MXC_GATEWAY_CONFIG_H
#define MXC_GATEWAY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

typedef enum { MXC_GW_BACKEND_PROCESS = 0, MXC_GW_BACKEND_SESSION } mxc_gw_backend;

typedef struct {
    char exec_path[4096];     /* mxc_exec_path (or the spec's wxc_exec_path): absolute */
    mxc_gw_backend backend;   /* "process" (also "process_container") | "isolation_session" */
    bool minimal_env;         /* pc_minimal_env: the workload's env starts empty */
    bool network_allow;       /* pc_network_allow: unrestricted outbound as a fallback */
    bool allow_local_network; /* pc_allow_local_network */
    bool egress_proxy;        /* governed egress through mxc-proxy */
    char proxy_ip[64];        /* egress_proxy_addr's address ("" when unset) */
    uint16_t proxy_port;      /*   and port seed */
    bool debug;
    bool audit;               /* audit (also the spec's etw_audit) */
    /* [mxc.providers.NAME] tables, checked: {"NAME": {"token_env"|"token_file",
     * "env", "endpoints":[{"host","port","pathPrefix"?}], "revision",
     * "expires_at"?}} (never a secret: tokens are read at create) */
    json_t *providers;
} mxc_gw_config;

void mxc_gw_config_free(mxc_gw_config *cfg);

/* Reads path; 0, or -1 with *e naming the key or the line. */
int mxc_gw_config_load(const char *path, mxc_gw_config *cfg, mxc_error *e);
/* The same, over a TOML text (the file's reading kept apart, for tests and fuzzing). */
int mxc_gw_config_parse(const char *text, size_t len, mxc_gw_config *cfg, mxc_error *e);

/* A provider's static token (one of cfg->providers' values): the reading
 * process's environment variable token_env, or token_file (at most 8 KiB,
 * one line; a final newline dropped).  Read when a sandbox is made, never
 * at load.  A malloc'd copy the caller wipes (explicit_bzero) and frees;
 * NULL when unset, empty or unreadable. */
char *mxc_gw_provider_token(const json_t *provider);

#endif
