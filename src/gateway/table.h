/* table.h — the gateway's sandboxes: one record each, in memory and on disk.
 * Owns: the gateway's state directory (MXC_GATEWAY_STATE; /var/lib/mxc/gateway
 * as root, <private dir>/mxc-gateway otherwise — $XDG_RUNTIME_DIR or another
 * 0700 directory of the user's, never a name another user can take first:
 * mxc_private_dir in state.h), which must be a 0700 directory of the
 * gateway's uid, held open and used by descriptor; the single-instance lock
 * there; the record key (gateway.key there: 32 random bytes, 0600, made
 * once); one directory per sandbox name holding record.json (written
 * atomically: temp, fsync, rename) and the workload's log (sblog.h); the
 * in-memory table under one mutex; and names (the same charset as mxc's).
 * A record is JSON: {"name","backend","status" (provisioning|running|exited|
 * failed|lost),"created","exitCode"?,"error"?,"sandboxId"?
 * (isolation_session),"pid"/"pidStart"? (the driver's mxc-exec while it
 * runs),"commandLine","cwd"?,"logDroppedBytes"?,"logDiscardedBytes"?} and,
 * on disk only, "mac": HMAC-SHA256 under the record key over the sandbox's
 * name and the rest of the record.  A record is loaded only when it proves
 * it was written by a gateway holding the key (the mac, and a regular file
 * of the gateway's uid, mode 0600, one link, at most 1 MiB); any other is
 * ignored with a warning, and nothing it names is acted on.  Nothing
 * secret is ever in a record (environment values are not kept). */
#ifndef MXC_GATEWAY_TABLE_H
#define MXC_GATEWAY_TABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Opens (makes) the state directory and takes its lock; loads every
 * record it can prove.  -1 with *e (another gateway holds the lock, an
 * unusable directory or key). */
int gw_table_open(mxc_error *e);
const char *gw_table_dir(void);

bool gw_name_ok(const char *name);

/* A new record for name (refused when one exists); the table owns rec. */
int gw_table_insert(const char *name, json_t *rec, mxc_error *e);
/* A copy of name's record (NULL: none). */
json_t *gw_table_get(const char *name);
/* Sets key = value (value stolen) in name's record and writes it. */
void gw_table_set(const char *name, const char *key, json_t *value);
/* Removes the record and its directory (the logs too). */
void gw_table_remove(const char *name);
/* Copies of every record, oldest first. */
json_t *gw_table_list(void);
/* <state dir>/<name> (made 0700), as an O_DIRECTORY descriptor opened
 * without following a link; -1 when it is not a directory of ours. */
int gw_table_dirfd(const char *name);
/* <state dir>/<name>/file (the directory made), for a file another
 * process is told to write (the proxy's records). */
int gw_table_file_path(const char *name, const char *file, char *out, size_t outsz);

#endif
