/* table.h — the gateway's sandboxes: one record each, in memory and on disk.
 * Owns: the gateway's state directory (MXC_GATEWAY_STATE; /var/lib/mxc/gateway
 * as root, $XDG_RUNTIME_DIR/mxc-gateway otherwise), the single-instance
 * lock there, one directory per sandbox name holding record.json (written
 * atomically: temp, fsync, rename) and the workload's log, the in-memory
 * table under one mutex, and names (the same charset as mxc's).  A record
 * is JSON: {"name","backend","status" (provisioning|running|exited|failed|
 * lost),"created","exitCode"?,"error"?,"sandboxId"? (isolation_session),
 * "pid"/"pidStart"? (the driver's mxc-exec while it runs),"commandLine",
 * "cwd"?}.  Nothing secret is ever in a record (environment values are not
 * kept). */
#ifndef MXC_GATEWAY_TABLE_H
#define MXC_GATEWAY_TABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Opens (makes) the state directory and takes its lock; loads every
 * record.  -1 with why[] (another gateway holds the lock, an unusable
 * directory). */
int gw_table_open(char *why, size_t whysz);
const char *gw_table_dir(void);

bool gw_name_ok(const char *name);

/* A new record for name (refused when one exists); the table owns rec. */
int gw_table_insert(const char *name, json_t *rec, char *why, size_t whysz);
/* A copy of name's record (NULL: none). */
json_t *gw_table_get(const char *name);
/* Sets key = value (value stolen) in name's record and writes it. */
void gw_table_set(const char *name, const char *key, json_t *value);
/* Removes the record and its directory (the log too). */
void gw_table_remove(const char *name);
/* Copies of every record, oldest first. */
json_t *gw_table_list(void);
/* <state dir>/<name>/log (made), for the workload's output. */
int gw_table_log_path(const char *name, char *out, size_t outsz);

#endif
