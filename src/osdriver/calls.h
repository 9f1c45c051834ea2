/* calls.h — openshell.compute.v1.ComputeDriver's calls, as this driver answers them.
 * Owns: each call's request unpacked (its wire form checked first for what protoc-c would
 * hide: pbcheck.h; unknown fields ignored, as the contract asks), the
 * answer packed, the refusal's gRPC status (an mxc_error's code mapped: malformed ->
 * INVALID_ARGUMENT, not something mxc does -> FAILED_PRECONDITION, missing from this
 * driver's configuration -> FAILED_PRECONDITION, unknown sandbox -> NOT_FOUND), the watch
 * stream (each record's observed snapshot, then open: grpcsrv.h), Create/Stop/Start/Delete
 * through life.h, Ensure/DeleteWorkspace through workspace.h (docs/openshell.md, the table
 * of calls).  The routes table is what grpcsrv.h serves. */
#ifndef MXC_OSD_CALLS_H
#define MXC_OSD_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "grpcsrv.h"
#include "life.h"
#include "store.h"

/* What Watch last sent of each sandbox: its event, packed. */
typedef struct {
    char **ids;
    uint8_t **events;
    size_t *lens, n;
} osd_seen;

typedef struct {
    osd_store store;
    bool have_supervisor; /* --supervisor given and checked */
    mxc_gw_config cfg;    /* --config's [openshell.drivers.mxc], or none: every policy key off */
    osd_rt rt;            /* mxc-oci, podman, the runtime directories (life.h) */
    osd_seen *seen;       /* Watch's last events (osd_watch_tick) */
} osd_driver;

/* Every sandbox observed again; a change (or a sandbox gone) pushed into open Watch streams
 * as its event, and kept as what was last sent.  osd_watch_refresh: always (a stream opening,
 * the driver starting); osd_watch_tick: only while a Watch stream is open (the serving
 * loop's idle tick, grpcsrv.h, and after each call that changes a sandbox). */
void osd_watch_refresh(void *ctx);
void osd_watch_tick(void *ctx);
void osd_seen_free(osd_seen *seen);

extern const osd_route osd_routes[];
extern const size_t osd_nroutes;

#endif
