/* state.h — per-sandbox state on disk, and its transactions.
 * Owns: the state root (MXC_STATE_DIR, /run/mxc as root, $XDG_RUNTIME_DIR/mxc
 * otherwise) and the workspace root (MXC_WORKSPACE_ROOT; by default apart
 * from the state, on disk: /var/lib/mxc/workspaces as root), one 0700
 * directory per sandbox named by its (safe-charset) agent name, made in a
 * staging directory and renamed into place when complete (provision), and
 * renamed to a tombstone before anything is torn down (deprovision), so a
 * crash leaves either nothing or something the sweeper recognises; the
 * per-sandbox flock held for every phase (opening a sandbox never creates
 * its lock file); the JSON state file written atomically (temp +
 * rename: not synced, state.c); the holder record (pid and start time, kept apart from the state
 * file) and the holder's death as its monitor saw it; removal without
 * following symlinks; and, rootless, the caller's private directory for
 * rendezvous points (claims, the gateway's socket and state) and the claims
 * directory's place. */
#ifndef MXC_STATE_H
#define MXC_STATE_H

/* The state file's format ("stateFormat"): raised when its meaning changes
 * so that a build reading it could misread it.  A file without the field is
 * format 0 (builds before it; the same fields as format 1).  A newer format
 * is refused (EPROTONOSUPPORT, with a remediation), never read as damage
 * and torn down: a package upgrade or downgrade keeps live sessions. */
#define MXC_STATE_FORMAT 1

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

typedef struct {
    char root[512];
    char name[64];
    char dir[700];  /* the sandbox's directory: its name, or (staged, entombed) the transient one */
    int lock_fd;
} mxc_state;

/* mkdir -p by string — only for host-administrator paths (state roots, the
 * gateway's state and log directories), never under anything a sandbox can
 * write: parents 0755, the last one mode; an existing one is fine.  0, or -1
 * with errno. */
int mxc_mkdir_p(const char *path, mode_t mode);
/* mxc_mkdir_p(path, 0700), then the directory opened by descriptor (no
 * link followed) and checked to be the caller's uid with none of the
 * `forbidden` mode bits (077: private; 022: no one else writes): its
 * descriptor, or -1 (errno EPERM when it is someone else's or open). */
int mxc_open_own_dir(const char *path, mode_t forbidden);

int mxc_state_root(char *out, size_t outsz, mxc_error *e);

/* Rootless: the caller's private directory, where rendezvous points live
 * that no other local user may take first or deny: $XDG_RUNTIME_DIR, else
 * /run/user/EUID, else /tmp/mxc-EUID, else $HOME/.local/state/mxc/run-HOST
 * (made 0700 when make) — the first that is a directory (not a link) owned
 * by the euid with no group or other permission, checked by descriptor.
 * A candidate another user took is passed over (so it denies nothing); an
 * absent one is taken (made, or named when !make: where a maker would put
 * it).  0, or -1 with *e (backend_error; its message says what to set).
 * Not for root (fixed system paths serve it). */
int mxc_private_dir(bool make, char *out, size_t outsz, mxc_error *e);
/* The claims directory: /var/lib/mxc/claims as root, <private dir>/mxc-claims
 * rootless (mxc_private_dir); made 0700 and checked (a directory of the
 * euid, no group or other permission) when make.  0, or -errno. */
int mxc_claims_dir(bool make, char *out, size_t outsz);
int mxc_workspace_root(char *out, size_t outsz, mxc_error *e);
/* <workspace root>/<name>. */
int mxc_workspace_path(const char *name, char *out, size_t outsz, mxc_error *e);
/* The workspace root's path, without making it. */
bool mxc_workspace_root_path(char *out, size_t outsz);
/* Whether path is exactly <workspace root>/<name> (the root is not made). */
bool mxc_workspace_is(const char *name, const char *path);
/* <state root>/<name>. */
int mxc_state_dir_of(const char *name, char *out, size_t outsz, mxc_error *e);

/* Provision: a new, locked staging directory for name (its lock file made
 * there); nothing under the sandbox's name exists until mxc_state_commit. */
int mxc_state_stage(const char *name, mxc_state *st, mxc_error *e);
/* Renames the staged directory to its name (atomically; EEXIST if taken).
 * st->dir becomes the final path; the lock stays held. */
int mxc_state_commit(mxc_state *st, mxc_error *e);

/* Opens and locks an existing sandbox.  A tombstone of the same name (a
 * deprovision under way or interrupted) is waited for, or finished, first
 * (fin); then stale_id when there is no sandbox of that name. */
/* Before finishing a transient directory (a tombstone or a staging
 * directory) that its maker may still be working on: waits for the maker's
 * lock, then checks that the path still names what was locked (a staging
 * directory is committed under its final name while locked).  0: it is the
 * caller's to finish (*lock_fd, or -1 when the maker died before making its
 * lock; close it when done); -ENOENT: nothing there to finish. */
int mxc_state_lock_transient(const char *dir, int *lock_fd);

typedef void (*mxc_tomb_finisher)(const char *tomb);
int mxc_state_open_locked(const char *name, mxc_tomb_finisher fin, mxc_state *st, mxc_error *e);
void mxc_state_unlock(mxc_state *st);

int mxc_state_read(const mxc_state *st, json_t **out, mxc_error *e);
int mxc_state_write(const mxc_state *st, json_t *state, mxc_error *e);

/* Deprovision, first step: the directory becomes a tombstone
 * (.tomb.<name>.<pid>.<start> in the state root, locked by us); the name is
 * free from here on.  st->dir becomes the tombstone. */
int mxc_state_entomb(mxc_state *st, mxc_error *e);
/* Removes st->dir (a tombstone or a staging directory) and everything in
 * it, never following a symlink; unlocks. */
int mxc_state_destroy(mxc_state *st, mxc_error *e);
/* Removes a whole tree by path, never following a symlink (workspaces). */
int mxc_state_remove_tree(const char *path);

/* A staging directory's note of the workspace it is about to make, written
 * before the mkdir: a provision killed before its state file exists leaves
 * nothing else that names it. */
int mxc_state_note_workspace(const mxc_state *st, const char *ws);
bool mxc_state_noted_workspace(const char *dir, char *out, size_t outsz);

/* The holder of a started session: pid and start time, beside (not in)
 * the state file, so that a damaged state file still leads to it.  The
 * monitor, the holder's reaper outside the sandbox, writes holder.exit
 * with how it ended if it ended while its record still existed (a crash,
 * not a stop). */
int mxc_state_write_holder(const mxc_state *st, pid_t holder, unsigned long long start);
bool mxc_state_read_holder(const char *dir, pid_t *holder, unsigned long long *start);
void mxc_state_clear_holder(const char *dir);
/* "killed by signal 9" / "exited with status 1"; false when no crash is on record. */
bool mxc_state_holder_death(const char *dir, char *out, size_t outsz);

/* Transient directories of the state root: ".new.<name>.<pid>.<start>" and
 * ".tomb.<name>.<pid>.<start>".  True when name is one, with its sandbox
 * name and whether its maker is still alive. */
bool mxc_state_transient(const char *entry, bool *tomb, char *name, size_t namesz, bool *maker_alive);

/* A provision's answer not yet delivered: ".unanswered.<name>.<pid>.<start>"
 * in the state root, made (by the provision's maker, this process) before
 * the commit and removed once the answer is written.  A committed sandbox
 * still marked after its maker died is one nobody knows: the sweeper
 * tears it down. */
int mxc_state_mark_unanswered(const mxc_state *st);
void mxc_state_mark_answered(const char *root, const char *name);
/* True when entry is such a mark, with its sandbox name and whether its
 * maker is alive. */
bool mxc_state_unanswered(const char *entry, char *name, size_t namesz, bool *maker_alive);
/* Locks <root>/<name> without waiting: 0 (st filled, locked), -EWOULDBLOCK
 * (someone is working on it), -ENOENT (gone). */
int mxc_state_try_lock(const char *root, const char *name, mxc_state *st);

#endif
