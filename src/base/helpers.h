/* helpers.h — where mxc's own helper binaries are found.
 * Owns: locating a helper (mxc-proxy, mxc-nft) beside the running binary
 * (/proc/self/exe: the CLI), else beside the library this code was loaded
 * from (an in-process caller of libmxc or libmxc_ffi), else in the
 * installed bin directories.  Only places root installed: never a path
 * from the request or from anything a sandbox can write. */
#ifndef MXC_HELPERS_H
#define MXC_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

/* The running binary's own path, when /proc/self/exe does not name it (mxc-oci runs from a sealed
 * memfd copy of itself, selfclone.h): its helpers are found beside the path given here (the file
 * it was copied from, read by that process before the copy) instead.  NULL clears it. */
void mxc_helper_set_self(const char *path);

/* The helper `name` into out; false when none is executable. */
bool mxc_helper_path(const char *name, char *out, size_t sz);

#endif
