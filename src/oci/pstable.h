/* pstable.h — `ps`'s table, as runc makes it: ps(1) of the host run with
 * the caller's options (default -ef), its header and the lines whose PID
 * column is one of the container's processes.
 * Owns: running ps(1) and filtering its output; the pids come from
 * lifecycle.c's oci_ps. */
#ifndef MXC_OCI_PSTABLE_H
#define MXC_OCI_PSTABLE_H

#include <jansson.h>

#include "error.h"

/* Prints the table to stdout; opts/nopts: ps(1)'s options (none: -ef). */
int oci_ps_table(json_t *pids, char **opts, size_t nopts, mxc_error *e);

#endif
