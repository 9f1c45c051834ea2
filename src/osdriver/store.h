/* store.h — the driver's state directory (--state-dir), by descriptor.
 * Owns: opening DIR as the caller's own (mxc_open_own_dir: not a link, the euid's, no group or
 * other permission) and locked (flock: one driver per state directory), its sandboxes/ directory, and reading the sandbox records there: one
 * file per sandbox, named by its id, holding the DriverSandbox the create recorded (protobuf).
 * Each record is opened by descriptor below DIR (never through a link, a regular file of
 * ours, bounded); a name that is not an id, a dot file (a record being written) or a record
 * that does not parse is skipped and said on stderr.  What List and Get report: the record's
 * identity and status, never its spec (it carries sandbox_token).  Records are written
 * whole or not at all (a dot-named temporary synced and renamed over the record, by
 * descriptor): the record of a create is written before anything of the sandbox exists. */
#ifndef MXC_OSD_STORE_H
#define MXC_OSD_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "osdpb.h"

typedef struct {
    int dirfd;  /* DIR */
    int sbfd;   /* DIR/sandboxes */
} osd_store;

int osd_store_open(osd_store *st, const char *dir, mxc_error *e);
void osd_store_close(osd_store *st);

/* Every record as an observation (spec dropped unless keep_spec: the driver's own use): a
 * malloc'd array of *n unpacked sandboxes (free with osd_store_free); -1 with *e. */
int osd_store_list(const osd_store *st, pb_sandbox ***out, size_t *n, bool keep_spec, mxc_error *e);
/* One record whole, its spec kept (the driver's own use): 1 found (*out), 0 none. */
int osd_store_load(const osd_store *st, const char *id, pb_sandbox **out);
/* sb written as the record of sb->id, replacing any: 0, or -1 with *e. */
int osd_store_put(const osd_store *st, const pb_sandbox *sb, mxc_error *e);
/* The record of id removed (absent: nothing). */
void osd_store_remove(const osd_store *st, const char *id);
/* One record by id: 1 found (*out), 0 none, -1 with *e. */
int osd_store_get(const osd_store *st, const char *id, pb_sandbox **out, mxc_error *e);
void osd_store_free(pb_sandbox **list, size_t n);

#endif
