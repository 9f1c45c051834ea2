/* relpath.h — relative paths of a contract 1.0 request, made absolute.
 * Owns: what a relative `process.cwd` or filesystem path means — the
 * caller's working directory (getcwd(3): the kernel's path of it, no
 * symlink in it) joined with the path, "." components and repeated or
 * trailing slashes dropped — and refusing what stays ambiguous: a ".."
 * component (a lexical join and the filesystem's reading of it differ
 * wherever a component is a symlink), a leading "~" (a shell's home, not a
 * directory of that name), a working directory the kernel cannot name.
 * The request's JSON is rewritten in place (the provision's stored policy
 * holds the absolute path), and its borrowed pointers follow; the result is
 * then checked and resolved by descriptor like every absolute path
 * (policy.c, hostpath.c).  SDK 1.0.1 sends `workingDirectory: "work"` as
 * `process.cwd: "work"`; upstream's bubblewrap would take it from the
 * sandbox's root (docs/wire-contract.md, D4). */
#ifndef MXC_RELPATH_H
#define MXC_RELPATH_H

#include "error.h"
#include "request.h"

/* Contract 1.0 requests only (the legacy dialect refuses relative paths).
 * 0, or -1 with *e set (policy_validation; backend_error on a one-shot,
 * as every one-shot policy refusal). */
int mxc_relpath_absolutize(mxc_request *r, mxc_error *e);

#endif
