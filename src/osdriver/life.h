/* life.h — a sandbox's life on the host: Create, Stop, Start, Delete, observation, sweep.
 * Owns: the driver's runtime directories under --state-dir (oci/: mxc-oci's --root;
 * run/ID/: the bundle: config.json, rootfs (an overlay: the image's layers under the
 * sandbox's own upper layer), token; work/ID/: layer/ (the upper layer and its work
 * directory, on a capped file system of the sandbox's own: layer.h, its image layer.img) and
 * the supervisor's log, written by its keeper, capped: logcap.h), all 0700 and the driver's, reached by descriptor below the state
 * directory; mxc-oci run as the containers' caller (create/start/kill/delete/state under
 * --root STATE/oci, never linked: docs/architecture.md); the sandbox token as a 0400 file
 * owned by the sandbox's root as mapped (chowned between mxc-oci create and start, when
 * the mapping is known) and bound read-only into that sandbox alone; the record's phase
 * (the Ready condition's reason: Creating, Running, Stopped; the mxc.io/image condition
 * once the image is held) written before each step that makes something, so a crash
 * leaves a record that says what to undo; and the sweep at start: a record still
 * Creating is torn down completely.  Observation: the phase joined with mxc-oci state (a
 * sandbox Running whose init is gone shows Ready False, reason Exited).  driver_config's
 * filesystem grants are refused when they are, cover or lie in the driver's socket or state
 * directory (or mxc's own state: mxc-oci's rule). */
#ifndef MXC_OSD_LIFE_H
#define MXC_OSD_LIFE_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "gateway.h"
#include "osdpb.h"
#include "spec.h"
#include "store.h"

typedef struct {
    const char *mxc_oci, *podman, *supervisor, *endpoint; /* absolute paths; endpoint may be NULL */
    const char *socket;                                   /* --socket: no grant may reach it */
    const osd_gateway *gateway;                           /* the endpoint as egress (gateway.h), or NULL */
    const mxc_gw_config *cfg;                             /* --config: its providers' secrets (providers.h) */
    const char *const *grant_roots;                       /* --grant-root: canonical directories a driver_config */
    size_t ngrant_roots;                                  /*   may grant from (none: no host path at all) */
    char state[PATH_MAX];                                 /* --state-dir, absolute, resolved */
    int runfd, workfd;                                    /* STATE/run, STATE/work */
    char oci_root[PATH_MAX + 8];                          /* STATE/oci */
    uint64_t layer_size;                                  /* --layer-size: each writable layer's cap, 0: none */
    const char *layer_refused;                            /* why creates are refused (layer.h), or NULL */
} osd_rt;

int osd_rt_open(osd_rt *rt, const osd_store *st, const char *state_dir, mxc_error *e);
void osd_rt_close(osd_rt *rt);

/* driver_config's filesystem grants (fragment, spec.h) judged on this host: each resolved by
 * descriptor (mxc_hostpath_resolve, a link followed only where no live sandbox can write) to
 * lie inside a --grant-root, and never to reach the driver's socket, state or mxc's own.
 * 0, or -1 with *e (policy_validation, the path named).  ValidateSandboxCreate, Create and Start. */
int osd_sbx_grants_ok(const osd_rt *rt, const json_t *fragment, mxc_error *e);

/* sb checked (spec.h) and not yet recorded: made and started.  0, or -1 with *e and nothing
 * left (record included). */
int osd_sbx_create(const osd_rt *rt, const osd_store *st, pb_sandbox *sb, const json_t *fragment,
                   const osd_limits *lim, mxc_error *e);
/* 1 done, 0 no such sandbox, -1 with *e. */
int osd_sbx_stop(const osd_rt *rt, const osd_store *st, const char *id, mxc_error *e);
int osd_sbx_start(const osd_rt *rt, const osd_store *st, const char *id, mxc_error *e);
/* 1 deleted, 0 there was none.  Never fails: what cannot be removed is said on stderr. */
int osd_sbx_delete(const osd_rt *rt, const osd_store *st, const char *id);
/* sb (a record, spec dropped) given its observed status. */
void osd_sbx_observe(const osd_rt *rt, pb_sandbox *sb);
/* Records still Creating (a crash mid-create) torn down. */
void osd_sbx_sweep(const osd_rt *rt, const osd_store *st);

#endif
