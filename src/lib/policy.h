/* policy.h — the honor matrix, as data.
 * Owns: the one table saying, for every policy feature a request can
 * express and every surface (one-shot, provision, start, exec, stop,
 * deprovision), whether it is honored, accepted with no effect, inherited,
 * n/a or rejected — and the evaluation of a parsed request against it,
 * including path and appId rules.  Pure: no syscalls.  docs/wire-contract.md
 * is generated from this same table (mxc-exec --honor-matrix). */
#ifndef MXC_POLICY_H
#define MXC_POLICY_H

#include <stdio.h>

#include "request.h"

typedef enum { MXC_SURF_ONESHOT = 0, MXC_SURF_PROVISION, MXC_SURF_START, MXC_SURF_EXEC, MXC_SURF_STOP,
               MXC_SURF_DEPROVISION, MXC_SURF__COUNT } mxc_surface;

typedef enum { MXC_DISP_HONORED = 0, MXC_DISP_ACCEPTED, MXC_DISP_INHERITED, MXC_DISP_NA, MXC_DISP_REJECTED } mxc_disposition;

typedef enum {
    MXC_F_FS_GRANTS,
    MXC_F_FS_DENIED,
    MXC_F_NET_ABSENT,
    MXC_F_NET_BLOCK,
    MXC_F_NET_BLOCK_LOCAL,
    MXC_F_NET_HOSTS,
    MXC_F_NET_CREDENTIALS,
    MXC_F_NET_ALLOW_ACK,
    MXC_F_NET_ALLOW_NO_LOCAL,
    MXC_F_NET_ENFORCEMENT_MODE,
    MXC_F_NET_DIRECTIONAL,
    MXC_F_UI_LOCKDOWN,
    MXC_F_UI_GRANT,
    MXC_F_LIFECYCLE_SECTION,
    MXC_F_DESTROY_TRUE,
    MXC_F_DESTROY_FALSE,
    MXC_F_PRESERVE_FALSE,
    MXC_F_PRESERVE_TRUE,
    MXC_F_FALLBACK,
    MXC_F_CONTAINER_ID,
    MXC_F_PROCESS_COMMAND,
    MXC_F_PROCESS_OPTIONS,
    MXC_F_APP_ID,
    MXC_F_APP_ID_V1,
    MXC_F_EXP_OWN_OTHER_PHASE,
    MXC_F_STABLE_SECTION,
    MXC_F_WSLC_SECTION,
    MXC_F_FOREIGN_EXP_ONE,
    MXC_F_FOREIGN_EXP_MANY,
    MXC_F_RUNTIME_CONFIG,
    MXC_F_NET_PROXY,
    MXC_F_NET_V1_RULES,
    MXC_F_NET_V1_BLOCK,
    MXC_F_NET_V1_ALLOW_ALL,
    MXC_F_TELEMETRY,
    MXC_F_NET_V1_PROXY,
    MXC_F__COUNT
} mxc_feature;

typedef struct {
    mxc_feature feature;
    const char *field;  /* as the docs name it */
    mxc_disposition disp[MXC_SURF__COUNT];
    const char *why;    /* the reason given when rejected */
} mxc_matrix_row;

extern const mxc_matrix_row MXC_MATRIX[MXC_F__COUNT];

const char *mxc_disposition_name(mxc_disposition d);
mxc_surface mxc_surface_of(const mxc_request *r);

/* Layer 5: policy_validation (state-aware) or backend_error (one-shot). */
int mxc_policy_validate(const mxc_request *r, mxc_error *e);
/* The network alone (r holds only a parsed network section, s the same typed:
 * mxc_net_section_parse), judged as a one-shot's: the matrix's network rows, then the model src/net
 * makes of it.  policy_validation. */
int mxc_policy_validate_network(const mxc_request *r, const mxc_net_section *s, mxc_error *e);

/* Absolute, normalised (no "." / ".." / "//" / trailing "/"), not blank. */
int mxc_policy_check_path(const char *what, const char *path, mxc_error *e);

void mxc_policy_print_matrix_markdown(FILE *out);

#endif
