/* wroots.h — the index of writable roots kept beside the claims.
 * Owns: the directory beside the claim directory (its path and ".roots": /var/lib/mxc/claims.roots as
 * root, the caller's own rootless), holding one directory per host directory that a claimed sandbox can
 * write, named by its device and inode (<dev>-<ino>), and in it one empty file per claim that lists that
 * directory among its "writable", named as the claim.  It answers "does a sandbox with a live claim
 * list this directory as writable?" with one lookup, where registry.h's mxc_registry_inside_writable
 * read every claim (O(claims) per symlink met while resolving a grant).
 *
 * The rules that keep it exactly as strong as reading every claim:
 * - a claim's entries are made after the claim is linked, under the index's shared lock, and before
 *   its maker returns it: before any process of that sandbox runs.  A sandbox that can have written a
 *   directory by the time a lookup reads the index has its entry there;
 * - an entry counts only while the claim it names lists that device and inode (read at lookup): a stale
 *   entry (its claim released, or a later claim of the same name listing other directories) never
 *   counts, and no removal is ever needed for safety;
 * - an entry is removed only under the index's exclusive lock, once the claim it names, read under that
 *   lock, no longer lists its directory: a claim of that name linked before the read is seen by it, and
 *   one linked after adds its entry after the removal ends (the shared lock waits for it);
 * - entries are not synced: the index names the boot it was built in (.boot-<boot_id>), and the first
 *   lookup of a boot, or of a host whose index an older build never kept, rebuilds it from every claim
 *   under the exclusive lock before answering.
 * A claim written by a build that keeps no index, after this boot's rebuild, is not in it: the mxc
 * programs of one host are one build (the package's), as the claim format already assumes. */
#ifndef MXC_WROOTS_H
#define MXC_WROOTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* The index's path (for the grants that must not reach it): 0 or -errno. */
int mxc_wroots_path(char *out, size_t outsz);
/* The claim `name` (in the claim directory claims, a descriptor) indexed under every directory its
 * "writable" lists: 0, or -errno (the caller then releases the claim: one not indexed is not made). */
int mxc_wroots_add(int claims, const char *name);
/* The claim `name`'s "writable" (a new reference; NULL when it has none or cannot be read), read before
 * the caller unlinks it, for mxc_wroots_prune after. */
json_t *mxc_wroots_of(int claims, const char *name);
/* Entries under the directories writable lists that no claim lists any more, removed (best effort). */
void mxc_wroots_prune(json_t *writable);
/* The index opened for lookups, current for this boot (rebuilt first when not): a descriptor, -ENOENT
 * when there is no claim directory (no claims at all), or another -errno (cannot tell). */
int mxc_wroots_open(void);
/* Whether a live claim lists the directory st describes: 1, 0, or -errno (cannot tell). */
int mxc_wroots_listed(int roots, const struct stat *st);
/* For --gc: every entry no claim lists any more removed (with act), and empty directories; how many. */
size_t mxc_wroots_sweep(bool act);

#endif
