/* helpers.h — where mxc's own helper binaries are found.
 * Owns: locating a helper (mxc-proxy, mxc-nft) beside the running binary
 * (/proc/self/exe: the CLI), else beside the library this code was loaded
 * from (an in-process caller of libmxc or libmxc_ffi), else in the
 * installed bin directories.  Only places root installed: never a path
 * from the request or from anything a sandbox can write. */
#ifndef MXC_NET_HELPERS_H
#define MXC_NET_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

/* The helper `name` into out; false when none is executable. */
bool mxc_helper_path(const char *name, char *out, size_t sz);

#endif
