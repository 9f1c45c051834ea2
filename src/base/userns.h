/* userns.h — user namespaces and their id maps.
 * Owns: an id map as the kernel's text (ranges "inside outside count", one
 * a line) and back; writing a process's uid_map or gid_map (the whole map in
 * the one write the kernel accepts); denying setgroups(2) (what an
 * unprivileged writer of a gid map must do first); reading a process's maps
 * back; and a user namespace with given maps held as a descriptor (the
 * idmapping of a mount), made by a child that only waits. */
#ifndef MXC_USERNS_H
#define MXC_USERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* the kernel's limit of lines in one map (since Linux 4.15) */
#define MXC_IDMAP_MAX 340

typedef struct {
    unsigned inside, outside, count; /* ids [inside, inside+count) in the namespace are [outside, ...) outside */
} mxc_idmap_range;

/* The map's text into buf (NUL-terminated): its length, or -ENOSPC when it
 * does not fit, -EINVAL for more than MXC_IDMAP_MAX ranges. */
int mxc_idmap_format(const mxc_idmap_range *r, size_t n, char *buf, size_t size);
/* The ranges of a map's text, at most max; the first line that is not
 * three numbers ends it.  How many. */
size_t mxc_idmap_parse(const char *text, mxc_idmap_range *r, size_t max);

/* /proc/pid/uid_map (gid false) or gid_map (gid true) written: 0, or -errno. */
int mxc_userns_write_map(pid_t pid, bool gid, const mxc_idmap_range *r, size_t n);
/* /proc/pid/setgroups set to "deny": 0, or -errno. */
int mxc_userns_deny_setgroups(pid_t pid);
/* The ranges of /proc/pid/uid_map or gid_map, at most max: how many (0
 * when unreadable). */
size_t mxc_userns_read_map(pid_t pid, bool gid, mxc_idmap_range *r, size_t max);
/* A new user namespace with these maps (written by us: we must be
 * privileged over the ids): an O_RDONLY close-on-exec descriptor of it, or
 * -errno.  Only system calls between clone and the child's exit: safe in a
 * threaded caller. */
int mxc_userns_open(const mxc_idmap_range *u, size_t nu, const mxc_idmap_range *g, size_t ng);

#endif
