/* store.h — the driver's state directory (--state-dir), by descriptor.
 * Owns: opening DIR as the caller's own (mxc_open_own_dir: not a link, the euid's, no group or
 * other permission) and its sandboxes/ directory, and reading the sandbox records there: one
 * file per sandbox, named by its id, holding the DriverSandbox the create recorded (protobuf).
 * Each record is opened by descriptor below DIR (never through a link, a regular file of
 * ours, bounded); a name that is not an id, a dot file (a record being written) or a record
 * that does not parse is skipped and said on stderr.  What List and Get report: the record's
 * identity and status, never its spec (it carries sandbox_token).  Records are written by
 * CreateSandbox, a later stage (docs/openshell.md). */
#ifndef MXC_OSD_STORE_H
#define MXC_OSD_STORE_H

#include <stddef.h>

#include "error.h"
#include "osdpb.h"

typedef struct {
    int dirfd;  /* DIR */
    int sbfd;   /* DIR/sandboxes */
} osd_store;

int osd_store_open(osd_store *st, const char *dir, mxc_error *e);
void osd_store_close(osd_store *st);

/* Every record as an observation (spec dropped): a malloc'd array of *n unpacked
 * sandboxes (free with osd_store_free); -1 with *e. */
int osd_store_list(const osd_store *st, pb_sandbox ***out, size_t *n, mxc_error *e);
/* One record by id: 1 found (*out), 0 none, -1 with *e. */
int osd_store_get(const osd_store *st, const char *id, pb_sandbox **out, mxc_error *e);
void osd_store_free(pb_sandbox **list, size_t n);

#endif
