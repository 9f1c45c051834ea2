/* validate.h — the validation layers a request passes before anything runs.
 * Owns: their order (bytes/JSON and structure -> containment -> the
 * --experimental gate of the legacy dialect -> sandboxId -> relative paths
 * made absolute from the caller's working directory (relpath.h) -> honor
 * matrix; the first failure wins) for every entry point, the CLI's and the
 * FFI's alike.  No syscalls but getcwd(3). */
#ifndef MXC_VALIDATE_H
#define MXC_VALIDATE_H

#include <stddef.h>

#include "error.h"
#include "request.h"

#define MXC_VALIDATE_EXPERIMENTAL 1u /* --experimental / experimental=1 */

/* On success and on failure alike, *r must be released with mxc_request_free. */
int mxc_validate(const char *buf, size_t len, unsigned flags, mxc_request *r, mxc_error *e);

#endif
