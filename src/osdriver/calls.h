/* calls.h — openshell.compute.v1.ComputeDriver's calls, as this driver answers them.
 * Owns: each call's request unpacked (its wire form checked first for what protoc-c would
 * hide: pbcheck.h; unknown fields ignored, as the contract asks), the
 * answer packed, the refusal's gRPC status (an mxc_error's code mapped: malformed ->
 * INVALID_ARGUMENT, not something mxc does -> FAILED_PRECONDITION, missing from this
 * driver's configuration -> FAILED_PRECONDITION, unknown sandbox -> NOT_FOUND), the watch
 * stream (each record's observed snapshot, then open: grpcsrv.h), Create/Stop/Start/Delete
 * through life.h, and the calls not built yet, each UNIMPLEMENTED with what is missing
 * (docs/openshell.md, the table of calls).  The routes table is what grpcsrv.h serves. */
#ifndef MXC_OSD_CALLS_H
#define MXC_OSD_CALLS_H

#include <stdbool.h>

#include "config.h"
#include "grpcsrv.h"
#include "life.h"
#include "store.h"

typedef struct {
    osd_store store;
    bool have_supervisor; /* --supervisor given and checked */
    mxc_gw_config cfg;    /* --config's [openshell.drivers.mxc], or none: every policy key off */
    osd_rt rt;            /* mxc-oci, podman, the runtime directories (life.h) */
} osd_driver;

extern const osd_route osd_routes[];
extern const size_t osd_nroutes;

#endif
