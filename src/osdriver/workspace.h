/* workspace.h — OpenShell's workspaces as mxc tenancy directories.
 * Owns: STATE/workspaces/NAME (0700, the driver's), made by EnsureWorkspace (idempotent, as
 * the contract asks) and removed by DeleteWorkspace, which is refused while a sandbox of the
 * workspace (its record's `workspace`) exists: a workspace's sandboxes are deleted first.
 * The name is an mxc label (spec.h).  What the directory bounds today: the workspace's
 * existence and lifetime (docs/openshell.md says what it does not yet hold). */
#ifndef MXC_OSD_WORKSPACE_H
#define MXC_OSD_WORKSPACE_H

#include "error.h"
#include "store.h"

int osd_ws_ensure(const osd_store *st, const char *name, mxc_error *e);
int osd_ws_delete(const osd_store *st, const char *name, mxc_error *e);

#endif
