/* registry.h — host-wide claims of sandbox identities.
 * Owns: the claim directory (/var/lib/mxc/claims: one for the whole host,
 * whatever state root a caller uses, and not configurable for that reason), one file per claimed uid
 * saying who holds it (a session: its state directory; a one-shot: the
 * claiming process) and what that sandbox can write on the host (its
 * read-write grants and workspace, by path, device and inode); claiming
 * atomically (link(2) of a complete file: two state roots never hand out
 * the same uid), releasing, listing, and answering "does this directory lie
 * inside something a live sandbox can write?".  Rootless, a sandbox is
 * its caller's own uid and claims none; what it can write is recorded all
 * the same, in the caller's own directory ($XDG_RUNTIME_DIR/mxc-claims),
 * under a random name. */
#ifndef MXC_REGISTRY_H
#define MXC_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

#define MXC_REGISTRY_MAX_WRITABLE 260 /* read-write grants (MXC_LIST_MAX) + the workspace */

typedef enum { MXC_CLAIM_SESSION = 0, MXC_CLAIM_ONESHOT } mxc_claim_kind;

typedef struct {
    mxc_claim_kind kind;
    const char *state_dir;  /* session: its sandbox directory */
    const char *workspace;  /* session: its workspace (also among writable[]) */
    const char *writable[MXC_REGISTRY_MAX_WRITABLE]; /* host paths the sandbox can write */
    size_t nwritable;
} mxc_claim;

#define MXC_CLAIM_NAME_MAX 24

/* As root: claims a free uid of the reserved range (MXC_UID_BASE/
 * MXC_UID_COUNT) that no account uses, recording c under that number.
 * Rootless: records c under a random name (*uid untouched).  name[] gets
 * the claim's name either way.  Not yet durable (mxc_registry_sync).  On
 * failure name[] is empty: there is no claim of the caller's to release
 * (never the last name tried, which is another sandbox's). */
int mxc_registry_claim(const mxc_claim *c, unsigned *uid, char name[MXC_CLAIM_NAME_MAX], mxc_error *e);
void mxc_registry_release(const char *name);
/* Makes the claim `name` durable (its file and its directory entry synced;
 * 0 or -errno).  A session's claim outlives a reboot beside its workspace,
 * so that no later sandbox is handed the uid that owns the files in it:
 * its start syncs it while the holder builds the view, before anything of
 * the session runs (until then the workspace is empty), not its provision,
 * whose answer would wait for the disk (0.6 ms here). */
int mxc_registry_sync(const char *name);
/* Releases the claim only when it is the session at state_dir. */
void mxc_registry_release_owned(const char *name, const char *state_dir);
/* Removes the claim files the session at state_dir was being given when
 * its maker died: written (.new-<pid>-<start>-<tag>), never linked under a
 * uid, the writer gone.  For the sweep that finishes a half-made sandbox. */
void mxc_registry_drop_unlinked(const char *state_dir);
/* Whether a claim directory entry is a claim file being written
 * (.new-<pid>-<start>-<tag>) whose writer is dead — gone, or a zombie not
 * yet reaped (procs.h's one rule: mxc_pid_alive). */
bool mxc_registry_dead_writer(const char *entry);
/* Whether the claim `name` is the session at state_dir's: one file read
 * (a sandbox's state names its claim), not a scan of every claim. */
bool mxc_registry_is_session_claim(const char *name, const char *state_dir);
/* The claim of the session at state_dir (for a sandbox whose state file is
 * damaged): its name and workspace.  False when there is none. */
bool mxc_registry_find_session(const char *state_dir, char name[MXC_CLAIM_NAME_MAX], char *workspace, size_t wsz);

/* True when the directory at dirfd is, or lies below, one of own[] (host
 * paths the caller's own sandbox can write) or, with claims, a directory
 * that a sandbox with a live claim can write.  Walks up by "..", comparing
 * device and inode, so no spelling of the path can hide it; each directory
 * is one lookup in the index of writable roots (wroots.h), not a read of
 * every claim.  True also when the index cannot be read. */
bool mxc_registry_inside_writable(int dirfd, const char *const *own, size_t nown, bool claims);

/* The one-shots running now (a claim whose claiming process lives), as
 * [{"claim","pid","created","uid"?}] — for mxc ls. */
json_t *mxc_registry_oneshots(void);

/* The reserved range, for tests and --probe. */
void mxc_registry_range(unsigned *base, unsigned *count);
/* A region knob of the environment (MXC_UID_BASE, MXC_RANGE_SLOTS, ...):
 * its decimal value when it is one in 1..4294967294, else dflt. */
unsigned mxc_env_uint(const char *name, unsigned dflt);

#endif
