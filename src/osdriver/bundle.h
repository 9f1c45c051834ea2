/* bundle.h — a sandbox's OCI config.json, from its DriverSandbox.
 * Owns: the mapping of a checked spec onto the config mxc-oci's `spec` wrote (docs/openshell.md,
 * "What Create makes"): process.args the supervisor as OpenShell's Podman driver starts it
 * (/opt/openshell/bin/openshell-sandbox --workdir /sandbox) with the exact command and tty
 * in OPENSHELL_MAIN_PROCESS_SPEC, never through a shell; process.env the template's then the
 * spec's environment, then the driver's OPENSHELL_* variables over them (a workload's
 * environment cannot name the sandbox, the endpoint or the token file); process.terminal
 * false (the supervisor holds the canonical process's pty); root the bundle's rootfs,
 * writable; the supervisor and the token bound read-only, nosuid, nodev; the resources as
 * linux.resources (limits and requests, bundle.c's resources() says how); driver_config's network
 * as the io.mxc.network annotation (mxc-oci's governed egress), the gateway's endpoint added to
 * its allowedHosts (a sandbox without network rules: governed egress to the gateway alone; one
 * whose policy is defaultPolicy allow: left as it is); driver_config's filesystem
 * grants as binds of the host paths at the same paths, read-only or read-write as granted
 * (life.h refuses a grant of the driver's own places first).  Pure: no I/O. */
#ifndef MXC_OSD_BUNDLE_H
#define MXC_OSD_BUNDLE_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"
#include "osdpb.h"
#include "spec.h"

#define OSD_SUPERVISOR_IN "/opt/openshell/bin/openshell-sandbox"
#define OSD_TOKEN_IN "/etc/openshell/auth/sandbox.jwt"
#define OSD_WORKDIR_IN "/sandbox"

typedef struct {
    const char *supervisor; /* host path, bound at OSD_SUPERVISOR_IN */
    const char *token;      /* host path of the token file, or NULL: none */
    const char *endpoint;   /* OPENSHELL_ENDPOINT, or NULL */
    const char *gateway;    /* its allowedHosts entry (gateway.h), or NULL */
} osd_bundle_in;

/* cfg (mxc-oci spec's config.json) made sb's: 0, or -1 with *e. */
int osd_bundle_config(json_t *cfg, const pb_sandbox *sb, const json_t *fragment, const osd_limits *lim,
                      const osd_bundle_in *in, mxc_error *e);

#endif
