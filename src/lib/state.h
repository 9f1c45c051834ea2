/* state.h — per-sandbox state on disk.
 * Owns: the state root (MXC_STATE_DIR, /run/mxc as root,
 * $XDG_RUNTIME_DIR/mxc otherwise), one 0700 directory per sandbox named by
 * its (safe-charset) agent name, the JSON state file written atomically
 * (temp + fsync + rename), the per-sandbox flock held for every phase, and
 * removal without following symlinks. */
#ifndef MXC_STATE_H
#define MXC_STATE_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

typedef struct {
    char root[512];
    char dir[600];
    int lock_fd;
} mxc_state;

int mxc_state_root(char *out, size_t outsz, mxc_error *e);
/* Opens and locks an existing sandbox; stale_id when there is none. */
int mxc_state_open_locked(const char *name, mxc_state *st, mxc_error *e);
/* Creates a new sandbox directory (fails if the name exists) and locks it. */
int mxc_state_create_locked(const char *name, mxc_state *st, mxc_error *e);
void mxc_state_unlock(mxc_state *st);
int mxc_state_read(const mxc_state *st, json_t **out, mxc_error *e);
int mxc_state_write(const mxc_state *st, json_t *state, mxc_error *e);
/* Removes the whole sandbox directory, never following a symlink. */
int mxc_state_destroy(mxc_state *st, mxc_error *e);

#endif
