/* hostpath.h — host paths that the caller's side opens, resolved safely.
 * Owns: walking a path as the caller sees it, one component at a time from
 * "/" (O_PATH|O_NOFOLLOW, never into /proc), following a symlink only when
 * the directory that holds it is not writable by a sandbox (registry.h);
 * and opening the files the executor writes on its caller's behalf (the
 * log file) by descriptor, refused inside anything a live sandbox can
 * write, with no symlink in its path, never as a controlling terminal.  Used for
 * policy paths (fsview.c) and by the CLIs. */
#ifndef MXC_HOSTPATH_H
#define MXC_HOSTPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "iface/front.h" /* this module's declarations */

/* Every function and type of this module is a front's too (the CLIs, the gateway, mxc-oci):
 * they are declared, with what they do, in iface/front.h. */

#endif
