/* providers.h — driver_config's providers: the credentials a sandbox's egress carries.
 * Owns: driver_config's "providers" key (mxc's own, beside the policy: a list of names of
 * [mxc.providers.NAME] tables of the driver's --config, as mxc-gateway's --provider names
 * them, docs/gateway.md "Providers") checked against that configuration and the mapped
 * network (governed egress allowing every endpoint of each), and bound into the network
 * section as its credentials (name, revision, endpoint, the workload variable receiving
 * the placeholder mxc:cred:NAME:REV, and secretEnv: the variable of mxc-oci's environment
 * holding the secret, OSD_SECRET_ENV + its index); and, at each mxc-oci create, the
 * secrets read (token_env from the driver's own environment, or token_file) into that
 * environment alone: never a record, a file, argv or the sandbox.  The proxy mxc-oci starts
 * substitutes the secret for the placeholder in requests to the endpoints alone. */
#ifndef MXC_OSD_PROVIDERS_H
#define MXC_OSD_PROVIDERS_H

#include <jansson.h>
#include <stddef.h>

#include "config.h"
#include "error.h"

#define OSD_SECRET_ENV "MXC_OSD_SECRET_"
#define OSD_MAX_PROVIDERS 16

/* names (driver_config's "providers", may be NULL: none) bound into fragment's network
 * section (its "credentials").  0, or -1 with *e naming the provider and why
 * (MXC_E_POLICY_VALIDATION). */
int osd_providers_bind(json_t *fragment, const json_t *names, const mxc_gw_config *cfg, mxc_error *e);

/* The secrets of names as "MXC_OSD_SECRET_i=TOKEN" into kv[0..*n) (at most
 * OSD_MAX_PROVIDERS).  0, or -1 with *e naming the provider whose token cannot be read
 * (nothing left in kv).  osd_providers_wipe after use. */
int osd_providers_secrets(const json_t *names, const mxc_gw_config *cfg, char **kv, size_t *n, mxc_error *e);
void osd_providers_wipe(char **kv, size_t n);

#endif
