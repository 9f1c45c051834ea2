/* inventory.h — the host's sandboxes as a person asks for them.
 * Owns: listing every sandbox of the caller's state root (the wire contract
 * has no list operation; the mxc command needs one), one sandbox's policy
 * and state for inspection, and people's names for sandbox ids — one file
 * per name under <state root>/.names (a dot directory: the sweeper's
 * transient-directory prefixes never match it), bound under a lock, unique
 * while the named sandbox exists; a name whose sandbox is gone is free
 * again.  Reads only: nothing here changes a sandbox.  The public entry
 * points are in mxc.h (mxc_list_json, mxc_inspect_json, mxc_name_*). */
#ifndef MXC_INVENTORY_H
#define MXC_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>

/* A name a person may give: [A-Za-z0-9][A-Za-z0-9_.-]{0,63}, never one of
 * our agent names (mxc-...), so a name and an id are never confused. */
bool mxc_name_is_valid(const char *name);
/* The one rule for a name people choose (sandbox names here, gateway
 * sandbox names): 1..max of [A-Za-z0-9_.-], starting alphanumeric — so
 * never ".", "..", a path or an option. */
bool mxc_label_is_valid(const char *s, size_t max);

#endif
